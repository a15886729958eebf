"""The rules configuration: every option of docs/rules.md in one frozen, validated object.

Standard rules are the defaults; each variant is an option that is off by default. Invalid
values and impossible combinations raise ``ValueError`` naming the option and what is allowed,
so a typo in an experiment config fails at construction, not three hours into training.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, fields

from trash_env.cards import JACK, JOKER, KING, NUM_RANKS, NUM_SLOTS, QUEEN

WILDS = ("jacks", "kings", "faces", "none")
FIRST_PLAYER = ("winner", "rotate")
RESHUFFLE = ("keep_top", "all")
EPISODE = ("game", "round")
FREE_DRAWS = (0, 3)
MIN_PLAYERS, MAX_PLAYERS = 2, 6
DEFAULT_MAX_TURNS = 20_000
_INT_OPTIONS = ("num_players", "num_decks", "start_size", "target_size", "max_deals",
                "free_draws", "max_turns")


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    return value


def _check_choice(name: str, value: object, allowed: tuple) -> None:
    if value not in allowed or type(value) not in {type(a) for a in allowed}:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


@dataclass(frozen=True)
class Rules:
    """Every rule option of Trash; the defaults are the standard game of docs/rules.md.

    Attributes:
        num_players: 2 to 6 players.
        num_decks: ``None`` for ``ceil(num_players / 2)`` decks, or a number of 52-card decks.
        start_size: the first layout size (10; 000's kids' game uses 5).
        wilds: which ranks are wild: ``"jacks"`` (standard), ``"kings"`` (Jacks and Queens end
            the turn), ``"faces"`` (J, Q and K) or ``"none"``.
        jokers: add 2 jokers per deck; jokers are always wild, whatever ``wilds`` says.
        target_size: the game is won by the first player whose layout shrinks to this size
            (0 = the standard game, won by completing a 1-card layout).
        max_deals: ``None``, or a number of deals after which the smallest layout wins
            (equal sizes share the win).
        first_player: who starts rounds after the first: the last ``"winner"`` or ``"rotate"``
            clockwise from the previous round's first player.
        reshuffle: on an empty stock, ``"keep_top"`` keeps the discard top and shuffles the rest
            into a new stock; ``"all"`` shuffles the whole discard pile.
        losers_reveal: at the end of a round the losers turn up their face-down cards; one whose
            face-down cards all lie in their own slots (wilds count) shrinks too.
        free_draws: 0, or 3: with two players and ``losers_reveal``, the loser plays up to three
            extra turns to complete the layout before revealing.
        call_trash: the player about to fill their last slot must call "Trash!"; one who does not
            draws a penalty card and claims the round at the start of their next turn.
        episode: ``"game"`` plays every round to the end of the game; ``"round"`` one deal.
        max_turns: turns after which the episode is truncated; no normal game reaches it.
    """

    num_players: int = 2
    num_decks: int | None = None
    start_size: int = 10
    wilds: str = "jacks"
    jokers: bool = False
    target_size: int = 0
    max_deals: int | None = None
    first_player: str = "winner"
    reshuffle: str = "keep_top"
    losers_reveal: bool = False
    free_draws: int = 0
    call_trash: bool = False
    episode: str = "game"
    max_turns: int = DEFAULT_MAX_TURNS

    def __post_init__(self) -> None:
        # Integers of any kind (numpy's from a config sweep, say) are stored as plain ints.
        for name in _INT_OPTIONS:
            value = getattr(self, name)
            if isinstance(value, numbers.Integral) and not isinstance(value, bool):
                object.__setattr__(self, name, int(value))
        _check_int("num_players", self.num_players, MIN_PLAYERS, MAX_PLAYERS)
        if self.num_decks is not None:
            _check_int("num_decks", self.num_decks, 1, 12)
        _check_int("start_size", self.start_size, 1, NUM_SLOTS)
        _check_choice("wilds", self.wilds, WILDS)
        _check_choice("jokers", self.jokers, (False, True))
        _check_int("target_size", self.target_size, 0, NUM_SLOTS)
        if self.target_size >= self.start_size:
            raise ValueError(
                f"target_size must be below start_size ({self.start_size}): "
                f"0 to {self.start_size - 1}, got {self.target_size}"
            )
        if self.max_deals is not None:
            _check_int("max_deals", self.max_deals, 1, 10_000)
        _check_choice("first_player", self.first_player, FIRST_PLAYER)
        _check_choice("reshuffle", self.reshuffle, RESHUFFLE)
        _check_choice("losers_reveal", self.losers_reveal, (False, True))
        _check_choice("free_draws", self.free_draws, FREE_DRAWS)
        if self.free_draws and (self.num_players != 2 or not self.losers_reveal):
            raise ValueError(
                "free_draws=3 needs num_players=2 and losers_reveal=True "
                f"(got num_players={self.num_players}, losers_reveal={self.losers_reveal})"
            )
        _check_choice("call_trash", self.call_trash, (False, True))
        _check_choice("episode", self.episode, EPISODE)
        _check_int("max_turns", self.max_turns, 1, 10**9)
        needed = self.num_players * self.start_size + 2
        if self.total_cards < needed:
            raise ValueError(
                f"num_decks={self.decks} holds {self.total_cards} cards, but {self.num_players} "
                f"layouts of {self.start_size} plus 2 need {needed}: use num_decks >= "
                f"{math.ceil((needed - (2 * self.decks if self.jokers else 0)) / 52)} or None"
            )

    @property
    def decks(self) -> int:
        """The number of 52-card decks in play (``num_decks`` resolved)."""
        return self.num_decks if self.num_decks is not None else math.ceil(self.num_players / 2)

    @property
    def total_cards(self) -> int:
        return 52 * self.decks + (2 * self.decks if self.jokers else 0)

    def wild_table(self) -> tuple[bool, ...]:
        """``wild_table()[rank]`` tells whether that rank is wild under these rules."""
        wild = [False] * NUM_RANKS
        wild[JOKER] = self.jokers
        if self.wilds in ("jacks", "faces"):
            wild[JACK] = True
        if self.wilds in ("kings", "faces"):
            wild[KING] = True
        if self.wilds == "faces":
            wild[QUEEN] = True
        return tuple(wild)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_options(cls, **options: object) -> Rules:
        """Build rules from keyword options, naming any unknown option and the allowed ones."""
        unknown = sorted(set(options) - set(cls.option_names()))
        if unknown:
            raise ValueError(
                f"unknown rules option(s) {', '.join(unknown)}; "
                f"allowed: {', '.join(cls.option_names())}"
            )
        return cls(**options)  # type: ignore[arg-type]
