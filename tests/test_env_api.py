"""PettingZoo's own conformance tests (api_test, seed_test, render_test) for every variant."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import trash_env
from trash_env.pairs import observation_width

# Each entry: (id, options). Every Rules option that changes play, plus the env's own options.
VARIANTS = [
    ("2p", dict(num_players=2)),
    ("3p", dict(num_players=3)),
    ("4p", dict(num_players=4)),
    ("6p", dict(num_players=6)),
    ("wilds-kings", dict(num_players=2, wilds="kings")),
    ("wilds-faces", dict(num_players=3, wilds="faces")),
    ("wilds-none", dict(num_players=2, wilds="none")),
    ("jokers", dict(num_players=4, jokers=True)),
    ("no-wilds-jokers", dict(num_players=2, wilds="none", jokers=True)),
    ("start5", dict(num_players=2, start_size=5)),
    ("target", dict(num_players=3, target_size=8)),
    ("max-deals", dict(num_players=4, max_deals=2)),
    ("rotate", dict(num_players=3, first_player="rotate")),
    ("reshuffle-all", dict(num_players=2, reshuffle="all")),
    ("losers-reveal", dict(num_players=4, losers_reveal=True)),
    ("free-draws", dict(num_players=2, losers_reveal=True, free_draws=3)),
    ("call-trash", dict(num_players=2, call_trash=True)),
    ("episode-round", dict(num_players=6, episode="round")),
    ("round-rewards", dict(num_players=3, round_rewards=True)),
    ("round-rewards-6p", dict(num_players=6, round_rewards=True, losers_reveal=True)),
    ("one-deck-3p", dict(num_players=3, num_decks=1, start_size=5)),
    ("kids-game", dict(num_players=4, start_size=5, target_size=3, call_trash=True)),
    ("pairs", dict(num_players=2, observation="pairs")),
    ("pairs-5p", dict(num_players=5, observation="pairs", wilds="faces", jokers=True)),
]
IDS = [name for name, _ in VARIANTS]
OPTIONS = [opts for _, opts in VARIANTS]


@pytest.fixture(autouse=True)
def _quiet():
    # api_test warns about dict observations and all-zero masks of finished agents: expected.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("options", OPTIONS, ids=IDS)
def test_api(options):
    api_test(trash_env.env(**options), num_cycles=300)


@pytest.mark.parametrize("options", OPTIONS, ids=IDS)
def test_api_raw(options):
    api_test(trash_env.raw_env(**options), num_cycles=100)


@pytest.mark.slow
@pytest.mark.parametrize("options", OPTIONS, ids=IDS)
def test_seed(options):
    seed_test(lambda: trash_env.env(**options), num_cycles=300)


@pytest.mark.slow
@pytest.mark.parametrize("options", OPTIONS, ids=IDS)
def test_render(options, capsys):
    render_test(lambda render_mode: trash_env.env(render_mode=render_mode, **options))
    assert "player_0" in capsys.readouterr().out  # "human" printed the table


@pytest.mark.parametrize("options", OPTIONS, ids=IDS)
def test_full_games_to_the_end(options):
    """Random legal play to the game's end (or max_turns): sizes fixed, masks right, every
    step's rewards sum to zero, placings reported to every agent."""
    e = trash_env.env(**options)
    n = e.unwrapped.rules.num_players
    rng = np.random.default_rng(7)
    for game in range(2):
        e.reset(seed=game)
        totals = dict.fromkeys(e.possible_agents, 0.0)
        finished = False
        while e.agents:
            agent = e.agent_selection
            obs, reward, term, trunc, info = e.last()
            assert obs["observation"].shape == (observation_width(n, e.unwrapped.observation),)
            assert obs["observation"].dtype == np.float32
            if term or trunc:
                finished = True
                assert "placing" in info and "winners" in info
                e.step(None)
                continue
            mask = obs["action_mask"]
            assert mask.any(), "the acting agent's mask is empty"
            for other in e.agents:
                if other != agent:
                    assert not e.observe(other)["action_mask"].any()
            e.step(int(rng.choice(np.flatnonzero(mask))))
            assert abs(sum(e.rewards.values())) < 1e-9
            for a, r in e.rewards.items():
                totals[a] += r
        assert finished
        assert abs(sum(totals.values())) < 1e-9


def test_make_and_registration():
    import pettingzoo

    e = pettingzoo.make("aec", "trash/trash-v0", num_players=4, wilds="kings")
    e.reset(seed=0)
    assert e.possible_agents == [f"player_{p}" for p in range(4)]
    assert e.unwrapped.rules.wilds == "kings"
    assert e.unwrapped.metadata["name"] == "trash_v0"
    assert e.unwrapped.metadata["is_parallelizable"] is False
    assert set(e.unwrapped.metadata["render_modes"]) == {"ansi", "human", "rgb_array"}
    assert trash_env.ENV_ID in pettingzoo.aec_registry
