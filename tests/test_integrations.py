"""trash_env.integrations: the transitions helper (core install) and the lazy, explained imports
of the per-library glue."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

import trash_env
from trash_env.integrations import TransitionBuilder, play_game, require

pytestmark = pytest.mark.slow  # the second tier: `pytest -m slow`


def _policy(seed: int):
    rng = np.random.default_rng(seed)

    def act(agent, obs):
        legal = np.flatnonzero(obs["action_mask"])
        return int(rng.choice(legal)), (agent, int(legal.size))

    return act


def _play_logged(env, seed):
    """Play a game with the transitions helper and, beside it, log per agent every reward the
    env pays (``env.rewards`` after every step) and every decision taken."""
    paid: dict[str, float] = dict.fromkeys(env.possible_agents, 0.0)
    decisions: dict[str, list[int]] = {a: [] for a in env.possible_agents}
    act = _policy(seed)

    def policy(agent, obs):
        action, extra = act(agent, obs)
        decisions[agent].append(action)
        return action, extra

    inner_step = env.step

    def step(action):
        inner_step(action)
        for agent, reward in env.rewards.items():
            paid[agent] += reward

    env.step = step
    transitions = list(play_game(env, policy, seed=seed))
    return transitions, paid, decisions


@pytest.mark.parametrize(
    "options",
    [{}, {"num_players": 3}, {"num_players": 4, "round_rewards": True}, {"round_rewards": True}],
)
def test_every_decision_one_transition_and_every_reward_credited(options):
    for seed in range(4):
        env = trash_env.env(**options)
        transitions, paid, decisions = _play_logged(env, seed)
        for agent in env.possible_agents:
            mine = [t for t in transitions if t.agent == agent]
            # one transition per decision, in order, with the action taken
            assert [t.action for t in mine] == decisions[agent]
            # only the last one is done; each next_observation is the next decision's observation
            assert [t.done for t in mine] == [False] * (len(mine) - 1) + [True]
            for before, after in zip(mine, mine[1:], strict=False):
                assert after.observation is before.next_observation
            # every reward the env paid this agent is in exactly one of its transitions
            assert sum(t.reward for t in mine) == pytest.approx(paid[agent])
            assert mine[-1].extra[0] == agent


def test_final_reward_goes_to_every_agent_and_zero_sum():
    env = trash_env.env(num_players=3)
    transitions, paid, _ = _play_logged(env, 11)
    last = {t.agent: t for t in transitions if t.done}
    assert set(last) == set(env.possible_agents)
    assert sum(t.reward for t in last.values()) == pytest.approx(0.0)
    assert any(t.reward > 0 for t in last.values())  # a winner was paid on its dead step
    assert all(t.terminated or t.truncated for t in last.values())
    # without round rewards nothing is paid before the end
    assert all(t.reward == 0 for t in transitions if not t.done)
    # the end-of-game info rides on the last transition
    assert all(t.info for t in last.values())


def test_multi_decision_turns_credit_zero_until_the_next_own_decision():
    """A turn is several decisions by one agent: each closes at the next, reward 0."""
    env = trash_env.env()
    transitions = list(play_game(env, _policy(3), seed=3))
    order = [t.agent for t in transitions]
    # consecutive decisions by one agent occur
    assert any(a == b for a, b in zip(order, order[1:], strict=False))


def test_round_rewards_reach_the_decision_before_the_payment():
    """With deal rewards, a deal's payment lands on each agent's decision just before it."""
    env = trash_env.env(round_rewards=True)
    transitions, paid, _ = _play_logged(env, 5)
    mid = [t for t in transitions if not t.done and t.reward != 0]
    assert mid, "a game of several deals pays deal rewards before the end"


def test_illegal_action_closes_with_minus_one():
    env = trash_env.env()

    def bad(agent, obs):
        return int(np.flatnonzero(obs["action_mask"] == 0)[0])

    transitions = list(play_game(env, bad, seed=0))
    # the other agent never decided: it has no transition (its reward 0 has no decision)
    assert len(transitions) == 1
    (offender,) = transitions
    assert offender.agent == "player_0" and offender.reward == -1 and offender.terminated


def test_builder_refuses_act_without_observe():
    builder = TransitionBuilder()
    env = trash_env.env()
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    builder.act("player_0", obs, 0)
    with pytest.raises(ValueError, match="observe"):
        builder.act("player_0", obs, 0)
    assert builder.open_agents == ["player_0"]


def test_missing_library_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ModuleNotFoundError
    monkeypatch.delitem(sys.modules, "trash_env.integrations.rllib", raising=False)
    with pytest.raises(ModuleNotFoundError, match=r'pip install "trash-env\[rllib\]"'):
        importlib.import_module("trash_env.integrations.rllib")
    with pytest.raises(ModuleNotFoundError, match=r"\[nothere\]"):
        require("surely_not_a_module_here", "nothere")


def test_package_import_pulls_no_rl_library():
    code = (
        "import sys, trash_env.integrations; "
        "print(any(m in sys.modules for m in ('ray', 'tianshou', 'torchrl', 'agilerl')))"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
