"""The rules engine: the complete game of Trash, every round, with no RL-library import.

A :class:`Game` holds the state of a whole game (layouts, stock, discard pile, the card in hand,
whose turn, rounds won, results). It stops only where the rules give a player two or more
options (:class:`Decision`); everything forced is applied at once. ``legal_actions()`` lists the
options, ``step(action)`` applies one and plays on to the next decision. Every draw, placement,
swap, discard, reshuffle and result is appended to ``events``.

All randomness comes from ``self.rng``, a seeded ``numpy.random.Generator`` owned by the game.
Cards are small integers (:mod:`trash_env.cards`); piles are Python lists with the top at the end.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from enum import IntEnum
from typing import Any, NamedTuple, TypeVar

import numpy as np

from trash_env.actions import integer_value as _integer
from trash_env.cards import NUM_RANKS, NUM_SLOTS, build_deck, rank_totals
from trash_env.rules import Rules

# Slot states, per player and slot.
DOWN, NATURAL, WILD_UP, ABSENT = 0, 1, 2, 3

# Actions. 0..9 name slots 1..10; the env exposes 0..12, the engine also knows the call.
DRAW_STOCK = 10
TAKE_DISCARD = 11
DECLINE = 12
CALL_TRASH = 13
STAY_SILENT = 14
NUM_ACTIONS = 13
NUM_ENGINE_ACTIONS = 15

ACTION_NAMES = tuple(f"slot {s + 1}" for s in range(NUM_SLOTS)) + (
    "draw from stock",
    "take discard top",
    "decline swap",
    'call "Trash!"',
    "stay silent",
)


class Decision(IntEnum):
    """What the player to act must decide (``NONE`` once the game is over)."""

    NONE = 0
    DRAW = 1  # stock or discard top
    WILD = 2  # which face-down slot gets the held wild card
    SWAP = 3  # swap the held number for the wild in its slot, or decline
    CALL = 4  # about to fill the last slot: call "Trash!" or not (only with call_trash)


NUM_DECISIONS = len(Decision)
# Module-level aliases for the hot paths: ``Decision.DRAW`` is a slow enum-class attribute
# lookup, while ``decision is _DRAW`` is a pointer compare (``decision`` stays a Decision).
_NONE, _DRAW, _WILD, _SWAP, _CALL = Decision

# Round phases: play, then (free_draws) the loser's free turns.
PHASE_PLAY, PHASE_FREE_DRAWS = 0, 1


class Event(NamedTuple):
    """One thing that happened at the table. ``card`` and ``slot`` are -1 where meaningless;
    ``slot`` is 0-based. ``kind`` is one of EVENT_KINDS."""

    kind: str
    player: int
    card: int = -1
    slot: int = -1


# ``Event(...)`` goes through the NamedTuple's Python-level ``__new__``; the C-level
# ``tuple.__new__(Event, fields)`` builds the same Event without it (docs/benchmarks-history.md).
_new_tuple = tuple.__new__

EVENT_KINDS = (
    "deal",  # slot = deal number (0-based), player = first player
    "draw_stock",
    "take_discard",
    "place",  # natural card laid in its slot
    "wild",  # wild card laid on a face-down slot
    "swap",  # natural card laid on the wild in its slot; the wild is picked up
    "pickup",  # the card that lay in the slot is picked up (revealed)
    "decline",  # a swap was declined
    "discard",
    "reshuffle",  # card = number of cards shuffled into the new stock
    "call",
    "penalty",  # penalty card drawn for a missed call (card), discarded at once
    "claim",  # a player who missed the call claims the round
    "round_won",
    "free_draws",  # the loser's free turns begin
    "reveal",  # a loser's face-down card turned up at the round's end
    "shrink",  # slot = the new layout size
    "game_over",  # player = -1; card = number of winners
    "truncated",
)
# The kinds whose ``card`` is a card (a rank); the others hold -1 or a count (the text, the game
# log's checks and the web page read these two lists).
CARD_EVENT_KINDS = frozenset(
    (
        "draw_stock",
        "take_discard",
        "place",
        "wild",
        "swap",
        "pickup",
        "decline",
        "discard",
        "penalty",
        "reveal",
    )
)


def zero_sum_share(won: Any, winners: Any, num_players: int) -> Any:
    """The zero-sum return of one seat when ``winners`` seats (at least 1) share the win:
    ``(n/k - 1)/(n - 1)`` for a winner, ``-1/(n - 1)`` for the others, so the seats' returns sum
    to 0 and lie in [-1, 1]. The one formula of every return and deal reward: ``Game.returns``,
    ``Game.shares_to_returns``, the batched engine (``VectorGame.returns``, numpy arrays in,
    arrays out) and its compiled kernels (numba compiles this very function); branch-free so that
    all three compute the same floats."""
    return (won * (num_players / winners) - 1.0) / (num_players - 1)


_SomeGame = TypeVar("_SomeGame", bound="Game")  # clone() of a subclass is that subclass


class InvariantError(Exception):
    """A game's state broke a rule the engine must keep (raised by ``check_invariants``)."""


class Game:
    """The state of one game of Trash, all rounds, and the rules that move it.

    Args:
        rules: the rules configuration (standard rules by default).
        seed: seed of the game's ``numpy.random.Generator`` (deals, first player, reshuffles).
        deals: stacked card orders for the first deals, for tests, replays and bug reports.
            Each lists player 0's layout slot 1..L, then player 1's, and so on, then the stock
            from its top down; it must hold exactly the cards of the decks. Deals beyond the
            list are shuffled by ``rng``.
        first_player: the first round's first player (default: drawn by ``rng``).
        sizes: the first round's layout size per player (default: ``rules.start_size`` each),
            each from ``target_size + 1`` to ``start_size``: a game started where a game of
            these rules arrives after rounds won (the winner's layout shrinks), as endgame
            studies need.

    Besides the rules' public state (``layout``, ``state``, ``sizes``, ``stock``, ``discard``,
    ``held``, ``decision``, ...), three attributes the observation encoders read on every step
    are public: ``current`` (the player to act; the last actor once the game is over),
    ``face_down`` (face-down cards per player) and ``hidden`` (per rank, the cards nobody can
    see). They are the engine's own objects, read by adapters, never written.
    """

    # Slots: a Game has more attributes than CPython's shared-key instance dicts hold (30), so
    # with a __dict__ every attribute read on the hot paths would be a dict lookup.
    # fmt: off
    __slots__ = (
        "rules", "rng", "num_players", "wild", "totals", "_deck", "_stacked", "sizes",
        "rounds_won", "deal_number", "turns", "events", "round_results", "winners", "placings",
        "done", "truncated", "decision", "layout", "state", "stock", "discard", "held",
        "face_down", "hidden", "_stock_known", "_phase", "_free_left", "_pending_claim",
        "_completed", "_called", "_pending_put", "_round_winner", "_round_starter", "current",
        "_face_down_left", "_max_turns",
    )
    # fmt: on
    # Declared here for type checkers: methods that read them come before the one that sets them.
    stock: list[int]
    held: int
    _stock_known: bool

    def __init__(
        self,
        rules: Rules | None = None,
        seed: int | None = None,
        *,
        deals: Sequence[Sequence[int]] = (),
        first_player: int | None = None,
        sizes: Sequence[int] | None = None,
    ) -> None:
        self.rules = rules if rules is not None else Rules()
        self.rng = np.random.default_rng(seed)
        n = self.rules.num_players
        self.num_players = n
        self._max_turns = self.rules.max_turns
        self.wild = self.rules.wild_table()
        self.totals = rank_totals(self.rules.decks, self.rules.jokers)
        self._deck = build_deck(self.rules.decks, self.rules.jokers)
        self._stacked = [list(order) for order in deals]
        self.sizes = [self.rules.start_size] * n if sizes is None else self._check_sizes(sizes)
        self.rounds_won = [0] * n
        self.deal_number = 0  # deals finished
        self.turns = 0  # turns finished in the whole game
        self.events: list[Event] = []
        self.round_results: list[tuple[int, ...]] = []  # players who shrank, per finished deal
        self.winners: tuple[int, ...] = ()
        self.placings: tuple[int, ...] | None = None
        self.done = False
        self.truncated = False
        self.decision = _NONE
        if first_player is None:
            first_player = int(self.rng.integers(n))
        elif _integer(first_player) is None or not 0 <= first_player < n:
            raise ValueError(
                f"first_player must be an integer from 0 to {n - 1} or None, got {first_player!r}"
            )
        self._start_round(int(first_player))

    def _check_sizes(self, sizes: Sequence[int]) -> list[int]:
        low, high = self.rules.target_size + 1, self.rules.start_size
        found = [_integer(size) for size in sizes] if isinstance(sizes, (list, tuple)) else []
        if len(found) != self.num_players or any(
            size is None or not low <= size <= high for size in found
        ):
            raise ValueError(
                f"sizes must give {self.num_players} layout sizes, each an integer from {low} "
                f"to {high}, got {sizes!r}"
            )
        return [int(size) for size in found if size is not None]

    # ------------------------------------------------------------------ public API

    def legal_actions(self) -> list[int]:
        """The actions open to the player to act, ascending; empty once the game is over."""
        decision = self.decision
        if decision is _DRAW:
            return [DRAW_STOCK, TAKE_DISCARD]
        if decision is _WILD:
            state = self.state[self.current]
            return [s for s in range(self.sizes[self.current]) if state[s] == DOWN]
        if decision is _SWAP:
            return [self.held - 1, DECLINE]
        if decision is _CALL:
            return [CALL_TRASH, STAY_SILENT]
        return []

    def step(self, action: int) -> None:
        """Apply the acting player's choice and play on to the next decision or the end."""
        if action.__class__ is not int:  # numpy's integers are actions too; bools never
            plain = _integer(action)
            if plain is None:
                raise self.refusal(action)
            action = plain
        decision = self.decision
        if decision is _DRAW and action == DRAW_STOCK:
            self._draw_stock()
        elif decision is _DRAW and action == TAKE_DISCARD:
            self._take_discard()
        elif decision is _WILD and action in self.legal_actions():
            if self._put(action, True):
                self._play_held()
        elif decision is _SWAP and action == self.held - 1:
            if self._put(action, False):
                self._play_held()
        elif decision is _SWAP and action == DECLINE:
            self._log("decline", self.held)
            self._play_held(may_swap=False)  # the card fits nowhere else: the turn ends
        elif decision is _CALL and action == CALL_TRASH:
            self._log("call")
            self._called = True
            self._lay(*self._pending_put)
            self._layout_complete()
        elif decision is _CALL and action == STAY_SILENT:
            self._lay(*self._pending_put)
            self._miss_call()
        else:
            self._refuse(action)

    def returns(self) -> list[float]:
        """Zero-sum result: with k winners of n, each winner gets (n/k - 1)/(n - 1), each
        other player -1/(n - 1); all zero while the game runs or when it was truncated."""
        return self.shares_to_returns(self.winners)

    def shares_to_returns(self, winners: Sequence[int]) -> list[float]:
        """Every seat's :func:`zero_sum_share` when ``winners`` share +1 (all zero if none)."""
        n = self.num_players
        if not winners:
            return [0.0] * n
        k = len(winners)
        return [zero_sum_share(p in winners, k, n) for p in range(n)]

    def face_down_count(self, player: int) -> int:
        """How many face-down cards ``player``'s layout holds (public)."""
        return self.face_down[player]

    # Public reads of engine state the adapters need (the OpenSpiel game); ``current``,
    # ``face_down`` and ``hidden`` are plain attributes (see the class docstring).

    @property
    def stock_known(self) -> bool:
        """Whether the stock's contents are public (it was rebuilt from the discard pile)."""
        return self._stock_known

    @property
    def pending_claims(self) -> list[bool]:
        """Per player, whether they missed the call and claim the round at their next turn
        (the engine's list: read, never write)."""
        return self._pending_claim

    @property
    def free_turns_left(self) -> int:
        """Free turns the loser still has to complete the layout (``free_draws``), else 0."""
        return self._free_left

    def refusal(self, action: object) -> ValueError:
        """The error for an action that is not legal now: it names the decision, the player
        and the legal actions (``step`` raises it; adapters raise it for actions they refuse
        before the engine sees them)."""
        if self.done:
            return ValueError(f"the game is over; no action is legal (got {action!r})")
        names = ", ".join(f"{a} ({ACTION_NAMES[a]})" for a in self.legal_actions())
        return ValueError(
            f"illegal action {action!r} for {self.decision.name} decision of player "
            f"{self.current}; legal actions: {names}"
        )

    def hidden_counts(self) -> list[int]:
        """Per rank, how many cards nobody can see (face-down or in the stock). Public: it is
        the deck minus every visible card."""
        return list(self.hidden)

    def clone(self: _SomeGame, events: bool = True) -> _SomeGame:
        """An independent copy (its own rng state); ``events=False`` starts an empty log."""
        other = copy.copy(self)
        other.rng = copy.deepcopy(self.rng)
        other.sizes = self.sizes[:]
        other.rounds_won = self.rounds_won[:]
        other.events = self.events[:] if events else []
        other.round_results = self.round_results[:]
        other._stacked = [order[:] for order in self._stacked]
        other.layout = [row[:] for row in self.layout]
        other.state = [row[:] for row in self.state]
        other.face_down = self.face_down[:]
        other.hidden = self.hidden[:]
        other.stock = self.stock[:]
        other.discard = self.discard[:]
        other._pending_claim = self._pending_claim[:]
        other._completed = self._completed[:]
        return other

    def resample_hidden(self, rng: np.random.Generator) -> None:
        """Re-deal every hidden card (face-down cards and stock order) at random, consistently
        with public information. Before any reshuffle the stock and the face-down cards come
        from one shuffle and are exchangeable; after one, the stock's contents are public, so
        each is shuffled within itself. The result depends only on public information and
        ``rng`` (hidden cards are sorted before shuffling), never on where they really lie.
        Later deals are shuffled by ``rng`` too."""
        spots = [
            (p, s)
            for p in range(self.num_players)
            for s in range(NUM_SLOTS)
            if self.state[p][s] == DOWN
        ]
        face_down = sorted(self.layout[p][s] for p, s in spots)
        stock = sorted(self.stock)
        if self._stock_known:
            face_down = rng.permutation(face_down).tolist() if face_down else []
            stock = rng.permutation(stock).tolist() if stock else []
        else:
            pool = rng.permutation(sorted(face_down + stock)).tolist()
            face_down, stock = pool[: len(spots)], pool[len(spots) :]
        for (p, s), card in zip(spots, face_down, strict=True):
            self.layout[p][s] = card
        self.stock = stock
        self._stacked = []
        self.rng = np.random.default_rng(rng.integers(2**63))

    def check_invariants(self) -> None:
        """Raise :class:`InvariantError` unless every card is in exactly one place, every slot
        of a layout holds one card, slot states match their cards and rank counts are
        conserved (a raise, not ``assert``: ``python -O`` checks too)."""

        def require(ok: bool, what: str, *details: object) -> None:
            if not ok:
                raise InvariantError(f"{what}: {details}")

        counts = Counter(self.stock) + Counter(self.discard)
        if self.held >= 0:
            counts[self.held] += 1
        for p in range(self.num_players):
            down = in_layout = 0
            for s in range(NUM_SLOTS):
                card, state = self.layout[p][s], self.state[p][s]
                if state == ABSENT:
                    require(card == -1, "a card in an absent slot (player, slot, card)", p, s, card)
                    continue
                in_layout += 1
                require(0 <= card < NUM_RANKS, "not a card (player, slot, card)", p, s, card)
                counts[card] += 1
                if state == DOWN:
                    down += 1
                elif state == NATURAL:
                    require(
                        card == s + 1,
                        "a natural card in another's slot (player, slot, card)",
                        p,
                        s,
                        card,
                    )
                else:
                    require(
                        self.wild[card],
                        "a face-up wild that is not wild (player, slot, card)",
                        p,
                        s,
                        card,
                    )
            # Once the game is over the sizes already hold the next round's layout size.
            require(
                self.done or in_layout == self.sizes[p],
                "layout size (player, cards, size)",
                p,
                in_layout,
                self.sizes[p],
            )
            require(
                all(st != ABSENT for st in self.state[p][:in_layout]),
                "a gap in the layout (player, states)",
                p,
                self.state[p],
            )
            require(
                down == self.face_down[p],
                "face-down count (player, counted, kept)",
                p,
                down,
                self.face_down[p],
            )
        expected = Counter({rank: total for rank, total in enumerate(self.totals) if total})
        require(counts == expected, "cards not conserved (counted, decks)", counts, expected)
        hidden = [0] * NUM_RANKS
        for card in self.stock:
            hidden[card] += 1
        for p in range(self.num_players):
            for s in range(NUM_SLOTS):
                if self.state[p][s] == DOWN:
                    hidden[self.layout[p][s]] += 1
        require(hidden == self.hidden, "hidden counts (counted, kept)", hidden, self.hidden)
        require(self.done or self.decision != Decision.NONE, "a running game with no decision")
        require(self.done or bool(self.legal_actions()), "a running game with no legal action")

    # ------------------------------------------------------------------ the round

    def _start_round(self, starter: int) -> None:
        n, deck = self.num_players, self._deck
        if self._stacked:
            order = self._stacked.pop(0)
            if sorted(order) != sorted(deck):
                missing = Counter(deck) - Counter(order)
                extra = Counter(order) - Counter(deck)
                raise ValueError(
                    "deals: a stacked deal must hold exactly the cards of the decks "
                    f"(missing {dict(missing)}, extra {dict(extra)})"
                )
        else:
            # Generator.shuffle on a list draws the same numbers and gives the same order as
            # permutation() of the equal array, without the round trip through numpy.
            order = deck[:]
            self.rng.shuffle(order)
        self.layout = []
        self.state = []
        i = 0
        for p in range(n):
            size = self.sizes[p]
            self.layout.append(order[i : i + size] + [-1] * (NUM_SLOTS - size))
            self.state.append([DOWN] * size + [ABSENT] * (NUM_SLOTS - size))
            i += size
        self.stock = order[i:][::-1]  # top at the end
        self.discard: list[int] = []
        self.held = -1
        self.face_down = self.sizes[:]
        self.hidden = list(self.totals)
        self._stock_known = False
        self._phase = PHASE_PLAY
        self._free_left = 0
        self._pending_claim = [False] * n
        self._completed = [False] * n
        self._called = False
        self._pending_put: tuple[int, bool] = (-1, False)
        self._round_winner = -1
        self._round_starter = starter
        self.current = starter
        self._log("deal", -1, self.deal_number, player=starter)
        self._begin_turn()

    def _begin_turn(self) -> None:
        player = self.current
        self._called = False
        if self._pending_claim[player]:
            self._log("claim")
            self._win_round(player)
            return
        if not self.stock:
            self._reshuffle()
        if self.stock and self.discard:
            self.decision = _DRAW
        elif self.stock:
            self._draw_stock()
        else:
            self._take_discard()

    def _reshuffle(self) -> None:
        if self.rules.reshuffle == "keep_top" and self.discard:
            pile, self.discard = self.discard[:-1], self.discard[-1:]
        else:
            pile, self.discard = self.discard, []
        if not pile:
            return
        self.stock = pile[:]
        self.rng.shuffle(self.stock)  # the same order as permutation(pile), see _start_round
        for card in pile:
            self.hidden[card] += 1
        self._stock_known = True
        self._log("reshuffle", len(pile), player=-1)

    def _draw_stock(self) -> None:
        self.held = card = self.stock.pop()
        self.hidden[card] -= 1
        self._log("draw_stock", card)
        self._play_held()

    def _take_discard(self) -> None:
        self.held = card = self.discard.pop()
        self._log("take_discard", card)
        self._play_held()

    def _play_held(self, may_swap: bool = True) -> None:
        """Place the card in hand, and each card it uncovers, until a decision or the turn's
        end; at the end, discard the card and pass the turn (``may_swap=False``: a declined
        swap, so the card fits nowhere)."""
        player = self.current
        state = self.state[player]
        while True:
            card = self.held
            if self.wild[card]:
                if self.face_down[player] > 1:
                    self.decision = _WILD
                    return
                self._put(state.index(DOWN), True)  # the last face-down slot: completes
                return
            if not 1 <= card <= self.sizes[player]:
                break  # a face card that is not wild, or a number beyond the layout
            slot = card - 1
            if state[slot] == WILD_UP and may_swap:
                self.decision = _SWAP
                return
            if state[slot] != DOWN:
                break  # its slot is filled already
            if not self._put(slot, False):
                return  # the layout is complete (or awaits the call)
        self.held = self._discard_held()
        self._next_turn()

    def _put(self, slot: int, as_wild: bool) -> bool:
        """Lay the held card in ``slot``; False when that ended the round or awaits a call."""
        player = self.current
        down = self.face_down[player]
        completes = down == 0 or (down == 1 and self.state[player][slot] == DOWN)
        if completes and self.rules.call_trash and self._phase == PHASE_PLAY and not self._called:
            self._pending_put = (slot, as_wild)
            self.decision = _CALL
            return False
        self._lay(slot, as_wild)
        if completes:
            self._layout_complete()
            return False
        return True

    def _lay(self, slot: int, as_wild: bool) -> None:
        player, card = self.current, self.held
        row, state = self.layout[player], self.state[player]
        under, was = row[slot], state[slot]
        row[slot] = card
        state[slot] = WILD_UP if as_wild else NATURAL
        if was == DOWN:
            self.face_down[player] -= 1
            self.hidden[under] -= 1
            self._log("wild" if as_wild else "place", card, slot)
        else:
            self._log("swap", card, slot)  # a natural card swapped into its own slot
        self.held = under
        self._log("pickup", under, slot)

    def _layout_complete(self) -> None:
        player = self.current
        if self._phase == PHASE_FREE_DRAWS:
            self._completed[player] = True
            self._finish_round()
        else:
            self._win_round(player)

    def _discard_held(self) -> int:
        """Put the held card on the discard pile (it is public) and return -1 for 'no card'."""
        if self.held >= 0:
            self.discard.append(self.held)
            self._log("discard", self.held)
        return -1

    def _miss_call(self) -> None:
        """No call on the last slot: discard, draw a penalty card, claim next turn."""
        player = self.current
        self.held = self._discard_held()
        if not self.stock:
            self._reshuffle()
        if self.stock:
            card = self.stock.pop()
            self.hidden[card] -= 1
            self.discard.append(card)
            self._log("penalty", card)
        self._pending_claim[player] = True
        self._next_turn()

    def _next_turn(self) -> None:
        self.turns += 1
        if self.turns >= self._max_turns:
            self._truncate()
            return
        if self._phase == PHASE_FREE_DRAWS:
            self._free_left -= 1
            if self._free_left == 0:
                self._finish_round()
                return
        else:
            self.current = (self.current + 1) % self.num_players
        self._begin_turn()

    def _win_round(self, player: int) -> None:
        self._log("round_won", player=player)
        self._round_winner = player
        self._completed[player] = True
        self.held = self._discard_held()
        if self.rules.free_draws:
            loser = 1 - player
            if self.face_down[loser] == 0:  # a missed call left the loser complete already
                self._completed[loser] = True
                self._finish_round()
                return
            self._phase = PHASE_FREE_DRAWS
            self._free_left = self.rules.free_draws
            self.current = loser
            self._log("free_draws", player=loser)
            self._begin_turn()
            return
        self._finish_round()

    def _finish_round(self) -> None:
        n = self.num_players
        self.held = self._discard_held()
        shrinkers = [p for p in range(n) if self._completed[p]]
        self._face_down_left = self.face_down[:]
        if self.rules.losers_reveal:
            for p in range(n):
                if self._completed[p]:
                    continue
                correct = True
                for s in range(self.sizes[p]):
                    if self.state[p][s] == DOWN:
                        card = self.layout[p][s]
                        self._log("reveal", card, s, player=p)
                        correct = correct and (card == s + 1 or self.wild[card])
                if correct:
                    shrinkers.append(p)
            shrinkers.sort()
        for p in shrinkers:
            self.sizes[p] -= 1
            self.rounds_won[p] += 1
            self._log("shrink", -1, self.sizes[p], player=p)
        self.deal_number += 1
        self.round_results.append(tuple(shrinkers))
        game_winners = [p for p in shrinkers if self.sizes[p] <= self.rules.target_size]
        if game_winners:
            self._game_over(game_winners)
        elif self.rules.episode == "round":
            self._game_over(shrinkers)
        elif self.rules.max_deals is not None and self.deal_number >= self.rules.max_deals:
            smallest = min(self.sizes)
            self._game_over([p for p in range(n) if self.sizes[p] == smallest])
        elif self.rules.first_player == "winner":
            self._start_round(self._round_winner)
        else:
            self._start_round((self._round_starter + 1) % n)

    def _game_over(self, winners: Sequence[int]) -> None:
        self.done = True
        self.decision = _NONE
        self.winners = tuple(winners)
        # Winners place first; the others by how few face-down slots they had left (the German
        # printed rules' last-round bonus; docs/rules.md, final placings).
        keys = [
            (False, 0) if p in self.winners else (True, self._face_down_left[p])
            for p in range(self.num_players)
        ]
        self.placings = tuple(1 + sum(k < keys[p] for k in keys) for p in range(self.num_players))
        self._log("game_over", len(self.winners), player=-1)

    def _truncate(self) -> None:
        self.done = True
        self.truncated = True
        self.decision = _NONE
        self._log("truncated", player=-1)

    def _log(self, kind: str, card: int = -1, slot: int = -1, player: int | None = None) -> None:
        self.events.append(
            _new_tuple(Event, (kind, self.current if player is None else player, card, slot))
        )

    def _refuse(self, action: object) -> None:
        raise self.refusal(action)
