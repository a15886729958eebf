"""The envs' ``observation="fits"`` (trash_env/pairs.py): the plain observation, the 108
``pairs`` products, then "the discard top fits my layout" and "the card in hand fits my layout".
On every decision of whole games it equals the agents' ``fits`` features of the plain vector
(one definition for both), and on stacked decks each fit entry reads 1 or 0 as greedy's rule
says, the wild part included."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import J, game

import trash_env.solo as solo_module
from agents.policies.features import PairFeatures, extra_inputs
from trash_env.env import raw_env
from trash_env.observation import encode_observation, observation_size
from trash_env.pairs import (
    FIT_FEATURES,
    OBSERVATIONS,
    PAIR_FEATURES,
    PAIRS_ONLY,
    add_fits,
    check_observation,
    observation_width,
)
from trash_env.solo import TrashSoloEnv

GAMES = [
    dict(num_players=2),
    dict(num_players=6, wilds="kings", jokers=True),
]


def test_fits_is_an_option_and_its_width_follows():
    assert OBSERVATIONS == ("plain", "pairs", "fits")
    for n in range(2, 7):
        assert observation_width(n, "fits") == observation_size(n) + PAIR_FEATURES + FIT_FEATURES
        assert extra_inputs("fits", n) == PAIR_FEATURES + FIT_FEATURES  # the network agrees
    assert TrashSoloEnv(num_players=6, observation="fits").observation_space.shape == (439,)
    space = raw_env(num_players=3, observation="fits").observation_space("player_0")
    assert space["observation"].shape == (observation_width(3, "fits"),)


@pytest.mark.parametrize("bad", ["Fits", "fit", "", None])
def test_a_bad_observation_names_the_three_forms(bad):
    with pytest.raises(ValueError, match="observation must be one of 'plain', 'pairs', 'fits'"):
        TrashSoloEnv(observation=bad)


def test_the_jax_and_openspiel_forms_stay_plain_and_pairs():
    """They do not append the fit entries, so they refuse ``fits`` by name."""
    assert check_observation("pairs", PAIRS_ONLY) == "pairs"
    with pytest.raises(ValueError, match="observation must be one of 'plain', 'pairs', got 'fits'"):
        check_observation("fits", PAIRS_ONLY)


def matches_the_agents_features(vector: np.ndarray, plain: np.ndarray, n: int) -> None:
    assert vector.dtype == np.float32 and vector.shape == (observation_width(n, "fits"),)
    assert np.array_equal(vector[: observation_size(n)], plain)
    assert np.array_equal(vector, PairFeatures(n, fits=True)(plain))


@pytest.mark.parametrize("options", GAMES, ids=lambda o: f"{o['num_players']}p")
def test_aec_env_fits_equal_the_agents_features_on_every_decision(options):
    """Every seat's vector, at every decision of whole games with random moves."""
    e = raw_env(observation="fits", **options)
    n = options["num_players"]
    rng = np.random.default_rng(n)
    decisions, lit = 0, np.zeros(FIT_FEATURES)
    for seed in range(2):
        e.reset(seed=seed)
        while e.agents:
            for p, agent in enumerate(e.possible_agents):
                vector = e.observe(agent)["observation"]
                matches_the_agents_features(vector, encode_observation(e.game, p), n)
                lit += vector[-FIT_FEATURES:]
            agent = e.agent_selection
            if e.terminations[agent] or e.truncations[agent]:
                e.step(None)
                continue
            mask = e.observe(agent)["action_mask"]
            e.step(int(rng.choice(np.flatnonzero(mask))))
            decisions += 1
    assert decisions > 100 and lit.min() > 0  # both entries lit somewhere


@pytest.mark.parametrize("options", GAMES, ids=lambda o: f"{o['num_players']}p")
def test_solo_env_fits_equal_the_agents_features_on_every_decision(options):
    env = TrashSoloEnv(opponents=["greedy"], observation="fits", **options)
    n = options["num_players"]
    rng = np.random.default_rng(3)
    obs, _ = env.reset(seed=4)
    episodes = 0
    while episodes < 3:
        assert env.observation_space.contains(obs)
        matches_the_agents_features(obs, encode_observation(env.game, env.seat), n)
        obs, _, terminated, truncated, _ = env.step(
            int(rng.choice(np.flatnonzero(env.action_masks())))
        )
        if terminated or truncated:
            episodes += 1
            obs, _ = env.reset()


@pytest.mark.parametrize("options", GAMES, ids=lambda o: f"{o['num_players']}p")
def test_batched_env_fits_equal_the_agents_features_on_every_decision(options):
    """The batched env with ``fits`` plays the same games as with ``plain`` (same seed, same
    moves); its vectors are the plain ones with the agents' features appended, the finished
    games' last vectors too."""
    pytest.importorskip("numba", reason="the batched envs need numba (the vector extra)")
    from trash_env.vector.env import TrashVectorEnv

    n = options["num_players"]
    envs = [
        TrashVectorEnv(3, opponents=["greedy"], seed=6, observation=form, **options)
        for form in ("fits", "plain")
    ]
    (fits, info), (plain, _) = (env.reset(seed=6) for env in envs)
    rng = np.random.default_rng(6)
    finished = 0
    while finished < 6:
        for row, plain_row in zip(fits, plain, strict=True):
            matches_the_agents_features(row, plain_row, n)
        masks = info["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        (fits, _, term, trunc, info), (plain, _, _, _, plain_info) = (
            env.step(actions) for env in envs
        )
        ended = term | trunc
        for k in np.flatnonzero(ended):
            matches_the_agents_features(info["final_obs"][k], plain_info["final_obs"][k], n)
        finished += int(ended.sum())


def solo_observation(monkeypatch, stacked, seat: int) -> np.ndarray:
    """The solo env's first ``fits`` observation for ``seat`` when it deals ``stacked``."""
    monkeypatch.setattr(solo_module, "Game", lambda rules, seed: stacked)
    env = TrashSoloEnv(
        opponents=["greedy"], seat=seat, observation="fits", **stacked.rules.to_dict()
    )
    obs, _ = env.reset(seed=0)
    assert env.game is stacked and env.seat == seat
    return obs


def test_a_discard_top_that_fits_lights_the_first_entry(monkeypatch):
    # Player 0 draws the stock's 5, places it in slot 5, picks up the 5 lying there and
    # discards it: player 1, slot 5 face-down, is offered a 5 and holds nothing.
    stacked = game([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], stock=[5])
    assert stacked.current == 1 and stacked.discard == [5] and stacked.held < 0
    obs = solo_observation(monkeypatch, stacked, seat=1)
    assert obs[-FIT_FEATURES:].tolist() == [1.0, 0.0]
    # the same deal from player 0's side, whose slot 5 is now filled: nothing fits
    assert add_fits(encode_observation(stacked, 0), 2)[-FIT_FEATURES:].tolist() == [0.0, 0.0]


def test_a_discard_top_that_does_not_fit_reads_zero(monkeypatch):
    # No card is wild: player 0 cannot use the Jack it draws and discards it; player 1 is
    # offered a Jack, which fits no slot.
    stacked = game([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], stock=[J], wilds="none")
    assert stacked.current == 1 and stacked.discard == [J]
    obs = solo_observation(monkeypatch, stacked, seat=1)
    assert obs[-FIT_FEATURES:].tolist() == [0.0, 0.0]


def test_a_wild_card_in_hand_fits_while_a_slot_is_face_down(monkeypatch):
    # Jacks are wild: player 0 draws the Jack and holds it, every slot face-down. Only the wild
    # part of the rule makes it fit (a Jack has no slot of its own).
    stacked = game([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], stock=[J], wilds="jacks")
    assert stacked.current == 0 and stacked.held == J and stacked.discard == []
    obs = solo_observation(monkeypatch, stacked, seat=0)
    assert obs[-FIT_FEATURES:].tolist() == [0.0, 1.0]
