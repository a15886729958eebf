"""Bad input for model files, sidecars and the flags of evaluate.py and train.py: every case
expects a clear error whose message names the problem, and nothing runs before the check.

A crafted pickle (its ``__reduce__`` writes a marker file) is given to every entry point that
takes a model: none may create the marker. The same file does run its code when loaded the way
stable-baselines3 loads a ``.zip`` (checked first, so the test would notice a harmless file).
"""

from __future__ import annotations

import base64
import json
import pickle
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import agents.evaluation.cli as evaluate_cli
from agents.bots.base import make_agent
from agents.policies.model_file import MAX_HEADER_BYTES, METADATA_KEY, network_tensors, write_policy
from agents.policies.policy import load_policy_agent
from agents.training import cli as train
from trash_env.observation import OBS_VERSION, observation_size
from trash_env.rules import Rules
from trash_env.solo import TrashSoloEnv

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------- building files


def network(players: int = 2, hidden: tuple[int, ...] = (8,)) -> dict:
    return {
        "kind": "mlp",
        "inputs": observation_size(players),
        "hidden": list(hidden),
        "value_hidden": list(hidden),
        "activation": "tanh",
        "actions": 13,
    }


def sidecar(players: int = 2, **changes) -> dict:
    data = {
        "format": "trash-env-policy",
        "obs_version": OBS_VERSION,
        "observation_size": observation_size(players),
        "num_players": players,
        "rules": Rules(num_players=players).to_dict(),
        "network": network(players),
        "algorithm": "MaskablePPO",
        "timesteps": 10,
        "seed": 0,
    }
    data.update(changes)
    return data


def tensors(net: dict | None = None) -> dict[str, np.ndarray]:
    net = net or network()
    rng = np.random.default_rng(0)
    return {k: rng.normal(size=s).astype(np.float32) for k, s in network_tensors(net).items()}


def raw_file(path: Path, arrays: dict[str, np.ndarray], meta: str | None) -> Path:
    """A safetensors file written by the library itself, with any metadata string."""
    from safetensors.numpy import save

    path.write_bytes(save(arrays, metadata=None if meta is None else {METADATA_KEY: meta}))
    return path


def header_file(path: Path, header: bytes, data: bytes = b"") -> Path:
    """A file with a hand-made header (what the library would refuse to write)."""
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)
    return path


def good_file(path: Path) -> Path:
    write_policy(
        path,
        tensors(),
        network(),
        {k: v for k, v in sidecar().items() if k not in ("format", "network")},
    )
    return path


class Evil:
    """Unpickling this writes the marker file: arbitrary code, as a crafted model would."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (exec, (f"open({str(self.marker)!r}, 'w').write('pwned')",))


def evil_zip(path: Path, marker: Path) -> Path:
    """A stable-baselines3-style .zip whose ``data`` holds a serialized (pickled) object."""
    payload = base64.b64encode(pickle.dumps(Evil(marker))).decode()
    data = {"policy_class": {":type:": "<class 'type'>", ":serialized:": payload}}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps(data))
        archive.writestr("_stable_baselines3_version", "2.9.2")
        archive.writestr("policy.pth", pickle.dumps(Evil(marker)))
    path.with_suffix(".json").write_text(json.dumps(sidecar()))
    return path


@pytest.fixture
def marker(tmp_path) -> Path:
    return tmp_path / "PWNED"


def test_the_crafted_zip_really_runs_code_when_unpickled(tmp_path, marker):
    from stable_baselines3.common.save_util import load_from_zip_file

    evil = evil_zip(tmp_path / "evil.zip", marker)
    try:
        load_from_zip_file(evil, device="cpu")
    except Exception:
        pass
    assert marker.read_text() == "pwned"  # so the entry-point tests below mean something


# ---------------------------------------------------------------------------- every entry point


def _entry_points(tmp_path: Path, evil: str) -> dict:
    def evaluate_py():
        return evaluate_cli.main(["--agents", evil, "random", "--games", "2", "--no-progress"])

    def train_py(*flags):
        return lambda: train.main(
            ["--out", str(tmp_path / "o.safetensors"), "--no-progress", *flags]
        )

    def play():
        return subprocess.run(
            [sys.executable, "-m", "agents.play", "--opponents", evil, "--seed", "1"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )

    return {
        "make_agent": lambda: make_agent(evil),
        "make_agent with options": lambda: make_agent(f"{evil}:deterministic=false"),
        "load_policy_agent": lambda: load_policy_agent(evil),
        "TrashSoloEnv opponents": lambda: TrashSoloEnv(opponents=[evil]),
        "evaluate.py --agents": evaluate_py,
        "train.py --opponents": train_py("--opponents", evil),
        "train.py --imitate": train_py("--imitate", evil),
        "train.py --resume": train_py("--resume", evil),
        "terminal game --opponents": play,
    }


@pytest.mark.parametrize("entry", list(_entry_points(Path("."), "x")))
@pytest.mark.parametrize("suffix", [".zip", ".safetensors", ".ckpt"])
def test_a_crafted_pickle_runs_no_code_through_any_entry_point(tmp_path, marker, entry, suffix):
    evil = evil_zip(tmp_path / "evil.zip", marker)
    if suffix != ".zip":  # the same bytes under the names the loaders do accept
        renamed = evil.with_suffix(suffix)
        renamed.write_bytes(pickle.dumps(Evil(marker)) if suffix == ".ckpt" else evil.read_bytes())
        evil = renamed
    run = _entry_points(tmp_path, str(evil))[entry]
    try:
        result = run()
    except ValueError as error:
        message = str(error)
    else:
        if isinstance(result, subprocess.CompletedProcess):
            assert result.returncode != 0
            message = result.stderr
        else:
            assert result == 2
            message = ""
    assert not marker.exists(), f"{entry} ran the crafted file's code"
    if suffix == ".zip" and message:
        assert "not loaded" in message and "runs code" in message


def test_train_zip_resume_and_evaluate_zip_name_the_reason(tmp_path, marker, capsys):
    evil = evil_zip(tmp_path / "evil.zip", marker)
    assert evaluate_cli.main(["--agents", str(evil), "random", "--no-progress"]) == 2
    assert ".zip models are not loaded" in capsys.readouterr().err
    assert train.main(["--out", str(tmp_path / "o.safetensors"), "--resume", str(evil)]) == 2
    assert "--resume takes a step_N.ckpt" in capsys.readouterr().err
    assert not marker.exists()


def test_help_no_longer_warns_that_checkpoints_unpickle(capsys):
    with pytest.raises(SystemExit):
        train.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "unpickled" not in text and "resume only checkpoints you made" not in text


# ---------------------------------------------------------------------------- model files


def _truncated(path: Path) -> Path:
    good_file(path)
    path.write_bytes(path.read_bytes()[:-100])
    return path


def _padded(path: Path) -> Path:
    good_file(path)
    path.write_bytes(path.read_bytes() + b"\0" * 64)
    return path


def _with_sidecar(**changes):
    return lambda path: raw_file(path, tensors(), json.dumps(sidecar(**changes)))


def _with_network(**changes):
    return lambda path: raw_file(
        path, tensors(), json.dumps(sidecar(network={**network(), **changes}))
    )


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


FILE_CASES = {
    "missing file": (lambda p: p, "not found"),
    "directory given as the model": (lambda p: (p.mkdir(), p)[1], "is a directory"),
    "empty file": (lambda p: (p.write_bytes(b""), p)[1], "truncated (no header)"),
    "truncated tensors": (_truncated, "truncated or padded"),
    "bytes after the tensors": (_padded, "truncated or padded"),
    "header longer than the file": (
        lambda p: (p.write_bytes(struct.pack("<Q", 10**6) + b"{}"), p)[1],
        "not a safetensors file or is truncated",
    ),
    "huge header": (
        lambda p: header_file(p, b" " * (MAX_HEADER_BYTES + 1)),
        "not a safetensors file or is truncated",
    ),
    "header not JSON": (lambda p: header_file(p, b"{nope"), "not valid JSON"),
    "header not UTF-8": (lambda p: header_file(p, b"\xff\xfe{}"), "not UTF-8"),
    "deeply nested header": (
        lambda p: header_file(p, _deep(100_000).encode()),
        "nested deeper than 16",
    ),
    "header a list": (lambda p: header_file(p, b"[1, 2]"), "not a JSON object"),
    "no sidecar in the metadata": (lambda p: raw_file(p, tensors(), None), "no trash-env sidecar"),
    "sidecar not JSON": (lambda p: raw_file(p, tensors(), "{oops"), "not valid JSON"),
    "deeply nested sidecar": (
        lambda p: raw_file(p, tensors(), json.dumps({**sidecar(), "extra": json.loads(_deep(40))})),
        "nested deeper than 16",
    ),
    "huge sidecar": (
        lambda p: raw_file(
            p, tensors(), json.dumps({**sidecar(), "pad": "x" * (MAX_HEADER_BYTES + 10)})
        ),
        "not a safetensors file or is truncated",
    ),
    "NaN in the sidecar": (
        lambda p: raw_file(
            p, tensors(), json.dumps(sidecar()).replace('"timesteps": 10', '"timesteps": NaN')
        ),
        "not valid JSON",
    ),
    "another format": (_with_sidecar(format="something-else"), "not a trash-env policy sidecar"),
    "old observation version": (_with_sidecar(obs_version=OBS_VERSION - 1), "observation version"),
    "seven players": (_with_sidecar(num_players=7), "num_players must be an integer from 2 to 6"),
    "players as text": (_with_sidecar(num_players="2"), "num_players must be an integer"),
    "observation size of another table": (
        _with_sidecar(observation_size=observation_size(3)),
        "does not match num_players",
    ),
    "rules for another table": (
        _with_sidecar(rules=Rules(num_players=3).to_dict()),
        "rules are for 3 players",
    ),
    "impossible rules": (_with_sidecar(rules={**Rules().to_dict(), "start_size": 99}), "rules:"),
    "rules not an object": (_with_sidecar(rules=[1, 2]), "rules must be a JSON object"),
    "negative timesteps": (_with_sidecar(timesteps=-5), "timesteps must be an integer"),
    "no network": (_with_sidecar(network=None), "network must be a JSON object"),
    "unknown activation": (_with_network(activation="gelu"), "activation must be one of"),
    "network for another input": (_with_network(inputs=10), "network inputs 10"),
    "network with 12 actions": (_with_network(actions=12), "actions must be 13"),
    "absurd layer width": (_with_network(hidden=[10**6]), "layer sizes from 1 to 4096"),
    "too many layers": (_with_network(hidden=[4] * 50), "at most 8 layer sizes"),
    "missing tensor": (
        lambda p: raw_file(
            p, {k: v for k, v in tensors().items() if k != "action_net.bias"}, json.dumps(sidecar())
        ),
        "missing tensor(s) action_net.bias",
    ),
    "extra tensor": (
        lambda p: raw_file(
            p, {**tensors(), "backdoor": np.zeros(3, np.float32)}, json.dumps(sidecar())
        ),
        "does not have: backdoor",
    ),
    "float64 tensors": (
        lambda p: raw_file(
            p, {k: v.astype(np.float64) for k, v in tensors().items()}, json.dumps(sidecar())
        ),
        "must be float32 (F32)",
    ),
    "int tensors": (
        lambda p: raw_file(
            p, {k: v.astype(np.int32) for k, v in tensors().items()}, json.dumps(sidecar())
        ),
        "must be float32",
    ),
    "tensor of the wrong shape": (
        lambda p: raw_file(
            p, {**tensors(), "action_net.bias": np.zeros(12, np.float32)}, json.dumps(sidecar())
        ),
        "action_net.bias has shape [12]",
    ),
    "tensors of a wider network": (
        lambda p: raw_file(p, tensors(network(hidden=(16,))), json.dumps(sidecar())),
        "has shape",
    ),
    "NaN weights": (
        lambda p: raw_file(
            p,
            {**tensors(), "action_net.bias": np.full(13, np.nan, np.float32)},
            json.dumps(sidecar()),
        ),
        "NaN or infinite",
    ),
    "a pickle named .safetensors": (
        lambda p: (p.write_bytes(pickle.dumps({"a": 1})), p)[1],
        "not a safetensors file or is truncated",
    ),
}


@pytest.mark.parametrize("case", list(FILE_CASES))
def test_bad_model_files_fail_with_a_message_naming_the_problem(tmp_path, case):
    make, message = FILE_CASES[case]
    path = make(tmp_path / "model.safetensors")
    with pytest.raises(ValueError) as caught:
        make_agent(str(path))
    assert message in str(caught.value)


def test_a_good_file_passes_the_same_checks(tmp_path):
    agent = make_agent(str(good_file(tmp_path / "model.safetensors")))
    assert agent.num_players == 2 and agent.layers[0][1][0].shape == (153, 8)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("{good}:temperature=2", "unknown option(s) temperature"),
        ("{good}:deterministic=maybe", "deterministic must be true or false"),
        ("{tmp}/model.pt", "unknown agent"),
        ("{tmp}/model.json", "unknown agent"),
        ("{tmp}/model.ZIP", ".zip models are not loaded"),
    ],
)
def test_bad_model_specs(tmp_path, spec, message):
    good = good_file(tmp_path / "good.safetensors")
    with pytest.raises(ValueError, match=None) as caught:
        make_agent(spec.replace("{good}", str(good)).replace("{tmp}", str(tmp_path)))
    assert message in str(caught.value)


def test_a_model_for_three_players_refuses_a_two_player_table(tmp_path):
    path = tmp_path / "three.safetensors"
    net = network(3)
    write_policy(
        path, tensors(net), net, {"num_players": 3, "rules": Rules(num_players=3).to_dict()}
    )
    agent = make_agent(str(path))
    env = TrashSoloEnv()
    obs, info = env.reset(seed=0)
    with pytest.raises(ValueError, match="trained for 3 players"):
        agent.act(obs, info["action_mask"], None)


# ---------------------------------------------------------------------------- hostile text


@pytest.mark.parametrize("field", ["activation", "obs_version", "format"])
def test_control_characters_from_a_sidecar_never_reach_the_message_raw(tmp_path, field):
    hostile = "\x1b[2J\x1b]0;owned\x07\u202e"
    changes = (
        {"network": {**network(), "activation": hostile}}
        if field == "activation"
        else {field: hostile}
    )
    path = raw_file(tmp_path / "m.safetensors", tensors(), json.dumps(sidecar(**changes)))
    with pytest.raises(ValueError) as caught:
        make_agent(str(path))
    message = str(caught.value)
    assert not any(c in message for c in "\x1b\x07\u202e"), repr(message)
    if field != "format":
        assert "\\x1b" in message


def test_a_model_path_with_control_characters_gets_an_escaped_name(tmp_path):
    path = good_file(tmp_path / "a\x1b[31m\x07b.safetensors")
    agent = make_agent(str(path))
    assert agent.name == "policy:a\\x1b[31m\\x07b.safetensors"
    missing = tmp_path / "gone\x1b[2J.safetensors"
    with pytest.raises(ValueError) as caught:
        make_agent(str(missing))
    assert "\x1b" not in str(caught.value) and "gone\\x1b[2J" in str(caught.value)


# ---------------------------------------------------------------------------- train.py flags


TRAIN_CASES = [
    (["--gamma", "0"], "--gamma must be a finite number in (0, 1]"),
    (["--gamma", "1.5"], "--gamma must be a finite number in (0, 1]"),
    (["--gamma", "nan"], "--gamma must be a finite number"),
    (["--ent-coef", "inf"], "--ent-coef must be a finite number in [0, 10]"),
    (["--ent-coef", "nan"], "--ent-coef must be a finite number"),
    (["--ent-coef", "-0.1"], "--ent-coef must be a finite number in [0, 10]"),
    (["--lr", "0"], "--lr must be a finite number in (0, 1]"),
    (["--lr", "inf"], "--lr must be a finite number"),
    (["--lr-decay", "1.5"], "--lr-decay must be a finite number in [0, 1]"),
    (["--lr-decay", "-0.1"], "--lr-decay must be a finite number in [0, 1]"),
    (["--lr-decay", "nan"], "--lr-decay must be a finite number"),
    (["--timesteps", "10000000000"], "--timesteps must be an integer from 1 to 1,000,000,000"),
    (["--timesteps", "0"], "--timesteps must be an integer from 1"),
    (["--envs", "100000"], "--envs must be an integer from 1 to 256"),
    (["--n-steps", "1"], "--n-steps must be an integer from 2"),
    (["--batch-size", "100000"], "--batch-size must be at most --n-steps x --envs"),
    (["--epochs", "0"], "--epochs must be an integer from 1 to 1,000"),
    (["--pool-size", "0"], "--pool-size must be an integer from 1 to 100"),
    (["--eval-deals", "1000000000"], "--eval-deals must be an integer from 1 to 1,000,000"),
    (["--final-deals", "0"], "--final-deals must be an integer from 1"),
    (["--imitate-samples", "100000000000"], "--imitate-samples must be an integer from 1"),
    (["--workers", "0"], "--workers must be an integer from 1 to 256"),
    (["--threads", "0"], "--threads must be an integer from 1 to 256"),
    (["--seed", "-1"], "--seed must be an integer from 0"),
    (["--net", "128,x"], "--net must be 1 to 8 layer sizes"),
    (["--net", "100000"], "--net must be 1 to 8 layer sizes from 1 to 4096"),
    (["--net", ",".join(["4"] * 9)], "--net must be 1 to 8 layer sizes"),
    (["--out", "{tmp}/model.zip"], "--out must end in .safetensors (train.py no longer writes"),
    (["--out", "{tmp}/model.pt"], "--out must end in .safetensors"),
    (["--out", "{tmp}/dir.safetensors"], "is a directory"),
    (["--out", "{tmp}/afile/m.safetensors"], "is not a directory"),
    (["--out", "{tmp}/clash.safetensors"], "must be a directory for the checkpoints"),
    (["--tensorboard", "{tmp}/afile"], "--tensorboard must be a directory"),
    (["--resume", "{tmp}/nowhere.ckpt"], "not found"),
    (["--resume", "{tmp}/afile"], "--resume takes a step_N.ckpt"),
    (["--resume", "{tmp}/empty_dir"], "no step_N.ckpt checkpoint"),
    (["--resume", "{tmp}/damaged"], "no usable checkpoint"),
    (["--opponents", "nobody"], "unknown agent 'nobody'"),
    (["--opponents", "{tmp}/missing.safetensors"], "not found"),
]


@pytest.mark.parametrize(("argv", "message"), TRAIN_CASES)
def test_train_flags_fail_before_training_naming_the_flag(
    tmp_path, capsys, monkeypatch, argv, message
):
    (tmp_path / "afile").write_text("a file")
    (tmp_path / "dir.safetensors").mkdir()
    (tmp_path / "empty_dir").mkdir()
    (tmp_path / "clash_checkpoints").write_text("a file where the folder goes")
    (tmp_path / "damaged").mkdir()
    (tmp_path / "damaged" / "step_000000256.ckpt").write_bytes(b"torn")

    def no_training(args):
        raise AssertionError("training started before the flags were checked")

    monkeypatch.setattr(train, "train", no_training)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "m.safetensors")]
    assert train.main(argv + ["--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in " ".join(err.split()), err


# ---------------------------------------------------------------------------- evaluate.py flags


EVALUATE_CASES = [
    (["--agents", "greedy", "--png", "{tmp}/plot.gif"], "--png must end in .png"),
    (["--agents", "greedy", "--png", "{tmp}/plot"], "--png must end in .png"),
    (["--agents", "greedy", "--json", "{tmp}/dir.safetensors"], "is a directory"),
    (["--agents", "greedy", "--csv", "{tmp}/afile/r.csv"], "is not a directory"),
    (["--agents", "greedy", "--games", "1000000000"], "--games must be an integer from 1 to"),
    (["--agents", "greedy", "--deals", "1000000000"], "--deals must be an integer from 1 to"),
    (["--agents", "greedy", "--workers", "100000"], "--workers must be an integer from 1 to 256"),
    (["--agents", "{tmp}/dir.safetensors", "random"], "is a directory"),
    (["--agents", "{tmp}/missing.safetensors", "random"], "not found"),
    (["--agents", "{tmp}/old.zip", "random"], ".zip models are not loaded"),
]


@pytest.mark.parametrize(("argv", "message"), EVALUATE_CASES)
def test_evaluate_flags_fail_before_playing_naming_the_flag(
    tmp_path, capsys, monkeypatch, argv, message
):
    import agents.evaluation.tournament

    (tmp_path / "afile").write_text("a file")
    (tmp_path / "dir.safetensors").mkdir()

    def no_games(*args, **kwargs):
        raise AssertionError("a game was played before the flags were checked")

    monkeypatch.setattr(agents.evaluation.tournament, "play_deals", no_games)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert evaluate_cli.main(argv + ["--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in " ".join(err.split()), err
