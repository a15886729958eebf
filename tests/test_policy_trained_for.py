"""A model knows what it was trained for (agents/policies/model_file.py,
agents/policies/policy.py): the
sidecar's rules and ``trained_for``; another player count is refused naming both counts; other
rules, layout sizes or episode kinds warn once; ``pretrained`` picks the shipped model for the
game's count."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from test_policy_files import tiny_network, tiny_tensors

from agents.bots.base import make_agent
from agents.evaluation import evaluate
from agents.policies import policy
from agents.policies.model_file import (
    describe_training,
    read_sidecar,
    sidecar_trained_for,
    trained_for,
    training_mismatch,
    write_policy,
)
from agents.policies.policy import (
    PolicyAgent,
    TrainingMismatchWarning,
    load_policy_agent,
    pretrained_counts,
    pretrained_path,
)
from trash_env.rules import Rules
from trash_env.solo import TrashSoloEnv
from trash_env.view import PublicView


def write_model(path, rules: Rules, covered: dict | None = None, old: bool = False):
    """A tiny model file trained (as its sidecar says) under ``rules``; ``old``: a sidecar
    written before ``trained_for`` existed."""
    network = tiny_network(rules.num_players)
    info = {"num_players": rules.num_players, "rules": rules.to_dict(), "seed": 0, "timesteps": 0}
    if not old:
        info["trained_for"] = covered if covered is not None else trained_for(rules)
    write_policy(path, tiny_tensors(network), network, info)
    return str(path)


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    """Each test starts with no model having warned yet."""
    monkeypatch.setattr(policy, "_WARNED", set())


def play(agent, rules: Rules, episodes: int = 2, seed: int = 0) -> None:
    """The agent plays the learner's seat of the solo env under ``rules`` (it gets views)."""
    env = TrashSoloEnv(opponents=["greedy"], **rules.to_dict())
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed + episode)
        done = False
        while not done:
            action = agent.act(obs, env.action_masks(), PublicView(env.game, env.seat))
            obs, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated


def test_trained_for_is_the_episode_kind_and_every_layout_size_it_deals():
    assert trained_for(Rules()) == {"episode": "game", "layout_sizes": list(range(1, 11))}
    assert trained_for(Rules(target_size=3, start_size=8)) == {
        "episode": "game",
        "layout_sizes": [4, 5, 6, 7, 8],
    }
    assert trained_for(Rules(episode="round", start_size=6)) == {
        "episode": "round",
        "layout_sizes": [6],
    }


def test_train_writes_the_rules_and_what_training_covered(tmp_path):
    from agents.training.config import TrainConfig
    from agents.training.run import Run

    config = TrainConfig(
        rules={"num_players": 3, "episode": "round", "start_size": 7, "wilds": "kings"},
        out=tmp_path / "m.safetensors",
    )
    info = Run(config).info()
    assert (
        info["rules"]
        == Rules(num_players=3, episode="round", start_size=7, wilds="kings").to_dict()
    )
    assert info["trained_for"] == {"episode": "round", "layout_sizes": [7]}


def test_another_player_count_is_refused_naming_both(tmp_path):
    path = write_model(tmp_path / "m.safetensors", Rules(num_players=3))
    agent = load_policy_agent(path)
    with pytest.raises(ValueError, match="trained for 3 players, but this game has 2 players"):
        play(agent, Rules(num_players=2), episodes=1)
    with pytest.raises(ValueError, match="trained for 3 players, but 4 players"):
        load_policy_agent(path, num_players=4)
    # The evaluation seats it and fails on its first decision, with the same message.
    with pytest.raises(ValueError, match="trained for 3 players, but this game has 2"):
        evaluate([path, "greedy"], Rules(num_players=2), deals=1)


def test_the_batched_env_refuses_another_count_and_seats_pretrained_by_count(tmp_path):
    from trash_env.vector import TrashVecEnv

    path = write_model(tmp_path / "m.safetensors", Rules(num_players=3))
    with pytest.raises(ValueError, match="trained for 3 players, but this game has 2"):
        TrashVecEnv(2, [path], num_players=2)
    for n in pretrained_counts():
        vec = TrashVecEnv(2, ["pretrained"], num_players=n, seed=0)
        source = vec.core.policies[0].source
        assert source.num_players == n and source.path.endswith(f"pretrained_{n}p.safetensors")


@pytest.mark.parametrize(
    "trained, game, needle",
    [
        (Rules(), Rules(wilds="kings"), "wilds='kings' (trained: 'jacks')"),
        (Rules(), Rules(jokers=True), "jokers=True (trained: False)"),
        (Rules(episode="round"), Rules(), "a whole game (trained on one-round games only)"),
        (Rules(episode="round"), Rules(episode="round", start_size=5), "layout size(s) 5"),
        (Rules(start_size=6), Rules(), "layout size(s) 7,8,9,10"),
    ],
)
def test_other_rules_or_sizes_warn_once_naming_the_trained_configuration(
    tmp_path, trained, game, needle
):
    path = write_model(tmp_path / "m.safetensors", trained)
    agent = load_policy_agent(path)
    with pytest.warns(TrainingMismatchWarning) as caught:
        play(agent, game, episodes=2)
        play(load_policy_agent(path), game, episodes=1)  # another agent of the same model
    assert len(caught) == 1, [str(w.message) for w in caught]
    message = str(caught[0].message)
    assert needle in message
    assert f"was trained for {describe_training(read_sidecar(path))}" in message
    assert "2 players" in message


def test_a_second_mismatched_configuration_warns_again(tmp_path):
    path = write_model(tmp_path / "m.safetensors", Rules())
    agent = load_policy_agent(path)
    with pytest.warns(TrainingMismatchWarning) as caught:
        play(agent, Rules(wilds="kings"), episodes=1)
        play(agent, Rules(wilds="kings"), episodes=1)
        play(agent, Rules(wilds="faces"), episodes=1)
    assert [("kings" in str(w.message), "faces" in str(w.message)) for w in caught] == [
        (True, False),
        (False, True),
    ]


@pytest.mark.parametrize(
    "game",
    [
        Rules(),
        Rules(episode="round", start_size=1),
        Rules(episode="round", start_size=10),
        Rules(num_decks=1),
        Rules(max_turns=500),
    ],
)
def test_what_training_covered_plays_without_a_warning(tmp_path, game):
    path = write_model(tmp_path / "m.safetensors", Rules())
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrainingMismatchWarning)
        play(load_policy_agent(path), game, episodes=1)
    assert training_mismatch(read_sidecar(path), game) == []


def test_an_old_sidecar_is_read_as_trained_on_its_rules(tmp_path):
    path = write_model(tmp_path / "m.safetensors", Rules(episode="round"), old=True)
    sidecar = read_sidecar(path)
    assert "trained_for" not in sidecar
    assert sidecar_trained_for(sidecar) == {"episode": "round", "layout_sizes": [10]}
    assert training_mismatch(sidecar, Rules(episode="round")) == []
    with pytest.warns(TrainingMismatchWarning, match="one-round games at layout sizes 10"):
        play(load_policy_agent(path), Rules(), episodes=1)


@pytest.mark.parametrize(
    "bad",
    [
        "game",
        {"episode": "set", "layout_sizes": [1]},
        {"episode": "game", "layout_sizes": []},
        {"episode": "game", "layout_sizes": [0, 1]},
        {"episode": "game", "layout_sizes": [2, 2]},
        {"episode": "round", "layout_sizes": [True]},
        {"episode": "round"},
    ],
)
def test_a_bad_trained_for_is_refused(tmp_path, bad):
    with pytest.raises(ValueError, match="trained_for must be"):
        write_model(tmp_path / "m.safetensors", Rules(), covered=bad)


def test_pretrained_picks_the_model_for_the_games_player_count():
    counts = pretrained_counts()
    assert counts == [2, 3, 4]
    for n in counts:
        explicit = make_agent(f"pretrained_{n}p")
        assert explicit.num_players == n and explicit.name == f"pretrained_{n}p"
        sidecar = explicit.sidecar
        assert sidecar["rules"] == Rules(num_players=n).to_dict()
        assert sidecar["trained_for"] == {"episode": "game", "layout_sizes": list(range(1, 11))}
        assert load_policy_agent("pretrained", num_players=n).num_players == n
    agent = make_agent("pretrained")
    assert agent.num_players == 2  # until it meets a game
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrainingMismatchWarning)
        for n in (3, 4, 2):
            play(agent, Rules(num_players=n), episodes=1)
            assert agent.num_players == n
            assert agent.path.endswith(f"pretrained_{n}p.safetensors")
            assert np.array_equal(
                agent.layers[0][1][0], make_agent(f"pretrained_{n}p").layers[0][1][0]
            )


def test_pretrained_without_a_view_goes_by_the_observations_size():
    agent = make_agent("pretrained")
    for n in (3, 2, 4):
        env = TrashSoloEnv(num_players=n, opponents=["greedy"])
        obs, _ = env.reset(seed=n)
        agent.act(obs, env.action_masks(), None)
        assert agent.num_players == n
        assert np.array_equal(agent.logits(obs), make_agent(f"pretrained_{n}p").logits(obs))


def test_a_count_without_a_shipped_model_is_refused_naming_the_ones_there():
    with pytest.raises(
        ValueError,
        match=r"no pretrained model for 5 players.*2 \(pretrained_2p\)"
        r", 3 \(pretrained_3p\), 4 \(pretrained_4p\)",
    ):
        play(make_agent("pretrained"), Rules(num_players=5), episodes=1)
    with pytest.raises(ValueError, match="no pretrained model for 6 players"):
        load_policy_agent("pretrained_6p")
    with pytest.raises(
        ValueError, match="known agents: .*pretrained_2p, pretrained_3p, pretrained_4p"
    ):
        make_agent("pretrained_6p")
    with pytest.raises(ValueError, match="no pretrained model for 5 players"):
        load_policy_agent("pretrained", num_players=5)


def test_the_shipped_sidecars_say_what_they_were_trained_for():
    for n in pretrained_counts():
        beside = json.loads(pretrained_path(n).with_suffix(".json").read_text())
        assert beside == read_sidecar(pretrained_path(n))
        assert isinstance(make_agent(f"pretrained_{n}p"), PolicyAgent)
