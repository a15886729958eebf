"""The optional warm start: fit the actor to a bot's moves and the critic to the results."""

from __future__ import annotations

from typing import Any


def collect_demonstrations(
    teacher: str,
    samples: int,
    opponents: list[str],
    seed: int,
    rules: dict[str, Any],
    round_rewards: bool = False,
    gamma: float = 1.0,
) -> tuple[Any, Any, Any, Any]:
    """``samples`` learner decisions of the ``teacher`` bot in the solo env against the bot
    ``opponents``: observations, masks, the teacher's actions and each decision's discounted
    return (the critic's Monte-Carlo target)."""
    import numpy as np

    from agents.bots.base import make_agent
    from trash_env.solo import TrashSoloEnv
    from trash_env.view import PublicView

    bot = make_agent(teacher, seed=seed)
    env = TrashSoloEnv(
        opponents=opponents or ["random"], illegal="raise", round_rewards=round_rewards, **rules
    )
    obs_list, masks, actions, returns = [], [], [], []
    rewards: list[float] = []
    obs, _ = env.reset(seed=seed)
    while True:
        mask = env.action_masks()
        action = int(bot.act(obs, mask.astype(np.int8), PublicView(env.game, env.seat)))
        obs_list.append(obs)
        masks.append(mask)
        actions.append(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        rewards.append(float(reward))
        if terminated or truncated:
            to_go, tail = [], 0.0
            for r in reversed(rewards):
                tail = r + gamma * tail
                to_go.append(tail)
            returns += to_go[::-1]
            rewards = []
            if len(actions) >= samples:
                break
            obs, _ = env.reset()
    return (
        np.array(obs_list, np.float32),
        np.array(masks, bool),
        np.array(actions),
        np.array(returns, np.float32),
    )


def imitate(
    model: Any,
    teacher: str,
    samples: int,
    epochs: int,
    seed: int,
    opponents: list[str],
    rules: dict[str, Any],
    round_rewards: bool = False,
    gamma: float = 1.0,
) -> dict[str, float]:
    """Warm start a stable-baselines3 ``model``: fit the actor to the teacher's moves (masked
    cross-entropy) and the critic to the episode results, before PPO. The reward PPO then
    optimises is unchanged."""
    import numpy as np
    import torch

    obs, masks, actions, returns = collect_demonstrations(
        teacher, samples, opponents, seed, rules, round_rewards, gamma
    )
    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    batch = 512
    for _ in range(epochs):
        order = rng.permutation(len(actions))
        for i in range(0, len(order), batch):
            idx = order[i : i + batch]
            o = torch.as_tensor(obs[idx])
            values, log_prob, _ = policy.evaluate_actions(
                o, torch.as_tensor(actions[idx]), action_masks=masks[idx]
            )
            loss = (
                -log_prob.mean()
                + 0.5 * ((values.flatten() - torch.as_tensor(returns[idx])) ** 2).mean()
            )
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        dist = policy.get_distribution(torch.as_tensor(obs), action_masks=masks)
        agree = float((dist.get_actions(deterministic=True).numpy() == actions).mean())
    from trash_env.files import safe_text

    print(
        f"imitation of {safe_text(teacher)}: {len(actions)} decisions, {epochs} epochs, "
        f"the policy's argmax agrees with the teacher on {agree:.1%} of them",
        flush=True,
    )
    return {"teacher_agreement": agree}
