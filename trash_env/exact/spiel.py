"""The public-state model as an OpenSpiel game: ``pyspiel.load_game("python_trash_exact",
{"size0": 1, "size1": 2})``.

A 2-player round of :mod:`trash_env.exact.model`: perfect information (every decision is taken
on public information, and the state is public), explicit chance (each card that turns up is
a chance outcome: its class, with probability proportional to its count), zero-sum terminal
returns. So OpenSpiel's exact algorithms apply: ``value_iteration`` (with ``cyclic_game=True``:
passes and reshuffles make the state graph cyclic), ``expectiminimax``, ``get_all_states`` and
CFR. Parameters: ``size0``, ``size1`` (layouts, 1 to 10), ``first`` (the seat that draws
first), ``wilds`` (``"jacks"`` or ``"kings"``), ``jokers`` and ``max_turns`` (0: no limit; a
positive limit cuts the round off after that many turns with returns 0, as the env's
``max_turns`` does, which makes the game finite: a tree for CFR and full-depth search).

Actions: at decisions the engine's (slots 0..9, 10 draw from stock, 11 take the discard top,
12 decline the swap); at chance nodes the class that turns up (0 dead, 1.. the numbers, then
wild). ``str(state)`` is the public state itself (value iteration keys states by it).

Saving a state: ``state.serialize()`` writes a short JSON document (the parameters and the
actions) and ``game.deserialize_state(text)`` replays it, refusing anything else in one
sentence. The game is a text-state game (:mod:`trash_env.spiel_text`): OpenSpiel's
game-and-state strings carry that JSON, and no OpenSpiel entry unpickles one of its states.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

try:
    import pyspiel
except ImportError as error:  # pragma: no cover - exercised only without open_spiel
    raise ImportError(
        "trash_env.exact.spiel needs OpenSpiel: pip install 'trash-env[openspiel]'"
    ) from error

from trash_env.engine import ACTION_NAMES, NUM_ACTIONS
from trash_env.exact.model import OVER, Model, State
from trash_env.rules import Rules
from trash_env.spiel_text import TextState, TextStateGame, register_text_state_game

SHORT_NAME = "python_trash_exact"
PARAMETERS: dict[str, Any] = {
    "size0": 1,
    "size1": 1,
    "first": 0,
    "wilds": "jacks",
    "jokers": False,
    "max_turns": 0,
}
STATE_FORMAT = "python_trash_exact state"
STATE_VERSION = 1
MAX_STATE_TEXT = 1 << 20
MAX_CLASSES = 12  # dead, numbers 1..10, wild

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Trash (Garbage), a 2-player round as a public-state game with explicit chance",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=False,
    parameter_specification=PARAMETERS,
)


def _params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    out = {**PARAMETERS, **(params or {})}
    unknown = sorted(set(out) - set(PARAMETERS))
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {', '.join(unknown)}; allowed: {', '.join(PARAMETERS)}"
        )
    for name in ("size0", "size1"):
        if (
            isinstance(out[name], bool)
            or not isinstance(out[name], int)
            or not 1 <= out[name] <= 10
        ):
            raise ValueError(f"{name} must be an integer from 1 to 10, got {out[name]!r}")
    if out["first"] not in (0, 1) or isinstance(out["first"], bool):
        raise ValueError(f"first must be 0 or 1, got {out['first']!r}")
    turns = out["max_turns"]
    if isinstance(turns, bool) or not isinstance(turns, int) or not 0 <= turns <= 10**9:
        raise ValueError(f"max_turns must be an integer from 0 to 10**9, got {turns!r}")
    return out


class ExactGame(TextStateGame):
    """The game ``python_trash_exact``: one round at layouts ``(size0, size1)``."""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        params = _params(params)
        self.params = params
        rules = Rules(wilds=params["wilds"], jokers=bool(params["jokers"]))
        self.model = Model((params["size0"], params["size1"]), rules)
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=MAX_CLASSES,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=max(1, params["max_turns"]) * 25,
        )
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> ExactState:
        return ExactState(self)

    def deserialize_state(self, text: str) -> ExactState:
        """The state :meth:`ExactState.serialize` wrote, replayed; anything else raises one
        ``ValueError`` sentence."""

        def fail(why: str) -> ValueError:
            return ValueError(f"not a {SHORT_NAME} state: {why}")

        if not isinstance(text, str) or len(text) > MAX_STATE_TEXT:
            raise fail("it is not a string of at most 1 MiB")
        try:
            document = json.loads(text)
        except ValueError:
            raise fail("it is not JSON") from None
        if not isinstance(document, dict) or document.get("format") != STATE_FORMAT:
            raise fail("it names another format")
        if document.get("version") != STATE_VERSION:
            raise fail(f"version {document.get('version')!r}, this code reads {STATE_VERSION}")
        if document.get("params") != self.params:
            raise fail("it was saved by a game with other parameters")
        actions = document.get("actions")
        if not isinstance(actions, list) or not all(
            isinstance(a, int) and not isinstance(a, bool) for a in actions
        ):
            raise fail("its actions are not a list of integers")
        state = self.new_initial_state()
        for action in actions:
            if state.is_terminal() or action not in state.legal_actions():
                raise fail(f"action {action} is not legal where it was played")
            state.apply_action(action)
        return state


class ExactState(TextState):
    """A public state of the round (the model's), the turns played and the actions taken."""

    def __init__(self, game: ExactGame) -> None:
        super().__init__(game)
        self._model = game.model
        self._limit = game.params["max_turns"]
        self._state: State = game.model.initial(game.params["first"])
        self._turns = 0
        self._actions: list[int] = []

    # ------------------------------------------------------------------ OpenSpiel's API

    def current_player(self) -> int:
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        if self._model.is_chance(self._state):
            return pyspiel.PlayerId.CHANCE
        return self._state.player

    def _legal_actions(self, player: int) -> list[int]:
        return self._model.legal_actions(self._state)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self._model.chance_probabilities(self._state)

    def _apply_action(self, action: int) -> None:
        before = self._state.player
        if self._model.is_chance(self._state):
            self._state = self._model.apply_chance(self._state, int(action))
        else:
            self._state = self._model.apply(self._state, int(action))
        self._actions.append(int(action))
        if self._state.phase != OVER and self._state.player != before:
            self._turns += 1

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"turns up {self._model.classes.name(action)}"
        return ACTION_NAMES[action]

    def is_terminal(self) -> bool:
        return self._state.phase == OVER or (0 < self._limit <= self._turns)

    def returns(self) -> list[float]:
        return list(self._model.returns(self._state))

    def __str__(self) -> str:
        turns = f" turns={self._turns}" if self._limit else ""
        return repr(self._state) + turns

    def information_state_string(self, player: int | None = None) -> str:
        return str(self)

    def observation_string(self, player: int | None = None) -> str:
        return str(self)

    def serialize(self) -> str:
        """This state as a JSON document (the parameters and the actions), never a pickle."""
        game = self.get_game()
        document = {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "params": game.params,
            "actions": self._actions,
        }
        return json.dumps(document)

    @property
    def public_state(self) -> State:
        """The model's state (for comparing with the exact tables)."""
        return self._state


# Its states travel as their JSON text, never through OpenSpiel's pickle (trash_env.spiel_text).
register_text_state_game(_GAME_TYPE, ExactGame)
