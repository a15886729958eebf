"""Tournaments between agents with duplicate deals: :func:`evaluate` returns a :class:`Report`.

Fair by construction:

- **Line-ups.** With as many agent specs as seats, the one line-up is the list itself. With fewer
  specs than seats, every multiset of specs that fills the seats with each spec at least once
  (2 specs, 4 seats: 3+1, 2+2 and 1+3 copies). With more specs than seats, every combination
  of ``num_players`` distinct specs from the list. A line-up is seated in list order (copies
  side by side).
- **Seatings.** Every line-up is played in every rotation of its seats (``seatings="rotations"``,
  each spec sits at each seat equally often) or in every distinct seat permutation
  (``seatings="permutations"``, also every turn order; n! orders).
- **Duplicate deals.** Deal ``d`` has one seed, derived from the master seed and ``d`` only; every
  game of every line-up and seating of deal ``d`` starts from a Game with that seed and the same
  first seat, so the same shuffled deck is dealt to every seat order and the luck of the deal
  cancels. Later rounds are shuffled by each game's own generator, which is the same too; the
  deals stay identical as long as play does, and part once two games differ (reshuffles are
  drawn from the same generator, but the piles being shuffled differ). Agents' seeds derive
  from the master seed, the deal, the line-up, the seating and the seat.
- **Workers.** ``workers`` processes play whole deals; results are gathered in deal order and
  every figure is computed in the main process in that order, so a seed gives the same numbers
  whatever ``workers`` is. Workers are spawned, so they re-import the calling script: a script
  must call :func:`evaluate` under ``if __name__ == "__main__":``. A worker that dies (that
  missing guard, a crash, ``os._exit``) ends the evaluation with a ``RuntimeError`` saying so,
  instead of the endless respawning of a ``multiprocessing.Pool``.

Counting: a spec's ``games`` counts each seat it held (a line-up with 3 copies of a spec counts 3
per game). A game with ``k`` winners gives each ``1/k`` of a win; a truncated game gives no win.
``win_rate = wins / games`` with a 95% Wilson interval (games treated as independent; duplicate
deals make results negatively correlated between seatings, so the interval is, if anything,
conservative for comparisons). ``par`` is ``1 / num_players``, the win rate of an agent among
copies of itself. Head-to-head: over every game where specs A and B both sit, every pair of
seats (A's, B's) scores 1 when A placed better, 1/2 on equal placings (and in truncated games).
The rating is TrueSkill (``trueskill`` library), one update per game in deal order, placings as
ranks; a spec holding several seats of a game is rated as separate players from its rating and
then given the mean of their updated ratings.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent, make_agent, parse_spec
from trash_env.cli import atomic_write_bytes, atomic_write_text, safe_text
from trash_env.engine import CALL_TRASH, Decision, Game
from trash_env.observation import action_mask, encode_observation
from trash_env.rules import Rules
from trash_env.view import PublicView

SEATINGS = ("rotations", "permutations")
BACKENDS = ("local", "ray")  # ray: agents/ray_backend.py (the deal chunks as Ray tasks)
Z95 = 1.959963984540054
MAX_GAMES = 10_000_000  # a ceiling on one evaluation: a typo fails at once, not after days
MAX_WORKERS = 256


# ---------------------------------------------------------------------------- statistics


def wilson_interval(wins: float, games: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a rate ``wins / games`` (fractional wins allowed)."""
    if games <= 0:
        return (0.0, 1.0)
    p = wins / games
    denom = 1.0 + z * z / games
    centre = (p + z * z / (2 * games)) / denom
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denom
    low = 0.0 if wins <= 0 else max(0.0, centre - half)
    high = 1.0 if wins >= games else min(1.0, centre + half)
    return (low, high)


# ---------------------------------------------------------------------------- line-ups


def lineups(specs: Sequence[str], num_players: int) -> list[tuple[str, ...]]:
    """The line-ups a tournament plays (see the module docstring), in a fixed order."""
    specs = list(specs)
    if not specs:
        raise ValueError("agents: give at least one agent spec")
    if len(set(specs)) != len(specs):
        raise ValueError(f"agents: each spec once, got {' '.join(specs)}")
    m, n = len(specs), num_players
    if m == n:
        return [tuple(specs)]
    if m > n:
        return list(itertools.combinations(specs, n))
    out = []
    for extra in itertools.combinations_with_replacement(range(m), n - m):
        counts = [1 + extra.count(i) for i in range(m)]
        out.append(tuple(s for s, c in zip(specs, counts, strict=True) for _ in range(c)))
    return out


def seat_orders(lineup: Sequence[str], how: str = "rotations") -> list[tuple[str, ...]]:
    """Seat orders of a line-up: its ``n`` rotations, or its distinct permutations."""
    if how not in SEATINGS:
        raise ValueError(f"seatings must be one of {', '.join(SEATINGS)}, got {how!r}")
    n = len(lineup)
    if how == "rotations":
        return [tuple(lineup[(i + r) % n] for i in range(n)) for r in range(n)]
    return sorted(set(itertools.permutations(lineup)), key=lambda s: [lineup.index(x) for x in s])


# ---------------------------------------------------------------------------- playing


@dataclass(frozen=True)
class GameResult:
    """What one game of a tournament produced (small, picklable)."""

    deal: int
    lineup: int
    seating: int
    seats: tuple[str, ...]
    first_player: int
    winners: tuple[int, ...]
    placings: tuple[int, ...] | None
    returns: tuple[float, ...]
    rounds: int
    turns: int
    truncated: bool


def deal_seed(seed: int, deal: int, num_players: int) -> tuple[int, int]:
    """The Game seed and first seat of deal ``deal``: from the master seed and ``deal`` only."""
    state = np.random.SeedSequence(seed, spawn_key=(deal,)).generate_state(2, np.uint64)
    return int(state[0]), int(state[1] % num_players)


def agent_seed(seed: int, deal: int, lineup: int, seating: int, seat: int) -> int:
    state = np.random.SeedSequence(seed, spawn_key=(deal, lineup, seating, seat, 1))
    return int(state.generate_state(1, np.uint64)[0])


def play_game(
    rules: Rules,
    agents: Sequence[Agent],
    seed: int | None,
    first_player: int | None = None,
    agent_seeds: Sequence[int | None] | None = None,
) -> Game:
    """Play one game on the engine, ``agents[p]`` at seat ``p``; return the finished Game.

    Every agent gets its observation (None if it does not use it), mask and a PublicView; a
    "Trash!" call is made for it (bots always call). An illegal action raises ValueError
    naming the agent."""
    game = Game(rules, seed=seed, first_player=first_player)
    n = game.num_players
    if len(agents) != n:
        raise ValueError(f"play_game: {n} seats need {n} agents, got {len(agents)}")
    for p, agent in enumerate(agents):
        agent.reset(seed=None if agent_seeds is None else agent_seeds[p])
    views = [PublicView(game, p) for p in range(n)]
    call = Decision.CALL
    while not game.done:
        p = game.current
        if game.decision is call:
            game.step(CALL_TRASH)
            continue
        mask = action_mask(game, p)
        agent = agents[p]
        observation = encode_observation(game, p) if agent.uses_observation else None
        action = int(agent.act(observation, mask, views[p]))
        if not 0 <= action < len(mask) or not mask[action]:
            spec = getattr(agents[p], "spec", agents[p].name)
            raise ValueError(
                f"agent {spec!r} at seat {p} chose illegal action {action} at a "
                f"{game.decision.name} decision; legal: {np.flatnonzero(mask).tolist()}"
            )
        game.step(action)
    return game


class _Table:
    """A worker's agents, one per (spec, seat), built once and reset before every game."""

    def __init__(self) -> None:
        self.agents: dict[tuple[str, int], Agent] = {}

    def seat(self, spec: str, seat: int) -> Agent:
        key = (spec, seat)
        if key not in self.agents:
            self.agents[key] = make_agent(spec)
        return self.agents[key]


_WORKER: dict[str, Any] = {}


def _init_worker(
    rules: Rules, plan: list[list[tuple[str, ...]]], seed: int, pool: bool = False
) -> None:
    if pool:  # one thread per worker process: a trained policy's torch must not oversubscribe
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        os.environ.setdefault("MKL_NUM_THREADS", "1")
    _WORKER.update(rules=rules, plan=plan, seed=seed, table=_Table())


def _play_deals(deals: Sequence[int]) -> list[GameResult]:
    rules, plan, seed, table = (_WORKER[k] for k in ("rules", "plan", "seed", "table"))
    out = []
    n = rules.num_players
    for d in deals:
        game_seed, first = deal_seed(seed, d, n)
        for li, orders in enumerate(plan):
            for si, seats in enumerate(orders):
                agents = [table.seat(spec, p) for p, spec in enumerate(seats)]
                seeds = [agent_seed(seed, d, li, si, p) for p in range(n)]
                game = play_game(rules, agents, game_seed, first, seeds)
                out.append(
                    GameResult(
                        deal=d, lineup=li, seating=si, seats=seats, first_player=first,
                        winners=tuple(game.winners),
                        placings=None if game.placings is None else tuple(game.placings),
                        returns=tuple(game.returns()), rounds=game.deal_number,
                        turns=game.turns, truncated=game.truncated,
                    )
                )
    return out


# ---------------------------------------------------------------------------- the report


@dataclass
class Report:
    """Every figure of a tournament. ``to_json()`` gives a plain dict (see :func:`evaluate`)."""

    specs: list[str]
    rules: Rules
    seed: int
    seatings: str
    lineups: list[tuple[str, ...]]
    deals: int
    results: list[GameResult] = field(repr=False)
    agents: dict[str, dict] = field(default_factory=dict)
    pairs: dict[str, dict] = field(default_factory=dict)
    seats: list[dict] = field(default_factory=list)
    first_seat: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)

    @property
    def games(self) -> int:
        return len(self.results)

    def head_to_head(self, a: str, b: str) -> dict | None:
        return self.pairs.get(f"{a} vs {b}")

    def to_json(self) -> dict:
        """A JSON-ready dict: the settings, ``agents[spec]`` (games, wins, win_rate, ci95, ...),
        ``pairs["A vs B"]``, ``seats``, ``first_seat`` and the game ``summary``."""
        return {
            "format": "trash_env.evaluate/1",
            "agents_order": self.specs,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "seatings": self.seatings,
            "lineups": [list(x) for x in self.lineups],
            "deals": self.deals,
            "games": self.games,
            "games_per_deal": self.games // self.deals if self.deals else 0,
            "par": 1.0 / self.rules.num_players,
            "agents": self.agents,
            "pairs": self.pairs,
            "seats": self.seats,
            "first_seat": self.first_seat,
            "summary": self.summary,
        }

    def write_json(self, path: str | Path) -> None:
        """The report as JSON, written atomically (temp file + rename)."""
        atomic_write_text(path, json.dumps(self.to_json(), indent=2) + "\n")

    def write_csv(self, path: str | Path) -> None:
        """One row per agent, then one row per ordered pair (column ``kind`` tells which);
        written atomically."""
        handle = io.StringIO(newline="")
        out = csv.writer(handle)
        out.writerow(["kind", "agent", "opponent", "games", "wins", "rate", "ci95_low",
                      "ci95_high", "mean_placing", "mean_return", "rating_mu",
                      "rating_sigma"])
        for spec, a in self.agents.items():
            out.writerow(["agent", spec, "", a["games"], a["wins"], a["win_rate"],
                          a["ci95"][0], a["ci95"][1], a["mean_placing"], a["mean_return"],
                          a["rating"]["mu"], a["rating"]["sigma"]])
        for pair in self.pairs.values():
            out.writerow(["pair", pair["agent"], pair["opponent"], pair["comparisons"],
                          pair["wins"], pair["rate"], pair["ci95"][0], pair["ci95"][1],
                          "", "", "", ""])
        atomic_write_text(path, handle.getvalue())

    def table(self) -> str:
        """The report as text: settings, per-agent table, head-to-head, seats and game lengths."""
        r = self.rules
        s = self.summary
        lines = [
            f"{self.deals} deals x {self.games // max(1, self.deals)} games per deal = "
            f"{self.games} games; {r.num_players} players, episode={r.episode}, "
            f"{len(self.lineups)} line-up(s), seatings={self.seatings}, seed={self.seed}",
            f"mean rounds per game {s['mean_rounds']:.2f}, mean turns {s['mean_turns']:.1f}, "
            f"truncated {s['truncated']}; par win rate {1 / r.num_players:.3f}",
            "",
        ]
        names = {spec: safe_text(spec) for spec in self.specs}  # paths may hold escapes
        width = max(12, *(len(x) for x in names.values()))
        lines.append(f"{'agent':<{width}}  {'games':>7}  {'wins':>9}  {'win rate':>8}  "
                     f"{'95% CI':>15}  {'placing':>7}  {'TrueSkill':>13}")
        for spec in sorted(self.agents, key=lambda x: -self.agents[x]["win_rate"]):
            a = self.agents[spec]
            lo, hi = a["ci95"]
            rating = a["rating"]
            placing = "-" if a["mean_placing"] is None else f"{a['mean_placing']:.2f}"
            lines.append(
                f"{names[spec]:<{width}}  {a['games']:>7}  {a['wins']:>9.1f}  "
                f"{a['win_rate']:>8.3f}  "
                f"[{lo:.3f}, {hi:.3f}]  {placing:>7}  "
                f"{rating['mu']:>6.2f}+-{rating['sigma']:.2f}"
            )
        if self.pairs:
            lines += ["", "head-to-head (row beats column; 95% CI):"]
            for pair in self.pairs.values():
                lo, hi = pair["ci95"]
                lines.append(f"  {names[pair['agent']]} vs {names[pair['opponent']]}: "
                             f"{pair['rate']:.3f} "
                             f"[{lo:.3f}, {hi:.3f}] over {pair['comparisons']} comparisons")
        f = self.first_seat
        lines += [
            "",
            f"first seat (plays first in deal 1): win rate {f['win_rate']:.3f} "
            f"[{f['ci95'][0]:.3f}, {f['ci95'][1]:.3f}] (par {1 / r.num_players:.3f}, "
            f"advantage {f['advantage']:+.3f})",
        ]
        return "\n".join(lines)

    def plot(self, path: str | Path) -> None:
        """PNG: win rates with 95% intervals (par as a line) and the head-to-head matrix."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        specs = self.specs
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
        rates = [self.agents[s]["win_rate"] for s in specs]
        lows = [self.agents[s]["win_rate"] - self.agents[s]["ci95"][0] for s in specs]
        highs = [self.agents[s]["ci95"][1] - self.agents[s]["win_rate"] for s in specs]
        left.bar(range(len(specs)), rates, yerr=[lows, highs], capsize=5, color="#4c72b0")
        left.axhline(1.0 / self.rules.num_players, color="grey", linestyle="--", label="par")
        left.set_xticks(range(len(specs)), specs, rotation=20, ha="right")
        left.set_ylabel("win rate (95% CI)")
        left.set_ylim(0, 1)
        left.legend()
        left.set_title(f"{self.rules.num_players} players, {self.games} games")
        matrix = np.full((len(specs), len(specs)), np.nan)
        for i, a in enumerate(specs):
            for j, b in enumerate(specs):
                pair = self.head_to_head(a, b)
                if pair is not None:
                    matrix[i, j] = pair["rate"]
        image = right.imshow(matrix, vmin=0, vmax=1, cmap="RdBu")
        for i in range(len(specs)):
            for j in range(len(specs)):
                if not np.isnan(matrix[i, j]):
                    right.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center")
        right.set_xticks(range(len(specs)), specs, rotation=20, ha="right")
        right.set_yticks(range(len(specs)), specs)
        right.set_title("head-to-head: row beats column")
        fig.colorbar(image, ax=right)
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=100)
        plt.close(fig)
        atomic_write_bytes(path, buffer.getvalue())


def _summarise(report: Report) -> None:
    n = report.rules.num_players
    specs = report.specs
    games = dict.fromkeys(specs, 0)
    wins = dict.fromkeys(specs, 0.0)
    returns = dict.fromkeys(specs, 0.0)
    placing_sum = dict.fromkeys(specs, 0.0)
    placed = dict.fromkeys(specs, 0)
    pair_n: dict[tuple[str, str], int] = {}
    pair_w: dict[tuple[str, str], float] = {}
    seat_games = [0] * n
    seat_wins = [0.0] * n
    first_wins = 0.0
    rounds = turns = truncated = 0
    for res in report.results:
        k = len(res.winners)
        share = [0.0] * n
        for p in res.winners:
            share[p] = 1.0 / k
        for p, spec in enumerate(res.seats):
            games[spec] += 1
            wins[spec] += share[p]
            returns[spec] += res.returns[p]
            seat_games[p] += 1
            seat_wins[p] += share[p]
            if res.placings is not None:
                placing_sum[spec] += res.placings[p]
                placed[spec] += 1
        first_wins += share[res.first_player]
        for p, a in enumerate(res.seats):
            for q, b in enumerate(res.seats):
                if a == b:
                    continue
                pair_n[a, b] = pair_n.get((a, b), 0) + 1
                if res.placings is None or res.placings[p] == res.placings[q]:
                    score = 0.5
                else:
                    score = float(res.placings[p] < res.placings[q])
                pair_w[a, b] = pair_w.get((a, b), 0.0) + score
        rounds += res.rounds
        turns += res.turns
        truncated += res.truncated
    ratings = _trueskill(report)
    total = max(1, report.games)
    for spec in specs:
        g = games[spec]
        report.agents[spec] = {
            "games": g,
            "wins": wins[spec],
            "win_rate": wins[spec] / g if g else 0.0,
            "ci95": list(wilson_interval(wins[spec], g)),
            "mean_placing": placing_sum[spec] / placed[spec] if placed[spec] else None,
            "mean_return": returns[spec] / g if g else 0.0,
            "rating": ratings[spec],
        }
    for a in specs:
        for b in specs:
            if (a, b) in pair_n:
                c, w = pair_n[a, b], pair_w[a, b]
                report.pairs[f"{a} vs {b}"] = {
                    "agent": a, "opponent": b, "comparisons": c, "wins": w, "rate": w / c,
                    "ci95": list(wilson_interval(w, c)),
                }
    report.seats = [
        {"seat": p, "games": seat_games[p], "wins": seat_wins[p],
         "win_rate": seat_wins[p] / seat_games[p] if seat_games[p] else 0.0,
         "ci95": list(wilson_interval(seat_wins[p], seat_games[p]))}
        for p in range(n)
    ]
    first_rate = first_wins / total
    report.first_seat = {
        "games": report.games, "wins": first_wins, "win_rate": first_rate,
        "ci95": list(wilson_interval(first_wins, report.games)),
        "advantage": first_rate - 1.0 / n,
    }
    report.summary = {
        "mean_rounds": rounds / total,
        "mean_turns": turns / total,
        "truncated": truncated,
    }


def _trueskill(report: Report) -> dict[str, dict]:
    import trueskill

    env = trueskill.TrueSkill(draw_probability=0.05)
    margin = trueskill.calc_draw_margin(env.draw_probability, 2, env)  # of a 1-vs-1 game
    ratings = {spec: env.create_rating() for spec in report.specs}
    for res in report.results:
        if res.placings is None:
            continue
        if len(res.seats) == 2:
            first, second = (ratings[spec] for spec in res.seats)
            new = _rate_two(env, margin, first, second, res.placings)
        else:
            groups = [(ratings[spec],) for spec in res.seats]
            new = env.rate(groups, ranks=[p - 1 for p in res.placings])
        for spec in set(res.seats):
            mine = [new[p][0] for p, s in enumerate(res.seats) if s == spec]
            mu = sum(r.mu for r in mine) / len(mine)
            sigma = sum(r.sigma for r in mine) / len(mine)
            ratings[spec] = env.create_rating(mu=mu, sigma=sigma)
    return {
        spec: {"mu": r.mu, "sigma": r.sigma, "conservative": r.mu - 3 * r.sigma}
        for spec, r in ratings.items()
    }


def _rate_two(
    env: Any, draw_margin: float, first: Any, second: Any, placings: Sequence[int]
) -> list[tuple]:
    """``env.rate([(first,), (second,)], ranks)`` of a two-player game, in closed form.

    For two teams TrueSkill's factor graph is exact in one pass (one team-difference factor,
    one truncation), so the update reduces to the library's own ``v``/``w`` functions; the
    numbers agree with ``env.rate`` to rounding (tested) at 3 us a game instead of 82. The ratings
    are updated game by game in order, so this is the serial part of every evaluation."""
    var1 = first.sigma**2 + env.tau**2
    var2 = second.sigma**2 + env.tau**2
    c = math.sqrt(var1 + var2 + 2 * env.beta**2)
    margin = draw_margin / c
    if placings[0] == placings[1]:
        diff = (first.mu - second.mu) / c
        v, w = env.v_draw(diff, margin), env.w_draw(diff, margin)
        sign = 1.0
    else:  # the difference is taken winner minus loser
        sign = 1.0 if placings[0] < placings[1] else -1.0
        diff = sign * (first.mu - second.mu) / c
        v, w = env.v_win(diff, margin), env.w_win(diff, margin)
    rate = env.create_rating
    return [
        (rate(first.mu + sign * var1 / c * v, math.sqrt(var1 * (1 - var1 / c**2 * w))),),
        (rate(second.mu - sign * var2 / c * v, math.sqrt(var2 * (1 - var2 / c**2 * w))),),
    ]


# ---------------------------------------------------------------------------- evaluate


def _refuse_in_a_bootstrapping_worker() -> None:
    """A spawned worker re-imports the main script; a script without a ``__main__`` guard
    would start an evaluation inside it. Say why, in the worker's own error."""
    process = multiprocessing.current_process()
    if multiprocessing.parent_process() is not None and getattr(process, "_inheriting", False):
        raise RuntimeError(
            "evaluate() was called while a worker process was starting: the calling script "
            "runs again in each worker (spawn start method). Put the call under "
            "`if __name__ == \"__main__\":`."
        )


def _stop(pool: ProcessPoolExecutor | None) -> None:
    """Stop a worker pool now: cancel what is queued and end its processes."""
    if pool is None:
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)


def check_specs(specs: Sequence[str]) -> None:
    """Build every spec once so that a bad one fails before any game (clear ValueError)."""
    for spec in specs:
        if parse_spec(spec)[0] == "human":
            raise ValueError("agents: 'human' cannot sit in a tournament; use python -m "
                             "agents.play to play against the bots")
        make_agent(spec, seed=0)


def evaluate(
    agent_specs: Sequence[str],
    rules: Rules | None = None,
    games: int | None = 1000,
    seed: int = 0,
    workers: int = 1,
    progress: bool | Callable[[int], None] = False,
    *,
    deals: int | None = None,
    seatings: str = "rotations",
    chunk: int | None = None,
    backend: str = "local",
) -> Report:
    """Play a duplicate-deal tournament between ``agent_specs`` and report on it.

    Args:
        agent_specs: agent spec strings (``greedy``, ``search:rollouts=50``, ``model.safetensors``).
        rules: the rules (standard 2-player game by default); ``rules.num_players`` seats.
        games: games wanted in all; rounded up to whole deals (every line-up in every seating).
        seed: master seed: deal ``d`` and every agent's seed derive from it and ``d``.
        workers: processes; the numbers do not depend on it.
        progress: show a tqdm bar (True), or call ``progress(games_done)`` after each chunk.
        deals: the number of deals, instead of ``games``.
        seatings: ``"rotations"`` or ``"permutations"`` of each line-up.
        chunk: deals per task sent to a worker (default: about 4 tasks per worker).
        backend: ``"local"`` (this machine's processes) or ``"ray"`` (Ray tasks on the Ray
            instance or cluster of :mod:`agents.ray_backend`; ``workers`` sizes the chunks and
            a local instance). The numbers do not depend on it.
    """
    _refuse_in_a_bootstrapping_worker()
    rules = rules if rules is not None else Rules()
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a trash_env.rules.Rules, got {type(rules).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer 0 or more, got {seed!r}")
    if (isinstance(workers, bool) or not isinstance(workers, int)
            or not 1 <= workers <= MAX_WORKERS):
        raise ValueError(f"workers must be an integer from 1 to {MAX_WORKERS}, got {workers!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of 'local', 'ray', got {backend!r}")
    specs = list(agent_specs)
    ups = lineups(specs, rules.num_players)
    plan = [seat_orders(up, seatings) for up in ups]
    per_deal = sum(len(orders) for orders in plan)
    if deals is None:
        if (isinstance(games, bool) or not isinstance(games, int)
                or not 1 <= games <= MAX_GAMES):
            raise ValueError(f"games must be an integer from 1 to {MAX_GAMES:,}, got {games!r}")
        deals = -(-games // per_deal)
    elif isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals must be an integer 1 or more, got {deals!r}")
    if deals * per_deal > MAX_GAMES:
        raise ValueError(f"deals: {deals:,} deals x {per_deal} games per deal is more than "
                         f"{MAX_GAMES:,} games; at most {MAX_GAMES // per_deal:,} deals")
    check_specs(specs)
    if chunk is None:
        chunk = max(1, min(64, deals // (4 * workers) or 1))
    tasks = [list(range(i, min(deals, i + chunk))) for i in range(0, deals, chunk)]
    results: list[GameResult] = []
    bar = None
    if progress is True:
        from tqdm import tqdm

        bar = tqdm(total=deals * per_deal, unit="game", desc="evaluate")
    report_progress = progress if callable(progress) else None
    try:
        if backend == "ray":
            from agents.ray_backend import ray_stream

            stream = ray_stream(rules, plan, seed, tasks, workers)
            pool = None
        elif workers == 1:
            _init_worker(rules, plan, seed)
            stream = map(_play_deals, tasks)
            pool = None
        else:
            # Not multiprocessing.Pool: it respawns a worker that dies, forever, and the caller
            # waits forever. The executor marks itself broken and says so instead.
            pool = ProcessPoolExecutor(
                workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker, initargs=(rules, plan, seed, True),
            )
            stream = pool.map(_play_deals, tasks)
        try:
            for part in stream:
                results += part
                if bar is not None:
                    bar.update(len(part))
                if report_progress is not None:
                    report_progress(len(results))
        except BrokenProcessPool:
            _stop(pool)
            raise RuntimeError(
                "evaluate(): a worker process died before finishing its deals (it crashed, "
                "was killed or exited). If evaluate() is called from a script with workers > 1, "
                "put the call under `if __name__ == \"__main__\":`: every worker starts by "
                "re-importing the script, which must not start an evaluation again. "
                "workers=1 runs in this process."
            ) from None
        except BaseException:
            _stop(pool)
            raise
        else:
            if pool is not None:
                pool.shutdown(wait=True)
    finally:
        if bar is not None:
            bar.close()
        _WORKER.clear()
    report = Report(specs=specs, rules=rules, seed=seed, seatings=seatings, lineups=ups,
                    deals=deals, results=results)
    _summarise(report)
    return report

