"""The ``pairs`` and ``fits`` input features (agents/policies/features.py): what each one means,
recomputed from the game itself; NumPy and torch agree; models with them save, load and act as
trained."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from helpers import game

from agents.bots.heuristics import fits
from agents.policies.convert import save_sb3_policy
from agents.policies.features import (
    FEATURES,
    FIT_FEATURES,
    PairFeatures,
    extra_inputs,
    pair_indices,
    torch_extractor,
)
from agents.policies.policy import load_policy_agent
from trash_env.engine import DOWN, NATURAL, Decision, Game
from trash_env.observation import encode_observation, observation_size
from trash_env.rules import Rules
from trash_env.solo import TrashSoloEnv
from trash_env.view import PublicView


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
    # fits: the offered 5 fits player 1's layout, not player 0's; nobody holds a card
    fits_1 = PairFeatures(2, fits=True)(encode_observation(g, 1))[-FIT_FEATURES:]
    fits_0 = PairFeatures(2, fits=True)(encode_observation(g, 0))[-FIT_FEATURES:]
    assert fits_1.tolist() == [1.0, 0.0] and fits_0.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("features", ["pairs", "fits"])
def test_numpy_and_torch_compute_the_same_features(features):
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
    extractor = torch_extractor()(env.observation_space, features=features)
    assert extractor.features_dim == x.shape[1] + extra_inputs(features, 3)
    with torch.no_grad():
        got = extractor(torch.as_tensor(x)).numpy()
    assert np.array_equal(got, PairFeatures(3, fits=features == "fits")(x))
    assert not list(extractor.state_dict())  # nothing of it is saved in a model file
    assert pickle.loads(pickle.dumps(torch_extractor())) is torch_extractor()


@pytest.mark.parametrize("features", ["pairs", "fits"])
def test_a_model_with_features_saves_loads_and_acts_as_trained(tmp_path, features):
    import torch
    from sb3_contrib import MaskablePPO

    env = TrashSoloEnv()
    model = MaskablePPO(
        "MlpPolicy",
        env,
        seed=0,
        device="cpu",
        n_steps=64,
        policy_kwargs={
            "net_arch": [16],
            "features_extractor_class": torch_extractor(),
            "features_extractor_kwargs": {"features": features},
        },
    )
    path = save_sb3_policy(
        model,
        tmp_path / f"{features}.safetensors",
        {
            "num_players": 2,
            "rules": Rules().to_dict(),
            "algorithm": "MaskablePPO",
            "timesteps": 0,
            "seed": 0,
        },
    )
    sidecar = json.loads(path.with_suffix(".json").read_text())
    assert sidecar["network"]["features"] == features
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

    with pytest.raises(ValueError, match="features must be one of obs, pairs, fits"):
        extra_inputs("bogus", 2)
    with pytest.raises(ValueError, match="features must be pairs or fits, got 'obs'"):
        torch_extractor()(TrashSoloEnv().observation_space, features="obs")
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
    with pytest.raises(
        ValueError, match=r"network features must be one of obs, pairs, fits.*bogus"
    ):
        check_sidecar(sidecar, "model m")
    assert FEATURES == ("obs", "pairs", "fits")


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"num_players": 3, "wilds": "kings"},
        {"num_players": 4, "wilds": "faces", "jokers": True},
        {"num_players": 6, "wilds": "none", "start_size": 5},
        {"num_players": 3, "jokers": True, "num_decks": 2, "start_size": 8},
    ],
    ids=["standard", "3p-kings", "4p-faces-jokers", "6p-nowilds-5", "3p-jokers-2decks-8"],
)
def test_the_fit_entries_are_greedys_fit_test_on_every_decision(options):
    """The two ``fits`` entries equal agents.bots.heuristics.fits (greedy's rule) for the
    discard top and the card in hand, for the seat to act, on every decision of whole games
    with random moves: shrunk layouts, wild-covered slots, wild cards and the variants."""
    rules = Rules.from_options(**options)
    n = rules.num_players
    features = PairFeatures(n, fits=True)
    seen = {(card, fit): 0 for card in ("discard", "held") for fit in (0.0, 1.0)}
    wild_fits = natural_miss_after_shrink = 0
    rng = np.random.default_rng(7)
    for seed in range(6):
        g = Game(rules, seed=seed)
        while not g.done:
            p = g.current
            view = PublicView(g, p)
            if g.decision is not Decision.CALL:
                got = features(encode_observation(g, p))[-FIT_FEATURES:]
                state, size, wild = view.slot_states(p), view.sizes[p], view.wild
                want = [float(fits(view.discard_top, state, size, wild))]
                want.append(float(fits(view.held, state, size, wild)))
                assert got.tolist() == want, (seed, g.decision, view.discard_top, view.held)
                seen["discard", want[0]] += 1
                seen["held", want[1]] += 1
                top = view.discard_top
                wild_fits += sum(
                    card >= 0 and wild[card] and fit == 1.0
                    for card, fit in zip((top, view.held), want, strict=True)
                )
                natural_miss_after_shrink += 0 < size < top <= 10 and not wild[top]
            g.step(int(rng.choice(g.legal_actions())))
    if any(rules.wild_table()):
        assert min(seen.values()) > 0 and wild_fits > 0, seen  # both answers for both cards
    else:  # without wilds no decision is taken with a card in hand
        assert seen["discard", 0.0] > 0 and seen["discard", 1.0] > 0 and not seen["held", 1.0]
    assert natural_miss_after_shrink > 0


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
