"""An evaluate.py report (its ``--json``) checked and shaped for the leaderboard page.

Reports come from files, so every field the page uses is type-checked and bounded here; the
page gets the agents (win rate, 95% interval, placing, rating), the head-to-head pairs and,
when the report has saved games (``"games": {"dir": ..., "index": [...]}``), the games of each
pairing to open in the watch view.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from agents.play.game_log import MAX_NAME
from trash_env.rules import Rules

REPORT_FORMAT = "trash_env.evaluate/1"
MAX_REPORT_BYTES = 32 * 2**20
MAX_AGENTS = 64
MAX_GAMES_LISTED = 100_000
GAME_FILE = re.compile(r"[0-9]{6,9}\.json")


def _fail(field: str, problem: str) -> ValueError:
    return ValueError(f"not an evaluate.py report: {field} {problem}"[:300])


def _number(field: str, value: object, low: float = -math.inf, high: float = math.inf) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not (math.isfinite(value) and low <= value <= high)
    ):
        raise _fail(field, f"must be a number from {low:g} to {high:g}")
    return float(value)


def _text(field: str, value: object) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= MAX_NAME:
        raise _fail(field, f"must be a text of 1 to {MAX_NAME} characters")
    return value


def _interval(field: str, value: object) -> list[float]:
    if not isinstance(value, list) or len(value) != 2:
        raise _fail(field, "must be a [low, high] pair")
    low, high = (_number(field, v, 0, 1) for v in value)
    return [low, high]


def changed_rules(rules: Rules) -> list[str]:
    """The options that differ from the standard game, as ``name=value``."""
    standard = Rules(num_players=rules.num_players)
    return [f"{k}={v}" for k, v in rules.to_dict().items() if getattr(standard, k) != v]


def parse_report(data: bytes) -> dict:
    """The checked report; ValueError with a one-line reason otherwise."""
    if len(data) > MAX_REPORT_BYTES:
        raise ValueError(f"not an evaluate.py report: larger than {MAX_REPORT_BYTES >> 20} MiB")
    try:
        report = json.loads(data.decode("utf-8"), parse_constant=lambda c: None)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ValueError(f"not an evaluate.py report: not JSON ({error})"[:300]) from None
    if not isinstance(report, dict) or report.get("format") != REPORT_FORMAT:
        raise ValueError(f"not an evaluate.py report (format {REPORT_FORMAT})")
    order = report.get("agents_order")
    if not isinstance(order, list) or not 0 < len(order) <= MAX_AGENTS:
        raise _fail("agents_order", f"must list 1 to {MAX_AGENTS} agents")
    order = [_text(f"agents_order[{i}]", s) for i, s in enumerate(order)]
    try:
        rules = Rules.from_options(**report.get("rules", {}))
    except (TypeError, ValueError) as error:
        raise _fail("rules", f"are not valid ({error})") from None
    agents_in = report.get("agents")
    if not isinstance(agents_in, dict):
        raise _fail("agents", "must be an object")
    agents = []
    for spec in order:
        a = agents_in.get(spec)
        if not isinstance(a, dict) or not isinstance(a.get("rating"), dict):
            raise _fail(f"agents[{spec!r}]", "is missing")
        placing = a.get("mean_placing")
        agents.append(
            {
                "spec": spec,
                "games": int(_number(f"{spec}.games", a.get("games"), 0)),
                "wins": _number(f"{spec}.wins", a.get("wins"), 0),
                "win_rate": _number(f"{spec}.win_rate", a.get("win_rate"), 0, 1),
                "ci95": _interval(f"{spec}.ci95", a.get("ci95")),
                "mean_placing": None
                if placing is None
                else _number(f"{spec}.mean_placing", placing),
                "mean_return": _number(f"{spec}.mean_return", a.get("mean_return"), -1, 1e9),
                "rating": _number(f"{spec}.rating.mu", a["rating"].get("mu")),
                "rating_sigma": _number(f"{spec}.rating.sigma", a["rating"].get("sigma"), 0),
            }
        )
    pairs_in = report.get("pairs", {})
    if not isinstance(pairs_in, dict):
        raise _fail("pairs", "must be an object")
    pairs = []
    for key in list(pairs_in)[: MAX_AGENTS * MAX_AGENTS]:
        p = pairs_in[key]
        if not isinstance(p, dict):
            raise _fail(f"pairs[{key!r}]", "must be an object")
        a, b = _text(f"{key}.agent", p.get("agent")), _text(f"{key}.opponent", p.get("opponent"))
        if a not in order or b not in order:
            raise _fail(f"pairs[{key!r}]", "names an agent not in agents_order")
        pairs.append(
            {
                "agent": a,
                "opponent": b,
                "rate": _number(f"{key}.rate", p.get("rate"), 0, 1),
                "ci95": _interval(f"{key}.ci95", p.get("ci95")),
                "comparisons": int(_number(f"{key}.comparisons", p.get("comparisons"), 0)),
            }
        )
    return {
        "agents": agents,
        "pairs": pairs,
        "rules": rules.to_dict(),
        "changed_rules": changed_rules(rules),
        "par": 1 / rules.num_players,
        "seed": report.get("seed") if isinstance(report.get("seed"), int) else None,
        "deals": report.get("deals") if isinstance(report.get("deals"), int) else None,
        "saved": _saved_games(report.get("games"), order),
    }


def _saved_games(games: object, order: list[str]) -> dict | None:
    """The saved-games index (``games.dir`` and ``games.index``), or None if the report has none.
    Each entry keeps its file, the spec of every seat and the winners."""
    if not isinstance(games, dict) or "index" not in games:
        return None
    folder = games.get("dir")
    index = games.get("index")
    if not isinstance(folder, str) or not 0 < len(folder) <= 4096:
        raise _fail("games.dir", "must be a folder name")
    if not isinstance(index, list) or len(index) > MAX_GAMES_LISTED:
        raise _fail("games.index", f"must be a list of at most {MAX_GAMES_LISTED} games")
    entries = []
    for i, entry in enumerate(index):
        if not isinstance(entry, dict):
            raise _fail(f"games.index[{i}]", "must be an object")
        file, specs, winners = entry.get("file"), entry.get("specs"), entry.get("winners")
        if not isinstance(file, str) or not GAME_FILE.fullmatch(file):
            raise _fail(f"games.index[{i}].file", "must be a file name like 000000.json")
        if not isinstance(specs, list) or not all(s in order for s in specs):
            raise _fail(f"games.index[{i}].specs", "must list agents of agents_order")
        if not isinstance(winners, list) or not all(
            isinstance(w, int) and not isinstance(w, bool) and 0 <= w < len(specs) for w in winners
        ):
            raise _fail(f"games.index[{i}].winners", "must list seats")
        entries.append({"file": file, "specs": specs, "winners": winners})
    return {"dir": folder, "index": entries}


def games_folder(saved_dir: str, report_path: Path, allowed: list[Path]) -> Path | None:
    """The folder of a report's saved games: ``saved_dir`` as written (absolute, or relative
    to the report's folder or to the working directory), and only if it lies inside one of
    the ``allowed`` folders."""
    given = Path(saved_dir)
    candidates = [given] if given.is_absolute() else [report_path.parent / given, given]
    for candidate in candidates:
        try:
            resolved = candidate.resolve()
        except OSError:
            continue
        if resolved.is_dir() and any(
            resolved == a.resolve() or a.resolve() in resolved.parents for a in allowed
        ):
            return resolved
    return None
