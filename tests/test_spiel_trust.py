"""The OpenSpiel game's trust and sampling edges: states are saved as JSON and replayed, never
unpickled (a planted pickle runs nothing); exact algorithms are refused in one sentence; the
deal's outcomes let an outside sampler (Shimmy, rl_environment) pick the deal; the game
reloads from its type's short name."""

from __future__ import annotations

import base64
import copy
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="OpenSpiel is not installed (the 'openspiel' extra)"
)

from trash_env import spiel, spiel_text  # noqa: E402  (after the skip: it imports pyspiel)


def load(**params: object) -> pyspiel.Game:
    return pyspiel.load_game(spiel.SHORT_NAME, params)


def walked(game: pyspiel.Game, outcome: int, steps: int, seed: int = 0) -> spiel.TrashState:
    """A state dealt with ``outcome`` and ``steps`` random actions on (fewer at the end)."""
    state = game.new_initial_state()
    state.apply_action(outcome)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if state.is_terminal():
            break
        state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def one_sentence(error: BaseException) -> str:
    """The error's text, checked to be one line with no chained library error shown."""
    text = str(error)
    assert "\n" not in text and "Traceback" not in text
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
    return text


class _Plant:
    """A pickle payload: unpickling it creates ``path`` (it would run any command)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple:
        return (os.makedirs, (self.path,))


def _openspiel_pickle_form(path: Path) -> str:
    """OpenSpiel's own serialisation of a Python state, its ``__dict__`` a planted pickle."""
    payload = base64.b64encode(pickle.dumps({"_engine": _Plant(path)})).decode()
    return f"history=-1:0\nmove_number=1\n__dict__={payload}"


# ------------------------------------------------------------------------------ saving states


@pytest.mark.parametrize("steps", [0, 1, 40, 100_000])
@pytest.mark.parametrize("outcome", [0, 12345])
def test_serialize_replays_to_the_same_state(steps: int, outcome: int) -> None:
    game = load(players=3, jokers=True, start_size=3, episode="round")
    state = walked(game, outcome, steps, seed=steps)
    text = state.serialize()
    document = json.loads(text)
    assert document["format"] == spiel.STATE_FORMAT and document["seed"] == state.seed
    again = game.deserialize_state(text)
    assert isinstance(again, spiel.TrashState)
    assert again.history() == state.history() and str(again) == str(state)
    assert again.engine.events == state.engine.events
    assert again.is_terminal() == state.is_terminal() and again.returns() == state.returns()
    assert again.serialize() == text


def test_states_before_the_deal_round_trip() -> None:
    game = load()
    seeded = game.deserialize_state(game.new_initial_state(seed=5).serialize())
    assert seeded.seed == 5 and seeded.chance_outcomes() == [(0, 1.0)]
    unseeded = game.deserialize_state(game.new_initial_state().serialize())
    assert unseeded.seed is None and len(unseeded.chance_outcomes()) == spiel.DEAL_OUTCOMES


def test_openspiel_game_and_state_strings_use_the_json_form() -> None:
    game = load(players=4, wilds="kings")
    state = walked(game, 7, 30)
    text = pyspiel.serialize_game_and_state(game, state)
    assert "[Game]" in text and json.loads(text.split("[State]\n")[1])["seed"] == state.seed
    game_again, state_again = pyspiel.deserialize_game_and_state(text)
    assert game_again.rules == game.rules and str(state_again) == str(state)
    kuhn = pyspiel.load_game("kuhn_poker")  # other games still go to OpenSpiel
    kuhn_state = kuhn.new_initial_state().child(0)
    text = pyspiel.serialize_game_and_state(kuhn, kuhn_state)
    _, again = pyspiel.deserialize_game_and_state(text)
    assert again.history() == [0]


def _game_and_state_string(game: pyspiel.Game, state_text: str) -> str:
    return f"# x\n[Meta]\nVersion: 1\n\n[Game]\n{game}\n[State]\n{state_text}\n"


# Every OpenSpiel entry that reads a state string, given a planted pickle in OpenSpiel's form.
_ENTRIES = {
    "game.deserialize_state": lambda game, crafted: game.deserialize_state(crafted),
    "pyspiel.Game.deserialize_state": lambda game, crafted: pyspiel.Game.deserialize_state(
        game, crafted
    ),
    "deserialize_game_and_state(str)": lambda game, crafted: pyspiel.deserialize_game_and_state(
        _game_and_state_string(game, crafted)
    ),
    "deserialize_game_and_state(bytes)": lambda game, crafted: pyspiel.deserialize_game_and_state(
        _game_and_state_string(game, crafted).encode()
    ),
    "deserialize_game_and_state(one-line state)": lambda game, crafted: (
        pyspiel.deserialize_game_and_state(_game_and_state_string(game, crafted.splitlines()[2]))
    ),
    "OpenSpiel's own function (__wrapped__)": lambda game, crafted: (
        pyspiel.deserialize_game_and_state.__wrapped__(_game_and_state_string(game, crafted))
    ),
    "OpenSpiel's own function, bytes": lambda game, crafted: (
        pyspiel.deserialize_game_and_state.__wrapped__(
            _game_and_state_string(game, crafted).encode()
        )
    ),
    "a pickled state read back": lambda game, crafted: spiel_text.state_from_text(
        str(game), crafted
    ),
}


def test_the_planted_payload_is_real(tmp_path: Path) -> None:
    marker = tmp_path / "planted"
    assert pickle.loads(pickle.dumps(_Plant(marker))) is None and marker.exists()


@pytest.mark.parametrize("entry", list(_ENTRIES))
def test_a_planted_pickle_runs_nothing(entry: str, tmp_path: Path) -> None:
    """OpenSpiel's own Python-state form unpickles its ``__dict__=`` field; no entry runs it."""
    marker = tmp_path / "planted"
    game = load(players=3)
    with pytest.raises(ValueError) as caught:
        _ENTRIES[entry](game, _openspiel_pickle_form(marker))
    message = one_sentence(caught.value)
    assert "python_trash" in message
    assert not marker.exists()


def test_names_bound_before_the_import_run_no_pickle(tmp_path: Path) -> None:
    """``from pyspiel import deserialize_game_and_state`` before ``import trash_env.spiel``
    keeps OpenSpiel's C++ function: its pickle path is closed all the same."""
    marker = tmp_path / "planted"
    crafted = _openspiel_pickle_form(marker)
    script = f"""
from pyspiel import Game, deserialize_game_and_state as early, load_game
import trash_env.spiel
game = load_game("python_trash")
text = "[Meta]\\n[Game]\\n" + str(game) + "\\n[State]\\n" + {crafted!r}
for call in (lambda: early(text), lambda: early(text.encode()),
             lambda: Game.deserialize_state(game, {crafted!r})):
    try:
        call()
        print("read")
    except ValueError as error:
        print("refused:", error)
"""
    lines = _run(script).splitlines()
    assert len(lines) == 3 and all(line.startswith("refused: ") for line in lines), lines
    assert all("python_trash states are text only" in line for line in lines)
    assert not marker.exists()


def _run(script: str, *args: str) -> str:
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


_OTHER_GAMES = """
import pickle, sys
import pyspiel
from open_spiel.python.games import kuhn_poker
if sys.argv[1:] == ["import"]:
    import trash_env.spiel
kuhn = pyspiel.load_game("kuhn_poker")
text = pyspiel.serialize_game_and_state(kuhn, kuhn.new_initial_state().child(0))
python_kuhn = pyspiel.load_game("python_kuhn_poker")
state = python_kuhn.new_initial_state()
state.apply_action(0)
python_text = pyspiel.serialize_game_and_state(python_kuhn, state)
inputs = [text, text.encode(), "# python_trash\\n" + text, b"# python_trash()\\n" + text.encode(),
          python_text, python_text.encode(), "[Game]\\nkuhn_poker()\\n[State]\\n0\\n",
          "garbage", "[Meta]\\n[Game]\\npython_kuhn_poker()\\n[State]\\nhistory=x\\n",
          b"\\xff[Meta]\\n[Game]\\nkuhn_poker()\\n[State]\\n0\\n"]
for value in inputs:
    try:
        game, state = pyspiel.deserialize_game_and_state(value)
        print(type(state).__name__, str(game), state.history())
    except Exception as error:
        print(type(error).__name__, str(error).splitlines()[0][:200])
print(pickle.loads(pickle.dumps({"k": [1, 2]})))
"""


def test_other_games_strings_read_as_without_the_import() -> None:
    """kuhn_poker (C++) and python_kuhn_poker (OpenSpiel's pickle form, which OpenSpiel reads
    for its own Python games) as text and bytes, with a ``# python_trash`` comment, broken:
    the same answers with ``trash_env.spiel`` imported as without."""
    without, with_import = _run(_OTHER_GAMES), _run(_OTHER_GAMES, "import")
    assert with_import == without
    assert without.count("kuhn_poker()") >= 6


def test_the_guard_leaves_other_unpickling_alone() -> None:
    """A new state and then ``pickle.loads`` on the next line, or OpenSpiel's reader failing
    on a python_trash string before it unpickles and then reading another Python game's
    pickle at the same call site: both unpickle as usual."""
    from open_spiel.python.games import kuhn_poker  # noqa: F401 (registers python_kuhn_poker)

    game = load()
    state = game.new_initial_state()
    assert pickle.loads(pickle.dumps([state.seed, 2])) == [None, 2]
    kuhn = pyspiel.load_game("python_kuhn_poker")
    kuhn_state = kuhn.new_initial_state()
    kuhn_state.apply_action(1)
    texts = [
        _game_and_state_string(game, game.new_initial_state().serialize()),
        pyspiel.serialize_game_and_state(kuhn, kuhn_state),
    ]
    read = []
    for text in texts:  # one call site for both
        try:
            read.append(pyspiel.deserialize_game_and_state.__wrapped__(text)[1].history())
        except pyspiel.SpielError:
            read.append("refused by OpenSpiel")
    assert read == ["refused by OpenSpiel", [1]]


def test_pickle_and_copy_of_states_and_games() -> None:
    game = load(players=3, jokers=True, rng_seed=4)
    game.next_seed()
    state = walked(game, 9, 25)
    for copy_of in (copy.copy, copy.deepcopy, lambda x: pickle.loads(pickle.dumps(x))):
        again = copy_of(state)
        assert isinstance(again, spiel.TrashState) and again is not state
        assert str(again) == str(again) and again.history() == state.history()
        assert again.serialize() == state.serialize()
        game_again = copy_of(game)
        assert isinstance(game_again, spiel.TrashGame) and game_again.rules == game.rules
        assert game_again.next_seed() == copy.deepcopy(game).next_seed()
    before = game.new_initial_state()
    assert copy.deepcopy(before).chance_outcomes() == before.chance_outcomes()


def test_a_forged_pickled_game_is_refused_in_one_sentence() -> None:
    with pytest.raises(ValueError) as caught:
        spiel._game_copy(str(load()), '{"bit_generator": "MT19937"}')
    assert one_sentence(caught.value) == "not the state of a python_trash game's generator"
    with pytest.raises(ValueError) as caught:
        spiel_text.state_from_text("kuhn_poker()", "0")
    assert one_sentence(caught.value) == "kuhn_poker() is not a game whose states are text"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: "garbage", "expected the JSON document state.serialize() writes, got 'garbage'"),
        (lambda d: "", "expected the JSON document"),
        (lambda d: "[" * 100_000, "expected the JSON document"),
        (lambda d: "x" * 10_000_000, "10000000 characters, more than a game's"),
        (lambda d: [], "exactly the keys format, version, params, seed, deal_outcomes, history"),
        (lambda d: {**d, "extra": 1}, "exactly the keys"),
        (lambda d: {**d, "version": 3}, 'expected format "python_trash state" version 2'),
        (lambda d: {**d, "version": 1}, 'expected format "python_trash state" version 2'),
        (lambda d: {**d, "version": True}, "version 2, got 'python_trash state' version True"),
        (lambda d: {**d, "version": 2.0}, "version 2, got 'python_trash state' version 2.0"),
        (lambda d: {**d, "version": 1.0}, "version 2, got 'python_trash state' version 1.0"),
        (lambda d: {**d, "deal_outcomes": 7}, "deal_outcomes must be 1 (a seeded state) or 65536"),
        (lambda d: {**d, "deal_outcomes": True}, "deal_outcomes must be 1"),
        (lambda d: {**d, "deal_outcomes": 1}, "the deal's only chance outcome is 0, got 3"),
        (lambda d: {**d, "history": [], "deal_outcomes": 1, "seed": None}, "must have its seed"),
        (lambda d: {**d, "history": []}, "has a seed only with one deal outcome"),
        (lambda d: {**d, "params": {**d["params"], "players": 3}}, "saved from a game with other"),
        (lambda d: {**d, "params": {**d["params"], "players": 9}}, "players must be an integer"),
        (lambda d: {**d, "params": {"players": 2}}, "params must name exactly"),
        (lambda d: {**d, "seed": -1}, "seed must be a non-negative integer, got -1"),
        (lambda d: {**d, "seed": True}, "seed must be a non-negative integer"),
        (lambda d: {**d, "seed": 2**70}, "seed must be below 2**63"),
        (lambda d: {**d, "seed": None}, "a dealt state must have its seed"),
        (lambda d: {**d, "history": "0,10"}, "history must be a list"),
        (lambda d: {**d, "history": [0, 10.0]}, "history must hold integer actions, got 10.0"),
        (lambda d: {**d, "history": [0, True]}, "history must hold integer actions, got True"),
        (lambda d: {**d, "history": [70000]}, "chance outcomes are 0 to 65535, got 70000"),
        (lambda d: {**d, "history": [0, 3]}, "action 1 (3) is illegal there: illegal action 3"),
        (lambda d: {**d, "history": [0] * 500_000}, "history must be a list of at most 460461"),
    ],
)
def test_hostile_state_strings_get_one_sentence(mutate, message: str) -> None:
    game = load()
    document = json.loads(walked(game, 3, 0).serialize())
    assert document["history"] == [3] and document["deal_outcomes"] == spiel.DEAL_OUTCOMES
    changed = mutate(document)
    text = changed if isinstance(changed, str) else json.dumps(changed)
    with pytest.raises(ValueError) as caught:
        game.deserialize_state(text)
    said = one_sentence(caught.value)
    assert said.startswith("not a python_trash state of this game: ") and message in said


def test_actions_after_the_end_are_refused() -> None:
    game = load(start_size=1, episode="round")
    state = walked(game, 0, 10_000)
    assert state.is_terminal()
    document = json.loads(state.serialize())
    document["history"].append(10)
    with pytest.raises(ValueError, match="the game is over after"):
        game.deserialize_state(json.dumps(document))


# ------------------------------------------------------------------------------ exact algorithms


def test_exact_algorithms_are_refused_in_one_sentence() -> None:
    """They expand the deal with ``state.child()`` (before: RecursionError deep in the tree)."""
    from open_spiel.python import policy
    from open_spiel.python.algorithms import cfr, exploitability, get_all_states

    game = load(start_size=1, episode="round")
    uniform = policy.UniformRandomPolicy(game)
    calls = [
        lambda: exploitability.nash_conv(game, uniform),
        lambda: exploitability.exploitability(game, uniform),
        lambda: policy.TabularPolicy(game),
        lambda: get_all_states.get_all_states(game),
        lambda: cfr.CFRSolver(game),
    ]
    for call in calls:
        with pytest.raises(ValueError) as caught:
            call()
        assert one_sentence(caught.value) == spiel.EXACT_REFUSAL
    dealt = game.new_initial_state(seed=1)
    dealt.apply_action(0)
    child = dealt.child(dealt.legal_actions()[0])  # after the deal child() works as usual
    assert isinstance(child, spiel.TrashState) and child.history() != dealt.history()


# ------------------------------------------------------------------------------ outside samplers


def test_the_deal_outcome_picks_the_deal() -> None:
    outcomes = load().new_initial_state().chance_outcomes()
    assert len(outcomes) == spiel.DEAL_OUTCOMES and outcomes[5] == (5, 1 / spiel.DEAL_OUTCOMES)
    assert sum(p for _, p in outcomes) == 1.0

    def deal(outcome: int) -> str:
        state = load().new_initial_state()  # a fresh game: its generator starts alike
        state.apply_action(outcome)
        return str(state)

    assert deal(17) == deal(17)
    assert len({deal(k) for k in range(5)}) == 5
    state = load(rng_seed=3).new_initial_state()
    state.apply_action(2)
    assert state.seed == (load(rng_seed=3).next_seed() + 2) % 2**63
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 2) == "deal 2"


def test_rl_environment_seeds_pick_the_deals() -> None:
    from open_spiel.python import rl_environment

    def first_deals(seed: int) -> list[str]:
        sampler = rl_environment.ChanceEventSampler(seed)  # its chance generator
        env = rl_environment.Environment(load(), chance_event_sampler=sampler)
        deals = []
        for _ in range(4):
            env.reset()
            deals.append(str(env.get_state))
        return deals

    assert first_deals(1) == first_deals(1)
    assert len(set(first_deals(1) + first_deals(2))) == 8


def test_the_type_short_name_reloads_this_game() -> None:
    game = load(players=3, wilds="faces", rng_seed=9)
    short_name = game.get_type().short_name
    assert short_name.startswith(spiel.SHORT_NAME + "(")
    again = pyspiel.load_game(short_name)
    assert again.rules == game.rules and str(again) == str(game)
    assert load().get_type().chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC


def test_shimmy_resets_deal_by_their_seed_and_take_three_players() -> None:
    """Shimmy's OpenSpiel wrapper reloads the game by its type's short name at every reset
    and samples the deal with the generator of ``reset(seed=...)``."""
    shimmy = pytest.importorskip("shimmy", reason="Shimmy is not installed (the 'test' extra)")

    env = shimmy.OpenSpielCompatibilityV0(game_name=spiel.SHORT_NAME)

    def first_deal(seed: int | None) -> str:
        env.reset(seed=seed)
        return str(env.game_state)

    assert first_deal(3) == first_deal(3)
    assert len({first_deal(seed) for seed in range(10)}) == 10
    assert len({first_deal(None) for _ in range(10)}) == 10

    env = shimmy.OpenSpielCompatibilityV0(env=load(players=3, start_size=3, episode="round"))
    env.reset(seed=1)
    assert env.agents == ["player_0", "player_1", "player_2"]
    assert env.game_state.get_game().rules.num_players == 3
    rng = np.random.default_rng(1)
    for _agent in env.agent_iter(max_iter=5_000):
        _, _, terminated, truncated, info = env.last()
        env.step(
            None
            if terminated or truncated
            else int(rng.choice(np.flatnonzero(info["action_mask"])))
        )
    assert env.game_state.is_terminal() and not env.agents
    assert sorted(env.game_state.returns()) in ([-0.5, -0.5, 1.0], [-1.0, 0.5, 0.5])


@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("form", ["game string", "config"])
def test_shimmy_both_documented_forms(form: str, players: int) -> None:
    """``game_name="python_trash(...)"`` and ``game_name="python_trash", config={...}``: every
    reset reloads the game those name (players, a rule option, a parameter given as 0)."""
    shimmy = pytest.importorskip("shimmy", reason="Shimmy is not installed (the 'test' extra)")

    config = {"players": players, "wilds": "kings", "start_size": 2, "max_deals": 0}
    if form == "config":
        env = shimmy.OpenSpielCompatibilityV0(game_name=spiel.SHORT_NAME, config=config)
    else:
        text = ",".join(f"{name}={value}" for name, value in config.items())
        env = shimmy.OpenSpielCompatibilityV0(game_name=f"{spiel.SHORT_NAME}({text})")
    for seed in (1, 2):
        env.reset(seed=seed)
        rules = env.game_state.get_game().rules
        assert (rules.num_players, rules.wilds, rules.start_size) == (players, "kings", 2)
        assert env.agents == [f"player_{p}" for p in range(players)]
        rng = np.random.default_rng(seed)
        for _agent in env.agent_iter(max_iter=20_000):
            _, _, terminated, truncated, info = env.last()
            env.step(
                None
                if terminated or truncated
                else int(rng.choice(np.flatnonzero(info["action_mask"])))
            )
        assert env.game_state.is_terminal() and sum(env.game_state.returns()) == pytest.approx(0)
