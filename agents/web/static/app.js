// The page's shared pieces: the JSON client, element helpers and the tabs.
// Every text from the server (names, specs, sentences) goes into the page as text, never as HTML.
"use strict";

const T = {};
window.T = T;

T.RANKS = ["Jk", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
T.RANK_NAMES = ["Joker", "Ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "Jack", "Queen",
  "King"];
T.DOWN = 0; T.NATURAL = 1; T.WILD_UP = 2; T.ABSENT = 3;
T.STOCK = 10; T.DISCARD = 11; T.DECLINE = 12; T.CALL = 13; T.SILENT = 14;

T.el = function (tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "style") Object.assign(node.style, value); // CSSOM: allowed by the CSP
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
};

T.$ = (id) => document.getElementById(id);

// Fill the <select> `id` with the files the server lists at `path` (its answer's `key`),
// after a first option that says `choose` (or `none` when there are none); `selected` is
// chosen when listed.
T.fillFiles = async function (id, path, key, choose, none, selected) {
  const select = T.$(id);
  const files = (await T.api("GET", path))[key];
  select.replaceChildren(T.el("option", { value: "", text: files.length ? choose : none }));
  for (const f of files) select.append(T.el("option", { value: f.name, text: f.name }));
  if (selected && files.some((f) => f.name === selected)) select.value = selected;
};

T.api = async function (method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  let answer;
  try {
    answer = await fetch(path, init);
  } catch (error) {
    throw new Error("the server cannot be reached (is python -m agents.web still running?)");
  }
  let value;
  try {
    value = await answer.json();
  } catch (error) {
    throw new Error(`the server answered ${answer.status} without JSON`);
  }
  if (!answer.ok) throw new Error(value.error || `the server answered ${answer.status}`);
  return value;
};

T.status = function (text) { T.$("status").textContent = text || ""; };

// "Your" for the person's own seat ("You"), "<name>'s" for the others.
T.whose = (name) => (name === "You" ? "your" : `${name}'s`);
T.Whose = (name) => (name === "You" ? "Your" : `${name}'s`);

// The server's lists (GET /api/options): the decision names the state uses (T.decision.DRAW
// is "draw", ...) and the event kinds (an event of another kind is drawn plainly).
T.decision = {};
T.eventKinds = new Set();
T.ready = (async () => {
  T.options = await T.api("GET", "/api/options");
  for (const name of T.options.decisions) T.decision[name.toUpperCase()] = name;
  T.eventKinds = new Set(T.options.event_kinds);
})();

T.percent = (x) => (100 * x).toFixed(1) + "%";

T.resultText = function (names, winners, placings, roundsWon, truncated, episode) {
  if (truncated) return "The game was cut off at the turn limit: nobody won.";
  if (!winners || winners.length === 0) return "The game was not finished.";
  const who = winners.map((p) => names[p]).join(" and ");
  const noun = episode === "round" ? "deal" : "game";
  const lines = [winners.length > 1 ? `${who} share the win.` : `${who} won the ${noun}` +
    (names[winners[0]] === "You" ? "!" : ".")];
  lines.push("Rounds won: " + roundsWon.map((w, p) => `${names[p]} ${w}`).join(", "));
  if (placings) {
    const order = names.map((_, p) => p).sort((a, b) => placings[a] - placings[b]);
    lines.push("Places: " + order.map((p) => `${placings[p]}. ${names[p]}`).join(", "));
  }
  return lines.join("\n");
};

// Tabs: #play, #watch[/log/FILE | /report/REPORT/FILE], #rank[/REPORT].
T.views = {};
T.route = function () {
  const parts = location.hash.replace(/^#/, "").split("/").map(decodeURIComponent);
  const name = T.views[parts[0]] ? parts[0] : "play";
  for (const key of Object.keys(T.views)) {
    T.$("view-" + key).hidden = key !== name;
    T.$("tab-" + key).classList.toggle("active", key === name);
  }
  T.current = name;
  T.ready.then(() => T.views[name].show(parts.slice(1)), (error) => T.status(error.message));
};

document.addEventListener("DOMContentLoaded", () => {
  window.addEventListener("hashchange", T.route);
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea")) return;
    const view = T.views[T.current];
    if (view && view.key && view.key(event)) event.preventDefault();
  });
  T.route();
});
