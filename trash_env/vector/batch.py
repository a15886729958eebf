"""``VectorGame``: B games of Trash in numpy arrays with a leading batch axis, stepped together.

The state of the batch is one numpy structured array, ``games``, of B records (one per game);
each field is a small-integer array with the batch axis first (``games["layout"]`` is
``(B, players, 10)`` int8, ``games["stock"]`` ``(B, cards)`` int8, ...). The rules run in
compiled loops over that array (:mod:`trash_env.vector._kernels`), each game through the same
steps as the reference :class:`trash_env.engine.Game`.

Randomness and reproduction: the batch owns ``rng``, a ``numpy.random.Generator`` seeded by
``seed``. Every new game (the first B, and each one started later by :meth:`reset`) draws its
*game seed* ``int(rng.integers(2**63))`` from it, slot by slot in ascending order, and plays
on its own PCG64 stream seeded with that game seed, with numpy's exact algorithms. So the game
in slot ``i`` is move for move ``Game(rules, seed=batch.seeds[i])`` given the same actions: the
same deals, first player and reshuffles. ``seeds`` may also be given explicitly.
"""

from __future__ import annotations

import reprlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from trash_env.actions import check_actions, holds_bool
from trash_env.cards import NUM_RANKS, NUM_SLOTS
from trash_env.engine import NUM_ACTIONS, NUM_ENGINE_ACTIONS, Game, InvariantError, zero_sum_share
from trash_env.observation import observation_size
from trash_env.reward import add_payments
from trash_env.rules import MAX_PLAYERS, Rules
from trash_env.rules_arrays import pile_capacity, rules_arrays
from trash_env.vector import _kernels as K
from trash_env.vector._pcg import RNG_WORDS, state_of

if K.cfg_signature() != K.CFG_SIGNATURE:
    raise ImportError(
        "trash_env.vector: numba's cached kernels were compiled for other Rules options or "
        "another return formula; delete "
        f"the cache files {Path(K.__file__).parent / '__pycache__' / '_kernels.*.nb*'} and retry"
    )

# What each ``_kernels.violation`` code means (code k is VIOLATIONS[k - 1]).
VIOLATIONS = (
    "a card in an absent slot",
    "a value that is not a card",
    "a natural card in another rank's slot",
    "a face-up wild that is not wild",
    "layout size differs from the player's size",
    "a gap in a layout",
    "face-down count differs from the slots",
    "cards not conserved",
    "hidden counts differ from the stock and face-down cards",
    "a running game with no decision",
    "a running game with no legal action",
    "pile counts out of range",
    "a legal action was refused",
)


# Few record layouts for all rules: numba compiles its kernels once per record type (then
# cached on disk; docs/vector.md), so every game has room for 6 players, and the piles room
# for 2 decks with jokers or, when the rules need more, 12 (about 0.5 or 1.5 KiB a game). The
# players and cards beyond the rules are never touched. The capacities are the shared ones
# (trash_env.rules_arrays), from two decks up.
LEAST_CAPACITY = 2 * 54


def card_capacity(cards: int) -> int:
    """The pile capacity of a record for rules with ``cards`` cards."""
    return pile_capacity(cards, LEAST_CAPACITY)


def game_dtype(num_players: int = MAX_PLAYERS, cards: int = LEAST_CAPACITY) -> np.dtype:
    """The record of one game: fields named as the reference ``Game``'s attributes hold the
    same values (``nstock``/``ndiscard`` count the piles, whose tops are at the end)."""
    n = num_players
    return np.dtype(
        [
            ("layout", np.int8, (n, NUM_SLOTS)),  # card per slot, -1 where absent
            ("state", np.int8, (n, NUM_SLOTS)),  # DOWN, NATURAL, WILD_UP, ABSENT
            ("sizes", np.int8, (n,)),
            ("rounds_won", np.int16, (n,)),
            ("face_down", np.int8, (n,)),  # face-down slots left
            ("pending_claim", np.uint8, (n,)),  # claims the round next turn (a missed call)
            ("completed", np.uint8, (n,)),
            ("shrunk", np.uint8, (n,)),  # who shrank at the last finished deal
            ("winners", np.uint8, (n,)),  # 1 per winner (Game.winners lists them)
            ("placings", np.int8, (n,)),
            ("face_down_left", np.int8, (n,)),  # face-down slots left at the last deal's end
            ("deal_reward", np.float64, (n,)),  # deal shares summed since last read
            ("hidden", np.int16, (NUM_RANKS,)),
            ("stock", np.int8, (cards,)),  # top at stock[nstock - 1]
            ("discard", np.int8, (cards,)),  # top at discard[ndiscard - 1]
            ("nstock", np.int16),
            ("ndiscard", np.int16),
            ("held", np.int8),
            ("current", np.int8),
            ("decision", np.int8),
            ("phase", np.int8),
            ("free_left", np.int8),
            ("called", np.bool_),
            ("pending_slot", np.int8),
            ("pending_wild", np.bool_),
            ("round_winner", np.int8),
            ("round_starter", np.int8),
            ("deal_number", np.int32),  # deals finished
            ("turns", np.int32),
            ("done", np.bool_),
            ("truncated", np.bool_),
            ("stock_known", np.bool_),
            ("rng", np.uint64, (RNG_WORDS,)),  # PCG64 state words, see _pcg
        ]
    )


class RulesArrays:
    """The rules as the arrays the kernels read (every ``Rules`` option is supported): the
    shared derivation (:func:`trash_env.rules_arrays.rules_arrays`) in the kernels' types."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.n = rules.num_players
        self.cards = rules.total_cards
        shared = rules_arrays(rules, LEAST_CAPACITY)
        self.cfg = shared.cfg.astype(np.int64)  # see _kernels' CFG_* indices
        self.wild = shared.wild
        self.totals = shared.totals.astype(np.int64)
        self.deck = shared.deck.astype(np.int8)
        self.dtype = game_dtype(MAX_PLAYERS, card_capacity(self.cards))


class VectorGame:
    """B games of Trash stepped together (see the module docstring).

    Args:
        rules: the rules of every game of the batch.
        batch_size: B, the number of games.
        seed: seed of the batch's generator, which draws every game's seed.
        seeds: explicit game seeds for the first B games (then ``seed`` only feeds later ones).
        parallel: step the games on every core (numba's ``prange``) or on one; default
            (None): every core from ``_kernels.PARALLEL_MIN_GAMES`` games on. The results are
            the same bit for bit either way.
    """

    # The class default: a batch restored from a checkpoint written before the option existed
    # (agents/training/checkpoint.py restores attributes as saved) picks the form by size.
    parallel: bool | None = None

    def __init__(
        self,
        rules: Rules | None = None,
        batch_size: int = 1,
        seed: int | None = None,
        *,
        seeds: Sequence[int] | None = None,
        parallel: bool | None = None,
    ) -> None:
        if (
            isinstance(batch_size, bool)
            or not isinstance(batch_size, (int, np.integer))
            or not (1 <= batch_size <= 10_000_000)
        ):
            raise ValueError(
                f"batch_size must be an integer from 1 to 10000000, got {batch_size!r}"
            )
        self.rules = rules if rules is not None else Rules()
        self.arrays = RulesArrays(self.rules)
        self.batch_size = int(batch_size)
        if parallel not in (None, True, False):
            raise ValueError(f"parallel must be True, False or None, got {parallel!r}")
        self.parallel = parallel
        self.num_players = self.rules.num_players
        self.rng = np.random.default_rng(seed)
        self.games = np.zeros(self.batch_size, self.arrays.dtype)
        self.seeds = np.zeros(self.batch_size, np.uint64)
        self._legal = np.zeros(self.batch_size, np.bool_)
        self._finished = np.zeros(self.batch_size, np.bool_)
        self._final_returns = np.zeros((self.batch_size, self.num_players))
        # Game seeds are drawn from ``rng`` in chunks and used in order: the same sequence as
        # one ``rng.integers(2**63)`` per new game.
        self._seed_buffer = np.zeros(0, np.uint64)
        self._seed_pos = 0
        self.reset(seeds=seeds)

    def reseed(self, seed: int | None) -> None:
        """Restart the game-seed sequence from ``seed`` (the running games are kept)."""
        self.rng = np.random.default_rng(seed)
        self._seed_buffer = np.zeros(0, np.uint64)
        self._seed_pos = 0

    def _refill(self, needed: int) -> None:
        left = self._seed_buffer[self._seed_pos :]
        if left.size < needed:
            more = self.rng.integers(2**63, size=max(needed, self.batch_size, 256))
            self._seed_buffer = np.concatenate([left, more.astype(np.uint64)])
            self._seed_pos = 0

    def _next_seeds(self, count: int) -> np.ndarray:
        self._refill(count)
        out = self._seed_buffer[self._seed_pos : self._seed_pos + count].copy()
        self._seed_pos += count
        return out

    def state_dict(self) -> dict[str, Any]:
        """What continues the batch exactly, as plain values: its games (one record each),
        their seeds, the game seeds drawn but not used yet, and the generator that draws the
        next ones (numpy's PCG64 state)."""
        return {
            "games": self.games.copy(),
            "seeds": self.seeds.copy(),
            "next_game_seeds": self._seed_buffer[self._seed_pos :].copy(),
            "rng": self.rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """The batch as :meth:`state_dict` gave it. The caller checks the games first
        (:func:`trash_env.vector.validate.games_from_fields`): the kernels trust them."""
        self.rng.bit_generator.state = state["rng"]  # numpy refuses a malformed one
        self.games[:] = state["games"]
        self.seeds[:] = state["seeds"]
        self._seed_buffer = np.array(state["next_game_seeds"], np.uint64)
        self._seed_pos = 0

    # ------------------------------------------------------------------ games

    def reset(
        self,
        index: np.ndarray | Sequence[int] | None = None,
        seeds: Sequence[int] | None = None,
        first_players: Sequence[int] | np.ndarray | None = None,
    ) -> None:
        """Start new games in the slots ``index`` (default: all), with game seeds ``seeds``
        (default: drawn from the batch's generator, one per slot in the order given) and,
        as ``Game(first_player=...)``, the first round's first players ``first_players``
        (default: drawn by each game's generator)."""
        idx = np.arange(self.batch_size) if index is None else np.asarray(index, np.int64)
        if idx.size == 0:
            return
        if seeds is None:
            drawn = self._next_seeds(idx.size)
        else:
            if len(seeds) != idx.size:
                raise ValueError(f"seeds: {len(seeds)} seeds for {idx.size} games")
            for s in seeds:
                if (
                    isinstance(s, bool)
                    or not isinstance(s, (int, np.integer))
                    or not (0 <= int(s) < 2**64)
                ):
                    raise ValueError(f"seeds must be integers from 0 to 2**64 - 1, got {s!r}")
            drawn = np.array([int(s) for s in seeds], np.uint64)
        self.seeds[idx] = drawn
        if first_players is None:
            firsts = np.full(idx.size, -1, np.int64)
        else:
            firsts = np.asarray(first_players)
            n = self.num_players
            if (
                firsts.shape != (idx.size,)
                or firsts.dtype.kind not in "iu"
                or holds_bool(first_players)
                or (firsts.size and not (firsts.min() >= 0 and firsts.max() < n))
            ):
                raise ValueError(
                    f"first_players must be {idx.size} integers from 0 to {n - 1}, got "
                    f"{reprlib.repr(first_players)}"
                )
            firsts = firsts.astype(np.int64)
        a = self.arrays
        K.batch_new_games(
            self.games, idx, drawn, firsts, a.cfg, a.wild, a.deck, a.totals, parallel=self.parallel
        )

    def step(self, actions: np.ndarray | Sequence[int], autoreset: bool = False) -> np.ndarray:
        """Apply one engine action (0..14, as ``Game.step``) in every running game; games that
        are over ignore theirs. Returns whether each action was legal (an illegal one leaves
        its game unchanged; finished games count as illegal).

        ``autoreset=True``: every game this step ends is re-dealt at once, in the same
        compiled pass, from the next game seed (slots in ascending order, as ``reset`` would);
        :attr:`finished` then tells which ended and :attr:`final_returns` their
        ``Game.returns()``."""
        acts = check_actions(actions, self.batch_size, NUM_ENGINE_ACTIONS - 1)
        a = self.arrays
        if autoreset:
            self._refill(self.batch_size)
            pool = self._seed_buffer[self._seed_pos :]
            used = K.batch_step_autoreset(
                self.games,
                acts,
                self._legal,
                self._finished,
                self._final_returns,
                pool,
                self.seeds,
                a.cfg,
                a.wild,
                a.deck,
                a.totals,
                parallel=self.parallel,
            )
            self._seed_pos += used
        else:
            args = (self.games, acts, self._legal, a.cfg, a.wild, a.deck, a.totals)
            K.batch_step(*args, parallel=self.parallel)
        return self._legal.copy()

    def violations(self) -> np.ndarray:
        """int64 ``(B,)``: per game 0, or the code of the first invariant of
        ``Game.check_invariants`` its state breaks (``VIOLATIONS[code - 1]`` says which)."""
        out = np.zeros(self.batch_size, np.int64)
        a = self.arrays
        K.batch_violations(self.games, out, a.cfg, a.wild, a.totals, parallel=self.parallel)
        return out

    def check_invariants(self) -> None:
        """Raise :class:`trash_env.engine.InvariantError` naming the first game whose state
        breaks an invariant of ``Game.check_invariants`` and which one (a raise, not
        ``assert``: ``python -O`` checks too)."""
        codes = self.violations()
        broken = np.flatnonzero(codes)
        if broken.size:
            g = int(broken[0])
            raise InvariantError(
                f"game {g} of {self.batch_size} (seed {int(self.seeds[g])}): "
                f"{VIOLATIONS[codes[g] - 1]} ({broken.size} game(s) broken)"
            )

    @property
    def finished(self) -> np.ndarray:
        """Which games the last ``step(..., autoreset=True)`` ended (and re-dealt)."""
        return self._finished

    @property
    def final_returns(self) -> np.ndarray:
        """``Game.returns()`` of the games :attr:`finished` flags (other rows: stale)."""
        return self._final_returns

    # ------------------------------------------------------------------ views

    @property
    def done(self) -> np.ndarray:
        return self.games["done"]

    @property
    def current(self) -> np.ndarray:
        return self.games["current"]

    @property
    def decision(self) -> np.ndarray:
        return self.games["decision"]

    def action_masks(self, players: np.ndarray | None = None) -> np.ndarray:
        """int8 ``(B, 13)``: ``observation.action_mask`` of ``players[g]`` (default: the player
        to act) in every game."""
        who = self.current.astype(np.int64) if players is None else np.asarray(players, np.int64)
        out = np.empty((self.batch_size, NUM_ACTIONS), np.int8)
        K.batch_masks(self.games, who, out, parallel=self.parallel)
        return out

    def observations(
        self, observers: np.ndarray | None = None, out: np.ndarray | None = None
    ) -> np.ndarray:
        """float32 ``(B, observation_size)``: ``encode_observation`` of ``observers[g]``
        (default: the player to act) in every game, byte for byte."""
        who = (
            self.current.astype(np.int64) if observers is None else np.asarray(observers, np.int64)
        )
        if out is None:
            out = np.empty((self.batch_size, observation_size(self.num_players)), np.float32)
        a = self.arrays
        K.batch_observe(self.games, who, out, a.cfg, a.wild, a.totals, parallel=self.parallel)
        return out

    def returns(self) -> np.ndarray:
        """float64 ``(B, players)``: ``Game.returns()`` of every game (zero while running or
        when truncated)."""
        n = self.num_players
        win = self.games["winners"][:, :n].astype(bool)
        k = win.sum(axis=1, keepdims=True)
        over = self.done & ~self.games["truncated"] & (k[:, 0] > 0)
        out = zero_sum_share(win, np.maximum(k, 1), n)
        out[~over] = 0.0
        return out

    def payments(self, deals: bool) -> np.ndarray:
        """float64 ``(B, players)``: every seat's payment since the last call, assembled as
        :mod:`trash_env.reward` assembles every table's: with ``deals`` (``round_rewards``) the
        shares of the deals finished meanwhile, plus :meth:`returns` (the game's, once over).
        Clears the deals' shares; a finished game is paid again at each call until re-dealt."""
        games = self.games
        shares = games["deal_reward"][:, : self.num_players] if deals else None
        paid = add_payments(shares, self.returns())
        games["deal_reward"] = 0.0
        return paid

    def reference_game(self, i: int) -> Game:
        """A fresh reference ``Game`` of slot ``i``'s game seed: given the same actions it plays
        the same game (what the differential test checks)."""
        return Game(self.rules, seed=int(self.seeds[i]))

    def rng_state(self, i: int) -> dict:
        """The ``PCG64.state`` of slot ``i``'s game stream (equal to its reference game's)."""
        return state_of(self.games["rng"][i])

    def memory_bytes(self) -> int:
        """Bytes of the batch's state arrays."""
        return int(
            self.games.nbytes
            + self.seeds.nbytes
            + self._legal.nbytes
            + self._finished.nbytes
            + self._final_returns.nbytes
        )
