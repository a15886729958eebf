"""Evaluation on the batched engine (agents/evaluation/batched.py) against the reference path:
the same seed and agents give the same result for every game, over every rules family."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

pytest.importorskip("numba", reason="the batched engine needs numba (the vector extra)")

from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from agents.bots.base import Agent, make_agent, register_agent  # noqa: E402
from agents.evaluation import evaluate  # noqa: E402
from agents.evaluation.batched import engine_for  # noqa: E402
from agents.policies.policy import (  # noqa: E402
    PolicyAgent,
    TrainingMismatchWarning,
    pretrained_path,
)
from trash_env.rules import Rules  # noqa: E402

BOTS = ["greedy", "random", "counting:discard_weight=0.25"]

# The rules families of tests/test_vector_differential.py (together every Rules option), with
# the agents each plays: the bots everywhere, a model file where one exists for the count.
FAMILIES = [
    ({}, [str(pretrained_path(2)), *BOTS]),
    ({"num_players": 3}, ["pretrained", *BOTS]),
    ({"num_players": 4, "wilds": "kings", "jokers": True}, ["pretrained_4p", "greedy", "random"]),
    ({"num_players": 6, "wilds": "faces", "jokers": True, "reshuffle": "all"}, BOTS),
    ({"wilds": "none", "target_size": 5, "max_deals": 3}, ["pretrained", *BOTS]),
    ({"losers_reveal": True, "free_draws": 3, "call_trash": True}, ["pretrained", *BOTS]),
    (
        {"num_players": 3, "call_trash": True, "first_player": "rotate", "episode": "round"},
        ["pretrained_3p", "random", "counting"],
    ),
    ({"start_size": 3, "jokers": True, "wilds": "faces", "max_turns": 8}, BOTS),
    ({"num_players": 5, "num_decks": 1, "start_size": 3, "target_size": 1}, BOTS),
    ({"start_size": 1, "reshuffle": "all", "call_trash": True}, ["pretrained", *BOTS]),
]


def both(specs: list[str], rules: Rules, **options: object) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingMismatchWarning)  # models off their rules
        reference = evaluate(specs, rules, keep_results=True, engine="reference", **options)
        batched = evaluate(specs, rules, keep_results=True, engine="batched", **options)
    return reference, batched


@pytest.mark.slow
@pytest.mark.parametrize(
    "family",
    range(len(FAMILIES)),
    ids=[",".join(f"{k}={v}" for k, v in o.items()) or "standard" for o, _ in FAMILIES],
)
def test_every_game_has_the_reference_result(family: int) -> None:
    options, specs = FAMILIES[family]
    rules = Rules(**options)
    deals = 12 if rules.num_players < 5 else 4
    reference, batched = both(specs, rules, deals=deals, seed=family)
    assert batched.engine.startswith("batched") and reference.engine.startswith("reference")
    assert len(reference.results) == len(batched.results) > 0
    for ref, got in zip(reference.results, batched.results, strict=True):
        assert got == ref  # deal, line-up, seating, seats, winners, placings, returns, ...
    assert batched.to_json() | {"engine": ""} == reference.to_json() | {"engine": ""}
    if rules.max_turns < 100:
        assert any(r.truncated for r in batched.results)  # truncation is covered too


def test_permutations_seatings_and_many_batches_agree() -> None:
    """Several ranges of deals (chunk), every seat permutation, four seats."""
    rules = Rules(num_players=4, call_trash=True)
    reference, batched = both(
        ["greedy", "random"], rules, deals=9, seed=3, seatings="permutations", chunk=2
    )
    assert [r.deal for r in batched.results] == [r.deal for r in reference.results]
    assert batched.results == reference.results


def test_saved_games_are_the_same_files(tmp_path: Path) -> None:
    rules = Rules(call_trash=True, losers_reveal=True)
    both(["pretrained", "random"], rules, deals=5, seed=1, save_games=tmp_path / "ref")
    reference = sorted((tmp_path / "ref").glob("*.json"))
    specs = ["pretrained", "random"]
    report = evaluate(specs, rules, deals=5, seed=1, save_games=tmp_path / "bat", engine="batched")
    assert report.engine.startswith("batched")
    batched = sorted((tmp_path / "bat").glob("*.json"))
    assert [p.name for p in batched] == [p.name for p in reference] and len(batched) == 10
    for a, b in zip(reference, batched, strict=True):
        left, right = json.loads(a.read_text()), json.loads(b.read_text())
        left.pop("written")
        right.pop("written")
        assert left == right


def test_agents_without_a_batched_form_keep_the_reference_path() -> None:
    rules = Rules()
    report = evaluate(["greedy", "search:rollouts=2"], rules, deals=1)
    assert report.engine.startswith("reference") and "'search:rollouts=2'" in report.engine
    assert "engine: reference" in report.table()
    assert report.to_json()["engine"] == report.engine
    sampling = engine_for(["pretrained:deterministic=false", "greedy"], rules)
    assert sampling.name == "reference" and "samples" in sampling.why
    assert engine_for(["greedy", "random"], rules).name == "batched"
    assert engine_for(["greedy"], rules, backend="ray").name == "reference"
    assert engine_for(["greedy"], rules, "reference").why == "asked for"


def test_a_users_agent_and_a_subclass_of_a_bot_play_on_the_reference_engine() -> None:
    from agents.bots.heuristics import GreedyAgent

    class Stubborn(GreedyAgent):  # inherits batch_kernel = "greedy" but plays otherwise
        name = "stubborn"

        def wild_slot(self, view):  # type: ignore[no-untyped-def]
            return min(view.legal_actions())

    class First(Agent):
        name = "first"

        def act(self, observation, action_mask, view):  # type: ignore[no-untyped-def]
            return int(action_mask.argmax())

    class Contrary(PolicyAgent):  # a model that picks its least likely legal action
        def act(self, observation, action_mask, view):  # type: ignore[no-untyped-def]
            logits = np.where(action_mask.astype(bool), self.logits(observation), np.inf)
            return int(logits.argmin())

    def contrary(seed=None):  # type: ignore[no-untyped-def]
        source: Any = make_agent("pretrained")
        return Contrary(source.layers, source.sidecar, seed=seed)

    register_agent("stubborn_test", Stubborn)
    register_agent("first_test", First)
    register_agent("contrary_test", contrary)
    for spec in ("stubborn_test", "first_test", "contrary_test"):
        chosen = engine_for(["greedy", spec], Rules())
        assert chosen.name == "reference" and spec in chosen.why
        with pytest.raises(ValueError, match=f"engine 'batched': '{spec}' has no batched form"):
            evaluate(["greedy", spec], Rules(), deals=1, engine="batched")


def test_bad_engine_options_are_named() -> None:
    with pytest.raises(ValueError, match="engine must be one of 'auto', 'batched', 'reference'"):
        evaluate(["greedy", "random"], deals=1, engine="fast")
    with pytest.raises(ValueError, match="backend 'ray'"):
        evaluate(["greedy", "random"], deals=1, engine="batched", backend="ray")


def test_a_policy_is_one_forward_pass_per_round_of_decisions(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The batched path runs a model on many games at once, not one at a time, and its
    compiled forward pass gives PolicyAgent.forward's logits."""
    import numpy as np

    from agents.evaluation import _forward

    rows: list[int] = []
    forward = _forward.forward

    def counting_forward(layers, x):  # type: ignore[no-untyped-def]
        rows.append(len(x))
        return forward(layers, x)

    monkeypatch.setattr(_forward, "forward", counting_forward)
    report = evaluate(["pretrained", "greedy"], Rules(), deals=200, engine="batched")
    assert report.games == 400
    assert max(rows) > 100  # hundreds of games decided by one call
    assert sum(rows) / len(rows) > 20
    from agents.bots.base import make_agent

    for spec in ("pretrained", "pretrained_3p"):
        agent = make_agent(spec)
        x = (np.random.default_rng(0).random((300, agent.input_size)) < 0.3).astype(np.float32)
        expected = agent.forward(x)
        got = forward(agent.layers, x)
        assert got.dtype == expected.dtype == np.float64
        assert np.allclose(got, expected, rtol=1e-5, atol=1e-5)
        assert (got.argmax(axis=1) == expected.argmax(axis=1)).mean() > 0.99


def test_training_evaluations_play_on_the_batched_engine(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """train.py's periodic and final evaluations (evaluation_columns, evaluate_vs with
    --workers) and the examples' EvaluationCurve evaluate model files on the batched engine;
    a callable policy stays on the reference engine."""
    from agents.evaluation import batched
    from agents.training.eval_curve import EvaluationCurve, evaluate_vs, evaluation_columns

    played: list[int] = []
    play = batched.BatchedPlayer.play

    def counted(self, first, stop):  # type: ignore[no-untyped-def]
        played.append(stop - first)
        return play(self, first, stop)

    monkeypatch.setattr(batched.BatchedPlayer, "play", counted)
    monkeypatch.setattr(batched, "SMALL_GAMES", 1)  # batched even for these few games
    model = str(pretrained_path(2))
    assert evaluate_vs(model, "greedy", deals=3, seed=1, workers=2)["games"] == 6
    assert evaluation_columns(model, deals=2, seed=1)["random_games"] == 4
    curve = EvaluationCurve(tmp_path / "curve.csv", deals=2)
    assert curve.record(0, model)["eval_games"] == 4
    assert sum(played) == 3 + 2 + 2 + 2 + 2
    played.clear()
    curve.record(1, lambda observation, mask: int(mask.argmax()))
    assert played == []  # a callable has no batched form


def test_a_rows_logits_do_not_depend_on_the_batch() -> None:
    """Each row's logits are the same whatever the batch holds and however large it is (the
    parallel and serial forms of the first layer, one dense form): a game's actions cannot
    depend on the other games, the chunk size or the number of games."""
    from agents.bots.base import make_agent
    from agents.evaluation._forward import forward
    from trash_env.vector._kernels import PARALLEL_MIN_GAMES

    agent = make_agent("pretrained")
    rng = np.random.default_rng(5)
    x = (rng.random((PARALLEL_MIN_GAMES * 2, agent.input_size)) < 0.2).astype(np.float32)
    whole = forward(agent.layers, x)
    assert np.array_equal(forward(agent.layers, x[:7]), whole[:7])
    assert np.array_equal(forward(agent.layers, x[::-1][:300]), whole[::-1][:300])
    assert np.array_equal(forward(agent.layers, x[3:4]), whole[3:4])


@pytest.mark.slow
@pytest.mark.parametrize(
    "family",
    range(len(FAMILIES)),
    ids=[",".join(f"{k}={v}" for k, v in o.items()) or "standard" for o, _ in FAMILIES],
)
def test_worker_processes_play_the_same_games(family: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """workers 2 and 3 split the deals over processes, each playing batched blocks of them:
    every game, figure and report is the one-process batched path's."""
    from agents.evaluation import batched, pool

    options, specs = FAMILIES[family]
    rules = Rules(**options)
    deals = 12 if rules.num_players < 5 else 4
    monkeypatch.setattr(batched, "SPLIT_MIN_GAMES", 1)  # split even these few games
    monkeypatch.setattr(batched, "SMALL_GAMES", 1)  # and batched
    pools: list[tuple[int, str]] = []
    stream = pool.local_stream

    def counted(plan, ranges, workers, engine="reference"):  # type: ignore[no-untyped-def]
        ranges = list(ranges)
        # contiguous blocks of deals, at most one per worker
        assert [r[0] for r in ranges[1:]] == [r[1] for r in ranges[:-1]]
        assert ranges[0][0] == 0 and ranges[-1][1] == deals and 1 < len(ranges) <= workers
        pools.append((workers, engine))
        return stream(plan, ranges, workers, engine)

    monkeypatch.setattr(pool, "local_stream", counted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingMismatchWarning)
        one = evaluate(specs, rules, deals=deals, seed=family, keep_results=True)
        split = [
            evaluate(specs, rules, deals=deals, seed=family, keep_results=True, workers=w)
            for w in (2, 3)
        ]
    assert pools == [(2, "batched"), (3, "batched")]
    for report in split:
        assert report.engine == one.engine and one.engine.startswith("batched")
        assert report.results == one.results
        assert report.to_json() == one.to_json()
        assert report.table() == one.table()


@pytest.mark.slow
def test_worker_processes_save_the_same_games(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from agents.evaluation import batched

    monkeypatch.setattr(batched, "SPLIT_MIN_GAMES", 1)
    rules = Rules(call_trash=True, losers_reveal=True)
    specs = ["pretrained", "random"]
    reports = {
        w: evaluate(specs, rules, deals=5, seed=1, workers=w, save_games=tmp_path / str(w))
        for w in (1, 2)
    }
    saved = {w: sorted((tmp_path / str(w)).glob("*.json")) for w in reports}
    assert [p.name for p in saved[2]] == [p.name for p in saved[1]] and len(saved[1]) == 10
    for a, b in zip(saved[1], saved[2], strict=True):
        left, right = json.loads(a.read_text()), json.loads(b.read_text())
        left.pop("written")
        right.pop("written")
        assert left == right
    left, right = reports[1].to_json(), reports[2].to_json()
    assert left["games"]["index"] == right["games"]["index"] and len(left["games"]["index"]) == 10


def test_few_games_stay_in_this_process() -> None:
    """Below SPLIT_MIN_GAMES games per worker a worker's start costs more than it saves."""
    from agents.evaluation.batched import SPLIT_MIN_GAMES, batch_chunk, split_workers

    assert split_workers(2 * SPLIT_MIN_GAMES - 1, 2) == 1
    assert split_workers(2 * SPLIT_MIN_GAMES, 2) == 2
    assert split_workers(10**6, 1) == 1
    assert batch_chunk(2, deals=5000, workers=2) == 2500  # one contiguous block each
    assert batch_chunk(2, deals=50_000, workers=2) == 4096  # batches of about 8,192 games
