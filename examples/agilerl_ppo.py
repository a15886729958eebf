"""AgileRL PPO on Trash: one masked PPO learner against the ``greedy`` bot, whole games.

    pip install -e ".[vector]"   # the batched env below
    pip install "agilerl==2.58.0" "peft==0.21.0" && pip install "pettingzoo==1.27.0"
    python examples/agilerl_ppo.py

AgileRL's ``PPO`` takes the action mask in ``get_action``, stores it in its ``RolloutBuffer``
and masks the same logits again in ``learn``, so a masked discrete game fits it directly (its
DQN takes the mask when acting, but its learning target maxes over all 13 actions; the
previous example, self-play DQN, got worse with more steps). The learner's seat is drawn per
game against ``greedy`` in 256 batched games
(``trash_env.vector.TrashVectorEnv(opponents=["greedy"], observation="pairs")``): training
against the bot, not self-play, is what reached greedy's level fastest in ``train.py``, and
this uses ``train.py``'s recipe: the pairs observation, lr 1e-3, gamma 0.995, entropy 0.01,
rollouts of 4096 decisions (256 games x 16), minibatches of 1024, 2 epochs, Tanh layers of 128,
the reward only at the game's end. One addition: the learning rate decays linearly to 0 at
``--steps``. With a constant 1e-3 the win rate against greedy stalled at 0.46 (0.464
[0.442, 0.485] after 1.2M decisions, 1000 deals); with the decay the same 1.2M reached 0.500
[0.469, 0.531] (500 deals). AgileRL learns more slowly per decision than ``train.py``'s
MaskablePPO (0.40 at 300k decisions in the default run; ``train.py`` is at 0.50 by 250k), but
its updates are cheap: the default budget is 1.5M decisions.

The loop is AgileRL's ``collect_rollouts`` written out, with one change: AgileRL 2.58's
``RolloutBuffer.compute_returns_and_advantages`` reads ``dones[t + 1]`` as "step t ended its
episode" (CleanRL's convention: ``dones[t]`` says that observation t starts a new one), while
its ``collect_rollouts`` stores step t's own end at ``dones[t]``; read that way, a game's
win or loss would reach only its last decision, which would also bootstrap from the next
game's first value. This loop stores the previous step's end.

The networks are AgileRL's own ``StochasticActor`` and ``ValueNetwork`` (separate encoders, no
layer norm), which need a hidden layer in the head too: 261 inputs, three Tanh layers of 128,
13 logits (the critic: 1 value). Their ``nn.Linear`` layers are the model file; it plays the
net's masked argmax.

Measured, the default command (seed 0; 2 cores shared with other jobs, load average 6):
1,503,232 decisions, 0 illegal moves; on 1000 duplicate deals (2000 games each) against
greedy 0.487 [0.465, 0.509], against random 0.993 [0.988, 0.996]; 210 s of CPU, 460 s of wall
time (training 234 s, evaluation 198 s of it, the four curve points included). With
``--seed 1``: 0.502 [0.480, 0.524] against greedy, 0.992 [0.987, 0.995] against random, 206 s
of CPU, 506 s of wall time.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from agents.training.pipeline import (  # noqa: E402
    PipelineRun,
    check_command_line,
    example_parser,
    real_number,
    whole_number,
)

NAME = "agilerl_ppo"
# No extra: AgileRL caps pettingzoo below trash_env's floor (docs/integrations.md): the batched
# env, AgileRL and its undeclared peft dependency, then the pettingzoo trash_env needs.
AGILERL_INSTALL = (
    'pip install "trash-env[vector,plot]" "agilerl==2.58.0" "peft==0.21.0" && '
    'pip install "pettingzoo==1.27.0"'
)


def parse_args(argv: list[str] | None = None):
    parser = example_parser(NAME, __doc__.split("\n")[0], steps=1_500_000, eval_every=300_000)
    parser.add_argument(
        "--envs", type=whole_number(1, 4_096), default=256, help="games played at once"
    )
    parser.add_argument(
        "--n-steps",
        type=whole_number(1, 100_000),
        default=16,
        help="decisions per game per rollout",
    )
    parser.add_argument("--lr", type=real_number(0, 1, low_open=True), default=1e-3)
    parser.add_argument("--gamma", type=real_number(0, 1), default=0.995)
    parser.add_argument("--ent-coef", type=real_number(0, 10), default=0.01)
    parser.add_argument(
        "--batch-size", type=whole_number(1, 10_000_000), default=1024, help="PPO minibatch"
    )
    parser.add_argument(
        "--epochs", type=whole_number(1, 1_000), default=2, help="PPO epochs per update"
    )
    parser.add_argument(
        "--hidden", type=whole_number(1, 4_096), default=128, help="width of the Tanh layers"
    )
    parser.add_argument(
        "--opponents", default="greedy", help="the opponent pool, comma-separated bot specs"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":  # --help and bad flags answered before the library loads
    check_command_line(NAME, parse_args, AGILERL_INSTALL, "agilerl", "torch", "numba", "matplotlib")


import torch  # noqa: E402
from agilerl.algorithms.ppo import PPO  # noqa: E402
from torch import nn  # noqa: E402

from trash_env.vector import TrashVectorEnv  # noqa: E402

# AgileRL's own use of tensordict (not this script's) warns of a tensordict 0.14 change.
warnings.filterwarnings("ignore", "TensorDict.to_module", FutureWarning)


def linear_layers(network: nn.Module) -> list[nn.Linear]:
    """An AgileRL network's ``nn.Linear`` layers, input to output (encoder, then head)."""
    return [m for m in network.modules() if isinstance(m, nn.Linear)]


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # AgileRL shuffles its minibatches with numpy's global generator
    torch.set_num_threads(1)
    run = PipelineRun(args, NAME, library="agilerl", features="pairs")
    envs = TrashVectorEnv(
        args.envs,
        opponents=args.opponents.split(","),
        observation="pairs",
        seed=args.seed,
        num_players=args.players,
    )
    mlp = {"hidden_size": [args.hidden], "activation": "Tanh", "layer_norm": False}
    agent = PPO(
        envs.single_observation_space,
        envs.single_action_space,
        net_config={
            "encoder_config": {**mlp, "output_activation": "Tanh"},
            "head_config": {**mlp, "output_activation": None},
            "latent_dim": args.hidden,
        },
        share_encoders=False,
        num_envs=args.envs,
        learn_step=args.envs * args.n_steps,
        batch_size=args.batch_size,
        update_epochs=args.epochs,
        lr=args.lr,
        gamma=args.gamma,
        gae_lambda=0.95,
        ent_coef=args.ent_coef,
        vf_coef=0.5,
        clip_coef=0.2,
        max_grad_norm=0.5,
    )
    actor, critic = linear_layers(agent.actor), linear_layers(agent.critic)

    obs, info = envs.reset(seed=args.seed)
    started = np.zeros(args.envs, np.bool_)  # observation t starts a new game (after the first)
    steps = illegal = 0
    while steps < args.steps:
        buffer = agent.rollout_buffer
        buffer.reset()
        for _ in range(args.n_steps):
            mask = info["action_mask"]
            action, log_prob, _, value = agent.get_action(obs, action_mask=mask)
            illegal += int((~mask[np.arange(args.envs), action].astype(bool)).sum())
            next_obs, reward, terminated, truncated, info = envs.step(action)
            buffer.add(
                obs=obs,
                action=action,
                reward=reward,
                done=started,
                value=value,
                log_prob=log_prob,
                next_obs=next_obs,
                action_mask=mask,
            )
            obs, started = next_obs, terminated | truncated
            steps += args.envs
        with torch.no_grad():
            last_value = agent.critic(agent.preprocess_observation(obs)).squeeze(-1)
        buffer.compute_returns_and_advantages(last_value=last_value, last_done=started)
        for group in agent.optimizer.optimizer.param_groups:  # linear decay to 0 at --steps
            group["lr"] = args.lr * max(0.0, 1.0 - steps / args.steps)
        agent.learn()
        run.progress(steps, actor, critic, activation="tanh")
    return run.finish(steps, actor, critic, activation="tanh", illegal_moves=illegal)


if __name__ == "__main__":
    main()
