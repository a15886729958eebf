"""Every pipeline example in examples/ runs with a short budget, respects the action masks
(0 illegal moves), prints its JSON summary and leaves a model file that loads and evaluates,
its curve's log and PNG. The learning targets are benchmarks/pipelines.py's, not these.
Marked ``integration``: each skips when its library is absent (CI installs them in their own
venvs and runs ``pytest -m integration``).

The examples run as scripts in a subprocess, as a user runs them (Ray and RLlib start actors
and threads that must not outlive the test)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import evaluate_model

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.integration, pytest.mark.slow]  # slow: the second tier


def _needs(*modules: str) -> None:
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # a dotted name whose parent package is absent
            found = False
        if not found:
            pytest.skip(f"{module} is not installed (an optional extra, see docs/integrations.md)")


def _run(script: str, *args: str, timeout: float = 900) -> dict:
    env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    last = [line for line in done.stdout.splitlines() if line.startswith("{")][-1]
    return json.loads(last)


def _check_saved_model(out: dict, model: Path, rows: int, features: str = "pairs") -> None:
    """What every example leaves at ``--out``: the model file that loads and evaluates (in
    evaluate.py, as a user runs it), the log with ``rows`` rows (curve points and the final
    evaluation), the curve's PNG and the summary; and 0 illegal moves."""
    from agents.policies.policy import load_policy_agent

    assert out["illegal_moves"] == 0
    assert model.is_file() and Path(out["model"]) == model
    assert out["vs_greedy"]["games"] == out["vs_random"]["games"] == 4  # 2 deals each
    assert 0 <= out["vs_random"]["win_rate"] <= 1
    assert load_policy_agent(str(model)).sidecar["network"]["features"] == features
    log = model.with_name(f"{model.stem}_log.csv").read_text().splitlines()
    assert len(log) == 1 + rows, log
    assert model.with_name(f"{model.stem}_curve.png").stat().st_size > 1000
    summary = model.with_name(f"{model.stem}_summary.json")
    assert json.loads(summary.read_text()) == out
    done = evaluate_model(model)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert model.name in done.stdout


def test_cleanrl_ppo(tmp_path):
    _needs("torch", "numba")
    model = tmp_path / "cleanrl.safetensors"
    out = _run(
        "cleanrl_ppo.py",
        *("--steps", "2048", "--envs", "64", "--n-steps", "16"),
        *("--eval-every", "1024", "--eval-deals", "2", "--final-deals", "2"),
        *("--out", str(model)),
    )
    # two rollouts of 64 x 16 decisions, a curve point after the first, then the final row
    assert out["steps"] == out["train_decisions"] == 2048 and out["library"] == "torch"
    _check_saved_model(out, model, rows=2, features="fits")  # the 2-player input


def _parse(example: str, *flags: str):
    spec = importlib.util.spec_from_file_location(example, ROOT / "examples" / f"{example}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.parse_args(list(flags))


@pytest.mark.parametrize(
    ("example", "budgets", "library"),
    [
        (
            "cleanrl_ppo",
            {2: 2_000_000, 3: 2_000_000, 4: 4_000_000, 5: 4_000_000, 6: 4_000_000},
            "torch",
        ),
        (
            "torchrl_ppo",
            {2: 1_000_000, 3: 4_000_000, 4: 4_000_000, 5: 4_000_000, 6: 4_000_000},
            "torchrl",
        ),
    ],
)
def test_the_budget_follows_the_player_count(example, budgets, library):
    """With more players each decision matters less, so these examples pick their default
    budget from ``--players`` (a user passes ``--players 3``, nothing else); ``--steps`` wins."""
    _needs(library)
    assert {n: _parse(example, "--players", str(n)).steps for n in range(2, 7)} == budgets
    assert _parse(example).steps == budgets[2]
    assert _parse(example, "--players", "4", "--steps", "5").steps == 5


@pytest.mark.parametrize(
    ("example", "library"), [("cleanrl_ppo", "torch"), ("torchrl_ppo", "torchrl")]
)
def test_the_input_follows_the_player_count(example, library):
    """Every player count but 3 reads the ``fits`` observation (one seed short of greedy's
    level at 2, a run that never took off at 4, par only at the last step at 5 and below it at
    6 without it), 3 ``pairs``: chosen from ``--players`` alone, as the budget is;
    ``--observation`` wins."""
    _needs(library)
    chosen = {n: _parse(example, "--players", str(n)).observation for n in range(2, 7)}
    assert chosen == {2: "fits", 3: "pairs", 4: "fits", 5: "fits", 6: "fits"}
    assert _parse(example).observation == "fits"
    assert _parse(example, "--players", "6", "--observation", "pairs").observation == "pairs"
    assert _parse(example, "--observation", "pairs").observation == "pairs"


def test_cleanrl_ppo_six_players_trains_and_records_the_fits_input(tmp_path):
    _needs("torch", "numba")
    model = tmp_path / "six.safetensors"
    out = _run(
        "cleanrl_ppo.py",
        *("--players", "6", "--steps", "1024", "--envs", "64", "--n-steps", "16"),
        *("--eval-every", "0", "--eval-deals", "2", "--final-deals", "2", "--out", str(model)),
    )
    assert out["players"] == 6 and out["steps"] == 1024
    sidecar = json.loads(model.with_suffix(".json").read_text())
    assert sidecar["network"]["features"] == "fits"  # evaluation appends the fit entries
    assert out["vs_greedy"]["games"] == 12  # 2 duplicate deals in each of 6 seats
    done = evaluate_model(model, "--players", "6", "--one-seat")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_an_example_trained_in_a_rules_variant_records_it_and_is_seated_only_there(tmp_path):
    """``--wilds kings`` reaches the envs and the model file from the one place (the run):
    the sidecar says kings, and evaluate.py seats the model in that game only, refusing the
    standard game with the reason and the flag of its own."""
    _needs("torch", "numba")
    model = tmp_path / "kings.safetensors"
    out = _run(
        "cleanrl_ppo.py",
        *("--wilds", "kings", "--steps", "1024", "--envs", "64", "--n-steps", "16"),
        *("--eval-every", "0", "--final-deals", "2", "--out", str(model)),
    )
    assert out["rules"]["wilds"] == "kings" and out["illegal_moves"] == 0
    sidecar = json.loads(model.with_suffix(".json").read_text())
    assert sidecar["rules"]["wilds"] == "kings"
    standard = evaluate_model(model)
    assert standard.returncode == 2, standard.stdout[-3000:] + standard.stderr[-3000:]
    assert "trained under other rules than this game's: wilds='jacks' (trained: 'kings')" in (
        standard.stderr
    )
    assert "(--wilds kings)" in standard.stderr and "Traceback" not in standard.stderr
    kings = evaluate_model(model, "--wilds", "kings")
    assert kings.returncode == 0, kings.stdout[-3000:] + kings.stderr[-3000:]
    assert model.name in kings.stdout and "Warning" not in kings.stderr


def test_jax_ppo(tmp_path):
    _needs("jax", "optax")
    model = tmp_path / "jax.safetensors"
    out = _run(
        "jax_ppo.py",
        *("--steps", "2048", "--envs", "64"),
        *("--eval-every", "1024", "--eval-deals", "2", "--final-deals", "2"),
        *("--out", str(model)),
    )
    # two updates of 64 x 16 decisions (two segments of one compiled program), a curve point
    # after the first, then the final row
    assert out["steps"] == 2048 and out["library"] == "jax"
    _check_saved_model(out, model, rows=2, features="fits")


def test_jax_ppo_network_input_is_the_model_files_fits_input():
    """What the JAX learner's network reads is what the exported model's NumPy forward pass
    computes from the plain observation (``PairFeatures(fits=True)``), so the file plays as
    trained."""
    _needs("jax", "optax")
    import jax
    import numpy as np

    from agents.policies.features import PairFeatures
    from trash_env.jax_env.env import observe_game

    spec = importlib.util.spec_from_file_location("jax_ppo", ROOT / "examples" / "jax_ppo.py")
    assert spec is not None and spec.loader is not None
    jax_ppo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(jax_ppo)
    _, reset, step, look = jax_ppo.make_env_fns({"num_players": 2})
    # compiled as the example compiles them (not run op by op)
    reset, step, look = (jax.jit(jax.vmap(f)) for f in (reset, step, look))
    plain_of = jax.jit(jax.vmap(lambda g: observe_game(g.game, g.learner, 2, "plain")))
    games = reset(jax.random.split(jax.random.PRNGKey(3), 64))
    features = PairFeatures(2, fits=True)
    fitted = 0.0
    for i in range(40):
        net_input, mask = look(games)
        plain = plain_of(games)
        expected = features(np.asarray(plain))
        assert np.array_equal(np.asarray(net_input), expected)
        fitted += float(expected[:, -2].sum())
        action = np.argmax(np.asarray(mask), axis=1)  # the first legal action
        keys = jax.random.split(jax.random.PRNGKey(100 + i), 64)
        games, _, _ = step(games, action, keys)
    assert fitted > 0  # offered cards that fit were met


def test_rllib_ppo_vs_greedy(tmp_path):
    _needs("ray.rllib", "torch")
    model = tmp_path / "model.safetensors"
    out = _run(
        "rllib_ppo.py",
        *("--steps", "1024", "--batch", "512", "--batch-size", "256", "--envs", "4"),
        *("--eval-every", "512", "--eval-deals", "2", "--final-deals", "2", "--out", str(model)),
    )
    assert out["steps"] >= 1024 and out["opponents"] == "greedy" and out["games"] >= 1
    assert out["games_per_env_runner"] == [4]
    _check_saved_model(out, model, rows=2)


def test_rllib_ppo_defaults_per_opponents():
    """Self-play batches games as the bots' env does (``--envs``' one default) and has its own
    budget and annealed lr; a given ``--steps``, ``--envs`` or ``--no-anneal-lr`` is honoured."""
    _needs("ray.rllib", "torch")
    spec = importlib.util.spec_from_file_location("rllib_ppo", ROOT / "examples" / "rllib_ppo.py")
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    bots, self_play = example.parse_args([]), example.parse_args(["--opponents", "self"])
    assert (bots.steps, bots.envs, bots.anneal_lr) == (1_000_000, 16, True)
    assert (self_play.steps, self_play.envs, self_play.anneal_lr) == (1_200_000, 16, True)
    given = ["--opponents", "self", "--steps", "5", "--envs", "3", "--no-anneal-lr"]
    args = example.parse_args(given)
    assert (args.steps, args.envs, args.anneal_lr) == (5, 3, False)


def test_rllib_ppo_self_play_two_env_runners(tmp_path):
    _needs("ray.rllib", "torch")
    model = tmp_path / "model.safetensors"
    out = _run(
        "rllib_ppo.py",
        *("--opponents", "self", "--env-runners", "2", "--envs", "2"),
        *("--steps", "1600", "--batch", "800"),
        *("--batch-size", "400", "--eval-every", "0", "--final-deals", "2", "--out", str(model)),
    )
    assert out["steps"] >= 1600 and out["env_runners"] == 2 and out["games"] >= 1
    assert out["games_per_env_runner"] == [2, 2]
    assert out["decisions_per_second_per_runner"] > 0
    _check_saved_model(out, model, rows=1)


def test_rllib_ppo_self_play_batches_envs_games_per_env_runner(tmp_path):
    """``--envs`` under self-play: RLlib's env runner steps that many multi-agent games (as
    reported by the runner itself), each seat still one agent of the shared policy."""
    _needs("ray.rllib", "torch")
    model = tmp_path / "model.safetensors"
    out = _run(
        "rllib_ppo.py",
        *("--opponents", "self", "--envs", "4", "--steps", "2000", "--batch", "1000"),
        *("--batch-size", "500", "--eval-every", "0", "--final-deals", "2", "--out", str(model)),
    )
    assert out["games_per_env_runner"] == [4] and out["env_runners"] == 0
    assert out["steps"] >= 2000 and out["games"] >= 1
    _check_saved_model(out, model, rows=1)


def test_tianshou_ppo(tmp_path):
    _needs("tianshou")
    model = tmp_path / "ts.safetensors"
    out = _run(
        "tianshou_ppo.py",
        *("--steps", "1024", "--envs", "8", "--n-steps", "64", "--batch-size", "256"),
        *("--eval-every", "512", "--eval-deals", "2", "--final-deals", "2", "--out", str(model)),
    )
    assert out["steps"] >= 1024  # rollouts of 8 x 64
    _check_saved_model(out, model, rows=2)


def test_torchrl_ppo(tmp_path):
    _needs("torchrl", "numba")
    model = tmp_path / "model.safetensors"
    out = _run(
        "torchrl_ppo.py",
        *("--steps", "2048", "--envs", "64", "--n-steps", "16", "--eval-every", "1024"),
        *("--eval-deals", "2", "--final-deals", "2", "--out", str(model)),
    )
    assert out["steps"] == 2048  # 2 batches of 64 x 16
    _check_saved_model(out, model, rows=2, features="fits")  # the 2-player input


def test_agilerl_ppo(tmp_path):
    _needs("agilerl", "numba")
    model = tmp_path / "agilerl.safetensors"
    out = _run(
        "agilerl_ppo.py",
        *("--steps", "2048", "--envs", "64", "--n-steps", "16", "--batch-size", "256"),
        *("--eval-every", "1024", "--eval-deals", "2", "--final-deals", "2"),
        *("--out", str(model)),
    )
    assert out["steps"] == 2048
    _check_saved_model(out, model, rows=2)
