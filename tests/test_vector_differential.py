"""Differential test: the batched engine (trash_env.vector) against the reference engine.

The reference ``Game`` stays the rule book. Every game of a ``VectorGame`` batch plays on its own
PCG64 stream seeded with its game seed, so ``Game(rules, seed=batch.seeds[i])`` deals the same
cards, picks the same first player and reshuffles the same way. Both are driven with the same
random legal actions (every decision, the "Trash!" call included), and after every decision the
whole state must agree: layouts, slot states, sizes, rounds won, face-down counts, hidden-card
counts, the stock in order, the discard pile, the card in hand, the player to act, the decision,
turn and deal counters, the end of the game, winners, placings, per-deal results and rewards,
and the generator's state itself (same draws, in the same order). Observations of every seat and
action masks must be byte-identical to ``encode_observation`` and ``action_mask``.

10,280 games over 13 variants that together set every option of ``Rules`` (100 to 1,200 per
variant: fewer where whole games are long); about a minute.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import numpy as np
import pytest

from trash_env.engine import Game
from trash_env.observation import action_mask, encode_observation
from trash_env.pairs import add_pairs
from trash_env.rules import Rules
from trash_env.vector import VectorGame

# (rules options, games, batch size): together every option and every allowed value.
VARIANTS = [
    ({}, 480, 120),
    ({"num_players": 3}, 300, 100),
    ({"num_players": 4, "wilds": "kings", "jokers": True}, 200, 100),
    ({"num_players": 6, "wilds": "faces", "jokers": True, "reshuffle": "all"}, 100, 50),
    ({"wilds": "none", "target_size": 5, "max_deals": 3}, 1000, 250),
    ({"losers_reveal": True, "free_draws": 3, "call_trash": True}, 600, 150),
    (
        {"num_players": 3, "call_trash": True, "first_player": "rotate", "episode": "round"},
        1200,
        300,
    ),
    ({"start_size": 3, "jokers": True, "wilds": "faces", "max_turns": 60}, 1200, 300),
    ({"num_players": 5, "num_decks": 1, "start_size": 3, "target_size": 1}, 1000, 250),
    ({"start_size": 1, "reshuffle": "all", "call_trash": True}, 1200, 300),
    (
        {
            "losers_reveal": True,
            "reshuffle": "all",
            "call_trash": True,
            "max_deals": 2,
            "first_player": "rotate",
        },
        1200,
        300,
    ),
    (
        {
            "num_players": 4,
            "num_decks": 3,
            "jokers": True,
            "call_trash": True,
            "losers_reveal": True,
            "start_size": 5,
            "target_size": 3,
        },
        600,
        150,
    ),
    (
        {
            "num_players": 2,
            "num_decks": 2,
            "wilds": "kings",
            "losers_reveal": True,
            "free_draws": 3,
            "start_size": 4,
            "episode": "round",
        },
        1200,
        300,
    ),
]
# Every option of Rules is set to a non-default value by some variant.
_TOUCHED = {key for options, _, _ in VARIANTS for key in options}
assert _TOUCHED == set(Rules.option_names()), set(Rules.option_names()) - _TOUCHED


MASK64 = (1 << 64) - 1


# The record's fields that are the reference Game's attributes of the same name; per player
# ones are cut to the players in the game, the piles to their counts (``nstock``, ``ndiscard``).
# The reference keeps the fields of the turn's machinery private: ``_pending_claim`` and so on.
PER_PLAYER = ("layout", "state", "sizes", "rounds_won", "face_down")
PRIVATE_PER_PLAYER = ("pending_claim", "completed")
SCALARS = (
    "hidden",
    "held",
    "current",
    "decision",
    "turns",
    "deal_number",
    "done",
    "truncated",
    "stock_known",
)
PRIVATE = ("phase", "free_left", "called", "round_winner", "round_starter")
PILES = ("stock", "discard")


def pcg_words(game: Game) -> list[int]:
    """The reference generator's PCG64 state as the batched engine's six words."""
    bits = game.rng.bit_generator.state
    inner = bits["state"]
    return [
        inner["state"] >> 64,
        inner["state"] & MASK64,
        inner["inc"] >> 64,
        inner["inc"] & MASK64,
        bits["has_uint32"],
        bits["uinteger"],
    ]


# The reference's attributes in reference_state's order, read in one call (the harness reads
# them after every decision of every game).
_REFERENCE_FIELDS = attrgetter(
    *PER_PLAYER,
    *("_" + name for name in PRIVATE_PER_PLAYER),
    *SCALARS,
    *("_" + name for name in PRIVATE),
    *PILES,
)


def reference_state(game: Game, words: list[int]) -> tuple:
    """Everything the engines must agree on, ``words`` being the generator's state."""
    return (*_REFERENCE_FIELDS(game), words)


def columns_states(columns: dict, rng: np.ndarray, n: int, rows: Sequence[int]) -> list[tuple]:
    """The state of the games ``rows`` (in that order) as ``reference_state`` lists it, from
    the engine's fields (numpy arrays with the batch axis first, named as the reference's
    attributes) and ``rng``, each game's generator words."""
    take = np.asarray(rows, dtype=np.intp)
    cols = [columns[name][take, :n].tolist() for name in PER_PLAYER + PRIVATE_PER_PLAYER]
    cols += [columns[name][take].tolist() for name in SCALARS + PRIVATE]
    for name, count in zip(PILES, ("nstock", "ndiscard"), strict=True):
        piles, sizes = columns[name][take].tolist(), columns[count][take].tolist()
        cols.append([pile[:size] for pile, size in zip(piles, sizes, strict=True)])
    cols.append(rng[take].tolist())
    return list(zip(*cols, strict=True))


def batch_states(batch: VectorGame, rows: Sequence[int] | None = None) -> list[tuple]:
    """The games ``rows`` (default: every game) of a numba batch as ``reference_state`` lists
    them."""
    games = batch.games
    names = PER_PLAYER + PRIVATE_PER_PLAYER + SCALARS + PRIVATE + PILES
    columns = {name: games[name] for name in (*names, "nstock", "ndiscard")}
    rows = range(len(games)) if rows is None else rows
    return columns_states(columns, games["rng"], batch.num_players, rows)


class NumbaEngine:
    """The batched engine (trash_env.vector): games dealt by game seeds, the reference
    ``Game(rules, seed=...)`` plays the same game (same PCG64 stream)."""

    parallel: bool | None = None  # the kernels' form: one core, every core, or by batch size

    def __init__(self, rules: Rules, batch_size: int, seed: int) -> None:
        self.batch = VectorGame(rules, batch_size, seed=seed, parallel=self.parallel)
        self.num_players, self.batch_size = rules.num_players, batch_size
        self.refs = [self.batch.reference_game(i) for i in range(batch_size)]

    def ref_state(self, game: Game) -> tuple:
        return reference_state(game, pcg_words(game))

    def states(self, rows: Sequence[int]) -> list[tuple]:
        return batch_states(self.batch, rows)

    def where(self, i: int) -> str:
        return f"seed {int(self.batch.seeds[i])}"

    def step(self, actions: np.ndarray) -> list[bool]:
        return self.batch.step(actions).tolist()

    def looks(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        n, size = self.num_players, self.batch_size
        masks = [self.batch.action_masks(np.full(size, p)) for p in range(n)]
        plain = [self.batch.observations(np.full(size, p)) for p in range(n)]
        return masks, [add_pairs(o, n) for o in plain]

    def shrunk(self) -> np.ndarray:
        return self.batch.games["shrunk"][:, : self.num_players].astype(bool)

    def deal_rewards(self) -> np.ndarray | None:
        return self.batch.games["deal_reward"][:, : self.num_players]

    def winners(self, i: int) -> list[int]:
        return np.flatnonzero(self.batch.games[i]["winners"][: self.num_players]).tolist()

    def placings(self, i: int) -> list[int]:
        return self.batch.games[i]["placings"][: self.num_players].tolist()

    def returns(self, i: int) -> np.ndarray:
        return self.batch.returns()[i]

    @staticmethod
    def reference_returns(game: Game) -> np.ndarray:
        return np.array(game.returns())


_JAX_PROGRAMS: dict = {}


def _jax_programs(module: str) -> tuple:
    """The two compiled programs of a JAX module (``engine``, the scheduled batch, or
    ``rules``, the plain rules) for the harness (shared by every variant of a player count
    and pile capacity): deal, and step; each also returns every seat's observation (plain
    and pairs), mask and the returns."""
    if module not in _JAX_PROGRAMS:
        import importlib

        import jax

        from trash_env.jax_env.observe import action_mask, observation, with_pairs

        E = importlib.import_module(f"trash_env.jax_env.{module}")

        def look(g: Any) -> tuple:
            n = g.layout.shape[0]
            seats = jax.numpy.arange(n)
            plain = jax.vmap(lambda p: observation(g, p))(seats)
            masks = jax.vmap(lambda p: action_mask(g, p))(seats)
            return masks, with_pairs(plain, n), E.returns(g)

        def start(key: jax.Array, arrays: Any, n: int) -> tuple:
            g = E.init(key, arrays, n)
            return g, look(g)

        def advance(g: Any, action: jax.Array) -> tuple:
            g, legal = E.step(g, action)
            return g, legal, look(g)

        _JAX_PROGRAMS[module] = (
            jax.jit(jax.vmap(start, in_axes=(0, None, None)), static_argnums=2),
            jax.jit(jax.vmap(advance)),
        )
    return _JAX_PROGRAMS[module]


class JaxEngine:
    """The JAX engine (trash_env.jax_env.engine, the rules scheduled for a batch): games dealt
    from PRNG keys; the reference game (``jax_env.reference.reference_game``) deals and
    reshuffles from the same key chain."""

    module = "engine"

    def __init__(self, rules: Rules, batch_size: int, seed: int) -> None:
        pytest.importorskip("jax", reason="needs jax (the jax extra)")
        import jax

        from trash_env.jax_env.reference import reference_game
        from trash_env.rules_arrays import rules_arrays

        self.jax = jax
        self.start, self.advance = _jax_programs(self.module)
        self.num_players, self.batch_size = rules.num_players, batch_size
        self.keys = jax.random.split(jax.random.PRNGKey(seed), batch_size)
        self.key_words = np.asarray(self.keys).tolist()
        games, looks = self.start(self.keys, rules_arrays(rules), rules.num_players)
        self._take(games, looks)
        self.refs = [reference_game(rules, self.keys[i]) for i in range(batch_size)]

    def _take(self, games: object, looks: tuple) -> None:
        self.games = self.jax.device_get(games)
        self.masks, self.pairs, self.rets = self.jax.device_get(looks)

    def ref_state(self, game: Game) -> tuple:
        return reference_state(game, game.rng.words())  # type: ignore[attr-defined]

    def states(self, rows: Sequence[int]) -> list[tuple]:
        g = self.games
        names = PER_PLAYER + PRIVATE_PER_PLAYER + SCALARS + PRIVATE + PILES
        columns = {name: np.asarray(getattr(g, name)) for name in (*names, "nstock", "ndiscard")}
        return columns_states(columns, np.asarray(g.key), self.num_players, rows)

    def where(self, i: int) -> str:
        return f"key {self.key_words[i]}"

    def step(self, actions: np.ndarray) -> list[bool]:
        games, legal, looks = self.advance(self.games, actions.astype(np.int32))
        self._take(games, looks)
        return np.asarray(legal).tolist()

    def looks(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        n = self.num_players
        masks = [self.masks[:, p].astype(np.int8) for p in range(n)]
        return masks, [self.pairs[:, p] for p in range(n)]

    def shrunk(self) -> np.ndarray:
        return np.asarray(self.games.shrunk)

    def deal_rewards(self) -> None:
        return None  # the batched engine's per-deal rewards; the Pgx env pays at the end

    def winners(self, i: int) -> list[int]:
        return np.flatnonzero(self.games.winners[i]).tolist()

    def placings(self, i: int) -> list[int]:
        return self.games.placings[i].tolist()

    def returns(self, i: int) -> np.ndarray:
        return self.rets[i]

    @staticmethod
    def reference_returns(game: Game) -> np.ndarray:
        return np.array(game.returns(), np.float32)


class JaxRules(JaxEngine):
    """The JAX engine's plain rules (trash_env.jax_env.rules: one method a pass, unscheduled)."""

    module = "rules"


class NumbaOneCore(NumbaEngine):
    parallel = False


class NumbaEveryCore(NumbaEngine):
    parallel = True  # numba prange across the games


# Both forms of the compiled kernels, the JAX engine and its plain rules, each held to the
# reference.
ENGINES = {
    "numba-one-core": NumbaOneCore,
    "numba-every-core": NumbaEveryCore,
    "jax": JaxEngine,
    "jax-rules": JaxRules,
}


class Checker:
    """Compares an engine's batch with its reference games after every decision. The state
    (and the generator's) of every running game is compared every time; observations of every
    seat (plain and ``pairs``, byte for byte) and all masks for a sampled ``observe`` share of
    the games per step (encoding is the costly part) and always at a game's end."""

    def __init__(self, engine: NumbaEngine | JaxEngine, observe: float, seed: int) -> None:
        self.engine, self.refs = engine, engine.refs
        self.deals_seen = [0] * len(self.refs)
        self.paid = np.zeros((len(self.refs), engine.num_players))
        self.finished = [False] * len(self.refs)
        self.observe = observe
        self.sample = np.random.default_rng(seed)
        self.step = 0
        self.observed = 0

    def check(self) -> None:
        engine, n = self.engine, self.engine.num_players
        running = [i for i, finished in enumerate(self.finished) if not finished]
        states = dict(zip(running, engine.states(running), strict=True))
        looks = self.sample.random(len(self.refs)) < self.observe
        masks = observations = None
        shrunk = engine.shrunk()
        rewards = engine.deal_rewards()
        for i, game in enumerate(self.refs):
            if self.finished[i]:
                continue
            where = f"game {i} ({engine.where(i)}) after {self.step} decisions"
            assert states[i] == engine.ref_state(game), where
            while self.deals_seen[i] < len(game.round_results):
                self.paid[i] += game.shares_to_returns(game.round_results[self.deals_seen[i]])
                self.deals_seen[i] += 1
            if game.round_results:
                assert np.flatnonzero(shrunk[i]).tolist() == list(game.round_results[-1]), where
            if rewards is not None:
                assert np.abs(rewards[i] - self.paid[i]).max() < 1e-9, where
            if game.done or looks[i]:
                if masks is None:
                    masks, observations = engine.looks()
                self.observed += 1
                for p in range(n):
                    expected = add_pairs(encode_observation(game, p), n).tobytes()
                    assert observations[p][i].tobytes() == expected, where
                    assert masks[p][i].tolist() == action_mask(game, p).tolist(), where
            if game.done:
                self.finished[i] = True
                assert engine.winners(i) == list(game.winners), where
                if game.placings is not None:
                    assert engine.placings(i) == list(game.placings), where
                expected_returns = engine.reference_returns(game)
                assert engine.returns(i).tobytes() == expected_returns.tobytes(), where
        self.step += 1


def play_batch(
    engine_name: str, options: dict, batch_size: int, seed: int, observe: float = 0.1
) -> Checker:
    """Drive an engine's batch and its reference games with the same random legal actions
    (every decision, the "Trash!" call included), checking after every one."""
    engine = ENGINES[engine_name](Rules(**options), batch_size, seed)
    refs = engine.refs
    choose = np.random.default_rng(seed + 1)
    checker = Checker(engine, observe, seed + 2)
    checker.check()
    while not all(game.done for game in refs):
        actions = np.zeros(batch_size, np.int64)
        expect = []
        for i, game in enumerate(refs):
            if not game.done:
                legal = game.legal_actions()
                actions[i] = legal[int(choose.integers(len(legal)))]
                game.step(int(actions[i]))
            expect.append(not checker.finished[i])
        assert engine.step(actions) == expect
        checker.check()
    return checker


# The JAX engine plays a third of each variant's games (at least a batch), in batches of at
# most 100 (its programs compile once per player count, pile capacity and batch shape).
JAX_SHARE, JAX_BATCH = 3, 100


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize(
    "variant",
    range(len(VARIANTS)),
    ids=[",".join(f"{k}={v}" for k, v in o.items()) or "standard" for o, _, _ in VARIANTS],
)
def test_engine_matches_reference(engine: str, variant: int) -> None:
    options, games, batch_size = VARIANTS[variant]
    if engine.startswith("jax"):
        batch_size = min(batch_size, JAX_BATCH)
        games = max(games // JAX_SHARE, batch_size)
    played = observed = 0
    seed = 1000 * variant
    while played < games:
        checker = play_batch(engine, options, batch_size, seed)
        played += batch_size
        observed += checker.observed
        seed += 7
    assert played >= games and observed >= played


def test_game_seeds_come_from_the_batch_generator() -> None:
    batch = VectorGame(Rules(), 5, seed=42)
    expected = np.random.default_rng(42).integers(2**63, size=5)
    assert batch.seeds.tolist() == expected.tolist()
    batch.reset([3])
    rng = np.random.default_rng(42)
    rng.integers(2**63, size=5)
    assert int(batch.seeds[3]) == int(rng.integers(2**63, size=1)[0])
    explicit = VectorGame(Rules(), 2, seeds=[7, 9])
    assert explicit.seeds.tolist() == [7, 9]
    assert explicit.rng_state(1) == Game(Rules(), seed=9).rng.bit_generator.state


@pytest.mark.parametrize("engine", list(ENGINES))
def test_illegal_actions_change_nothing(engine: str) -> None:
    size = JAX_BATCH  # the JAX engine's compiled batch shape
    batch = ENGINES[engine](Rules(call_trash=True), size, 3)
    refs = batch.refs
    choose = np.random.default_rng(5)
    for _ in range(200):
        actions = np.zeros(size, np.int64)
        expect = []
        for i, game in enumerate(refs):
            legal = game.legal_actions()
            if game.done:
                expect.append(False)
                continue
            if choose.random() < 0.3:
                illegal = [a for a in range(15) if a not in legal]
                actions[i] = illegal[int(choose.integers(len(illegal)))]
                with pytest.raises(ValueError):
                    game.step(int(actions[i]))
                expect.append(False)
            else:
                actions[i] = legal[int(choose.integers(len(legal)))]
                game.step(int(actions[i]))
                expect.append(True)
        assert batch.step(actions) == expect
        states = batch.states(range(size))
        for i, game in enumerate(refs):
            assert states[i] == batch.ref_state(game)


def test_autoreset_equals_reset_after_the_step() -> None:
    """step(autoreset=True) re-deals finished games in the step exactly as reset() would."""
    from trash_env.vector import _kernels as K

    rules = Rules(start_size=3, call_trash=True)
    auto, manual = VectorGame(rules, 32, seed=9), VectorGame(rules, 32, seed=9)
    words = np.random.default_rng(0).integers(0, 2**64, size=(32, 6), dtype=np.uint64)
    words[:, 3] |= np.uint64(1)
    words[:, 4:] = 0
    actions = np.zeros(32, np.int64)
    ended = 0
    for _ in range(400):
        K.batch_random_actions(manual.games, words, actions)
        manual.step(actions)
        returns = manual.returns()
        done = np.flatnonzero(manual.done)
        auto.step(actions, autoreset=True)
        assert np.flatnonzero(auto.finished).tolist() == done.tolist()
        assert np.allclose(auto.final_returns[done], returns[done])
        manual.reset(done)
        ended += done.size
        assert auto.games.tobytes() == manual.games.tobytes()
        assert auto.seeds.tolist() == manual.seeds.tolist()
    assert ended > 50


def test_parallel_kernels_give_the_serial_bits() -> None:
    """Every kernel's two forms, side by side on the same batch: the same state bytes, masks,
    observations, actions and seeds after every step (autoreset and the bots included)."""
    from trash_env.vector import _kernels as K

    rules = Rules(num_players=3, start_size=4, call_trash=True, free_draws=0, jokers=True)
    size = 700  # above PARALLEL_MIN_GAMES: the default picks the parallel form
    one, every = (VectorGame(rules, size, seed=4, parallel=p) for p in (False, True))
    assert K.PARALLEL_MIN_GAMES <= size
    words = np.random.default_rng(1).integers(0, 2**64, size=(size, 6), dtype=np.uint64)
    words[:, 3] |= np.uint64(1)
    words[:, 4:] = 0
    orngs = [words.copy(), words.copy()]
    kinds = np.random.default_rng(2).integers(1, 4, size=(size, 6))
    weights = np.full((size, 6), 0.5)
    learner = np.zeros(size, np.int64)
    index = np.arange(0, size, 2)
    a = one.arrays
    ended = 0
    for _ in range(300):
        acts = []
        for batch, orng, parallel in zip((one, every), orngs, (False, True), strict=True):
            actions = np.zeros(size, np.int64)
            K.batch_random_actions(batch.games, orng, actions, parallel=parallel)
            actions[batch.done] = 0
            acts.append(actions)
            batch.step(actions, autoreset=True)
            args = (kinds, weights, orng, learner, a.cfg, a.wild, a.deck, a.totals)
            K.batch_advance(batch.games, index, *args, parallel=parallel)
        assert acts[0].tolist() == acts[1].tolist()
        assert one.games.tobytes() == every.games.tobytes()
        assert one.seeds.tolist() == every.seeds.tolist()
        assert one.finished.tolist() == every.finished.tolist()
        assert one.final_returns.tobytes() == every.final_returns.tobytes()
        assert one.action_masks().tobytes() == every.action_masks().tobytes()
        assert one.observations().tobytes() == every.observations().tobytes()
        assert one.violations().tolist() == every.violations().tolist() == [0] * size
        ended += int(one.finished.sum())
    assert ended > 100


def test_first_players_are_those_of_reference_games() -> None:
    """reset(first_players=...) deals as Game(first_player=...), which draws no first player;
    bad values are refused naming the option."""
    rules = Rules(num_players=3)
    batch = VectorGame(rules, 3, seed=0)
    batch.reset(seeds=[5, 6, 7], first_players=[2, 0, 1])
    for i, (seed, first) in enumerate(((5, 2), (6, 0), (7, 1))):
        game = Game(rules, seed=seed, first_player=first)
        assert batch_states(batch)[i] == reference_state(game, pcg_words(game))
        assert batch.rng_state(i) == game.rng.bit_generator.state
    for bad in ([3, 0, 0], [0, 0], [True, 0, 1], [0.0, 1.0, 2.0], [-1, 0, 0]):
        with pytest.raises(ValueError, match="first_players must be 3 integers from 0 to 2"):
            batch.reset(first_players=bad)
