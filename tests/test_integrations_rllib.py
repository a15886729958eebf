"""The RLlib env of trash_env.integrations.rllib, driven by hand: the layout RLlib's
ActionMaskingTorchRLModule reads, turn-based steps, every reward credited once. Skips without
ray[rllib]."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.integration
pytest.importorskip("ray.rllib", reason="ray[rllib] is not installed (the 'rllib' extra)")

from trash_env.integrations.rllib import TrashMultiAgentEnv, rl_module_spec  # noqa: E402


@pytest.mark.parametrize("config", [{}, {"num_players": 3, "round_rewards": True}])
def test_turn_based_layout_and_rewards(config):
    env = TrashMultiAgentEnv(config)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=4)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    finals = set()
    while True:
        assert len(obs) == 1 or finals  # one agent to move, except the end
        (mover,) = obs
        o = obs[mover]
        assert set(o) == {"observations", "action_mask"}
        assert o["action_mask"].dtype == np.float32 and env.observation_space[mover].contains(o)
        action = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rewards, terminateds, truncateds, _ = env.step({mover: action})
        for agent, reward in rewards.items():
            totals[agent] += reward
        if terminateds["__all__"] or truncateds["__all__"]:
            finals = set(obs)
            break
    assert finals == set(env.possible_agents)  # every agent gets its final observation
    if not config.get("round_rewards"):  # only the game's result is paid, once per agent
        returns = env._aec.unwrapped.game.returns()
        assert [totals[a] for a in env.possible_agents] == pytest.approx(list(returns))
    assert sum(totals.values()) == pytest.approx(0.0)
    assert env.illegal_moves == 0


def test_illegal_action_counted_and_spec_is_masked():
    env = TrashMultiAgentEnv({})
    obs, _ = env.reset(seed=0)
    (mover,) = obs
    illegal = int(np.flatnonzero(obs[mover]["action_mask"] == 0)[0])
    _, rewards, terminateds, _, _ = env.step({mover: illegal})
    assert env.illegal_moves == 1 and terminateds["__all__"] and rewards[mover] == -1
    env.reset(seed=1)
    assert env.illegal_moves == 0
    spec = rl_module_spec()
    assert spec.rl_module_specs["shared"].module_class.__name__ == "ActionMaskingTorchRLModule"
