"""The rules configuration: every option of docs/rules.md in one frozen, validated object.

Standard rules are the defaults; each variant is an option that is off by default. Invalid
values and impossible combinations raise ``ValueError`` naming the option and what is allowed,
so a typo in an experiment config fails at construction, not three hours into training.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import Field, asdict, dataclass, field, fields
from typing import Any

import numpy as np

from trash_env.cards import JACK, JOKER, KING, NUM_RANKS, NUM_SLOTS, QUEEN

WILDS = ("jacks", "kings", "faces", "none")
FIRST_PLAYER = ("winner", "rotate")
RESHUFFLE = ("keep_top", "all")
EPISODE = ("game", "round")
FREE_DRAWS = (0, 3)
MIN_PLAYERS, MAX_PLAYERS = 2, 6
DEFAULT_MAX_TURNS = 20_000


class RulesWarning(UserWarning):
    """Rules that are valid but let a round become impossible to finish (see
    :meth:`Rules.stuck_round_reason`); ``warnings.simplefilter("error", RulesWarning)`` turns
    it into an error."""


def _option(
    default: object,
    *,
    low: int | None = None,
    high: int | None = None,
    choices: tuple | None = None,
    optional: bool = False,
    flags: tuple[str, ...] = (),
    param: str | None = None,
) -> Any:
    """A Rules field and what every table of options derives from it (``option_spec``):
    an integer range (``optional``: ``None`` allowed too) or the allowed ``choices``, the
    command-line ``flags`` people type (default: the name with dashes) and the OpenSpiel
    parameter name (``param``, default: the name)."""
    spec = {
        "low": low,
        "high": high,
        "choices": choices,
        "optional": optional,
        "flags": flags,
        "param": param,
    }
    return field(default=default, metadata={"option": spec})


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    return value


def _check_choice(name: str, value: object, allowed: tuple) -> None:
    if value not in allowed or type(value) not in {type(a) for a in allowed}:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


def option_spec(option: Field) -> dict[str, Any]:
    """What the Rules field ``option`` allows and how the command line and OpenSpiel name it
    (keys ``low``, ``high``, ``choices``, ``optional``, ``flags``, ``param``)."""
    spec = dict(option.metadata["option"])
    spec["flags"] = spec["flags"] or ("--" + option.name.replace("_", "-"),)
    spec["param"] = spec["param"] or option.name
    return spec


def check_option(option: Field, value: object, label: str | None = None) -> object:
    """``value`` checked against what ``option`` allows alone (numpy's spelling stored as
    Python's), or ``ValueError`` naming ``label`` (default: the option) and the allowed
    values. The combinations of options are checked by ``Rules`` itself."""
    spec, label = option_spec(option), label or option.name
    like = spec["choices"][0] if spec["choices"] is not None else 0
    value = _plain(value, like)
    if spec["choices"] is not None:
        _check_choice(label, value, spec["choices"])
    elif value is not None or not spec["optional"]:
        _check_int(label, value, spec["low"], spec["high"])
    return value


def option_index(name: str) -> int:
    """The position of option ``name`` in :meth:`Rules.codes` (compiled code reads it there)."""
    return Rules.option_names().index(name)


def _plain(value: object, like: object) -> object:
    """``value`` as the Python type of ``like`` when it is numpy's (or another library's)
    spelling of one: integers, booleans and strings from a config sweep compare and hash as
    Python's do, so frozen Rules built from them stay equal. Bools are never integers here."""
    if isinstance(value, np.bool_):
        return bool(value) if isinstance(like, bool) else value
    if isinstance(like, int) and not isinstance(like, bool) and isinstance(value, numbers.Integral):
        return value if isinstance(value, bool) else int(value)
    if isinstance(like, str) and isinstance(value, str):
        return str(value)
    return value


def _can_stick(players: int, copies: int, start_size: int, wild_cards: int) -> bool:
    """Whether a round can reach a table where nobody can ever fill a slot: the layouts'
    ``players * start_size`` slots can hold all ``copies * start_size`` numbers up to the start
    size and all wild cards (docs/rules.md has the proof that it is also necessary)."""
    return players >= copies and start_size * (players - copies) >= wild_cards


@dataclass(frozen=True)
class Rules:
    """Every rule option of Trash; the defaults are the standard game of docs/rules.md.

    Attributes:
        num_players: 2 to 6 players.
        num_decks: ``None`` for ``ceil(num_players / 2)`` decks, or a number of 52-card decks.
        start_size: the first layout size (10; the German printed rules' kids' game uses 5).
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

    num_players: int = _option(
        2, low=MIN_PLAYERS, high=MAX_PLAYERS, flags=("--players", "--num-players"), param="players"
    )
    num_decks: int | None = _option(
        None, low=1, high=12, optional=True, flags=("--decks", "--num-decks")
    )
    start_size: int = _option(10, low=1, high=NUM_SLOTS)
    wilds: str = _option("jacks", choices=WILDS)
    jokers: bool = _option(False, choices=(False, True))
    target_size: int = _option(0, low=0, high=NUM_SLOTS)
    max_deals: int | None = _option(None, low=1, high=10_000, optional=True)
    first_player: str = _option("winner", choices=FIRST_PLAYER)
    reshuffle: str = _option("keep_top", choices=RESHUFFLE)
    losers_reveal: bool = _option(False, choices=(False, True))
    free_draws: int = _option(0, choices=FREE_DRAWS)
    call_trash: bool = _option(False, choices=(False, True))
    episode: str = _option("game", choices=EPISODE)
    max_turns: int = _option(DEFAULT_MAX_TURNS, low=1, high=10**9)

    def __post_init__(self) -> None:
        # Each option alone (numpy's integers, booleans and strings stored as Python's), then
        # the combinations.
        for f in fields(self):
            object.__setattr__(self, f.name, check_option(f, getattr(self, f.name)))
        if self.target_size >= self.start_size:
            raise ValueError(
                f"target_size must be below start_size ({self.start_size}): "
                f"0 to {self.start_size - 1}, got {self.target_size}"
            )
        if self.free_draws and (self.num_players != 2 or not self.losers_reveal):
            raise ValueError(
                "free_draws=3 needs num_players=2 and losers_reveal=True "
                f"(got num_players={self.num_players}, losers_reveal={self.losers_reveal})"
            )
        needed = self.num_players * self.start_size + 2
        if self.total_cards < needed:
            raise ValueError(
                f"num_decks={self.decks} holds {self.total_cards} cards, but {self.num_players} "
                f"layouts of {self.start_size} plus 2 need {needed}: use num_decks >= "
                f"{math.ceil((needed - (2 * self.decks if self.jokers else 0)) / 52)} or None"
            )
        reason = self.stuck_round_reason()
        if reason is not None:
            warnings.warn(reason, RulesWarning, stacklevel=3)

    def stuck_round_reason(self) -> str | None:
        """Why a round of these rules can become impossible to finish, or ``None`` when it
        cannot (docs/rules.md, "Rounds that cannot finish"): exactly when the players are at
        least the copies of a number rank and the layouts can hold every card that fits a slot
        (all numbers up to the start size and every wild card) with room to spare."""
        copies = 4 * self.decks  # of each number rank
        wild_cards = self.wild_cards
        if not _can_stick(self.num_players, copies, self.start_size, wild_cards):
            return None
        enough = next(
            (
                d
                for d in range(self.decks + 1, 13)
                if not _can_stick(self.num_players, 4 * d, self.start_size, self.wild_cards_of(d))
            ),
            None,
        )
        fix = f"use num_decks >= {enough} (or None)" if enough else "use more decks"
        return (
            f"with {self.num_players} players, num_decks={self.decks} and {wild_cards} wild "
            f"cards a round can become impossible to finish: each number rank has only "
            f"{copies} copies, so the layouts can end up holding every card that fits a slot "
            f"(every Ace to {self.start_size} and every wild card) where nobody can reach it, "
            f"and the round then runs to max_turns={self.max_turns}; {fix}"
        )

    @property
    def wild_cards(self) -> int:
        """How many wild cards the decks hold."""
        return self.wild_cards_of(self.decks)

    def wild_cards_of(self, decks: int) -> int:
        """How many wild cards ``decks`` decks hold under these rules."""
        table = self.wild_table()
        per_deck = 4 * sum(table[rank] for rank in (JACK, QUEEN, KING)) + 2 * table[JOKER]
        return decks * per_deck

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

    def codes(self) -> tuple[int, ...]:
        """Every option as an integer, in field order, for compiled code (the batched engine):
        a string choice is its index in the choices, a bool 0 or 1, ``None`` 0 (no option that
        allows ``None`` allows 0), an integer itself."""
        out = []
        for f in fields(self):
            value, choices = getattr(self, f.name), option_spec(f)["choices"]
            if isinstance(value, str):
                out.append(choices.index(value))
            else:
                out.append(int(value or 0))
        return tuple(out)

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
