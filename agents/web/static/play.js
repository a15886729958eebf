// Play: the new-game form, the live table (only the seat's legal actions are clickable), the
// bots' moves one request at a time at the chosen pace, the end of each deal and of the game.
"use strict";

(function () {
  const play = { options: null, state: null, events: [], dealsShown: 0, busy: false, timer: 0 };
  T.views.play = play;

  function seatChoices() {
    const n = Number(T.$("players").value);
    const seat = T.$("seat");
    const old = Number(seat.value || 1);
    seat.replaceChildren();
    for (let k = 1; k <= n; k++) seat.append(T.el("option", { value: k, text: k }));
    seat.value = Math.min(old, n);
    const box = T.$("opponents");
    const kept = [...box.querySelectorAll("input")].map((i) => i.value);
    box.replaceChildren();
    for (let k = 1; k < n; k++) {
      const input = T.el("input", { list: "agent-specs", value: kept[k - 1] || "greedy",
        id: `opponent-${k}`, size: 18, "aria-label": `opponent ${k}` });
      box.append(T.el("label", {}, `Opponent ${k} `, input));
    }
  }

  function rulesForm(rules) {
    const box = T.$("rules");
    for (const r of rules) {
      let input;
      if (r.kind === "bool") input = T.el("input", { type: "checkbox", checked: r.default });
      else if (r.kind === "choice") {
        input = T.el("select", {});
        for (const c of r.choices) input.append(T.el("option", { value: c, text: c }));
        input.value = r.default;
      } else input = T.el("input", { type: "number", min: 0,
        placeholder: r.default === null ? "not set" : String(r.default) });
      input.id = "rule-" + r.name;
      input.dataset.kind = r.kind;
      input.dataset.name = r.name;
      box.append(T.el("label", { title: r.help }, T.el("span", { text: r.name.replace(/_/g, " ") }),
        input, T.el("span", { class: "small help", text: r.help })));
    }
  }

  function formBody() {
    const rules = {};
    for (const input of T.$("rules").querySelectorAll("[data-name]")) {
      const r = play.options.rules.find((x) => x.name === input.dataset.name);
      if (input.dataset.kind === "bool") {
        if (input.checked !== r.default) rules[r.name] = input.checked;
      } else if (input.dataset.kind === "choice") {
        if (input.value !== r.default) rules[r.name] = input.value;
      } else if (input.value !== "") rules[r.name] = Number(input.value);
    }
    const body = {
      players: Number(T.$("players").value), seat: Number(T.$("seat").value), rules,
      opponents: [...T.$("opponents").querySelectorAll("input")].map((i) => i.value.trim()),
    };
    if (T.$("seed").value !== "") body.seed = Number(T.$("seed").value);
    return body;
  }

  async function setup() {
    if (play.options) return;
    play.options = T.options;
    const players = T.$("players");
    for (let n = play.options.players[0]; n <= play.options.players[1]; n++) {
      players.append(T.el("option", { value: n, text: n }));
    }
    const specs = T.el("datalist", { id: "agent-specs" });
    for (const b of play.options.bots.concat(play.options.models)) {
      specs.append(T.el("option", { value: b }));
    }
    document.body.append(specs);
    players.addEventListener("change", seatChoices);
    seatChoices();
    rulesForm(play.options.rules);
    T.$("setup").addEventListener("submit", start);
    T.$("leave").addEventListener("click", leave);
  }

  async function start(event) {
    event.preventDefault();
    T.$("setup-error").textContent = "";
    try {
      const state = await T.api("POST", "/api/games", formBody());
      play.events = [];
      play.dealsShown = 0;
      T.$("setup").hidden = true;
      T.$("game").hidden = false;
      receive(state);
    } catch (error) {
      T.$("setup-error").textContent = error.message;
    }
  }

  async function leave() {
    clearTimeout(play.timer);
    if (play.state && !play.state.done) {
      try { await T.api("POST", `/api/games/${play.state.id}/leave`, {}); } catch (e) { /* gone */ }
    }
    play.state = null;
    T.$("overlay").hidden = true;
    T.$("game").hidden = true;
    T.$("setup").hidden = false;
  }

  async function send(path, body) {
    if (play.busy) return;
    play.busy = true;
    try {
      const state = await T.api("POST", `/api/games/${play.state.id}/${path}`,
        Object.assign({ since: play.events.length }, body));
      play.busy = false;
      receive(state);
    } catch (error) {
      play.busy = false;
      T.status(error.message);
    }
  }

  function act(action) {
    if (!play.state || !play.state.legal.includes(action) || !T.$("overlay").hidden) return;
    send("act", { action });
  }

  function receive(state) {
    play.state = state;
    play.events = play.events.concat(state.events);
    T.status(state.notes.join(" "));
    draw();
    if (state.deal_ends.length > play.dealsShown) return dealEnd();
    if (state.done) return gameEnd();
    next();
  }

  function next() {
    const state = play.state;
    if (!state || state.done || state.legal.length) return;
    clearTimeout(play.timer);
    play.timer = setTimeout(() => send("step", {}), Number(T.$("pace").value));
  }

  function draw() {
    const state = play.state;
    const legal = new Set(state.legal);
    const clickable = {
      slots: new Set(state.legal.filter((a) => a < 10)),
      stock: legal.has(T.STOCK), discard: legal.has(T.DISCARD),
    };
    if (state.decision === T.decision.CALL) clickable.slots = new Set();
    T.drawTable(T.$("play-table"), state, { me: state.seat, clickable, onAction: act });
    T.fillLog(T.$("play-log"), play.events);
    const buttons = T.$("buttons");
    buttons.replaceChildren();
    const held = state.held >= 0 ? T.RANK_NAMES[state.held] : "";
    let text;
    if (state.done) text = "The game is over.";
    else if (!state.legal.length) text = `${state.names[state.current]} is playing...`;
    else if (state.decision === T.decision.DRAW) {
      const top = state.discard.length ? T.RANK_NAMES[state.discard[state.discard.length - 1]] :
        "";
      text = `Your turn: draw from the stock (s) or take the ${top} from the discard pile (d).`;
    } else if (state.decision === T.decision.WILD) {
      text = `You hold the wild ${held}: click a face-down slot to lay it on (keys 1-9, 0).`;
    } else if (state.decision === T.decision.SWAP) {
      const slot = state.held === 1 ? "A" : String(state.held);
      text = `Your ${held} fits slot ${slot}, where a wild lies: swap it in (${state.held % 10}) ` +
        "and play on with the wild, or decline (n).";
      buttons.append(T.el("button", { type: "button", id: "decline", text: "Decline the swap (n)",
        onclick: () => act(T.DECLINE) }));
    } else if (state.decision === T.decision.CALL) {
      text = `Your ${held} fills your last slot. Call "Trash!" now, or you forget to.`;
      buttons.append(T.el("button", { type: "button", id: "call", class: "loud",
        text: "Trash! (t)", onclick: () => act(T.CALL) }));
      buttons.append(T.el("button", { type: "button", id: "silent",
        text: "Lay it without calling (l)", onclick: () => act(T.SILENT) }));
    }
    const last = play.events.length ? play.events[play.events.length - 1][4] : "";
    T.$("prompt-text").replaceChildren(text, last ? T.el("span", { class: "small last",
      id: "last-move", text: `  (last: ${last})` }) : "");
    T.$("prompt").classList.toggle("yours", state.legal.length > 0);
  }

  function overlay(title, text, picture, buttons) {
    T.$("overlay-title").textContent = title;
    T.$("overlay-text").textContent = text;
    T.$("overlay-table").replaceChildren(picture || "");
    T.$("overlay-buttons").replaceChildren(...buttons);
    T.$("overlay").hidden = false;
    buttons[0].focus();
  }

  function dealEnd() {
    const state = play.state;
    const picture = state.deal_ends[play.dealsShown];
    play.dealsShown += 1;
    const won = picture.rounds_won.map((w, p) => `${state.names[p]} ${w}`).join(", ");
    const go = T.el("button", { type: "button", id: "next-deal", text: "Next deal (Enter)",
      onclick: () => {
        T.$("overlay").hidden = true;
        if (state.deal_ends.length > play.dealsShown) return dealEnd();
        if (state.done) return gameEnd();
        next();
      } });
    overlay(`Deal ${picture.deal} is over`, `Rounds won: ${won}.`,
      T.dealPicture(state.names, picture, state.seat), [go]);
  }

  function gameEnd() {
    const state = play.state;
    const text = T.resultText(state.names, state.winners, state.placings,
      state.layouts.map((l) => l.rounds_won), state.truncated, state.rules.episode);
    const buttons = [T.el("button", { type: "button", id: "new-game", text: "New game",
      onclick: leave })];
    if (state.log) {
      buttons.push(T.el("a", { href: "#watch/log/" + encodeURIComponent(state.log),
        id: "watch-this", class: "button", text: "Watch this game again",
        onclick: () => { T.$("overlay").hidden = true; } }));
    }
    overlay("The game is over", text + (state.log ? `\nLogged as ${state.log}.` : ""),
      state.final ? T.dealPicture(state.names, state.final, state.seat, state.winners) : null,
      buttons);
  }

  play.show = function () {
    setup().catch((error) => T.status(error.message));
  };

  const KEYS = { s: T.STOCK, d: T.DISCARD, n: T.DECLINE, t: T.CALL, l: T.SILENT };
  play.key = function (event) {
    if (!T.$("overlay").hidden) {
      if (event.key === "Enter") { T.$("overlay-buttons").firstChild.click(); return true; }
      return false;
    }
    if (!play.state || event.ctrlKey || event.metaKey || event.altKey) return false;
    const key = event.key.toLowerCase();
    if (key in KEYS) { act(KEYS[key]); return true; }
    if (/^[0-9]$/.test(key)) {
      const slot = key === "0" ? 9 : Number(key) - 1;
      if (play.state.decision !== T.decision.CALL) act(slot);
      return true;
    }
    return false;
  };
})();
