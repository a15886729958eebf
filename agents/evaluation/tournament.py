"""Tournaments between agents with duplicate deals: who plays whom, on which deal, with which
seeds, and the worker that plays a range of deals. :func:`agents.evaluation.evaluate` schedules
the ranges, :mod:`agents.evaluation.scoring` counts the games.

Fair by construction:

- **Line-ups.** With as many agent specs as seats, the one line-up is the list itself. With fewer
  specs than seats, every multiset of specs that fills the seats with each spec at least once
  (2 specs, 4 seats: 3+1, 2+2 and 1+3 copies). With more specs than seats, every combination
  of ``num_players`` distinct specs from the list. A line-up is seated in list order (copies
  side by side). A one-seat tournament (``one_seat=True``, two specs) plays only the line-up
  of the first spec once and the second in every other seat.
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
- **Workers.** A worker plays whole deals (:func:`play_deals` over a range of deal numbers), in
  this process or another; its games depend on the deal numbers only, never on which worker
  played them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.bots.base import Agent, make_agent, parse_spec
from agents.play.game_log import build_log, write_game_file
from trash_env.engine import Game
from trash_env.match import Match
from trash_env.rules import Rules

SEATINGS = ("rotations", "permutations")


# ---------------------------------------------------------------------------- line-ups


def lineups(
    specs: Sequence[str], num_players: int, one_seat: bool = False
) -> list[tuple[str, ...]]:
    """The line-ups a tournament plays (see the module docstring), in a fixed order.

    ``one_seat``: only the line-up of the first of two specs in one seat and the second in
    every other (the figure a learner's target is judged by: its share against par)."""
    specs = list(specs)
    if not specs:
        raise ValueError("agents: give at least one agent spec")
    if len(set(specs)) != len(specs):
        raise ValueError(f"agents: each spec once, got {' '.join(specs)}")
    m, n = len(specs), num_players
    if one_seat:
        if m != 2:
            raise ValueError(
                "one_seat (--one-seat) seats the first agent once against copies of the "
                f"second: give exactly two agent specs, got {m}"
            )
        return [(specs[0],) + (specs[1],) * (n - 1)]
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


@dataclass(frozen=True)
class GameColumns:
    """The results of many games as arrays, one row a game (what the batched engine produces):
    :meth:`agents.evaluation.scoring.Tally.add_columns` counts them without a Python object
    per game; :meth:`results` gives the same games as :class:`GameResult` objects.

    ``orders`` lists seat orders and ``order[g]`` is game ``g``'s; ``winners`` is a boolean
    ``(games, players)`` mask; ``placings`` holds any value in a truncated game's row."""

    deal: np.ndarray
    lineup: np.ndarray
    seating: np.ndarray
    orders: list[tuple[str, ...]]
    order: np.ndarray
    first_player: np.ndarray
    winners: np.ndarray
    placings: np.ndarray
    returns: np.ndarray
    rounds: np.ndarray
    turns: np.ndarray
    truncated: np.ndarray

    def __len__(self) -> int:
        return len(self.deal)

    def results(self) -> list[GameResult]:
        """Every game as a :class:`GameResult`, in row order."""
        seats = [self.orders[k] for k in self.order.tolist()]
        placings = self.placings.tolist()
        returns = self.returns.tolist()
        rounds, turns = self.rounds.tolist(), self.turns.tolist()
        truncated = self.truncated.tolist()
        firsts = self.first_player.tolist()
        winners = [tuple(np.flatnonzero(row).tolist()) for row in self.winners]
        rows = zip(self.deal.tolist(), self.lineup.tolist(), self.seating.tolist(), strict=True)
        return [
            GameResult(
                deal=d,
                lineup=li,
                seating=si,
                seats=seats[g],
                first_player=firsts[g],
                winners=winners[g],
                placings=None if truncated[g] else tuple(placings[g]),
                returns=tuple(returns[g]),
                rounds=rounds[g],
                turns=turns[g],
                truncated=truncated[g],
            )
            for g, (d, li, si) in enumerate(rows)
        ]


def deal_seed(seed: int, deal: int, num_players: int) -> tuple[int, int]:
    """The Game seed and first seat of deal ``deal``: from the master seed and ``deal`` only."""
    state = np.random.SeedSequence(seed, spawn_key=(deal,)).generate_state(2, np.uint64)
    return int(state[0]), int(state[1] % num_players)


def agent_seed(seed: int, deal: int, lineup: int, seating: int, seat: int) -> int:
    state = np.random.SeedSequence(seed, spawn_key=(deal, lineup, seating, seat, 1))
    return int(state.generate_state(1, np.uint64)[0])


def agent_seeds(
    seed: int, deal: np.ndarray, lineup: np.ndarray, seating: np.ndarray, seat: np.ndarray
) -> np.ndarray:
    """:func:`agent_seed` of many seats at once (uint64 array, the same numbers)."""
    keys = np.stack([deal, lineup, seating, seat, np.ones_like(deal)], axis=1)
    return spawned_states(seed, keys, 1)[:, 0]


def deal_seeds(seed: int, deals: np.ndarray, num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`deal_seed` of many deals at once: the Game seeds (uint64) and first seats."""
    state = spawned_states(seed, np.asarray(deals).reshape(-1, 1), 2)
    return state[:, 0], (state[:, 1] % np.uint64(num_players)).astype(np.int64)


# numpy's SeedSequence constants (numpy/random/bit_generator.pyx).
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _POOL = 0xCA01F9DD, 0x4973F715, 4


def spawned_states(seed: int, keys: np.ndarray, words: int) -> np.ndarray:
    """``SeedSequence(seed, spawn_key=tuple(keys[i])).generate_state(words, uint64)`` for
    every row ``i`` at once, as a ``(rows, words)`` uint64 array.

    Why: the seeds of a batched evaluation's 10,000 games took longer one SeedSequence at a
    time than the games. This is numpy's algorithm (hash the entropy into a pool of four
    32-bit words, mix, draw) on arrays; tests/test_evaluation.py holds it to SeedSequence.
    Keys of 2**32 or more (several words each) go to SeedSequence one row at a time."""
    keys = np.asarray(keys)
    if keys.size and (keys.min() < 0 or keys.max() >= 2**32):
        return np.array(
            [
                np.random.SeedSequence(seed, spawn_key=tuple(int(k) for k in row)).generate_state(
                    words, np.uint64
                )
                for row in keys
            ],
            np.uint64,
        ).reshape(len(keys), words)
    u = np.uint32
    rows = keys.shape[0]
    run = [(seed >> (32 * i)) & 0xFFFFFFFF for i in range(max(1, -(-seed.bit_length() // 32)))]
    run += [0] * (_POOL - len(run))  # a spawn key pads the seed's words to the pool's size
    entropy = [np.full(rows, w, u) for w in run] + list(keys.T.astype(u))
    const = u(_INIT_A)

    def hashmix(value: np.ndarray) -> np.ndarray:
        nonlocal const
        value = value ^ const
        const = u(const * u(_MULT_A))
        value = (value * const).astype(u)
        return value ^ (value >> u(16))

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        out = (u(_MIX_L) * x - u(_MIX_R) * y).astype(u)
        return out ^ (out >> u(16))

    with np.errstate(over="ignore"):
        pool = [hashmix(entropy[i]) for i in range(_POOL)]
        for src in range(_POOL):
            for dst in range(_POOL):
                if src != dst:
                    pool[dst] = mix(pool[dst], hashmix(pool[src]))
        for src in range(_POOL, len(entropy)):
            for dst in range(_POOL):
                pool[dst] = mix(pool[dst], hashmix(entropy[src]))
        const = u(_INIT_B)
        state = np.empty((rows, 2 * words), u)
        for i in range(2 * words):
            value = pool[i % _POOL] ^ const
            const = u(const * u(_MULT_B))
            value = value * const
            state[:, i] = value ^ (value >> u(16))
    low, high = state[:, 0::2].astype(np.uint64), state[:, 1::2].astype(np.uint64)
    return low | (high << np.uint64(32))


def play_game(
    rules: Rules,
    agents: Sequence[Agent],
    seed: int | None,
    first_player: int | None = None,
    agent_seeds: Sequence[int | None] | None = None,
    on_action: Callable[[int, int], None] | None = None,
) -> Game:
    """Play one game on the engine, ``agents[p]`` at seat ``p``; return the finished Game.

    Every agent gets its observation (None if it does not use it), mask and a PublicView; a
    "Trash!" call is made for it (bots always call). An illegal action raises ValueError
    naming the agent. ``on_action(player, action)`` is called before every step."""
    game = Game(rules, seed=seed, first_player=first_player)
    n = game.num_players
    if len(agents) != n:
        raise ValueError(f"play_game: {n} seats need {n} agents, got {len(agents)}")
    for p, agent in enumerate(agents):
        agent.reset(seed=None if agent_seeds is None else agent_seeds[p])
    return Match(game, agents, on_action=on_action).play()


def game_file(index: int) -> str:
    """The file name of game ``index`` (deal-major: deal, line-up, seating) in a saved folder."""
    return f"{index:06d}.json"


def check_specs(specs: Sequence[str]) -> None:
    """Build every spec once so that a bad one fails before any game (clear ValueError)."""
    for spec in specs:
        if parse_spec(spec)[0] == "human":
            raise ValueError(
                "agents: 'human' cannot sit in a tournament; use python -m "
                "agents.play to play against the bots"
            )
        make_agent(spec, seed=0)


@dataclass(frozen=True)
class Plan:
    """What every worker of one tournament plays: the rules, the seat orders of each line-up
    (``seatings[lineup][seating]``), the master seed, and the folder where each game's log is
    saved as ``<6-digit game index>.json`` (None: not saved)."""

    rules: Rules
    seatings: list[list[tuple[str, ...]]]
    seed: int
    save_dir: str | None = None

    @property
    def games_per_deal(self) -> int:
        return sum(len(orders) for orders in self.seatings)


class _Worker:
    """A worker's plan and agents, one per (spec, seat), built once and reset before every
    game."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.agents: dict[tuple[str, int], Agent] = {}

    def seat(self, spec: str, seat: int) -> Agent:
        key = (spec, seat)
        if key not in self.agents:
            self.agents[key] = make_agent(spec)
        return self.agents[key]


_worker: _Worker | None = None


def start_worker(plan: Plan) -> None:
    """Set up this process to play ``plan`` (agents are built on first use, then kept)."""
    global _worker
    if _worker is None or _worker.plan != plan:
        _worker = _Worker(plan)


def stop_worker() -> None:
    """Drop this process's agents (the in-process evaluation ends with it)."""
    global _worker
    _worker = None


def _appender(actions: list[tuple[int, int]]) -> Callable[[int, int], None]:
    return lambda player, action: actions.append((player, action))


def play_deals(first: int, stop: int) -> list[GameResult]:
    """Play deals ``first`` to ``stop - 1`` of the plan :func:`start_worker` set: every
    line-up in every seating, in that order."""
    if _worker is None:
        raise RuntimeError("play_deals: start_worker(plan) was not called in this process")
    plan, out = _worker.plan, []
    rules, seed, n = plan.rules, plan.seed, plan.rules.num_players
    for d in range(first, stop):
        game_seed, first_seat = deal_seed(seed, d, n)
        index = d * plan.games_per_deal
        for li, orders in enumerate(plan.seatings):
            for si, seats in enumerate(orders):
                agents = [_worker.seat(spec, p) for p, spec in enumerate(seats)]
                seeds = [agent_seed(seed, d, li, si, p) for p in range(n)]
                actions: list[tuple[int, int]] = []
                record = None if plan.save_dir is None else _appender(actions)
                game = play_game(rules, agents, game_seed, first_seat, seeds, record)
                if plan.save_dir is not None:
                    log = build_log(
                        game, seed=game_seed, seat=None, specs=seats, names=seats, actions=actions
                    )
                    write_game_file(Path(plan.save_dir) / game_file(index), log)
                out.append(
                    GameResult(
                        deal=d,
                        lineup=li,
                        seating=si,
                        seats=seats,
                        first_player=first_seat,
                        winners=tuple(game.winners),
                        placings=None if game.placings is None else tuple(game.placings),
                        returns=tuple(game.returns()),
                        rounds=game.deal_number,
                        turns=game.turns,
                        truncated=game.truncated,
                    )
                )
                index += 1
    return out
