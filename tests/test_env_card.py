"""The env card at the top of trash_env/env.py (PettingZoo's table) says what the env does:
its shapes for every player count, its agents, spaces, arguments and metadata."""

from __future__ import annotations

import importlib

import pytest

from trash_env.engine import ACTION_NAMES, NUM_ACTIONS

module = importlib.import_module("trash_env.env")
CARD = module.__doc__.split("\n\n")[1]


def test_the_card_names_pettingzoos_rows():
    for row in (
        "Import",
        "Actions",
        "Parallel API",
        "Manual Control",
        "Agents",
        "Action Shape",
        "Action Values",
        "Observation Shape",
        "Observation Values",
        "Arguments",
        "Version history",
    ):
        assert f"\n{row} " in "\n" + CARD, row


@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("observation", ["plain", "pairs"])
def test_the_cards_shapes_and_values_hold(n, observation):
    env = module.env(num_players=n, observation=observation)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    width = (153 if observation == "plain" else 261) + 44 * (n - 2)
    assert "153 + 44 (n - 2)" in CARD and "108 more (261 for two players)" in CARD
    assert obs["observation"].shape == (width,) and obs["observation"].dtype.name == "float32"
    assert obs["action_mask"].shape == (NUM_ACTIONS,) and obs["action_mask"].dtype.name == "int8"
    assert "467 + 194 (n - 2)" in CARD and env.state().shape == (467 + 194 * (n - 2),)
    assert env.possible_agents == [f"player_{p}" for p in range(n)]
    assert env.action_space(env.agent_selection).n == NUM_ACTIONS == 13
    assert env.unwrapped.metadata["is_parallelizable"] is False
    assert "``trash_v0``" in CARD and env.unwrapped.metadata["name"] == "trash_v0"


def test_the_cards_action_values_are_the_engines():
    assert ACTION_NAMES[10:13] == ("draw from stock", "take discard top", "decline swap")
    assert "10 draw from the stock" in CARD and "12 decline the swap" in CARD
    assert "every field of :class:`trash_env.rules.Rules`" in CARD
    assert set(module.ENV_OPTIONS) == {"render_mode", "round_rewards", "observation"}
    assert all(f"``{name}``" in CARD for name in module.ENV_OPTIONS)
