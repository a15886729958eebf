// Draws a table: every layout, the stock, the discard pile and the card in hand.
// The state is the server's (agents/web/state.py); face-down cards are backs unless the
// state carries their ranks and the caller asks to show them (a finished game's replay).
"use strict";

T.card = function (rank, opts) {
  opts = opts || {};
  const classes = ["card"];
  if (opts.back) classes.push("back");
  if (opts.wild) classes.push("wild");
  if (opts.peek) classes.push("peek");
  if (opts.small) classes.push("small");
  if (rank === 0 || rank === 1 || rank > 10) classes.push("face");
  const label = opts.back && !opts.peek ? "" : T.RANKS[rank];
  return T.el("span", { class: classes.join(" "), title: opts.title }, label);
};

// opts: me (the seat shown as "you", -1 for none), showAll, clickable {slots: Set, stock,
// discard}, onAction(action), finishedDeal (a deal-end picture instead of the live layouts).
T.drawTable = function (root, state, opts) {
  opts = opts || {};
  const clickable = opts.clickable || { slots: new Set() };
  const wild = state.wild || [];
  root.replaceChildren();
  const seats = T.el("div", { class: "seats" });
  const order = [];
  for (let k = 0; k < state.players; k++) order.push((Math.max(opts.me, 0) + k) % state.players);
  for (const p of order) {
    const layout = state.layouts[p];
    const toAct = !state.done && state.current === p;
    const isMe = p === opts.me;
    const head = T.el("div", { class: "seat-head" },
      T.el("strong", { text: state.names[p] }),
      T.el("span", { class: "small", text: ` ${opts.nextSize ? "next layout" : "layout"} of ` +
        `${layout.size}, ` +
        `${layout.rounds_won} round${layout.rounds_won === 1 ? "" : "s"} won` }),
      toAct ? T.el("span", { class: "badge", text: isMe ? "your turn" : "to play" }) : null,
      state.winners && state.winners.includes(p) && state.done ?
        T.el("span", { class: "badge win", text: "winner" }) : null);
    const grid = T.el("div", { class: "slots" });
    for (let s = 0; s < 10; s++) {
      const st = layout.states[s];
      const rank = layout.cards[s];
      let face;
      if (st === T.ABSENT) face = T.el("span", { class: "card absent" });
      else if (st === T.DOWN) {
        const known = opts.showAll && rank >= 0;
        face = T.card(known ? rank : 0, { back: true, peek: known,
          title: known ? `face-down ${T.RANK_NAMES[rank]}` : "face-down" });
      } else face = T.card(rank, { wild: st === T.WILD_UP || wild[rank] === 1,
        title: st === T.WILD_UP ? `wild ${T.RANK_NAMES[rank]}` : T.RANK_NAMES[rank] });
      const canClick = isMe && clickable.slots.has(s);
      const slot = T.el(canClick ? "button" : "div", {
        class: "slot" + (canClick ? " clickable" : ""),
        type: canClick ? "button" : null,
        id: isMe ? `slot-${s + 1}` : null,
        "data-seat": p, "data-slot": s + 1,
        onclick: canClick ? () => opts.onAction(s) : null,
      }, T.el("span", { class: "slot-label", text: s === 0 ? "A" : String(s + 1) }), face);
      grid.append(slot);
    }
    seats.append(T.el("div", {
      class: "seat" + (toAct ? " acting" : "") + (isMe ? " me" : ""), id: `seat-${p + 1}`,
    }, head, grid));
  }

  const pile = state.discard !== undefined ? state.discard : null;
  const top = pile !== null ? (pile.length ? pile[pile.length - 1] : -1) : state.discard_top;
  const count = pile !== null ? pile.length : state.discard_count;
  const stockButton = T.el(clickable.stock ? "button" : "div", {
    class: "pile" + (clickable.stock ? " clickable" : ""), id: "stock",
    type: clickable.stock ? "button" : null,
    onclick: clickable.stock ? () => opts.onAction(T.STOCK) : null,
  }, T.card(0, { back: true }), T.el("span", { class: "small", text: `stock: ${state.stock}` }));
  const discardButton = T.el(clickable.discard ? "button" : "div", {
    class: "pile" + (clickable.discard ? " clickable" : ""), id: "discard",
    type: clickable.discard ? "button" : null,
    onclick: clickable.discard ? () => opts.onAction(T.DISCARD) : null,
  }, top >= 0 ? T.card(top, { wild: wild[top] === 1 }) : T.el("span", { class: "card absent" }),
  T.el("span", { class: "small", text: `discard: ${count}` }));
  const held = T.el("div", { class: "pile held", id: "held" },
    state.held >= 0 ? T.card(state.held, { wild: wild[state.held] === 1 }) :
      T.el("span", { class: "card absent" }),
    T.el("span", { class: "small", text: state.held >= 0 && !state.done ?
      `in ${T.whose(state.names[state.current])} hand` : "no card in hand" }));
  const middle = T.el("div", { class: "middle" }, stockButton, discardButton, held);
  if (pile !== null && pile.length > 1) {
    const strip = T.el("div", { class: "strip", title: "the discard pile, oldest first" });
    for (const c of pile.slice(-30)) strip.append(T.card(c, { small: true }));
    middle.append(strip);
  }
  const info = T.el("p", { class: "small deal-info",
    text: `Deal ${state.deal}` + (state.done ? " - the game is over" :
      `, turn ${state.turns + 1}: ${state.names[state.current]} to play`) });
  root.append(info, middle, seats);
};

// A finished deal's table (from the events: what was face-up, and what the losers revealed).
// winners: the game's winners, for its final table (the layouts then are not "next" ones).
T.dealPicture = function (names, picture, me, winners) {
  const layouts = picture.states.map((states, p) => ({
    size: picture.sizes[p], rounds_won: picture.rounds_won[p],
    states: states.map((st, s) => picture.revealed[p].includes(s) ? T.NATURAL : st),
    cards: picture.cards[p], face_down: 0,
  }));
  const root = T.el("div", { class: "picture" });
  T.drawTable(root, { players: names.length, names, layouts, current: -1, done: true,
    held: -1, discard: [], stock: 0, deal: picture.deal, turns: 0, winners: winners || [] },
  { me, nextSize: !winners });
  root.querySelector(".middle").remove();
  root.querySelector(".deal-info").remove();
  return root;
};

T.fillLog = function (list, events, upto) {
  list.replaceChildren();
  const shown = upto === undefined ? events : events.slice(0, upto);
  const from = Math.max(0, shown.length - 400);
  list.start = from + 1; // numbered as in the whole game
  for (const e of shown.slice(from)) {
    list.append(T.el("li", { class: T.eventKinds.has(e[0]) ? "ev-" + e[0] : null,
      text: e[4] }));
  }
  list.scrollTop = list.scrollHeight;
};
