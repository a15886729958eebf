"""The optional progress shaping (agents/training/shaping.py) and train.py's learning curve.

The shaping's potential on a stacked deal; the wrapper's terms against the potential read from
the game, telescoping over every episode, the true reward kept in Monitor's figures; off by
default in the envs; train.py's annealing, its sidecar, its final evaluation untouched by the
shaping, and the CSV/PNG of the learning curve with all its series. The batched env's shaping
is checked against this wrapper in tests/test_vector_env.py."""

from __future__ import annotations

import csv
import json
import struct
from pathlib import Path

import numpy as np
import pytest
from helpers import Q, game, play
from stable_baselines3.common.monitor import Monitor

from agents.training.checkpoint import read_checkpoint
from agents.training.cli import main
from agents.training.config import DEFAULT_SHAPING, TrainConfig
from agents.training.run import Run
from agents.training.shaping import ProgressShaping
from trash_env.engine import DRAW_STOCK
from trash_env.progress import (
    check_coef,
    game_potential,
    last_deal_end_potential,
    progress_potential,
)
from trash_env.solo import TrashSoloEnv

pytestmark = pytest.mark.slow  # the second tier: `pytest -m slow`


def test_potential_on_a_stacked_deal() -> None:
    # Player 0's first draw is forced: it draws the 3 (its slot 3 holds a queen, which ends
    # the turn). Then player 1 draws the 5 (its slot 5 holds a queen too). Layouts of 10:
    # one face-up slot is a tenth.
    g = game([[None, None, Q] + [None] * 7, [None] * 4 + [Q] + [None] * 5], stock=[3, 5])
    assert g.current == 1 and [g.face_down_count(p) for p in (0, 1)] == [9, 10]
    assert game_potential(g, 0) == pytest.approx(0.1)
    assert game_potential(g, 1) == pytest.approx(-0.1)
    play(g, DRAW_STOCK)
    assert g.current == 0 and [g.face_down_count(p) for p in (0, 1)] == [9, 9]
    assert game_potential(g, 0) == 0.0 and game_potential(g, 1) == 0.0


def test_potential_of_three_players_uses_the_opponents_mean_and_each_layout_size() -> None:
    sizes = np.array([[10, 8, 5]])
    down = np.array([[5, 8, 0]])  # up: 0.5, 0, 1
    assert progress_potential(sizes, down, np.array([0]))[0] == pytest.approx(0.5 - 0.5)
    assert progress_potential(sizes, down, np.array([2]))[0] == pytest.approx(1 - 0.25)
    assert progress_potential(sizes, down, np.array([1]))[0] == pytest.approx(0 - 0.75)


def test_deal_end_potential_from_the_event_log() -> None:
    # Layouts of 2. Player 0's forced first draw is a queen (discarded); player 1 draws an
    # ace (slot 1 up, its queen discarded); player 0 draws an ace, lays it and the 2 under it
    # and goes out: the deal ends with player 0 all up, player 1 half up.
    g = game([[2, Q], [Q, None]], stock=[Q, 1, 1])
    play(g, DRAW_STOCK)  # player 1
    assert game_potential(g, 1) == pytest.approx(0.5)
    play(g, DRAW_STOCK)  # player 0 goes out
    assert g.deal_number == 1 and g.sizes == [1, 2] and not g.done
    assert last_deal_end_potential(g, 0) == pytest.approx(1 - 0.5)
    assert last_deal_end_potential(g, 1) == pytest.approx(0.5 - 1)
    # In a one-deal game the finished deal is the last one in the log.
    r = game([[2, Q], [Q, None]], stock=[Q, 1, 1], episode="round")
    play(r, DRAW_STOCK, DRAW_STOCK)
    assert r.done and last_deal_end_potential(r, 0) == pytest.approx(0.5)


def _play_shaped(coef: float, episodes: int, **options) -> list[dict]:
    """Random legal learner moves in ProgressShaping(Monitor(TrashSoloEnv)); per episode the
    shaping terms, the rewards, and per step the potential and deal-end potential read from
    the game."""
    env = ProgressShaping(
        Monitor(TrashSoloEnv(opponents=["greedy"], round_rewards=True, **options)), coef
    )
    rng = np.random.default_rng(0)
    env.reset(seed=7)
    solo = env.unwrapped
    out = []
    for _ in range(episodes):
        deals = solo.game.deal_number
        steps = []
        while True:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _, reward, terminated, truncated, info = env.step(action)
            ended = terminated or truncated
            g = solo.game
            steps.append(
                {
                    "term": info["shaping"],
                    "true": reward - info["shaping"],
                    "new_deal": g.deal_number != deals,
                    "end": last_deal_end_potential(g, solo.seat)
                    if g.deal_number != deals
                    else None,
                    "phi": 0.0 if ended else game_potential(g, solo.seat),
                }
            )
            deals = g.deal_number
            if ended:
                out.append({"steps": steps, "info": info, "truncated": g.truncated})
                env.reset()
                break
    return out


def test_wrapper_pays_progress_and_telescopes_within_each_deal() -> None:
    coef = 0.5
    episodes = _play_shaped(coef, 3, start_size=4)
    for ep in episodes:
        steps = ep["steps"]
        previous = 0.0  # an episode starts at the potential of a fresh deal
        for step in steps:
            if step["new_deal"]:
                expected = coef * (step["end"] - previous + step["phi"])
            else:
                expected = coef * (step["phi"] - previous)
            assert step["term"] == pytest.approx(expected)
            previous = step["phi"]
        # Over a whole game the terms sum to coef x each finished deal's progress at its end.
        ends = [s["end"] for s in steps if s["new_deal"]]
        assert not ep["truncated"] and len(ends) > 1
        total = sum(s["term"] for s in steps)
        assert total == pytest.approx(coef * sum(ends))
        assert ep["info"]["episode"]["shaping"] == pytest.approx(total, abs=1e-5)
        # Monitor, below the shaping, records the true return: the per-deal and game results.
        true = [s["true"] for s in steps]
        assert ep["info"]["episode"]["r"] == pytest.approx(sum(true), abs=1e-5)
        assert all(abs(t - round(t)) < 1e-9 for t in true)
        # Within a deal (from the step after one deal ended to the step that ends the next),
        # the terms sum to coef x that deal's end.
        cut = [0] + [i + 1 for i, s in enumerate(steps) if s["new_deal"]]
        for k, (a, b) in enumerate(zip(cut[:-1], cut[1:], strict=True)):
            opening = steps[a - 1]["phi"] if k else 0.0  # a deal's progress before our 1st step
            assert sum(s["term"] for s in steps[a:b]) == pytest.approx(
                coef * (steps[b - 1]["end"] - opening) + coef * steps[b - 1]["phi"]
            )
    assert any(s["term"] > 0 for ep in episodes for s in ep["steps"])


def test_truncation_takes_back_the_unfinished_deal() -> None:
    (ep,) = _play_shaped(1.0, 1, max_turns=12)
    assert ep["truncated"]
    ends = [s["end"] for s in ep["steps"] if s["new_deal"]]
    assert sum(s["term"] for s in ep["steps"]) == pytest.approx(sum(ends))


def test_shaping_is_off_by_default_and_checked() -> None:
    env = ProgressShaping(Monitor(TrashSoloEnv(opponents=["greedy"])))
    assert env.coef == 0.0
    env.reset(seed=1)
    rewards = []
    rng = np.random.default_rng(1)
    done = False
    while not done:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        _, reward, terminated, truncated, info = env.step(action)
        assert info["shaping"] == 0.0
        rewards.append(reward)
        done = terminated or truncated
    assert info["episode"]["r"] == pytest.approx(sum(rewards), abs=1e-5)
    for bad in (-0.1, float("nan"), 11, True, "1"):
        with pytest.raises(ValueError, match="shaping must be a number from 0 to 10"):
            check_coef(bad)


def test_train_anneals_the_coefficient_to_zero() -> None:
    run = Run(TrainConfig(shaping=2, shaping_until=0.5, timesteps=1000, net="8"))
    assert run.shaping_end == 500
    assert [run.shaping_at(s) for s in (0, 250, 499, 500, 900)] == pytest.approx(
        [2.0, 1.0, 2.0 * (1 - 499 / 500), 0.0, 0.0]
    )
    assert TrainConfig().shaping == DEFAULT_SHAPING == 0.0


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def shaped_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("shaped") / "m.safetensors"
    argv = [
        "--timesteps",
        "1536",
        "--envs",
        "8",
        "--n-steps",
        "64",
        "--batch-size",
        "256",
        "--epochs",
        "1",
        "--start-size",
        "3",
        "--shaping",
        "1.5",
        "--shaping-until",
        "0.5",
        "--eval-every",
        "512",
        "--eval-deals",
        "6",
        "--final-deals",
        "10",
        "--workers",
        "1",
        "--checkpoint-every",
        "100000",
        "--opponents",
        "greedy",
        "random",
        "--no-progress",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    return out


def test_the_log_and_the_curve_hold_every_series(shaped_run) -> None:
    rows = list(csv.DictReader((shaped_run.parent / "m_log.csv").open()))
    assert [int(r["timesteps"]) for r in rows] == [0, 512, 1024, 1536]
    for r in rows:  # periodic evaluations against both baselines, with their intervals
        for prefix in ("eval", "random"):
            low, rate, high = (float(r[f"{prefix}_{k}"]) for k in ("ci_low", "win_rate", "ci_high"))
            assert 0 <= low <= rate <= high <= 1
            assert int(r[f"{prefix}_games"]) == 12
    for r in rows[1:]:  # training figures and throughput between rows
        assert int(r["episodes"]) > 0
        assert r["train_mean_reward"] != "" and float(r["interval_steps_per_s"]) > 0
    # The coefficient logged is the one of the rollouts up to the row, 1.5 x (1 - step / 768)
    # at each rollout's start.
    assert [float(r["shaping_coef"]) for r in rows] == pytest.approx(
        [1.5, 1.5, 1.5 * (1 - 512 / 768), 0.0]
    )
    width, height = _png_size(shaped_run.parent / "m_curve.png")
    assert width >= 500 and height > width  # three stacked panels


def test_shaped_training_is_recorded_and_the_evaluation_scores_the_true_result(shaped_run):
    from agents.evaluation import evaluate
    from trash_env.rules import Rules

    sidecar = json.loads(shaped_run.with_suffix(".json").read_text())
    assert sidecar["shaping"] == {"reward": "progress potential", "coef": 1.5, "zero_at_step": 768}
    # The final figures are those of the saved policy played alone on duplicate deals:
    # nothing of the training envs (the shaping) is in them.
    report = evaluate(
        [str(shaped_run), "greedy"], rules=Rules(start_size=3), deals=10, seed=sidecar["seed"] + 1
    )
    mine = report.agents[str(shaped_run)]
    assert sidecar["evaluation"]["greedy"]["wins"] == mine["wins"]
    assert sidecar["evaluation"]["greedy"]["games"] == 20


def test_dummy_path_trains_with_the_shaping_wrapper(tmp_path) -> None:
    out = tmp_path / "d.safetensors"
    argv = [
        "--vec",
        "dummy",
        "--timesteps",
        "512",
        "--envs",
        "2",
        "--n-steps",
        "128",
        "--batch-size",
        "128",
        "--epochs",
        "1",
        "--start-size",
        "3",
        "--shaping",
        "1",
        "--shaping-until",
        "0.5",
        "--eval-every",
        "0",
        "--final-deals",
        "2",
        "--workers",
        "1",
        "--opponents",
        "greedy",
        "--checkpoint-every",
        "256",
        "--no-progress",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    state = read_checkpoint(tmp_path / "d_checkpoints" / "step_000000256.ckpt")
    env = state["envs"][0]
    assert env["shaping"]["coef"] == 1.0  # the shaping wrapper's figures, by name
    assert state["shaping_end"] == 256
    rows = list(csv.DictReader((tmp_path / "d_log.csv").open()))
    assert float(rows[-1]["shaping_coef"]) == 0.0


@pytest.mark.parametrize("switch_at", [0, 1, 5, 40])
def test_turning_the_shaping_on_later_pays_what_a_follower_from_the_start_pays(switch_at):
    """At coefficient 0 the wrapper follows nothing; set_shaping(c) then picks the episode up
    where it stands: from there on it pays, step by step, what a wrapper shaped from the start
    pays (switch_at 0 and 1: right after a reset and after the first step)."""

    def make(coef: float) -> ProgressShaping:
        env = ProgressShaping(
            Monitor(TrashSoloEnv(opponents=["greedy"], round_rewards=True, start_size=3)), coef
        )
        env.reset(seed=11)
        return env

    always, later = make(1.5), make(0.0)
    rng = np.random.default_rng(5)
    compared = 0
    for step in range(150):
        if step == switch_at:
            later.set_shaping(1.5)
        action = int(rng.choice(np.flatnonzero(always.action_masks())))
        _, r_always, t_always, tr_always, _ = always.step(action)
        _, r_later, t_later, tr_later, info = later.step(action)
        assert (t_always, tr_always) == (t_later, tr_later)
        if step < switch_at:
            assert info["shaping"] == 0.0
        else:
            assert r_later == pytest.approx(r_always, abs=1e-12)
            compared += 1
        if t_always or tr_always:
            always.reset()
            later.reset()
    assert compared >= 100
