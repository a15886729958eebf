"""Bad input of every kind gets a clear error: the exception type, and a message that names the
offending option or value and what is allowed. Env options (``trash_env.env``, ``Rules``,
``TrashSoloEnv``), actions (``raw_env``, ``env()``, ``TrashSoloEnv``), agent specs, the flags of
``evaluate.py``, ``train.py`` and ``python -m agents.play``, and replay files. (Model files
and sidecars: ``tests/test_bad_input_models.py``.)"""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import trash_env
from agents.bots.base import make_agent
from agents.play.game import main as play_main
from agents.play.game_log import MAX_LOG_BYTES
from trash_env.env import InvalidActionError
from trash_env.rules import Rules
from trash_env.solo import TrashSoloEnv

# ---------------------------------------------------------------------- env options

ENV_OPTIONS = [
    (dict(colour="red"), r"unknown option\(s\) colour; allowed: render_mode, round_rewards, "),
    (
        dict(render_mode="pdf"),
        r"render_mode must be None or one of 'ansi', 'human', "
        r"'rgb_array', got 'pdf'",
    ),
    (dict(round_rewards="yes"), r"round_rewards must be False or True, got 'yes'"),
    (dict(num_players=7), r"num_players must be an integer from 2 to 6, got 7"),
    (dict(num_players=1), r"num_players must be an integer from 2 to 6, got 1"),
    (dict(num_players=2.0), r"num_players must be an integer from 2 to 6, got 2.0"),
    (dict(num_players=True), r"num_players must be an integer from 2 to 6, got True"),
    (dict(num_players="3"), r"num_players must be an integer from 2 to 6, got '3'"),
    (
        dict(wilds="queens"),
        r"wilds must be one of 'jacks', 'kings', 'faces', 'none', "
        r"got 'queens'",
    ),
    (dict(jokers="yes"), r"jokers must be one of False, True, got 'yes'"),
    (dict(jokers=1), r"jokers must be one of False, True, got 1"),
    (dict(start_size=0), r"start_size must be an integer from 1 to 10, got 0"),
    (dict(start_size=11), r"start_size must be an integer from 1 to 10, got 11"),
    (dict(target_size=10), r"target_size must be below start_size \(10\): 0 to 9, got 10"),
    (dict(num_decks=0), r"num_decks must be an integer from 1 to 12, got 0"),
    (dict(num_decks=13), r"num_decks must be an integer from 1 to 12, got 13"),
    (
        dict(num_players=6, num_decks=1),
        r"num_decks=1 holds 52 cards, but 6 layouts of 10 "
        r"plus 2 need 62: use num_decks >= 2 or None",
    ),
    (dict(max_deals=0), r"max_deals must be an integer from 1 to 10000, got 0"),
    (
        dict(first_player="loser"),
        r"first_player must be one of 'winner', 'rotate', "
        r"got 'loser'",
    ),
    (dict(reshuffle="none"), r"reshuffle must be one of 'keep_top', 'all', got 'none'"),
    (dict(free_draws=2), r"free_draws must be one of 0, 3, got 2"),
    (
        dict(free_draws=3, num_players=3, losers_reveal=True),
        r"free_draws=3 needs num_players=2 and losers_reveal=True \(got num_players=3",
    ),
    (dict(call_trash=1), r"call_trash must be one of False, True, got 1"),
    (dict(episode="deal"), r"episode must be one of 'game', 'round', got 'deal'"),
    (dict(max_turns=0), r"max_turns must be an integer from 1 to 1000000000, got 0"),
    (dict(max_turns=10**10), r"max_turns must be an integer from 1 to 1000000000, got "),
]


@pytest.mark.parametrize(("options", "message"), ENV_OPTIONS)
def test_bad_env_options(options, message):
    with pytest.raises(ValueError, match=message):
        trash_env.env(**options)
    with pytest.raises(ValueError, match=message):
        trash_env.raw_env(**options)


@pytest.mark.parametrize(
    ("options", "message"),
    [case for case in ENV_OPTIONS if not {"colour", "render_mode", "round_rewards"} & set(case[0])],
)
def test_bad_rules(options, message):
    with pytest.raises(ValueError, match=message):
        Rules(**options)


def test_rules_from_options_names_unknown_options():
    with pytest.raises(
        ValueError,
        match=r"unknown rules option\(s\) players; allowed: "
        r"num_players, num_decks, ",
    ):
        Rules.from_options(players=3)


SOLO_OPTIONS = [
    (dict(seat=5), r"seat must be None or an integer from 0 to 1, got 5"),
    (dict(seat=True), r"seat must be None or an integer from 0 to 1, got True"),
    (dict(seat=-1), r"seat must be None or an integer from 0 to 1, got -1"),
    (dict(illegal="ignore"), r"illegal must be one of 'lose', 'raise', got 'ignore'"),
    (
        dict(render_mode="pdf"),
        r"render_mode must be None or one of 'ansi', 'human', "
        r"'rgb_array', got 'pdf'",
    ),
    (dict(round_rewards=1), r"round_rewards must be False or True, got 1"),
    (dict(opponents=[]), r"opponents must name at least one opponent"),
    (
        dict(opponents=[3]),
        r"opponents entries must be agent spec strings or Agent objects, "
        r"got 3",
    ),
    (dict(opponents=["nobody"]), r"unknown agent 'nobody' in spec 'nobody'; known agents: "),
    (dict(wilds="queens"), r"wilds must be one of 'jacks', 'kings', 'faces', 'none'"),
    (dict(num_players=9), r"num_players must be an integer from 2 to 6, got 9"),
]


@pytest.mark.parametrize(("options", "message"), SOLO_OPTIONS)
def test_bad_solo_env_options(options, message):
    with pytest.raises(ValueError, match=message):
        TrashSoloEnv(**options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"colour": 1}, r"reset options: unknown colour; allowed: seat"),
        ({"seat": 9}, r"reset options: seat must be None or an integer from 0 to 1, got 9"),
        ({"seat": "0"}, r"reset options: seat must be None or an integer from 0 to 1, got '0'"),
    ],
)
def test_bad_solo_reset_options(options, message):
    with pytest.raises(ValueError, match=message):
        TrashSoloEnv().reset(seed=0, options=options)


# ---------------------------------------------------------------------- actions

ODD_ACTIONS = [
    True,
    False,
    np.True_,
    2.5,
    10.0,
    "10",
    np.array(10),
    np.array([10]),
    [10],
    99,
    -1,
    13,
    np.int64(13),
]


@pytest.mark.parametrize("action", ODD_ACTIONS, ids=repr)
def test_raw_env_refuses_odd_actions_naming_the_legal_ones(action):
    e = trash_env.raw_env()
    e.reset(seed=0)
    events = len(e.game.events)
    with pytest.raises(ValueError, match=r"illegal action .* legal actions: \d+ \("):
        e.step(action)
    assert len(e.game.events) == events


@pytest.mark.parametrize("action", [*ODD_ACTIONS, None], ids=repr)
def test_wrapped_env_refuses_odd_actions_naming_the_action_and_the_range(action):
    e = trash_env.env()
    e.reset(seed=0)
    before = (e.unwrapped.agent_selection, len(e.unwrapped.game.events))
    with pytest.raises(InvalidActionError, match=r"not in the action space .*0 to 12"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # and no "illegal move" game end instead
            e.step(action)
    assert (e.unwrapped.agent_selection, len(e.unwrapped.game.events)) == before
    assert not any(e.terminations.values())


def test_wrapped_env_error_is_a_value_error_and_an_assertion_error():
    e = trash_env.env()
    e.reset(seed=0)
    for kind in (ValueError, AssertionError):
        with pytest.raises(kind, match=r"action True of player_\d is not in the action space"):
            e.step(True)


@pytest.mark.parametrize("action", [*ODD_ACTIONS, None], ids=repr)
def test_solo_env_refuses_odd_actions(action):
    env = TrashSoloEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action must be an integer from 0 to 12"):
        env.step(action)


# ---------------------------------------------------------------------- agent specs

SPECS = [
    ("nobody", r"unknown agent 'nobody' in spec 'nobody'; known agents: .*greedy"),
    ("", r"unknown agent '' in spec ''; known agents: "),
    ("greedy:foo=1", r"agent spec 'greedy:foo=1': unknown option\(s\) foo; options of greedy: "),
    (
        "search:rollouts=abc",
        r"agent spec 'search:rollouts=abc': option rollouts must be int, "
        r"got 'abc'",
    ),
    (
        "search:rollouts",
        r"agent spec 'search:rollouts': option 'rollouts' must look like "
        r"key=value",
    ),
    ("counting:discard_weight=x", r"option discard_weight must be float, got 'x'"),
    ("random:=3", r"option '=3' must look like key=value"),
    ("\x1b[2Jbot", r"unknown agent '\\x1b\[2Jbot'"),  # the escape shows escaped (repr)
]


@pytest.mark.parametrize(("spec", "message"), SPECS)
def test_bad_agent_specs(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec, seed=0)


# ---------------------------------------------------------------------- command-line flags


def _play(argv: list[str]) -> int:
    return play_main(argv, stdin=io.StringIO(""), stdout=io.StringIO())


PLAY_FLAGS = [
    (["--wilds", "queens"], r"argument --wilds: invalid choice: 'queens' \(choose from "),
    (
        ["--players", "7", "--opponents", "random"],
        r"rules options: num_players must be an "
        r"integer from 2 to 6, got 7",
    ),
    (["--seat", "5", "--opponents", "random"], r"--seat must be 1 to 2, got 5"),
    (
        ["--players", "4", "--opponents", "random", "greedy"],
        r"--players 4 needs 3 opponent spec\(s\), or one to use at every seat; got 2",
    ),
    (["--opponents", "human"], r"--opponents takes bots only; your own seat is --seat"),
    (["--opponents", "nobody"], r"unknown agent 'nobody'"),
    (
        ["--free-draws", "3", "--players", "3", "--opponents", "random"],
        r"rules options: free_draws=3 needs num_players=2 and losers_reveal=True",
    ),
    (["--seed", "-1"], r"argument --seed: must be a whole number 0 or more, got '-1'"),
    (["--start-size", "ten"], r"argument --start-size: invalid int value: 'ten'"),
    (["--colour", "red"], r"unrecognized arguments: --colour red"),
]


@pytest.mark.parametrize(("argv", "message"), PLAY_FLAGS)
def test_bad_play_flags_exit_2_naming_the_flag(argv, message, capsys):
    assert _play(["--no-log", *argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    import re

    assert re.search(message, err), err


def _evaluate(argv: list[str], monkeypatch) -> int:
    import agents.evaluation.cli as evaluate
    import agents.evaluation.tournament

    def no_games(*args, **kwargs):
        raise AssertionError("a game was played before the flags were checked")

    monkeypatch.setattr(agents.evaluation.tournament, "play_deals", no_games)
    try:
        return evaluate.main([*argv, "--no-progress", "--quiet"])
    except SystemExit as stop:  # argparse's own errors
        return int(stop.code)


def _train(argv: list[str], monkeypatch, tmp_path: Path) -> int:
    from agents.training import cli as train

    def no_training(args):
        raise AssertionError("training started before the flags were checked")

    try:
        return train.main([*argv, "--out", str(tmp_path / "m.safetensors"), "--no-progress"])
    except SystemExit as stop:
        return int(stop.code)


EVALUATE_FLAGS = [
    (["--agents", "greedy", "--wilds", "queens"], r"argument --wilds: invalid choice: 'queens'"),
    (
        ["--agents", "greedy", "--players", "9"],
        r"num_players must be an integer from 2 to 6, "
        r"got 9",
    ),
    (["--agents", "greedy", "--games", "0"], r"--games must be an integer from 1 to"),
    (["--agents", "nobody", "random"], r"unknown agent 'nobody'"),
    (["--agents", "greedy", "--target-size", "10"], r"target_size must be below start_size"),
]


@pytest.mark.parametrize(("argv", "message"), EVALUATE_FLAGS)
def test_bad_evaluate_flags_exit_2_naming_the_flag(argv, message, capsys, monkeypatch):
    import re

    assert _evaluate(argv, monkeypatch) == 2
    err = capsys.readouterr().err
    assert re.search(message, " ".join(err.split())), err


TRAIN_FLAGS = [
    (["--wilds", "queens"], r"argument --wilds: invalid choice: 'queens'"),
    (["--reshuffle", "some"], r"argument --reshuffle: invalid choice: 'some'"),
    (["--players", "many"], r"argument --players/--num-players: invalid int value: 'many'"),
    (["--players", "3", "--free-draws", "3"], r"free_draws=3 needs num_players=2"),
    (["--decks", "0"], r"num_decks must be an integer from 1 to 12, got 0"),
]


@pytest.mark.parametrize(("argv", "message"), TRAIN_FLAGS)
def test_bad_train_flags_exit_2_naming_the_flag(argv, message, capsys, monkeypatch, tmp_path):
    import re

    assert _train(argv, monkeypatch, tmp_path) == 2
    err = capsys.readouterr().err
    assert re.search(message, " ".join(err.split())), err
    assert not (tmp_path / "m.safetensors").exists()


# ---------------------------------------------------------------------- replay files


@pytest.fixture(scope="module")
def good_log(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("log") / "game.json"
    stdin = io.StringIO("s\n" * 2000 + "1\n" * 200)
    play_main(
        ["--seed", "3", "--start-size", "2", "--opponents", "random", "--log", str(path)],
        stdin=stdin,
        stdout=io.StringIO(),
    )
    log = json.loads(path.read_text())
    assert play_main(["--replay", str(path), "--no-pause"], stdout=io.StringIO()) == 0
    return log


def _event_index(log: dict, kind: str) -> int:
    return next(i for i, e in enumerate(log["events"]) if e[0] == kind)


def _set(path: str, value):
    """A change to the good log: ``path`` like ``"events.3.2"``."""

    def change(log: dict) -> None:
        keys = [int(k) if k.lstrip("-").isdigit() else k for k in path.split(".")]
        target = log
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return change


def _drop(key: str):
    return lambda log: log.pop(key)


def _event(kind: str, field: int, value):
    def change(log: dict) -> None:
        log["events"][_event_index(log, kind)][field] = value

    return change


REPLAYS = [
    ("format", _set("format", "other/1"), r"is not a game log written by trash_env.play"),
    ("missing-field", _drop("events"), r"fields missing: events"),
    ("unknown-field", _set("extra", 1), r"fields unknown: extra"),
    ("rules-type", _set("rules", [1]), r"rules must be an object of rules options"),
    (
        "rules-value",
        _set("rules.wilds", "queens"),
        r"rules are not valid: wilds must be one of 'jacks'",
    ),
    ("rules-unknown", _set("rules.colour", "red"), r"rules are not valid: unknown rules option"),
    ("seed", _set("seed", -5), r"seed must be an integer from 0 to "),
    ("seat-bool", _set("seat", True), r"seat must be an integer from 0 to 1, got True"),
    ("seat-range", _set("seat", 2), r"seat must be an integer from 0 to 1, got 2"),
    ("names-length", _set("names", ["You"]), r"names must hold 2 entries, got 1"),
    ("name-type", _set("names.1", 7), r"names\[1\] must be a text of 1 to 200 characters, got 7"),
    ("name-long", _set("names.1", "x" * 500), r"names\[1\] must be a text of 1 to 200 "),
    ("agents", _set("agents", "random"), r"agents must be a list, got 'random'"),
    ("finished", _set("finished", "yes"), r"finished must be true or false, got 'yes'"),
    ("winners-range", _set("winners", [5]), r"winners\[0\] must be an integer from 0 to 1, got 5"),
    ("winners-twice", _set("winners", [0, 0]), r"winners name a seat twice"),
    ("placings", _set("placings", [1]), r"placings must hold 2 entries, got 1"),
    ("rounds-won", _set("rounds_won", [-1, 0]), r"rounds_won\[0\] must be an integer from 0"),
    (
        "action",
        _set("actions.0", [0, 99]),
        r"actions\[0\]\[1\] \(action\) must be an integer "
        r"from 0 to 14, got 99",
    ),
    (
        "event-kind",
        _set("events.1.0", "teleport"),
        r"events\[1\]\[0\] \(kind\) must be one of deal, draw_stock, ",
    ),
    ("event-shape", _set("events.1", ["deal", 0]), r"events\[1\] must hold 4 entries, got 2"),
    (
        "event-player",
        _event("draw_stock", 1, 9),
        r"\(player of draw_stock\) must be an integer from 0 to 1, got 9",
    ),
    (
        "event-card",
        _event("draw_stock", 2, 14),
        r"\(card of draw_stock\) must be an integer from 0 to 13, got 14",
    ),
    (
        "place-slot",
        lambda log: log["events"].insert(1, ["place", 0, 1, 1]),
        r"lays card 1 in slot 2, not its own",
    ),
    (
        "reshuffle-count",
        lambda log: log["events"].insert(1, ["reshuffle", -1, 999, -1]),
        r"\(card of reshuffle\) must be an integer from 1 to 52, got 999",
    ),
    ("deal-number", _event("deal", 3, 4), r"\(deal number\) must be 0, got 4"),
    (
        "float-card",
        _event("draw_stock", 2, 3.0),
        r"\(card of draw_stock\) must be an integer from 0 to 13, got 3.0",
    ),
]


@pytest.mark.parametrize(
    ("change", "message"), [r[1:] for r in REPLAYS], ids=[r[0] for r in REPLAYS]
)
def test_bad_replay_files_exit_2_naming_the_field(good_log, tmp_path, capsys, change, message):
    import copy
    import re

    log = copy.deepcopy(good_log)
    change(log)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(log))
    out = io.StringIO()
    assert play_main(["--replay", str(path), "--no-pause"], stdout=out) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and out.getvalue() == ""  # nothing printed before the check
    assert re.search(message, err), err


RAW_REPLAYS = [
    ("not-json", b"{not json", r"is not a game log \(not JSON: "),
    ("not-utf8", b"\xff\xfe{}", r"is not a game log \(not UTF-8 text: "),
    ("nan", b'{"format": "trash_env.play/1", "seed": NaN}', r"NaN is not a number a game log"),
    (
        "infinity",
        b'{"format": "trash_env.play/1", "seed": -Infinity}',
        r"-Infinity is not a number a game log holds",
    ),
    ("deep", b"[" * 100_000 + b"]" * 100_000, r"nested more than 3 levels deep"),
    ("deep-object", b'{"a": ' * 50 + b"1" + b"}" * 50, r"nested more than 3 levels deep"),
    ("array", b"[1, 2, 3]", r"is not a game log written by trash_env.play"),
    (
        "huge-int",
        b'{"format": "trash_env.play/1", "seed": ' + b"9" * 5000 + b"}",
        r"is not a game log \(not JSON: ",
    ),
]


@pytest.mark.parametrize(
    ("content", "message"), [r[1:] for r in RAW_REPLAYS], ids=[r[0] for r in RAW_REPLAYS]
)
def test_malformed_replay_files_exit_2(tmp_path, capsys, content, message):
    import re

    path = tmp_path / "bad.json"
    path.write_bytes(content)
    assert play_main(["--replay", str(path), "--no-pause"], stdout=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and re.search(message, err), err


def test_oversized_replay_file_is_refused_before_parsing(tmp_path, capsys):
    path = tmp_path / "big.json"
    with open(path, "wb") as file:
        file.truncate(MAX_LOG_BYTES + 1)  # sparse: no disk used
    assert play_main(["--replay", str(path), "--no-pause"], stdout=io.StringIO()) == 2
    assert "larger than 64 MiB" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_unreadable_replay_path(tmp_path, capsys, kind):
    path = tmp_path / "log.json"
    if kind == "directory":
        path.mkdir()
    assert play_main(["--replay", str(path), "--no-pause"], stdout=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert f"cannot read {path}" in err and "Traceback" not in err
