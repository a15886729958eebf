"""Tournaments on the batched engine (:mod:`trash_env.vector`): the same games as
:func:`agents.evaluation.tournament.play_deals`, many at once.

Why: an evaluation on the reference engine takes one Python decision at a time; here every game
of a range of deals is a slot of one :class:`~trash_env.vector.VectorGame`, the built-in bots
play inside the compiled loop and each trained policy decides for every game where it is to act
in one numpy forward pass.

Same games, decision for decision: game ``(deal, line-up, seating)`` starts as the reference
path's ``Game(rules, seed=deal seed, first_player=first seat)``; ``random`` seats draw from a
stream seeded with the same agent seed as ``RandomAgent.reset(seed)`` (numpy's PCG64 and its
``integers``, re-implemented exactly in :mod:`trash_env.vector._pcg`); ``greedy`` and
``counting`` are compiled twins of :mod:`agents.bots.heuristics` (tests/test_vector_env.py
holds them to it); a model file picks the argmax of the same network's masked logits, its
linear layers run by :mod:`agents.evaluation._forward` over every game where it is to act. One
difference can exist in principle: summed in another order, a logit may differ from the
one-row product's in its last bit, which changes an action only when two legal logits tie to
the last bit (docs/agents.md). tests/test_evaluation_batched.py compares every game's result
of both paths over every rules family.

Which agents: those whose class declares ``batch_kernel`` in its own body (``random``,
``greedy``, ``counting``; a subclass may play differently, so it does not inherit the claim)
and deterministic trained policies (model files, ``pretrained``, ``pretrained_3p``, ...). Any
other agent (``search``, a sampling policy, a user's Python agent) sends the whole evaluation
to the reference path: :func:`engine_for` says which and why.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.bots.base import make_agent
from agents.evaluation.tournament import GameColumns, Plan, agent_seeds, deal_seeds, game_file
from agents.play.game_log import build_log, write_game_file
from agents.policies.policy import PolicyAgent, PretrainedAgent
from trash_env.engine import NUM_ACTIONS, Game
from trash_env.observation import observation_size
from trash_env.rules import MAX_PLAYERS, Rules

ENGINES = ("auto", "batched", "reference")
# Games per batch: enough for the parallel kernels and the policies' matrix products to pay,
# few enough that a range's results stream into the statistics often (about 4 MB of state).
BATCH_GAMES = 8192
# Games per worker process below which ``workers > 1`` still plays in this process. One process
# already runs its kernels on every core; more processes only add the cores its serial parts
# (the policies' dense layers, Python) leave idle, and each costs a CPU second to start. On 2
# shared cores the split lost at 5,000, 20,000 and 50,000 games per worker (docs/agents.md).
SPLIT_MIN_GAMES = 100_000
# Evaluations of fewer games play on the reference engine under ``engine="auto"``: it finishes
# them before numba and the kernels would have loaded (about a second, more than the whole
# reference run; docs/agents.md has the figures).
SMALL_GAMES = 16


@dataclass(frozen=True)
class Engine:
    """The engine an evaluation plays on: ``name`` ``"batched"`` or ``"reference"``, and
    ``why`` (what made the choice), shown in the report."""

    name: str
    why: str

    def describe(self) -> str:
        return f"{self.name} ({self.why})"


def _batch_kinds() -> dict[str, int]:
    from trash_env.vector import _kernels as K

    return {"random": K.BOT_RANDOM, "greedy": K.BOT_GREEDY, "counting": K.BOT_COUNTING}


def _plays_as_policy(kind: type) -> bool:
    """Whether a PolicyAgent class acts as the argmax of ``forward``: a subclass that decides
    otherwise (its own ``act``, ``logits`` or ``forward``) is not claimed."""
    return all(
        getattr(kind, name) in (getattr(PolicyAgent, name), getattr(PretrainedAgent, name))
        for name in ("act", "logits", "forward")
    )


def batched_form(spec: str, rules: Rules) -> str | None:
    """Why ``spec`` has no batched form at ``rules`` (None: it has one)."""
    agent: Any = make_agent(spec, seed=0)
    if type(agent).__dict__.get("batch_kernel") in ("random", "greedy", "counting"):
        return None
    if isinstance(agent, PolicyAgent) and _plays_as_policy(type(agent)):
        if not agent.deterministic:
            return f"{spec!r} samples its actions (deterministic=false)"
        agent.check_rules(rules)  # pretrained picks its count's model; another count raises
        if agent.input_size != observation_size(rules.num_players):
            return f"{spec!r} reads observations of another size"
        return None
    return f"{spec!r} has no batched form"


def engine_for(
    specs: Sequence[str],
    rules: Rules,
    engine: str = "auto",
    backend: str = "local",
    games: int | None = None,
) -> Engine:
    """The engine an evaluation of ``specs`` (``games`` games, when known) plays on.
    ``engine``: ``"auto"`` (batched when every agent has a batched form, numba is installed
    and there are ``SMALL_GAMES`` games or more), ``"batched"`` (ValueError naming the agent
    without one) or ``"reference"``."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    if engine == "reference":
        return Engine("reference", "asked for")
    if backend != "local":
        if engine == "batched":
            raise ValueError(f"engine 'batched' plays in this process; backend {backend!r} is not")
        return Engine("reference", f"backend {backend}")
    small = engine == "auto" and games is not None and games < SMALL_GAMES
    try:
        if not small:  # a small evaluation does not load numba
            import trash_env.vector  # noqa: F401
    except ImportError as error:  # numba is missing
        if engine == "batched":
            raise ValueError(f"engine 'batched': {error}") from None
        return Engine("reference", "trash_env.vector is unavailable: numba is not installed")
    for spec in dict.fromkeys(specs):
        reason = batched_form(spec, rules)
        if reason is not None:
            if engine == "batched":
                raise ValueError(
                    f"engine 'batched': {reason}; random, greedy, counting and deterministic "
                    "model files play batched (engine 'auto' falls back to the reference)"
                )
            return Engine("reference", reason)
    if small:
        why = f"{games} games: below {SMALL_GAMES} it ends before the batched engine would load"
        return Engine("reference", why)
    return Engine("batched", "trash_env.vector: every agent has a batched form")


class BatchedPlayer:
    """Plays ranges of deals of a plan on the batched engine (one per evaluation: the
    policies are loaded once)."""

    def __init__(self, plan: Plan) -> None:
        from trash_env.vector import _kernels as K

        self.plan = plan
        self.rules = plan.rules
        self.n = plan.rules.num_players
        kinds = _batch_kinds()
        specs = sorted({spec for orders in plan.seatings for seats in orders for spec in seats})
        self.kind: dict[str, int] = {}
        self.weight: dict[str, float] = {}
        self.policies: dict[str, PolicyAgent] = {}
        for spec in specs:
            agent: Any = make_agent(spec, seed=0)
            kernel = type(agent).__dict__.get("batch_kernel")
            if kernel in kinds:
                self.kind[spec] = kinds[kernel]
                self.weight[spec] = float(getattr(agent, "discard_weight", 0.0))
            else:
                agent.check_rules(self.rules)
                self.kind[spec] = K.BOT_POLICY
                self.weight[spec] = 0.0
                self.policies[spec] = agent
        self.policy_specs = sorted(self.policies)

    def play(self, first: int, stop: int) -> GameColumns:
        """Deals ``first`` to ``stop - 1``: every line-up in every seating, in that order (the
        order and the results of ``play_deals``), as columns."""
        from trash_env.vector import VectorGame
        from trash_env.vector import _kernels as K
        from trash_env.vector._pcg import RNG_WORDS

        plan, n = self.plan, self.n
        # Game g is deal first + g // per_deal in seat order g % per_deal (line-up, seating).
        orders = [seats for orders in plan.seatings for seats in orders]
        per_deal = len(orders)
        places = [(li, si) for li, group in enumerate(plan.seatings) for si in range(len(group))]
        order = np.tile(np.arange(per_deal), stop - first)
        deal = np.repeat(np.arange(first, stop, dtype=np.int64), per_deal)
        lineup = np.array([li for li, _ in places], np.int64)[order]
        seating = np.array([si for _, si in places], np.int64)[order]
        deal_games, deal_firsts = deal_seeds(plan.seed, np.arange(first, stop), n)
        game_seeds = np.repeat(deal_games, per_deal).tolist()
        firsts = np.repeat(deal_firsts, per_deal)
        size = len(order)
        width = MAX_PLAYERS  # a VectorGame's records have room for every player count
        kind_of = np.full((per_deal, width), K.BOT_LEARNER, np.int64)
        weight_of = np.zeros((per_deal, width))
        policy_table = np.full((per_deal, width), -1, np.int64)
        for k, seats in enumerate(orders):
            for p, spec in enumerate(seats):
                kind_of[k, p], weight_of[k, p] = self.kind[spec], self.weight[spec]
                if spec in self.policies:
                    policy_table[k, p] = self.policy_specs.index(spec)
        kinds, weights, policy_of = kind_of[order], weight_of[order], policy_table[order]
        streams = np.zeros((size, width, RNG_WORDS), np.uint64)
        at_game, at_seat = np.nonzero(kinds == K.BOT_RANDOM)
        if at_game.size:
            seeds = agent_seeds(
                plan.seed, deal[at_game], lineup[at_game], seating[at_game], at_seat
            )
            words = np.zeros((at_game.size, RNG_WORDS), np.uint64)
            K.batch_seed_streams(seeds, words)
            streams[at_game, at_seat] = words
        batch = VectorGame(self.rules, size, seeds=game_seeds)
        batch.reset(seeds=game_seeds, first_players=firsts)
        seats_of = (kinds, weights, streams)
        if plan.save_dir is None:
            self._play_fused(batch, seats_of, policy_of)
        else:
            dealt = (deal, [orders[k] for k in order.tolist()], game_seeds, firsts)
            self._play_logged(batch, seats_of, policy_of, dealt, first)
        return self._results(batch, deal, lineup, seating, orders, order, firsts)

    def _policy_actions(self, batch: Any, waiting: np.ndarray, policy_of: np.ndarray) -> np.ndarray:
        """The policies' actions in the games ``waiting`` (a policy seat is to act in each):
        per policy, one forward pass over its games, argmax over the legal actions."""
        from agents.evaluation._forward import forward
        from trash_env.vector import _kernels as K

        a = batch.arrays
        who = batch.current[waiting].astype(np.int64)
        observations = np.empty((waiting.size, observation_size(self.n)), np.float32)
        masks = np.empty((waiting.size, NUM_ACTIONS), np.int8)
        K.batch_observe_index(batch.games, waiting, who, observations, a.cfg, a.wild, a.totals)
        K.batch_masks_index(batch.games, waiting, who, masks)
        pid = policy_of[waiting, who]
        actions = np.zeros(waiting.size, np.int64)
        for k in np.unique(pid):
            rows = pid == k
            logits = forward(self.policies[self.policy_specs[k]].layers, observations[rows])
            actions[rows] = np.where(masks[rows].astype(bool), logits, -np.inf).argmax(axis=1)
        return actions

    def _play_fused(self, batch: Any, seats_of: tuple, policy_of: np.ndarray) -> None:
        """Bots inside the compiled loop until a policy must act; the policies in numpy."""
        from trash_env.vector import _kernels as K

        a = batch.arrays
        running = np.arange(batch.batch_size)
        while True:
            K.batch_play_seats(batch.games, running, *seats_of, a.cfg, a.wild, a.deck, a.totals)
            running = running[~batch.done[running]]
            if running.size == 0:
                return
            actions = self._policy_actions(batch, running, policy_of)
            legal = np.zeros(running.size, np.bool_)
            K.batch_step_index(
                batch.games, running, actions, legal, a.cfg, a.wild, a.deck, a.totals
            )
            if not legal.all():  # a policy chose a masked action: impossible with a legal one
                raise RuntimeError("a batched policy chose an illegal action")

    def _play_logged(
        self,
        batch: Any,
        seats_of: tuple,
        policy_of: np.ndarray,
        dealt: tuple[np.ndarray, list[tuple[str, ...]], list[int], np.ndarray],
        first: int,
    ) -> None:
        """One decision per game at a time, every ``(player, action)`` recorded; each game's log
        is then written from its reference ``Game`` replayed with those actions (its events),
        which must end as the batch did."""
        from trash_env.vector import _kernels as K

        a = batch.arrays
        running = np.arange(batch.batch_size)
        played: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        while running.size:
            actions = np.zeros(running.size, np.int64)
            kinds, weights, streams = seats_of
            K.batch_seat_actions(
                batch.games, running, kinds, weights, streams, actions, a.cfg, a.wild
            )
            policy = actions < 0
            if policy.any():
                actions[policy] = self._policy_actions(batch, running[policy], policy_of)
            played.append((running, batch.current[running].astype(np.int64), actions))
            legal = np.zeros(running.size, np.bool_)
            K.batch_step_index(
                batch.games, running, actions, legal, a.cfg, a.wild, a.deck, a.totals
            )
            if not legal.all():
                raise RuntimeError("a batched agent chose an illegal action")
            running = running[~batch.done[running]]
        games = np.concatenate([p[0] for p in played])
        players = np.concatenate([p[1] for p in played])
        actions = np.concatenate([p[2] for p in played])
        order = np.argsort(games, kind="stable")
        bounds = np.searchsorted(games[order], np.arange(batch.batch_size + 1))
        per_deal = self.plan.games_per_deal
        assert self.plan.save_dir is not None
        deals, seatings, game_seeds, firsts = dealt
        for g, (d, seats, first_seat) in enumerate(
            zip(deals.tolist(), seatings, firsts.tolist(), strict=True)
        ):
            picked = order[bounds[g] : bounds[g + 1]]
            moves = list(zip(players[picked].tolist(), actions[picked].tolist(), strict=True))
            game = Game(self.rules, seed=game_seeds[g], first_player=first_seat)
            for _, action in moves:
                game.step(action)
            if not game.done or game.turns != int(batch.games["turns"][g]):
                raise RuntimeError(f"game {g} of deal {d}: the replay left the batched game")
            log = build_log(
                game, seed=game_seeds[g], seat=None, specs=seats, names=seats, actions=moves
            )
            index = first * per_deal + g
            write_game_file(Path(self.plan.save_dir) / game_file(index), log)

    def _results(
        self,
        batch: Any,
        deal: np.ndarray,
        lineup: np.ndarray,
        seating: np.ndarray,
        orders: list[tuple[str, ...]],
        order: np.ndarray,
        firsts: np.ndarray,
    ) -> GameColumns:
        n, games = self.n, batch.games
        return GameColumns(
            deal=deal,
            lineup=lineup,
            seating=seating,
            orders=orders,
            order=order,
            first_player=firsts,
            winners=games["winners"][:, :n].astype(bool),
            placings=games["placings"][:, :n].astype(np.int64),
            returns=batch.returns()[:, :n].astype(np.float64),
            rounds=games["deal_number"].astype(np.int64),
            turns=games["turns"].astype(np.int64),
            truncated=games["truncated"].astype(bool),
        )


def batched_stream(
    plan: Plan, ranges: Iterable[tuple[int, int]]
) -> Generator[GameColumns, None, None]:
    """Each ``(first, stop)`` range of deals played on the batched engine, in order."""
    player = BatchedPlayer(plan)
    for first, stop in ranges:
        yield player.play(first, stop)


# A worker process's player (agents.evaluation.pool runs ranges of deals on it): one per plan.
_player: BatchedPlayer | None = None


def start_worker(plan: Plan, threads: int) -> None:
    """Set up this worker process to play ``plan`` on the batched engine, its parallel loops
    on ``threads`` threads (the worker processes share the cores)."""
    global _player
    if _player is None or _player.plan != plan:
        _player = BatchedPlayer(plan)  # imports trash_env.vector: numba's set-up comes first
    import numba

    most = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    numba.set_num_threads(max(1, min(threads, most)))


def play_deals(first: int, stop: int) -> GameColumns:
    """Deals ``first`` to ``stop - 1`` of the plan :func:`start_worker` set, as columns."""
    if _player is None:
        raise RuntimeError("play_deals: start_worker(plan) was not called in this process")
    return _player.play(first, stop)


def split_workers(games: int, workers: int) -> int:
    """The worker processes a batched evaluation of ``games`` games uses when ``workers`` are
    allowed: 1 (this process) unless each worker gets ``SPLIT_MIN_GAMES`` games or more."""
    return workers if workers > 1 and games >= workers * SPLIT_MIN_GAMES else 1


def batch_chunk(games_per_deal: int, deals: int | None = None, workers: int = 1) -> int:
    """Deals per batch: about ``BATCH_GAMES`` games; with ``workers`` processes, at most an
    equal share of the ``deals`` each, so that every worker plays one contiguous block."""
    chunk = max(1, BATCH_GAMES // games_per_deal)
    if deals is not None and workers > 1:
        chunk = min(chunk, max(1, -(-deals // workers)))
    return chunk
