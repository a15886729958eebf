"""The public-state model of a 2-player round: every card that turns up is a chance event.

In Trash nobody sees a face-down card or the stock's order, the owner included, so every
decision is taken on public information. Before the first reshuffle the face-down cards and the
stock come from one shuffle and are exchangeable: each card that turns up (a stock draw, or the
card picked up from a face-down slot) is drawn from the one pool of unseen cards, with
probability proportional to its count. A reshuffle happens only on an empty stock, when the
unseen cards are exactly the face-down ones; the new stock is the discard pile below its top, a
known multiset drawn uniformly, kept apart from the face-down pool from then on.

Cards are grouped in classes that behave alike for the layout sizes ``(a, b)``: ``DEAD`` (class
0: every rank no layout can use), the numbers ``1 .. max(a, b)`` (class = the number) and
``wild`` (class ``max(a, b) + 1``). Suits never matter, and a Queen is a 9 is a King to a
layout of 5 slots. The order of the discard pile below its top never matters either: it is
shuffled before anyone draws from it again, and a turn that takes the top ends by putting a card
back on the same pile. So a state holds counts, not cards:

- ``slots``: per seat, per slot: ``DOWN``, ``NATURAL`` (its own number face-up) or ``WILD_UP``;
- ``top`` (the discard top's class, -1 for none) and ``below`` (counts of the cards under it).
  During a turn the whole pile is ``below`` and ``top`` is -1 (no draw choice is left);
- ``stock``: ``None`` before the first reshuffle (the stock is then part of the unseen pool),
  afterwards the known counts of the stock;
- ``player`` to act, ``phase`` and the ``held`` card.

Actions are the engine's (:mod:`trash_env.engine`): slots 0..9, ``DRAW_STOCK``,
``TAKE_DISCARD``, ``DECLINE``. Everything forced is applied at once, as the engine does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from trash_env.cards import JOKER, NUM_RANKS
from trash_env.engine import (
    DECLINE,
    DOWN,
    DRAW_STOCK,
    NATURAL,
    TAKE_DISCARD,
    WILD_UP,
    Game,
)
from trash_env.rules import Rules
from trash_env.view import PublicView

DEAD = 0

# Phases: the engine's decisions (DRAW 1, WILD 2, SWAP 3), the two kinds of chance node, the end.
OVER, DRAW, WILD, SWAP, CHANCE_DRAW, CHANCE_PICKUP = 0, 1, 2, 3, 5, 6
DECISIONS = (DRAW, WILD, SWAP)
CHANCES = (CHANCE_DRAW, CHANCE_PICKUP)
PHASE_NAMES = {
    OVER: "over",
    DRAW: "draw",
    WILD: "wild",
    SWAP: "swap",
    CHANCE_DRAW: "stock draw",
    CHANCE_PICKUP: "pickup",
}

SUPPORTED_WILDS = ("jacks", "kings")


def check_rules(rules: Rules) -> None:
    """Refuse, in one sentence, rules the model does not cover: 2 players, one deck, Jacks or
    Kings wild (jokers allowed), the discard top kept on a reshuffle, no call, no reveal."""
    problems = []
    if rules.num_players != 2:
        problems.append(f"num_players={rules.num_players} (2 only)")
    if rules.decks != 1:
        problems.append(f"num_decks={rules.num_decks} (one deck only)")
    if rules.wilds not in SUPPORTED_WILDS:
        problems.append(f"wilds={rules.wilds!r} ({' or '.join(map(repr, SUPPORTED_WILDS))})")
    if rules.reshuffle != "keep_top":
        problems.append(f"reshuffle={rules.reshuffle!r} ('keep_top' only)")
    if rules.call_trash:
        problems.append("call_trash=True (False only)")
    if rules.losers_reveal:
        problems.append("losers_reveal=True (False only)")
    if problems:
        raise ValueError(
            "the exact model covers 2-player one-deck rounds with Jacks or Kings wild and "
            "standard reshuffles; these rules have " + ", ".join(problems)
        )


@dataclass(frozen=True)
class Classes:
    """The card classes of a round with layout sizes ``sizes`` under ``rules``."""

    sizes: tuple[int, int]
    rules: Rules

    def __post_init__(self) -> None:
        check_rules(self.rules)
        for size in self.sizes:
            if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 10:
                raise ValueError(f"layout sizes must be integers from 1 to 10, got {self.sizes}")

    @property
    def top_number(self) -> int:
        return max(self.sizes)

    @property
    def wild(self) -> int:
        """The wild class (numbers are 1 .. top_number)."""
        return self.top_number + 1

    @property
    def count(self) -> int:
        """How many classes: dead, the numbers, wild."""
        return self.top_number + 2

    def of(self, rank: int) -> int:
        """The class of an engine card (rank)."""
        if self.rules.wild_table()[rank]:
            return self.wild
        return rank if 1 <= rank <= self.top_number else DEAD

    def totals(self) -> tuple[int, ...]:
        """How many cards of each class one deck holds."""
        counts = [0] * self.count
        for rank in range(NUM_RANKS):
            total = 4 if rank != JOKER else (2 if self.rules.jokers else 0)
            counts[self.of(rank)] += total
        return tuple(counts)

    def name(self, cls: int) -> str:
        if cls == DEAD:
            return "dead"
        return "wild" if cls == self.wild else str(cls)


class State(NamedTuple):
    """A public state of a 2-player round (see the module docstring). Immutable and hashable."""

    slots: tuple[tuple[int, ...], tuple[int, ...]]
    player: int
    phase: int
    held: int
    top: int
    below: tuple[int, ...]
    stock: tuple[int, ...] | None
    winner: int = -1


def _add(counts: tuple[int, ...], cls: int, delta: int = 1) -> tuple[int, ...]:
    out = list(counts)
    out[cls] += delta
    return tuple(out)


class Model:
    """The rules of a 2-player round on public states, with explicit chance nodes."""

    def __init__(self, sizes: tuple[int, int], rules: Rules | None = None) -> None:
        self.classes = Classes((int(sizes[0]), int(sizes[1])), rules or Rules())
        self.sizes = self.classes.sizes
        self.totals = self.classes.totals()
        self.wild = self.classes.wild

    # ------------------------------------------------------------------ reading a state

    def initial(self, first: int) -> State:
        """The deal, seat ``first`` to draw: the first draw is forced (the pile is empty)."""
        zeros = (0,) * self.classes.count
        slots = (
            (DOWN,) * self.sizes[0],
            (DOWN,) * self.sizes[1],
        )
        return State(slots, first, CHANCE_DRAW, -1, -1, zeros, None)

    def face_down(self, state: State, seat: int) -> int:
        return state.slots[seat].count(DOWN)

    def face_up_counts(self, state: State) -> list[int]:
        counts = [0] * self.classes.count
        for row in state.slots:
            for slot, mark in enumerate(row):
                if mark == NATURAL:
                    counts[slot + 1] += 1
                elif mark == WILD_UP:
                    counts[self.wild] += 1
        return counts

    def unseen(self, state: State) -> list[int]:
        """Per class, the cards nobody has seen: face-down anywhere, and before the first
        reshuffle the stock too."""
        counts = self.face_up_counts(state)
        out = []
        for cls, total in enumerate(self.totals):
            seen = counts[cls] + state.below[cls] + (state.top == cls) + (state.held == cls)
            known_stock = state.stock[cls] if state.stock is not None else 0
            out.append(total - seen - known_stock)
        return out

    def stock_size(self, state: State) -> int:
        if state.stock is not None:
            return sum(state.stock)
        pending = 1 if state.phase == CHANCE_PICKUP else 0
        face_down = self.face_down(state, 0) + self.face_down(state, 1)
        return sum(self.unseen(state)) - face_down - pending

    def is_chance(self, state: State) -> bool:
        return state.phase in CHANCES

    def is_terminal(self, state: State) -> bool:
        return state.phase == OVER

    def returns(self, state: State) -> tuple[float, float]:
        """Zero-sum: +1 to the round's winner, -1 to the other (0, 0 while it runs)."""
        if state.winner < 0:
            return (0.0, 0.0)
        return (1.0, -1.0) if state.winner == 0 else (-1.0, 1.0)

    # ------------------------------------------------------------------ decisions

    def legal_actions(self, state: State) -> list[int]:
        if state.phase == DRAW:
            return [DRAW_STOCK, TAKE_DISCARD]
        if state.phase == WILD:
            return [s for s, mark in enumerate(state.slots[state.player]) if mark == DOWN]
        if state.phase == SWAP:
            return [state.held - 1, DECLINE]
        return []

    def apply(self, state: State, action: int) -> State:
        """The state after the player to act takes ``action`` (a chance node, a decision or
        the end)."""
        if action not in self.legal_actions(state):
            raise ValueError(
                f"illegal action {action!r} in a {PHASE_NAMES[state.phase]} state; legal "
                f"actions: {self.legal_actions(state)}"
            )
        if state.phase == DRAW and action == DRAW_STOCK:
            below = _add(state.below, state.top)  # mid-turn the whole pile is "below"
            return state._replace(phase=CHANCE_DRAW, top=-1, below=below)
        if state.phase == DRAW:
            return self._play(state._replace(held=state.top, top=-1), may_swap=True)
        if state.phase == WILD:
            return self._lay(state, action, WILD_UP)
        if action == DECLINE:
            return self._play(state, may_swap=False)
        return self._lay(state, action, NATURAL)

    # ------------------------------------------------------------------ chance

    def chance_outcomes(self, state: State) -> list[tuple[int, int]]:
        """The classes the turned-up card may have, each with its weight (a count); the
        probability of a class is its weight over the sum."""
        if state.phase == CHANCE_DRAW and state.stock is not None:
            pool = list(state.stock)  # a known stock, drawn uniformly
        else:
            # Before a reshuffle: the stock and the face-down cards, one exchangeable pool;
            # after one, a pickup comes from the face-down cards alone.
            pool = self.unseen(state)
        return [(cls, n) for cls, n in enumerate(pool) if n > 0]

    def chance_probabilities(self, state: State) -> list[tuple[int, float]]:
        outcomes = self.chance_outcomes(state)
        total = sum(n for _, n in outcomes)
        return [(cls, n / total) for cls, n in outcomes]

    def apply_chance(self, state: State, cls: int) -> State:
        """The state after the turned-up card proves to be of class ``cls``."""
        if cls not in dict(self.chance_outcomes(state)):
            raise ValueError(f"class {cls!r} cannot turn up in this state")
        stock = state.stock
        if state.phase == CHANCE_DRAW and stock is not None:
            stock = _add(stock, cls, -1)
        return self._play(state._replace(held=cls, stock=stock, phase=DRAW), may_swap=True)

    # ------------------------------------------------------------------ the turn

    def _play(self, state: State, may_swap: bool) -> State:
        """Place the held card if it can be, up to the next decision, chance or the turn's
        end (the engine's ``_play_held``)."""
        me = state.player
        row = state.slots[me]
        card = state.held
        if card == self.wild:
            if row.count(DOWN) > 1:
                return state._replace(phase=WILD)
            return self._lay(state, row.index(DOWN), WILD_UP)
        if 1 <= card <= self.sizes[me]:
            mark = row[card - 1]
            if mark == WILD_UP and may_swap:
                return state._replace(phase=SWAP)
            if mark == DOWN:
                return self._lay(state, card - 1, NATURAL)
        return self._end_turn(state)

    def _lay(self, state: State, slot: int, mark: int) -> State:
        me = state.player
        row = list(state.slots[me])
        was = row[slot]
        row[slot] = mark
        slots = (tuple(row), state.slots[1]) if me == 0 else (state.slots[0], tuple(row))
        if DOWN not in row:  # the round is won at once; the table no longer matters
            zeros = (0,) * self.classes.count
            return State(slots, me, OVER, -1, -1, zeros, None, me)
        state = state._replace(slots=slots)
        if was == DOWN:
            return state._replace(phase=CHANCE_PICKUP, held=-1)
        return self._play(state._replace(held=self.wild), may_swap=True)  # the swapped wild

    def _end_turn(self, state: State) -> State:
        below = state.below if state.top < 0 else _add(state.below, state.top)
        state = state._replace(top=state.held, below=below, held=-1, player=1 - state.player)
        return self._begin_turn(state)

    def _begin_turn(self, state: State) -> State:
        if self.stock_size(state) == 0 and sum(state.below) > 0:
            zeros = (0,) * self.classes.count
            state = state._replace(stock=state.below, below=zeros)  # the reshuffle
        if self.stock_size(state) > 0:
            return state._replace(phase=DRAW if state.top >= 0 else CHANCE_DRAW)
        return self._play(state._replace(held=state.top, top=-1), may_swap=True)

    # ------------------------------------------------------------------ whole trees

    def next_decisions(self, state: State, action: int | None = None) -> dict[State, float]:
        """The distribution of the next decision (or terminal) state after ``action`` (none:
        from a chance node), every chance node between them expanded."""
        start = self.apply(state, action) if action is not None else state
        out: dict[State, float] = {}
        stack = [(start, 1.0)]
        while stack:
            node, p = stack.pop()
            if self.is_chance(node):
                for cls, q in self.chance_probabilities(node):
                    stack.append((self.apply_chance(node, cls), p * q))
            else:
                out[node] = out.get(node, 0.0) + p
        return out

    def reachable(self, starts: list[State], limit: int = 10**7) -> Iterator[State]:
        """Every decision or terminal state reachable from ``starts`` (breadth first)."""
        seen: set[State] = set()
        frontier: list[State] = []
        for start in starts:
            for node in self.next_decisions(start):
                if node not in seen:
                    seen.add(node)
                    frontier.append(node)
        while frontier:
            node = frontier.pop()
            yield node
            if len(seen) > limit:
                raise ValueError(f"more than {limit} states")
            for action in self.legal_actions(node):
                for child in self.next_decisions(node, action):
                    if child not in seen:
                        seen.add(child)
                        frontier.append(child)


def from_game(game: Game, sizes: tuple[int, int] | None = None) -> State:
    """The public state of a 2-player engine game at a decision (public information only:
    face-up cards, the discard pile, the stock's contents once public, the held card)."""
    rules = game.rules
    check_rules(rules)
    sizes = sizes or (game.sizes[0], game.sizes[1])
    classes = Classes(sizes, rules)
    count = classes.count
    slots = tuple(tuple(game.state[p][: sizes[p]]) for p in range(2))
    pile = [classes.of(card) for card in game.discard]
    phase = int(game.decision)
    below = [0] * count
    if phase == DRAW:
        top = pile[-1]
        for cls in pile[:-1]:
            below[cls] += 1
    else:
        top = -1  # mid-turn the whole pile is "below"
        for cls in pile:
            below[cls] += 1
    stock = None
    if game.stock_known:
        known = [0] * count
        for card in game.stock:  # public: the stock was rebuilt from the public pile
            known[classes.of(card)] += 1
        stock = tuple(known)
    held = classes.of(game.held) if game.held >= 0 else -1
    if game.done:
        winner = game.round_results[-1][0]
        return State(slots, winner, OVER, -1, -1, (0,) * count, None, winner)  # type: ignore[arg-type]
    return State(slots, game.current, phase, held, top, tuple(below), stock)  # type: ignore[arg-type]


def from_view(view: PublicView) -> State:
    """The public state of a seat's :class:`~trash_env.view.PublicView` at a decision. The
    view gives no hidden card; its determinisation re-deals every hidden card at random and
    keeps the public ones (a reshuffled stock keeps its known contents), so reading it is
    reading public information."""
    game = view.determinize(np.random.default_rng(0))
    return from_game(game, (view.sizes[0], view.sizes[1]))
