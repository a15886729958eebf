"""A public view of a game: what any seat may know, and determinisations for search.

Bots that need more than their observation vector (search bots, the terminal UI) get a
:class:`PublicView`. It exposes public information only; hidden cards can be reached only
through :meth:`PublicView.determinize`, which re-deals them at random first.
"""

from __future__ import annotations

import numpy as np

from trash_env.cards import NUM_SLOTS
from trash_env.engine import DOWN, Decision, Game
from trash_env.rules import Rules


class PublicView:
    """Public information of ``game`` as seen from ``seat``."""

    __slots__ = ("_game", "seat")

    def __init__(self, game: Game, seat: int) -> None:
        self._game = game
        self.seat = seat

    @property
    def rules(self) -> Rules:
        return self._game.rules

    @property
    def num_players(self) -> int:
        return self._game.num_players

    @property
    def current(self) -> int:
        return self._game.current

    @property
    def decision(self) -> Decision:
        return self._game.decision

    @property
    def held(self) -> int:
        """The card in hand (-1 if none): public, it is shown as it is played."""
        return self._game.held

    @property
    def sizes(self) -> list[int]:
        return self._game.sizes[:]

    @property
    def rounds_won(self) -> list[int]:
        return self._game.rounds_won[:]

    @property
    def wild(self) -> tuple[bool, ...]:
        return self._game.wild

    @property
    def totals(self) -> list[int]:
        return self._game.totals[:]

    @property
    def discard(self) -> list[int]:
        """The whole discard pile, top last (a public record)."""
        return self._game.discard[:]

    @property
    def discard_top(self) -> int:
        """The top card of the discard pile, or -1 if the pile is empty (no copy of the pile)."""
        discard = self._game.discard
        return discard[-1] if discard else -1

    @property
    def stock_size(self) -> int:
        return len(self._game.stock)

    @property
    def done(self) -> bool:
        return self._game.done

    def slot_states(self, player: int) -> list[int]:
        """Per slot: face-down, natural, wild or absent (engine's DOWN..ABSENT)."""
        return self._game.state[player][:]

    def face_up(self, player: int) -> list[int]:
        """Per slot the face-up card, or -1 where the slot is face-down or absent."""
        game = self._game
        return [
            game.layout[player][s] if game.state[player][s] != DOWN else -1
            for s in range(NUM_SLOTS)
        ]

    def face_down_count(self, player: int) -> int:
        return self._game.face_down_count(player)

    def hidden_counts(self) -> list[int]:
        """Per rank, cards nobody can see (the decks minus every visible card)."""
        return self._game.hidden_counts()

    def legal_actions(self) -> list[int]:
        return self._game.legal_actions()

    def determinize(self, rng: np.random.Generator) -> Game:
        """A copy of the game with every hidden card re-dealt at random, consistently with public
        information; it depends only on public information and ``rng``."""
        clone = self._game.clone(events=False)
        clone.resample_hidden(rng)
        return clone
