"""The RLlib env of trash_env.integrations.rllib, driven by hand: the layout RLlib's
ActionMaskingTorchRLModule reads, turn-based steps, every reward credited once. Skips without
ray[rllib]."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # slow: the second tier
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


def test_solo_env_layout_and_bots_inside():
    from trash_env.integrations.rllib import TrashSoloMaskedEnv

    env = TrashSoloMaskedEnv({"opponents": ["greedy"], "observation": "pairs"})
    obs, _ = env.reset(seed=2)
    assert env.observation_space.contains(obs) and obs["observations"].shape == (261,)
    rng = np.random.default_rng(0)
    total, done = 0.0, False
    while not done:
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, terminated, truncated, _ = env.step(action)
        total += reward
        done = terminated or truncated
    assert total in (-1.0, 1.0) and env.illegal_moves == 0  # 2 players: the game's result


def test_exported_mlp_computes_the_module_logits(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed (the 'train' extra)")
    from agents.policies.policy import load_policy_agent
    from agents.training.export import export_mlp
    from trash_env.integrations.rllib import TrashSoloMaskedEnv, module_spec, policy_mlps
    from trash_env.observation import observation_size
    from trash_env.rules import Rules

    env = TrashSoloMaskedEnv({"opponents": ["random"], "observation": "pairs"})
    spec = module_spec()
    spec.observation_space, spec.action_space = env.observation_space, env.action_space
    torch.manual_seed(0)
    module = spec.build()
    actor, value = policy_mlps(module)
    assert value is not None
    path = export_mlp(
        tmp_path / "m.safetensors", actor, rules=Rules(), features="pairs", value=value
    )
    agent = load_policy_agent(str(path))
    obs, _ = env.reset(seed=5)
    for _ in range(20):
        batch = {"obs": {k: torch.as_tensor(v)[None] for k, v in obs.items()}}
        masked = module.forward_inference(batch)["action_dist_inputs"][0].detach().numpy()
        logits = agent.logits(obs["observations"][: observation_size(2)])  # + pairs inside
        legal = obs["action_mask"] > 0
        assert np.allclose(masked[legal], logits[legal], atol=1e-5)
        assert int(np.argmax(masked)) == int(np.flatnonzero(legal)[np.argmax(logits[legal])])
        obs, _, terminated, truncated, _ = env.step(int(np.argmax(masked)))
        if terminated or truncated:
            break
