"""Trash as an OpenSpiel game: ``pyspiel.load_game("python_trash", {"players": 3, ...})``.

Importing this module registers the Python game ``python_trash``. Its state wraps the reference
engine (:class:`trash_env.engine.Game`): every rule is the engine's, this module only translates
between OpenSpiel's API and the engine's.

Parameters are the options of :class:`trash_env.rules.Rules` under the same names, except
``players`` (OpenSpiel's name for ``num_players``) and ``0`` standing for ``None`` in
``num_decks`` (0: ``ceil(players / 2)`` decks) and ``max_deals`` (0: no limit), since OpenSpiel
parameters cannot be ``None``. ``rng_seed`` seeds the game's generator of deal seeds;
``observation`` (``"plain"`` or ``"pairs"``) is the envs' option of that name (below). Bad values
raise the same ``ValueError`` as ``Rules``.

Chance model: ``SAMPLED_STOCHASTIC``. A new state is a chance node, the deal. With a seed
(``new_initial_state(seed=...)``) it has one outcome, ``0``, and deals the engine with that seed.
Without one it has :data:`DEAL_OUTCOMES` equally likely outcomes: outcome ``k`` deals with the
next seed of the game's generator plus ``k``, so a caller that samples the outcome with its own
generator (Shimmy, OpenSpiel's ``rl_environment``) picks the deal: equal generators, equal
deals. Every later random choice (first player, each deal's shuffle, reshuffles of the discard
pile) comes from that engine's own seeded generator, inside ``step``. Explicit chance nodes
would need the engine to stop in the middle of a turn at every card it turns up (a chain turns
up several), which is a second engine, not a hook; so the tree cannot be enumerated, and
``state.child()`` of the deal, which every exact algorithm (``nash_conv``, ``exploitability``,
best response, CFR, ``get_all_states``) calls first, is refused in one sentence.

Saving a state: ``state.serialize()`` writes a JSON document (the rules, the engine's seed, the
deal's outcomes and the actions) and ``game.deserialize_state(text)`` replays it through the
engine, refusing anything else in one sentence. OpenSpiel's own form for Python states is a
pickle, which runs whatever code a crafted string holds: the game is registered through
:mod:`trash_env.spiel_text`, so no OpenSpiel entry unpickles a ``python_trash`` state.

Information: everything the engine logs is public (cards are shown as they are drawn, picked up
or revealed), and only face-down cards and the stock order are hidden, from everyone, including
their owner. So every tensor and string below is a function of public information only.

- observation tensor: :func:`trash_env.observation.encode_observation` (the PettingZoo env's
  observation vector, seats from the observer on); with ``observation="pairs"`` the 108 products
  of :mod:`trash_env.pairs` follow it (the envs' ``observation="pairs"`` vector).
- information-state tensor: the observation tensor plus the public state the observation leaves out
  (:func:`public_state_features`): per-rank counts of the discard pile, of face-up cards in the
  layouts and of the stock once a reshuffle made its contents public, the turn and deal
  progress, pending "Trash!" claims and free turns left. It summarises the public history
  (what a player can infer about the hidden cards depends on it only through these counts);
  it is not the literal history, which has no bound.
- information-state string: the observer and the whole public history (every engine event),
  which is perfect recall.
- observation string: the current public table, as a player sees it.

:meth:`TrashState.resample_from_infostate` re-deals the hidden cards (the engine's
``resample_hidden``), so information-set search (OpenSpiel's ISMCTS) works.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as error:  # pragma: no cover - exercised only without open_spiel
    raise ImportError(
        "trash_env.spiel needs OpenSpiel: pip install 'trash-env[openspiel]'"
    ) from error

from trash_env.cards import NUM_RANKS, NUM_SLOTS, card_short, rank_totals
from trash_env.engine import (
    ABSENT,
    ACTION_NAMES,
    DOWN,
    NUM_ENGINE_ACTIONS,
    WILD_UP,
    Decision,
    Event,
    Game,
)
from trash_env.observation import encode_observation, observation_size
from trash_env.pairs import (
    PAIR_FEATURES,
    PAIRS_ONLY,
    check_observation,
    observation_width,
    pair_indices,
)
from trash_env.render import cell
from trash_env.rules import FREE_DRAWS, MAX_PLAYERS, MIN_PLAYERS, Rules, check_option, option_spec
from trash_env.spiel_text import TextState, TextStateGame, register_text_state_game

SHORT_NAME = "python_trash"
DEAL_ACTION = 0  # the deal's first chance outcome (the only one of a state made with a seed)
DEAL_OUTCOMES = 2**16  # the deal's outcomes when the state has no seed (equally likely)
_ONE_DEAL = ((DEAL_ACTION, 1.0),)
_ANY_DEAL = tuple((k, 1.0 / DEAL_OUTCOMES) for k in range(DEAL_OUTCOMES))
_SEED_SPAN = 2**63  # engine seeds are below this
STATE_FORMAT = "python_trash state"  # the "format" of serialize()'s JSON document
STATE_VERSION = 2  # 2 records the deal's outcomes (1 for a seeded state); 1 did not
EXACT_REFUSAL = (
    f"{SHORT_NAME}'s deal is a sampled chance node (its outcomes pick a seed; the shuffles "
    "happen inside the engine), so its game tree cannot be enumerated and algorithms that "
    "expand it with state.child() (nash_conv, exploitability, best response, CFR, "
    "get_all_states) do not apply: use sampling ones (MCTS, ISMCTS, rl_environment) or "
    "apply_action on a clone"
)
# Decisions in one turn at most: a draw, a wild target per face-down slot, a swap per wild
# picked up plus a declined one, and a call.
_MAX_DECISIONS_PER_TURN = 1 + NUM_SLOTS + NUM_SLOTS + 1 + 1
_INT_MAX = 2**31 - 1

# Every Rules option as an OpenSpiel parameter (None -> 0), plus the seed of the deal seeds.
_OPTION_OF = {option_spec(f)["param"]: f for f in fields(Rules)}
PARAMETERS: dict[str, Any] = {
    **{param: 0 if f.default is None else f.default for param, f in _OPTION_OF.items()},
    "rng_seed": 0,
    "observation": "plain",
}
_NONE_AS_ZERO = tuple(param for param, f in _OPTION_OF.items() if option_spec(f)["optional"])


def _game_type(short_name: str, defaults: Mapping[str, Any] = PARAMETERS) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=short_name,
        long_name="Python Trash (Garbage), the trash-env rules engine",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=MAX_PLAYERS,
        min_num_players=MIN_PLAYERS,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=dict(defaults),
    )


_GAME_TYPE = _game_type(SHORT_NAME)


def rules_from_params(params: Mapping[str, Any]) -> Rules:
    """The :class:`Rules` of OpenSpiel parameters (missing ones take their defaults).

    Raises ``ValueError`` naming the parameter for unknown names and bad values."""
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(
            f"unknown {SHORT_NAME} parameter(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(PARAMETERS)}"
        )
    values = {**PARAMETERS, **params}
    seed = values.pop("rng_seed")
    _check_seed("rng_seed", seed)
    check_observation(values.pop("observation"), PAIRS_ONLY)
    options = {}
    for param, value in values.items():
        option = _OPTION_OF[param]
        if param in _NONE_AS_ZERO and value == 0 and not isinstance(value, bool):
            value = None
        options[option.name] = check_option(option, value, param)
    return Rules.from_options(**options)


def params_from_rules(
    rules: Rules, rng_seed: int = 0, observation: str = "plain"
) -> dict[str, Any]:
    """The OpenSpiel parameters of ``rules`` (the inverse of :func:`rules_from_params`)."""
    params: dict[str, Any] = {}
    for param, option in _OPTION_OF.items():
        value = getattr(rules, option.name)
        params[param] = 0 if value is None else value
    params["rng_seed"] = rng_seed
    params["observation"] = check_observation(observation, PAIRS_ONLY)
    return params


def _excerpt(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters for an error message."""
    return text if len(text) <= limit else text[:limit] + "..."


def _check_seed(name: str, seed: object) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {seed!r}")


class _Engine(Game):
    """The engine's Game, copied by its own ``clone`` when OpenSpiel clones a state (OpenSpiel
    deep-copies a Python state's attributes; ``clone`` is the engine's cheap, complete copy)."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict) -> _Engine:
        return self.clone()


_ALIASES: set[str] = set()  # game strings registered as names (TrashGame.get_type)


def _game_copy(game_string: str, generator: str) -> TrashGame:
    """A copy of a pickled :class:`TrashGame`: the game loaded again, its generator put back."""
    game = pyspiel.load_game(game_string)
    if not isinstance(game, TrashGame):
        raise ValueError(f"not a {SHORT_NAME} game string: {_excerpt(game_string)}")
    try:
        game._seeds.bit_generator.state = json.loads(generator)
    except (TypeError, ValueError, KeyError):
        raise ValueError(f"not the state of a {SHORT_NAME} game's generator") from None
    return game


class TrashGame(TextStateGame):
    """The game ``python_trash``: rules from the parameters, a generator of deal seeds."""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        params = {**PARAMETERS, **(params or {})}
        rules = rules_from_params(params)
        n = rules.num_players
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ENGINE_ACTIONS,
            max_chance_outcomes=DEAL_OUTCOMES,
            num_players=n,
            min_utility=-1.0 / (n - 1),
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=min(
                _INT_MAX,
                _MAX_DECISIONS_PER_TURN * (rules.max_turns + n * rules.start_size),
            ),
        )
        super().__init__(_GAME_TYPE, info, params)
        self.rules = rules
        self.observation = check_observation(params["observation"], PAIRS_ONLY)
        self._seeds = np.random.default_rng(params["rng_seed"])
        self._max_length = info.max_game_length
        self._params = {name: params[name] for name in PARAMETERS}

    def get_type(self) -> pyspiel.GameType:
        """The registered type, except that ``short_name`` is this game's string
        (``python_trash(players=3,...)``): tools that reload a game from its type's short name
        get this game back, not the default one. Shimmy's ``OpenSpielCompatibilityV0`` does at
        every reset, with ``load_game(short_name)``, or ``load_game(short_name, config)`` when
        it was given ``config``: for the second, the string is registered too, as this game's
        parameters with ``config`` over them."""
        name = str(self)
        if name not in _ALIASES:
            pyspiel.register_game(_game_type(name, self._params), TrashGame)
            _ALIASES.add(name)
        return _game_type(name, self._params)

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        """Pickled and copied as its game string and the position of its generator of deal
        seeds (plain numbers); loading it checks both."""
        return (_game_copy, (str(self), json.dumps(self._seeds.bit_generator.state)))

    def new_initial_state(self, seed: int | None = None) -> TrashState:
        """A state before the deal. ``seed`` fixes the engine's seed (the same seed and actions
        give the same game as ``trash_env.engine.Game(rules, seed)``) and leaves the deal one
        outcome; by default the deal has :data:`DEAL_OUTCOMES` outcomes, each dealing with the
        game generator's next seed plus the outcome."""
        if seed is not None:
            _check_seed("seed", seed)
        return TrashState(self, seed)

    def next_seed(self) -> int:
        """The next deal seed from the game's generator (seeded by ``rng_seed``)."""
        return int(self._seeds.integers(_SEED_SPAN))

    def deserialize_state(self, text: str) -> TrashState:
        """The state that :meth:`TrashState.serialize` wrote, replayed through the engine.

        Anything else (OpenSpiel's pickle form included: nothing here unpickles) raises one
        ``ValueError`` sentence saying what is wrong."""
        try:
            return self._replay(*self._parse_state(text))
        except ValueError as error:
            raise ValueError(f"not a {SHORT_NAME} state of this game: {error}") from None

    def _parse_state(self, text: object) -> tuple[int | None, int, list[int]]:
        """The seed and actions of a serialized state, every field checked."""
        if not isinstance(text, str):
            raise ValueError(
                f"expected the text state.serialize() wrote, got {type(text).__name__}"
            )
        limit = 1024 + 8 * (self._max_length + 1)
        if len(text) > limit:
            raise ValueError(f"{len(text)} characters, more than a game's {limit}")
        try:
            document = json.loads(text)
        except (ValueError, RecursionError):
            raise ValueError(
                f"expected the JSON document state.serialize() writes, got {_excerpt(repr(text))}"
            ) from None
        keys = ["format", "version", "params", "seed", "deal_outcomes", "history"]
        if not isinstance(document, dict) or sorted(document) != sorted(keys):
            raise ValueError(f"expected a JSON object with exactly the keys {', '.join(keys)}")
        version = document["version"]
        if (
            document["format"] != STATE_FORMAT
            or type(version) is not int
            or version != STATE_VERSION
        ):
            got = f"{document['format']!r} version {document['version']!r}"
            raise ValueError(
                f'expected format "{STATE_FORMAT}" version {STATE_VERSION}, got {_excerpt(got)}'
            )
        params = document["params"]
        if not isinstance(params, dict) or set(params) != set(_OPTION_OF):
            raise ValueError(
                f"params must name exactly the rules parameters {', '.join(_OPTION_OF)}"
            )
        if rules_from_params(params) != self.rules:
            raise ValueError(
                f"it was saved from a game with other rules ({_excerpt(json.dumps(params))}); "
                "load that game and deserialize it there"
            )
        seed, outcomes, history = document["seed"], document["deal_outcomes"], document["history"]
        if type(outcomes) is not int or outcomes not in (1, DEAL_OUTCOMES):
            raise ValueError(
                f"deal_outcomes must be 1 (a seeded state) or {DEAL_OUTCOMES}, "
                f"got {_excerpt(repr(outcomes))}"
            )
        if outcomes == 1 and seed is None:
            raise ValueError("a state with one deal outcome must have its seed")
        if seed is not None:
            _check_seed("seed", seed)
            if seed >= _SEED_SPAN:
                raise ValueError(f"seed must be below 2**63, got {seed}")
        if not isinstance(history, list) or len(history) > self._max_length + 1:
            raise ValueError(f"history must be a list of at most {self._max_length + 1} actions")
        for action in history:
            if isinstance(action, bool) or not isinstance(action, int):
                raise ValueError(f"history must hold integer actions, got {_excerpt(repr(action))}")
        if history and seed is None:
            raise ValueError("a dealt state must have its seed")
        if seed is not None and not history and outcomes != 1:
            raise ValueError("a state before its deal has a seed only with one deal outcome")
        return seed, outcomes, history

    def _replay(self, seed: int | None, outcomes: int, history: list[int]) -> TrashState:
        state = TrashState(self, seed)
        state._outcomes = outcomes  # a drawn deal's seed is saved: any outcome replays it
        for move, action in enumerate(history):
            if state.is_terminal():
                raise ValueError(f"the game is over after {move} of its {len(history)} actions")
            if state._engine is None:
                state._check_deal(action)
            elif action not in state._engine.legal_actions():
                raise ValueError(
                    f"action {move} ({action}) is illegal there: {state._engine.refusal(action)}"
                )
            state.apply_action(action)
        return state

    def make_py_observer(
        self,
        iig_obs_type: pyspiel.IIGObservationType | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> TrashObserver:
        """The observer of ``iig_obs_type`` (default: the observation)."""
        return TrashObserver(
            self.rules,
            iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False),
            params,
            self.observation,
        )


class TrashState(TextState):
    """A game of Trash in OpenSpiel's API; the engine does every rule."""

    def __init__(self, game: TrashGame, seed: int | None = None) -> None:
        super().__init__(game)
        # Only these attributes: OpenSpiel's clone deep-copies a Python state's attributes.
        self._engine: _Engine | None = None  # None until the deal
        self._seed = seed
        self._outcomes = 1 if seed is not None else DEAL_OUTCOMES  # the deal's outcomes

    @property
    def seed(self) -> int | None:
        """The engine's seed (None before the deal when it is to be drawn from the game)."""
        return self._seed

    @property
    def engine(self) -> Game | None:
        """The engine's game (None before the deal). It holds the hidden cards: for tests,
        analysis and bots that are allowed to cheat, never for an agent's observation."""
        return self._engine

    def current_player(self) -> int:
        engine = self._engine
        if engine is None:
            return pyspiel.PlayerId.CHANCE
        if engine.done:
            return pyspiel.PlayerId.TERMINAL
        return engine.current

    def _legal_actions(self, player: int) -> list[int]:
        assert self._engine is not None  # OpenSpiel asks only at decision nodes, after the deal
        return self._engine.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return list(_ONE_DEAL if self._outcomes == 1 else _ANY_DEAL)

    def child(self, action: int) -> TrashState:
        """A copy with ``action`` applied; refused at the deal (see :data:`EXACT_REFUSAL`)."""
        if self._engine is None:
            raise ValueError(EXACT_REFUSAL)
        return super().child(action)

    def serialize(self) -> str:
        """This state as a JSON document: the rules, the engine's seed and the actions
        (``game.deserialize_state`` replays them). Never a pickle."""
        game = self.get_game()
        document = {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "params": {
                param: value
                for param, value in params_from_rules(game.rules).items()
                if param in _OPTION_OF
            },
            "seed": self._seed,
            "deal_outcomes": self._outcomes,
            "history": [int(action) for action in self.history()],
        }
        return json.dumps(document, separators=(",", ":"))

    def _check_deal(self, action: int) -> None:
        if not 0 <= action < self._outcomes:
            raise ValueError(
                f"the deal's chance outcomes are 0 to {self._outcomes - 1}, got {action}"
                if self._outcomes > 1
                else f"the deal's only chance outcome is {DEAL_ACTION}, got {action}"
            )

    def _apply_action(self, action: int) -> None:
        if self._engine is None:
            self._check_deal(action)
            game = self.get_game()
            if self._seed is None:
                self._seed = (game.next_seed() + action) % _SEED_SPAN
            self._engine = _Engine(game.rules, self._seed)
        else:
            self._engine.step(action)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return "deal" if action == DEAL_ACTION else f"deal {action}"
        if 0 <= action < NUM_ENGINE_ACTIONS:
            return ACTION_NAMES[action]
        return f"action {action}"

    def is_terminal(self) -> bool:
        return self._engine is not None and self._engine.done

    def returns(self) -> list[float]:
        if self._engine is None:
            return [0.0] * self.num_players()
        return self._engine.returns()

    def resample_from_infostate(
        self, player_id: int, probability_sampler: Callable[[], float]
    ) -> TrashState:
        """A copy with every hidden card re-dealt at random, consistently with the public
        information (the engine's ``resample_hidden``; the same information state). Every
        player's information is the public information, so ``player_id`` changes nothing.
        ``probability_sampler()`` returns uniform numbers in [0, 1), e.g. ``rng.random`` of a
        seeded numpy Generator or OpenSpiel's UniformProbabilitySampler; one call seeds the
        re-deal."""
        clone = self.clone()
        if clone._engine is not None:
            seed = int(probability_sampler() * 2**53)
            clone._engine.resample_hidden(np.random.default_rng(seed))
        return clone

    def __str__(self) -> str:
        """The whole state, hidden cards included (OpenSpiel's ToString, for debugging)."""
        engine = self._engine
        if engine is None:
            return f"before the deal (seed {self._seed})"
        lines = [
            f"seed {self._seed}, deal {engine.deal_number}, turn {engine.turns}, "
            f"decision {engine.decision.name}, player {engine.current}, done {engine.done}"
        ]
        for p in range(engine.num_players):
            slots = " ".join(
                _slot_text(engine.state[p][s], engine.layout[p][s]) for s in range(NUM_SLOTS)
            )
            lines.append(f"p{p} size {engine.sizes[p]} won {engine.rounds_won[p]}: {slots}")
        lines.append(f"held {_card(engine.held)}")
        lines.append("stock (top last) " + " ".join(map(card_short, engine.stock)))
        lines.append("discard (top last) " + " ".join(map(card_short, engine.discard)))
        lines.append(f"returns {engine.returns()}")
        return "\n".join(lines)


def _card(card: int) -> str:
    return card_short(card) if card >= 0 else "-"


def _slot_text(state: int, card: int) -> str:
    if state == DOWN:
        return f"[{card_short(card)}]"  # hidden, shown only in __str__
    return _card(card) if state != WILD_UP else f"({card_short(card)})"


# --------------------------------------------------------------------------- observations


def public_state_features(num_players: int) -> tuple[tuple[str, int], ...]:
    """The public-state features the information-state tensor adds to the observation, as
    (name, width): per rank (joker, A..K) as shares of the decks' cards of that rank, per seat
    from the observer on."""
    return (
        ("discard_per_rank", NUM_RANKS),  # the discard pile's cards
        ("face_up_per_rank", NUM_RANKS),  # face-up cards in all layouts (natural and wild)
        ("stock_known", 1),  # 1 once a reshuffle made the stock's contents public
        ("stock_per_rank", NUM_RANKS),  # the stock's cards, when stock_known (else 0)
        ("turn_progress", 1),  # turns played / max_turns
        ("deal_progress", 1),  # deals finished / max_deals (0 without a deal limit)
        # per seat: 1 if that player missed the "Trash!" call and claims the round at the
        # start of their next turn (call_trash)
        ("claim_pending", num_players),
        ("free_turns_left", 1),  # the loser's free turns left / 3 (free_draws)
    )


def information_state_size(num_players: int, observation: str = "plain") -> int:
    """The length of the information-state tensor (``observation``: the game's parameter)."""
    return observation_width(num_players, observation) + sum(
        width for _, width in public_state_features(num_players)
    )


# Event kinds as letters in the information-state string.
_KIND_LETTER = {
    "deal": "D",
    "draw_stock": "S",
    "take_discard": "T",
    "place": "P",
    "wild": "W",
    "swap": "X",
    "pickup": "U",
    "decline": "N",
    "discard": "R",
    "reshuffle": "H",
    "call": "C",
    "penalty": "Y",
    "claim": "L",
    "round_won": "V",
    "free_draws": "F",
    "reveal": "E",
    "shrink": "K",
    "game_over": "O",
    "truncated": "Z",
}
_TOKENS: dict[Event, str] = {}


def event_token(event: Event) -> str:
    """A short token for one public event: player, kind letter, card (or count), ``@`` and
    the 1-based slot (deal number; new size for a shrink), each omitted where meaningless.
    E.g. ``"0S7"``: player 0 drew a 7 from the stock; ``"0P7@7"``: placed it in slot 7."""
    token = _TOKENS.get(event)
    if token is None:
        kind, player, card, slot = event
        token = f"{player if player >= 0 else ''}{_KIND_LETTER[kind]}"
        if kind in ("reshuffle", "game_over"):
            token += str(card)  # a count, not a card
        elif card >= 0:
            token += card_short(card)
        if slot >= 0:
            token += f"@{slot if kind == 'shrink' else slot + 1}"
        _TOKENS[event] = token
    return token


class TrashObserver:
    """OpenSpiel's Python observer: a tensor (with named views in ``dict``) and a string,
    both from public information only."""

    def __init__(
        self,
        rules: Rules,
        iig_obs_type: pyspiel.IIGObservationType,
        params: Mapping[str, Any] | None,
        observation: str = "plain",
    ) -> None:
        if params:
            raise ValueError(f"{SHORT_NAME} observers take no parameters; got {dict(params)}")
        self._rules = rules
        self._public = iig_obs_type.public_info
        self._recall = iig_obs_type.perfect_recall
        n = rules.num_players
        self._pairs = pair_indices(n) if observation == "pairs" else None
        pieces: list[tuple[str, int]] = []
        if self._public:
            pieces.append(("observation", observation_size(n)))
            if observation == "pairs":
                pieces.append(("pairs", PAIR_FEATURES))
            if self._recall:
                pieces += public_state_features(n)
        # Trash has no private information: every player sees the same, so the private_info
        # setting changes nothing.
        self.tensor = np.zeros(sum(width for _, width in pieces), np.float32)
        self.dict: dict[str, np.ndarray] = {}
        index = 0
        for name, width in pieces:
            self.dict[name] = self.tensor[index : index + width]
            index += width
        self._decks_totals = np.array(
            [max(t, 1) for t in rank_totals(rules.decks, rules.jokers)], np.float32
        )

    def set_from(self, state: TrashState, player: int) -> None:
        """Fill ``tensor`` with ``state`` as ``player`` sees it."""
        self.tensor.fill(0.0)
        engine = state._engine
        if engine is None or not self._public:
            return
        plain = encode_observation(engine, player, self.dict["observation"])
        if self._pairs is not None:
            left, right = self._pairs
            np.multiply(plain[left], plain[right], out=self.dict["pairs"])
        if not self._recall:
            return
        totals = self._decks_totals
        self.dict["discard_per_rank"][:] = _rank_counts(engine.discard) / totals
        face_up = [
            engine.layout[p][s]
            for p in range(engine.num_players)
            for s in range(NUM_SLOTS)
            if engine.state[p][s] not in (DOWN, ABSENT)
        ]
        self.dict["face_up_per_rank"][:] = _rank_counts(face_up) / totals
        if engine.stock_known:
            self.dict["stock_known"][0] = 1.0
            self.dict["stock_per_rank"][:] = _rank_counts(engine.stock) / totals
        self.dict["turn_progress"][0] = engine.turns / self._rules.max_turns
        if self._rules.max_deals is not None:
            self.dict["deal_progress"][0] = engine.deal_number / self._rules.max_deals
        n = engine.num_players
        pending = engine.pending_claims
        self.dict["claim_pending"][:] = [pending[(player + k) % n] for k in range(n)]
        self.dict["free_turns_left"][0] = engine.free_turns_left / max(FREE_DRAWS)

    def string_from(self, state: TrashState, player: int) -> str:
        """The public history (perfect recall) or the public table, as ``player`` sees it."""
        engine = state._engine
        if not self._public:
            return f"p{player}"
        if self._recall:
            if engine is None:
                return f"p{player}"
            return f"p{player} " + " ".join(map(event_token, engine.events))
        if engine is None:
            return f"p{player} before the deal"
        return _public_table(engine, player)


def _rank_counts(cards: list[int]) -> np.ndarray:
    return np.bincount(np.asarray(cards, np.int64), minlength=NUM_RANKS).astype(np.float32)


def _public_table(engine: Game, observer: int) -> str:
    """The table as everyone sees it (face-down cards as ``##``), for ``observer``."""
    if engine.done:
        status = "truncated" if engine.truncated else f"won by {list(engine.winners)}"
    else:
        status = f"p{engine.current} to {Decision(engine.decision).name.lower()}"
    lines = [f"p{observer} deal {engine.deal_number + 1} turn {engine.turns + 1}: {status}"]
    for p in range(engine.num_players):
        slots = "".join(cell(engine, p, s) for s in range(NUM_SLOTS))
        lines.append(
            f"p{p} size {engine.sizes[p]} won {engine.rounds_won[p]} "
            f"down {engine.face_down_count(p)}:{slots}"
        )
    top = _card(engine.discard[-1]) if engine.discard else "-"
    lines.append(
        f"discard {len(engine.discard)} top {top}, stock {len(engine.stock)}, "
        f"held {_card(engine.held)}"
    )
    return "\n".join(lines)


register_text_state_game(_GAME_TYPE, TrashGame)
