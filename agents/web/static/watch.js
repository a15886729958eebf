// Watch: a game log stepped through frame by frame (every action), forward and back,
// played at a chosen speed, from the public view of a seat or with every card shown.
"use strict";

(function () {
  const watch = { data: null, at: 0, timer: 0, source: "" };
  T.views.watch = watch;

  function list(selected) {
    return T.fillFiles("log-list", "/api/logs", "logs", "choose a game log",
      "no game logs yet: play a game first", selected);
  }

  async function open(path, title) {
    pause();
    T.$("watch-body").hidden = true;
    T.$("watch-title").textContent = "loading...";
    try {
      watch.data = await T.api("GET", path);
    } catch (error) {
      T.$("watch-title").textContent = error.message;
      return;
    }
    const d = watch.data;
    T.$("watch-title").textContent = `${title}: ${d.names.join(", ")}; written ${d.written}` +
      (d.finished === null ? " (no result: its actions do not replay)"
        : d.finished ? "" : " (left before its end)");
    const view = T.$("w-view");
    view.replaceChildren();
    d.names.forEach((name, p) => view.append(T.el("option", { value: p,
      text: `${T.Whose(name)} view` })));
    if (d.frames) view.append(T.el("option", { value: "all", text: "every card shown" }));
    view.value = String(d.seat);
    const frames = d.frames ? d.frames.length : d.events.length + 1;
    T.$("w-slider").max = frames - 1;
    T.$("watch-note").textContent = d.note || "";
    T.$("watch-body").hidden = false;
    go(0);
  }

  function eventsAt(i) {
    const d = watch.data;
    return d.frames ? d.frames[i].event_count : i;
  }

  function go(i) {
    const d = watch.data;
    if (!d) return;
    const last = Number(T.$("w-slider").max);
    watch.at = Math.max(0, Math.min(last, i));
    T.$("w-slider").value = watch.at;
    T.$("w-step").textContent = `step ${watch.at} of ${last}`;
    const root = T.$("watch-table");
    if (d.frames) {
      const frame = Object.assign({ names: d.names }, d.frames[watch.at]);
      const view = T.$("w-view").value;
      T.drawTable(root, frame, { me: view === "all" ? d.seat : Number(view),
        showAll: view === "all" });
    } else root.replaceChildren();
    const upto = eventsAt(watch.at);
    T.fillLog(T.$("watch-log"), d.events, upto);
    if (watch.at === last && d.finished) {
      root.append(T.el("p", { class: "panel result pre", id: "watch-result",
        text: T.resultText(d.names, d.winners, d.placings, d.rounds_won, d.truncated,
          d.rules.episode) }));
    }
    if (watch.at === last) pause();
  }

  function playing() { return watch.timer !== 0; }
  function pause() {
    clearInterval(watch.timer);
    watch.timer = 0;
    T.$("w-play").textContent = "Play";
  }
  function toggle() {
    if (playing()) return pause();
    if (watch.at >= Number(T.$("w-slider").max)) go(0);
    T.$("w-play").textContent = "Pause";
    watch.timer = setInterval(() => go(watch.at + 1), Number(T.$("w-speed").value));
  }

  let wired = false;
  function wire() {
    if (wired) return;
    wired = true;
    T.$("log-list").addEventListener("change", (e) => {
      if (e.target.value) location.hash = "#watch/log/" + encodeURIComponent(e.target.value);
    });
    T.$("w-first").addEventListener("click", () => go(0));
    T.$("w-back").addEventListener("click", () => go(watch.at - 1));
    T.$("w-fwd").addEventListener("click", () => go(watch.at + 1));
    T.$("w-last").addEventListener("click", () => go(Infinity));
    T.$("w-play").addEventListener("click", toggle);
    T.$("w-slider").addEventListener("input", (e) => go(Number(e.target.value)));
    T.$("w-view").addEventListener("change", () => go(watch.at));
    T.$("w-speed").addEventListener("change", () => { if (playing()) { pause(); toggle(); } });
  }

  watch.show = function (parts) {
    wire();
    const source = parts.join("/");
    if (parts[0] === "log" && parts[1]) {
      list(parts[1]).catch((error) => T.status(error.message));
      if (source !== watch.source) open("/api/logs/" + encodeURIComponent(parts[1]), parts[1]);
    } else if (parts[0] === "report" && parts[2]) {
      list().catch((error) => T.status(error.message));
      if (source !== watch.source) {
        open(`/api/reports/${encodeURIComponent(parts[1])}/games/${encodeURIComponent(parts[2])}`,
          `${parts[1]}, game ${parts[2]}`);
      }
    } else list().catch((error) => T.status(error.message));
    watch.source = source;
  };

  watch.key = function (event) {
    if (!watch.data) return false;
    const moves = { ArrowRight: () => go(watch.at + 1), ArrowLeft: () => go(watch.at - 1),
      Home: () => go(0), End: () => go(Infinity), " ": toggle };
    if (!(event.key in moves)) return false;
    moves[event.key]();
    return true;
  };
})();
