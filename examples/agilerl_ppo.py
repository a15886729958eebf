"""AgileRL PPO on Trash: one masked PPO learner against the ``greedy`` bot, whole games.

    pip install -e ".[vector]"   # the batched env below
    pip install "agilerl==2.58.0" "peft==0.21.0" && pip install "pettingzoo==1.27.0"
    python examples/agilerl_ppo.py                  # the default run
    python examples/agilerl_ppo.py --wilds kings    # a rules variant (train.py's rules flags)

AgileRL's own pieces: its ``PPO`` (``get_action`` with the action mask, the ``RolloutBuffer``
that stores it, ``learn`` that masks the same logits again) and its ``StochasticActor`` and
``ValueNetwork``, over ``--envs`` batched games (``trash_env.vector``) with the learner in a
random seat. The loop is AgileRL's ``collect_rollouts`` written out, but for the done flags
(see the loop). The settings sit in one block below; the model file, its curve and the
summary come from ``agents.training.pipeline``. Measured figures and why these settings:
docs/integrations.md.
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
# ---- settings (the flags below default to them) ----
STEPS = 1_500_000  # --steps: learner decisions of training
EVAL_EVERY = 300_000  # --eval-every: decisions between learning-curve points
NUM_ENVS = 256  # --envs: games played at once
N_STEPS = 16  # --n-steps: decisions per game per rollout (rollout = NUM_ENVS * N_STEPS)
LR = 1e-3  # --lr: decayed linearly to 0 at --steps
GAMMA = 0.995  # --gamma
ENT_COEF = 0.01  # --ent-coef
BATCH_SIZE = 1024  # --batch-size: PPO minibatch
EPOCHS = 2  # --epochs: PPO epochs per update
HIDDEN = 128  # --hidden: width of the Tanh layers
GAE_LAMBDA = 0.95
VF_COEF = 0.5
CLIP_COEF = 0.2
MAX_GRAD_NORM = 0.5
OPPONENTS = "greedy"  # --opponents: the opponent pool, comma-separated bot specs


def parse_args(argv: list[str] | None = None):
    parser = example_parser(NAME, __doc__.split("\n")[0], steps=STEPS, eval_every=EVAL_EVERY)
    parser.add_argument(
        "--envs", type=whole_number(1, 4_096), default=NUM_ENVS, help="games played at once"
    )
    parser.add_argument(
        "--n-steps",
        type=whole_number(1, 100_000),
        default=N_STEPS,
        help="decisions per game per rollout",
    )
    parser.add_argument("--lr", type=real_number(0, 1, low_open=True), default=LR)
    parser.add_argument("--gamma", type=real_number(0, 1), default=GAMMA)
    parser.add_argument("--ent-coef", type=real_number(0, 10), default=ENT_COEF)
    parser.add_argument(
        "--batch-size", type=whole_number(1, 10_000_000), default=BATCH_SIZE, help="PPO minibatch"
    )
    parser.add_argument(
        "--epochs", type=whole_number(1, 1_000), default=EPOCHS, help="PPO epochs per update"
    )
    parser.add_argument(
        "--hidden", type=whole_number(1, 4_096), default=HIDDEN, help="width of the Tanh layers"
    )
    parser.add_argument(
        "--opponents", default=OPPONENTS, help="the opponent pool, comma-separated bot specs"
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
    run = PipelineRun(args, NAME, library="agilerl", features="pairs")  # owns the rules
    envs = TrashVectorEnv(
        args.envs,
        opponents=args.opponents.split(","),
        observation="pairs",
        seed=args.seed,
        **run.env_options,
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
        gae_lambda=GAE_LAMBDA,
        ent_coef=args.ent_coef,
        vf_coef=VF_COEF,
        clip_coef=CLIP_COEF,
        max_grad_norm=MAX_GRAD_NORM,
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
            # AgileRL 2.58's compute_returns_and_advantages reads dones[t + 1] as "step t
            # ended its game" (CleanRL's convention), while its collect_rollouts stores step
            # t's own end at dones[t]: a game's result would reach only its last decision and
            # bootstrap from the next game's first value. So store the previous step's end.
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
