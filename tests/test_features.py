"""The ``pairs`` input features (agents/policies/features.py): what each one means, recomputed from
the
game itself; NumPy and torch agree; models with them save, load and act as trained."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from helpers import game

from agents.policies.convert import save_sb3_policy
from agents.policies.features import (
    FEATURES,
    PairFeatures,
    extra_inputs,
    pair_indices,
    torch_extractor,
)
from agents.policies.policy import load_policy_agent
from trash_env.engine import DOWN, NATURAL
from trash_env.observation import encode_observation, observation_size
from trash_env.rules import Rules
from trash_env.solo import TrashSoloEnv


def test_a_discard_that_fits_an_open_slot_lights_its_feature():
    # Player 0 draws the stock's 5, places it in slot 5, picks up the 5 lying there and
    # discards it: player 1 is offered a 5 while its own slot 5 is still face-down.
    g = game([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], stock=[5])
    assert g.current == 1 and g.discard == [5] and g.held < 0
    slot5 = (5 - 1) * 4
    mine = PairFeatures(2)(encode_observation(g, 1))[observation_size(2) :]
    assert mine[slot5 + DOWN] == 1.0 and mine[:40].sum() == 1.0  # fits: slot 5 is open
    assert mine[40:].sum() == 0.0  # no card in hand, a 5 is not wild
    theirs = PairFeatures(2)(encode_observation(g, 0))[observation_size(2) :]
    assert theirs[slot5 + NATURAL] == 1.0 and theirs[slot5 + DOWN] == 0.0  # slot 5 is done


def test_numpy_and_torch_compute_the_same_features():
    import torch

    env = TrashSoloEnv(opponents=["random"], num_players=3)
    obs, _ = env.reset(seed=3)
    batch = [obs]
    for _ in range(200):
        legal = np.flatnonzero(env.action_masks())
        obs, _, term, trunc, _ = env.step(int(legal[0]))
        if term or trunc:
            obs, _ = env.reset()
        batch.append(obs)
    x = np.stack(batch)
    extractor = torch_extractor()(env.observation_space)
    assert extractor.features_dim == x.shape[1] + extra_inputs("pairs", 3)
    with torch.no_grad():
        got = extractor(torch.as_tensor(x)).numpy()
    assert np.array_equal(got, PairFeatures(3)(x))
    assert not list(extractor.state_dict())  # nothing of it is saved in a model file
    assert pickle.loads(pickle.dumps(torch_extractor())) is torch_extractor()


def test_a_model_with_pairs_saves_loads_and_acts_as_trained(tmp_path):
    import torch
    from sb3_contrib import MaskablePPO

    env = TrashSoloEnv()
    model = MaskablePPO(
        "MlpPolicy",
        env,
        seed=0,
        device="cpu",
        n_steps=64,
        policy_kwargs={"net_arch": [16], "features_extractor_class": torch_extractor()},
    )
    path = save_sb3_policy(
        model,
        tmp_path / "pairs.safetensors",
        {
            "num_players": 2,
            "rules": Rules().to_dict(),
            "algorithm": "MaskablePPO",
            "timesteps": 0,
            "seed": 0,
        },
    )
    sidecar = json.loads(path.with_suffix(".json").read_text())
    assert sidecar["network"]["features"] == "pairs"
    agent = load_policy_agent(str(path))
    obs, _ = env.reset(seed=0)
    for _ in range(50):
        with torch.no_grad():
            expected = (
                model.policy.get_distribution(torch.as_tensor(obs[None]))
                .distribution.logits[0]
                .numpy()
            )
        logits = agent.logits(obs)
        assert np.allclose(logits - logits.max(), expected - expected.max(), atol=1e-5)
        legal = np.flatnonzero(env.action_masks())
        obs, _, term, trunc, _ = env.step(int(legal[-1]))
        if term or trunc:
            obs, _ = env.reset()


def test_an_unknown_features_name_is_refused_naming_the_choices(tmp_path):
    from agents.policies.model_file import check_sidecar

    with pytest.raises(ValueError, match="features must be one of obs, pairs"):
        extra_inputs("bogus", 2)
    path = tmp_path / "m.safetensors"
    from sb3_contrib import MaskablePPO

    model = MaskablePPO(
        "MlpPolicy",
        TrashSoloEnv(),
        seed=0,
        device="cpu",
        n_steps=64,
        policy_kwargs={"net_arch": [8]},
    )
    save_sb3_policy(model, path, {"num_players": 2, "rules": Rules().to_dict()})
    sidecar = json.loads(path.with_suffix(".json").read_text())
    assert sidecar["network"]["features"] == "obs"
    sidecar["network"]["features"] = "bogus"
    with pytest.raises(ValueError, match=r"network features must be one of obs, pairs.*bogus"):
        check_sidecar(sidecar, "model m")
    assert FEATURES == ("obs", "pairs")


def test_the_index_tables_stay_inside_the_observation():
    for players in range(2, 7):
        left, right = pair_indices(players)
        assert left.max() < observation_size(players) and right.max() < observation_size(players)
        assert len(set(zip(left.tolist(), right.tolist(), strict=True))) == len(left)


def test_the_player_count_is_read_from_the_observation_size():
    from agents.policies.features import players_for
    from trash_env.observation import SEAT_FEATURES, players_of_observation

    for players in range(2, 7):
        assert players_of_observation(observation_size(players)) == players
        assert players_for(observation_size(players)) == players
    assert players_of_observation(observation_size(2) + 1) is None
    assert players_of_observation(observation_size(6) + SEAT_FEATURES) is None  # 7 players
    assert players_of_observation(observation_size(2) - SEAT_FEATURES) is None  # 1 player
    with pytest.raises(ValueError, match="no player count has an observation of 5 entries"):
        players_for(5)
