// Rank: an evaluate.py report as a leaderboard (win rates with 95% intervals, ratings), the
// head-to-head matrix, and each pairing's saved games, opened in Watch.
"use strict";

(function () {
  const rank = { report: null, file: "" };
  T.views.rank = rank;

  function list(selected) {
    return T.fillFiles("report-list", "/api/reports", "reports", "choose a report",
      "no .json files in the reports folder (evaluate.py --json FILE)", selected);
  }

  function interval(a, par) {
    const bar = T.el("span", { class: "ci" });
    bar.append(T.el("span", { class: "ci-par", style: { left: `${100 * par}%` } }));
    bar.append(T.el("span", { class: "ci-range",
      style: { left: `${100 * a.ci95[0]}%`, width: `${100 * (a.ci95[1] - a.ci95[0])}%` } }));
    bar.append(T.el("span", { class: "ci-dot", style: { left: `${100 * a.win_rate}%` } }));
    return bar;
  }

  function board(report) {
    const table = T.$("board");
    // Narrow screens drop the "wide" columns (app.css); win rate and its interval stay.
    const heads = [["rank", ""], ["agent", ""], ["games", "wide"], ["wins", "wide"],
      ["win rate", ""], ["95% interval", "wide"], ["", ""], ["mean placing", "wide"],
      ["rating", "wide"]];
    table.replaceChildren(T.el("tr", {}, ...heads.map(([h, c]) => T.el("th", { text: h,
      class: c || null }))));
    const agents = report.agents.slice().sort((a, b) => b.win_rate - a.win_rate);
    agents.forEach((a) => {
      table.append(T.el("tr", { class: "agent-row" },
        T.el("td", { class: "rank", text: `${a.rank}${a.tied ? "=" : ""}`,
          title: a.tied ? "ratings that cannot be told apart share a rank" : null }),
        T.el("td", { class: "spec", text: a.spec }),
        T.el("td", { class: "wide", text: String(a.games) }),
        T.el("td", { class: "wide", text: a.wins.toFixed(1) }),
        T.el("td", { class: "rate", text: T.percent(a.win_rate) }),
        T.el("td", { class: "wide", text: `${T.percent(a.ci95[0])} - ${T.percent(a.ci95[1])}` }),
        T.el("td", { class: "ci-cell" }, interval(a, report.par)),
        T.el("td", { class: "wide", text: a.mean_placing === null ? "-" :
          a.mean_placing.toFixed(2) }),
        T.el("td", { class: "wide",
          text: `${a.rating.toFixed(1)} \u00b1 ${a.rating_sigma.toFixed(1)}` })));
    });
  }

  function gamesOf(a, b) {
    const saved = rank.report.saved;
    if (!saved || !saved.found) return [];
    return saved.index.filter((g) => g.specs.includes(a) && g.specs.includes(b) &&
      (a !== b || g.specs.filter((s) => s === a).length > 1));
  }

  function matrix(report) {
    const table = T.$("matrix");
    const order = report.agents.map((a) => a.spec);
    const pairs = new Map(report.pairs.map((p) => [`${p.agent}\u0000${p.opponent}`, p]));
    table.replaceChildren(T.el("tr", {}, T.el("th", { text: "" }),
      ...order.map((s) => T.el("th", { class: "spec", text: s }))));
    order.forEach((a, i) => {
      const row = T.el("tr", {}, T.el("th", { class: "spec", text: a }));
      order.forEach((b, j) => {
        const p = pairs.get(`${a}\u0000${b}`);
        if (!p) { row.append(T.el("td", { class: "empty", text: "" })); return; }
        const games = gamesOf(a, b);
        const hue = Math.round(120 * p.rate);
        const cell = T.el("td", { class: "cell" + (games.length ? " linked" : ""),
          id: `pair-${i}-${j}`, style: { background: `hsl(${hue},55%,82%)` },
          title: `${a} beats ${b}: ${T.percent(p.rate)} (95% ${T.percent(p.ci95[0])} - ` +
            `${T.percent(p.ci95[1])}) over ${p.comparisons} comparisons` +
            (games.length ? `; ${games.length} saved games` : ""),
        }, T.el("span", { text: T.percent(p.rate) }),
        T.el("span", { class: "small", text: `${T.percent(p.ci95[0])}-${T.percent(p.ci95[1])}` }));
        if (games.length) cell.addEventListener("click", () => showGames(a, b, games));
        row.append(cell);
      });
      table.append(row);
    });
    const saved = report.saved;
    T.$("matrix-note").textContent = !saved ?
      "This report has no saved games (evaluate.py --save-games DIR adds them)." :
      saved.found ? "Click a pairing to list its saved games." :
        `The saved games' folder ${saved.dir} is not inside the served folders.`;
  }

  function showGames(a, b, games) {
    T.$("pair-games").hidden = false;
    T.$("pair-title").textContent = `${a} and ${b}: ${games.length} saved games`;
    const list = T.$("pair-list");
    list.replaceChildren();
    for (const g of games.slice(0, 500)) {
      const who = g.winners.map((w) => `${g.specs[w]} (seat ${w + 1})`).join(" and ");
      list.append(T.el("li", {}, T.el("a", {
        href: `#watch/report/${encodeURIComponent(rank.file)}/${encodeURIComponent(g.file)}`,
        text: g.file }), ` ${g.specs.join(" vs ")}: won by ${who || "nobody"}`));
    }
  }

  async function open(file) {
    T.$("rank-body").hidden = true;
    T.$("pair-games").hidden = true;
    T.$("rank-title").textContent = "loading...";
    try {
      rank.report = await T.api("GET", "/api/reports/" + encodeURIComponent(file));
    } catch (error) {
      T.$("rank-title").textContent = error.message;
      return;
    }
    rank.file = file;
    const r = rank.report;
    const changed = r.changed_rules;
    T.$("rank-title").textContent = `${r.rules.num_players} players` +
      (r.deals ? `, ${r.deals} duplicate deals` : "") + (r.seed !== null ? `, seed ${r.seed}` : "") +
      (changed.length ? `; rules: ${changed.join(", ")}` : "; standard rules");
    board(r);
    matrix(r);
    T.$("rank-body").hidden = false;
  }

  let wired = false;
  rank.show = function (parts) {
    if (!wired) {
      wired = true;
      T.$("report-list").addEventListener("change", (e) => {
        if (e.target.value) location.hash = "#rank/" + encodeURIComponent(e.target.value);
      });
    }
    list(parts[0]).catch((error) => T.status(error.message));
    if (parts[0] && parts[0] !== rank.file) open(parts[0]);
  };
})();
