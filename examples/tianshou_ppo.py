"""Tianshou PPO on Trash: one masked learner seat trained against the ``greedy`` bot.

    pip install -e ".[tianshou]"
    python examples/tianshou_ppo.py                 # the default run
    python examples/tianshou_ppo.py --wilds kings   # a rules variant (train.py's rules flags)

Tianshou's own pieces: ``--envs`` learner-seat envs (``make_solo_env``: observation ``{"obs",
"mask"}``) in a ``DummyVectorEnv``, a ``Collector`` into a ``VectorReplayBuffer``, and the
``PPO`` algorithm over a ``DiscreteActorPolicy`` whose actor sets illegal logits to the lowest
float. The settings sit in one block below; the model file, its curve and the summary come
from ``agents.training.pipeline``. Measured figures and why these settings:
docs/integrations.md.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from agents.training.pipeline import (
    PipelineRun,
    check_command_line,
    example_parser,
    real_number,
    whole_number,
)  # noqa: E402

NAME = "tianshou_ppo"
# ---- settings (the flags below default to them) ----
STEPS = 1_000_000  # --steps: learner decisions of training
EVAL_EVERY = 100_000  # --eval-every: decisions between learning-curve points
NUM_ENVS = 256  # --envs: envs collected in parallel
N_STEPS = 16  # --n-steps: decisions per env per update (rollout = NUM_ENVS * N_STEPS)
BATCH_SIZE = 1024  # --batch-size: PPO minibatch
EPOCHS = 2  # --epochs: passes over each rollout
LR = 1e-3  # --lr: Adam
ANNEAL_LR = True  # --anneal-lr: Tianshou's linear decay of the learning rate to 0
GAMMA = 0.995  # --gamma
ENT_COEF = 0.01  # --ent-coef
ROUND_REWARDS = True  # --round-rewards: pay each finished deal too, as train.py does
GAE_LAMBDA = 0.95
EPS_CLIP = 0.2
VF_COEF = 0.5
MAX_GRAD_NORM = 0.5
HIDDEN = (128, 128)  # tanh layers of the policy's and the value's MLPs
OPPONENTS = "greedy"  # --opponents: the opponent pool, comma-separated agent specs


def parse_args(argv: list[str] | None = None):
    parser = example_parser(NAME, __doc__.split("\n")[0], steps=STEPS, eval_every=EVAL_EVERY)
    parser.add_argument(
        "--envs", type=whole_number(1, 4_096), default=NUM_ENVS, help="envs collected in parallel"
    )
    parser.add_argument(
        "--n-steps",
        type=whole_number(1, 100_000),
        default=N_STEPS,
        help="decisions per env per update",
    )
    parser.add_argument("--batch-size", type=whole_number(1, 10_000_000), default=BATCH_SIZE)
    parser.add_argument(
        "--epochs", type=whole_number(1, 1_000), default=EPOCHS, help="passes over each rollout"
    )
    parser.add_argument("--lr", type=real_number(0, 1, low_open=True), default=LR)
    parser.add_argument(
        "--anneal-lr",
        action=argparse.BooleanOptionalAction,
        default=ANNEAL_LR,
        help="decay the learning rate linearly to 0 over the budget",
    )
    parser.add_argument("--gamma", type=real_number(0, 1), default=GAMMA)
    parser.add_argument("--ent-coef", type=real_number(0, 10), default=ENT_COEF)
    parser.add_argument(
        "--round-rewards",
        action=argparse.BooleanOptionalAction,
        default=ROUND_REWARDS,
        help="also pay each finished deal (TrashSoloEnv's round_rewards, as train.py does)",
    )
    parser.add_argument(
        "--opponents", default=OPPONENTS, help="the opponent pool, comma-separated agent specs"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":  # --help and bad flags answered before the library loads
    check_command_line(NAME, parse_args, "tianshou", "tianshou", "torch", "matplotlib")

# trash_env's glue first: without the extra it names what to install
from trash_env.integrations.tianshou import make_solo_env  # noqa: E402, I001
import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402
from tianshou.algorithm import PPO  # noqa: E402
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory, LRSchedulerFactoryLinear  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv  # noqa: E402
from tianshou.trainer import OnPolicyTrainerParams  # noqa: E402
from tianshou.utils.net.common import AbstractDiscreteActor  # noqa: E402


def mlp(inputs: int, outputs: int) -> nn.Sequential:
    """Linear-Tanh-...-Linear, the shape the model file holds, with torch's default
    initialisation (it learned faster here than the orthogonal one: docs/integrations.md)."""
    layers: list[nn.Module] = []
    for width in HIDDEN:
        layers += [nn.Linear(inputs, width), nn.Tanh()]
        inputs = width
    layers.append(nn.Linear(inputs, outputs))
    return nn.Sequential(*layers)


class MaskedActor(AbstractDiscreteActor):
    """Logits of an MLP over ``obs.obs``; illegal actions (``obs.mask`` 0) get the lowest
    float, so Tianshou's ``Categorical`` gives them probability 0."""

    def __init__(self, inputs: int, actions: int) -> None:
        super().__init__(output_dim=actions)
        self.net = mlp(inputs, actions)

    def get_preprocess_net(self) -> nn.Module:
        return self.net

    def forward(self, obs, state=None, info=None):
        logits = self.net(torch.as_tensor(obs.obs, dtype=torch.float32))
        legal = torch.as_tensor(obs.mask, dtype=torch.bool)
        return logits.masked_fill(~legal, torch.finfo(logits.dtype).min), state


class Critic(nn.Module):
    """V(s) from an MLP over ``obs.obs``."""

    def __init__(self, inputs: int) -> None:
        super().__init__()
        self.net = mlp(inputs, 1)

    def forward(self, obs, state=None, info=None):
        return self.net(torch.as_tensor(obs.obs, dtype=torch.float32))


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    run = PipelineRun(args, NAME, library="tianshou", features="pairs")  # owns the rules
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    logging.getLogger("tianshou").setLevel(logging.WARNING)

    def make():
        return make_solo_env(
            opponents=args.opponents.split(","),
            observation="pairs",
            round_rewards=args.round_rewards,
            **run.env_options,
        )

    envs = DummyVectorEnv([make for _ in range(args.envs)])
    envs.seed([args.seed * 100_003 + i for i in range(args.envs)])
    probe = make()
    inputs = probe.observation_space["obs"].shape[0]
    actor = MaskedActor(inputs, int(probe.action_space.n))
    critic = Critic(inputs)
    policy = DiscreteActorPolicy(actor=actor, action_space=probe.action_space)
    rollout = args.envs * args.n_steps
    epochs = -(-args.steps // rollout)  # one collection and update per trainer epoch
    optim = AdamOptimizerFactory(lr=args.lr, eps=1e-5)
    if args.anneal_lr:
        optim = optim.with_lr_scheduler_factory(LRSchedulerFactoryLinear(epochs, rollout, rollout))
    algorithm = PPO(
        policy=policy,
        critic=critic,
        optim=optim,
        eps_clip=EPS_CLIP,
        vf_coef=VF_COEF,
        ent_coef=args.ent_coef,
        max_grad_norm=MAX_GRAD_NORM,
        gae_lambda=GAE_LAMBDA,
        gamma=args.gamma,
        max_batchsize=4096,
    )
    collector = Collector(algorithm, envs, VectorReplayBuffer(rollout, args.envs))
    # Tianshou's on-policy trainer: each epoch one collection of a rollout, then --epochs PPO
    # passes over it in minibatches; training_fn runs before each collection, so the curve
    # point after an update is drawn there (and the final one by run.finish).
    result = algorithm.run_training(
        OnPolicyTrainerParams(
            training_collector=collector,
            max_epochs=epochs,
            epoch_num_steps=rollout,
            collection_step_num_env_steps=rollout,
            batch_size=args.batch_size,
            update_step_num_repetitions=args.epochs,
            training_fn=lambda epoch, steps: run.progress(steps, actor.net, critic.net),
            show_progress=False,
            verbose=False,
        )
    )
    illegal = sum(envs.get_env_attr("illegal_moves"))
    return run.finish(result.train_step, actor.net, critic.net, illegal_moves=int(illegal))


if __name__ == "__main__":
    main()
