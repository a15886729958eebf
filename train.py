"""Train a Trash agent with MaskablePPO against bots and frozen snapshots of itself.

    python train.py                       # the default run: from scratch, ~5 min on 2 cores
    python train.py --episode round --timesteps 3000000 --out runs/long/model.safetensors
    python train.py --imitate greedy --lr 1e-4 --ent-coef 0.001 --shaping 0   # warm start

Why it is built this way:

- The learner plays :class:`trash_env.solo.TrashSoloEnv` (one seat; the opponents act inside
  ``step``) on ``--envs`` parallel envs: by default (``--vec batched``) all of them in one
  :class:`trash_env.vector.TrashVecEnv`, the batched engine (256 envs x 16 steps per rollout,
  minibatches of 1,024, 2 epochs: cheap updates, many steps), or, when the pool holds agents
  the batch does not play (``search``, ``human``) or with ``--vec dummy|subproc``, a
  DummyVecEnv/SubprocVecEnv of ``ProgressShaping(Monitor(TrashSoloEnv))`` (4 envs x 512
  steps). Each opponent seat
  draws, per episode, one entry of the ``--opponents`` list; ``self`` stands for the
  self-play pool: the last ``--pool-size`` snapshots of the learner, saved after the PPO
  update at every ``--snapshot-every`` steps and pushed to every env (``set_opponents``),
  played by sampling from their masked policy.
- MaskablePPO always sees the action mask, so every action is legal.
- From scratch by default: the reward is a +-1 result decided mostly by the luck of the deal,
  so on the observation alone PPO from a random policy needed ~12M steps to learn even "take
  the discard when it fits" as well as ``greedy``. What helps: the network's input features
  (``--features pairs``, the default; agents/features.py), which hand it "the card on offer
  has rank r and my slot r is open" directly (greedy's level after ~250k steps); throughput
  (the batched env with large rollouts and minibatches); and, optional and off by default, a
  SHAPED reward (``--shaping C``; agents/shaping.py): progress through the deal (own face-up
  share minus the opponents' mean) paid at every step, telescoping to each deal's end,
  annealed to 0 at ``--shaping-until`` of the run so the last updates see the true reward
  alone. Warm start (``--imitate greedy``): fitting the actor to a bot's moves first (and the
  critic to the results) starts PPO from the bot's level.
- Rewards are the zero-sum result of the episode (plus the shaping while it lasts). In
  whole-game episodes (the default rules) ``--round-rewards`` (on by default there) also pays
  every deal its zero-sum result, as the AEC env's ``round_rewards`` does. The episode figures
  logged are the true rewards; the shaping's sum is logged apart.
- At step 0, early in the first interval and then every ``--eval-every`` steps the
  deterministic policy is evaluated against ``greedy`` and ``random`` on duplicate deals
  (agents/evaluation.py; its seat against copies of the opponent); the figures go to the
  CSV log and the learning-curve PNG (win rates with 95% bands, training reward, steps/s). At
  the end it is evaluated against ``random`` and ``greedy`` and saved as a
  ``.safetensors`` model (tensors only, the sidecar inside; agents/policy.py) with a readable
  ``.json`` copy of the sidecar (rules, network, observation version and size, timesteps, seed,
  evaluation figures). Every file is written atomically (temp file + rename): a killed run
  leaves the previous ``--out`` model whole.
- Checkpoints (``--checkpoint-every``) are taken after the PPO update of their rollout, in
  ``<stem>_checkpoints/``: ``step_N.safetensors`` (the policy, safe to share) and
  ``step_N.ckpt`` (what resuming needs: the stable-baselines3 model with its optimizer, the
  envs mid-episode (on the batched path the whole batch with its generators), the opponent
  pool and the torch/NumPy/Python random states). ``--resume`` from step N therefore
  reproduces an uninterrupted run's weights bit for bit. A ``.ckpt`` is a pickle: resume only
  your own checkpoints (it runs any code a crafted file holds).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import math
import pickle
import re
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path("runs/default/model.safetensors")
MODEL_SUFFIX = ".safetensors"
CHECKPOINT_SUFFIX = ".ckpt"
CHECKPOINT_MAGIC = b"trash-env checkpoint v1\n"
# Ceilings: a typo (an extra zero or three) fails at once instead of running for days.
MAX_TIMESTEPS = 10**9
MAX_ENVS = 256
MAX_DEALS = 10**6
MAX_SAMPLES = 10**7
VEC_CHOICES = ("batched", "dummy", "subproc")
# Per --vec path: (--envs, --n-steps) when not given. The batched env pays off with many envs
# (docs/vector.md): 256 x 16 = 4,096-sample rollouts; the one-process paths keep 4 x 512.
PATH_DEFAULTS = {"batched": (256, 16), "dummy": (4, 512), "subproc": (4, 512)}
DEFAULT_BATCH_SIZE = 1024  # or the whole rollout when that is smaller
GAE_LAMBDA = 0.95
# The optional progress shaping (agents/shaping.py): off by default since the pairs input
# features made it unnecessary; when on, annealed to 0 at a quarter of the run. The
# experiments behind these are in docs/training.md.
DEFAULT_SHAPING = 0.0
DEFAULT_SHAPING_UNTIL = 0.25


class _Default(int):
    """An int flag's default, told apart from the same value given on the command line: the
    real default of --envs and --n-steps depends on the --vec path (and, on --resume, on the
    checkpoint). Its value is the dummy path's, what readers of ``parse_args([])`` expect."""


# ---------------------------------------------------------------------------- options


def build_parser() -> argparse.ArgumentParser:
    from trash_env.cli import add_rules_arguments

    parser = argparse.ArgumentParser(
        prog="python train.py",
        description="Train a Trash agent (MaskablePPO) against bots and snapshots of itself.",
    )
    add = parser.add_argument
    add("--timesteps", type=int, default=4_000_000,
        help="total learner steps (default: 4000000)")
    add("--seed", type=int, default=0, help="seed of everything (default: 0)")
    add("--envs", type=int, default=_Default(4),
        help="parallel envs (default: 256 with --vec batched, 4 with dummy or subproc; on "
        "--resume, the checkpoint's)")
    add("--vec", choices=VEC_CHOICES, default=None,
        help="batched: one TrashVecEnv (trash_env.vector, the batched engine; needs numba) "
        "whenever the opponent pool allows it (random, greedy, counting, model files, self), "
        "else dummy with a one-line reason; dummy: DummyVecEnv (one process); subproc: "
        "SubprocVecEnv (default: batched; on --resume, the checkpoint's)")
    add("--opponents", nargs="+", default=["greedy"], metavar="SPEC",
        help="opponent pool: bot specs (random, greedy, counting, search:rollouts=20, a "
        "model .safetensors) and/or self (the self-play pool); each entry is drawn equally "
        "often (default: greedy)")
    add("--out", type=Path, default=DEFAULT_OUT,
        help=f"model path (.safetensors); the sidecar copy (.json), CSV log, PNG, checkpoints "
        f"and self-play pool go beside it (default: {DEFAULT_OUT})")
    add("--resume", type=Path, default=None, metavar="CKPT",
        help="continue training from this checkpoint (a step_N.ckpt, or a checkpoints "
        "directory: its latest good one) up to --timesteps in total; a damaged checkpoint "
        "is skipped for the previous one. WARNING: a .ckpt is unpickled (it holds the "
        "optimizer and the envs mid-episode), which runs any code a crafted file holds: "
        "resume only checkpoints you made")
    add("--tensorboard", type=Path, default=None, metavar="DIR", help="TensorBoard log dir")
    add("--checkpoint-every", type=int, default=500_000, metavar="N",
        help="save a checkpoint after the PPO update at every N steps (default: 500000)")
    add("--snapshot-every", type=int, default=50_000, metavar="N",
        help="add a self-play snapshot every N steps (default: 50000)")
    add("--pool-size", type=int, default=5, help="self-play snapshots kept (default: 5)")
    add("--eval-every", type=int, default=250_000, metavar="N",
        help="evaluate against greedy and random at step 0, at N/16, N/8, N/4 and N/2 (the "
        "climb of a run from scratch), then every N steps; 0 for never (default: 250000)")
    add("--eval-deals", type=int, default=200, metavar="N",
        help="duplicate deals per opponent in a periodic evaluation (default: 200)")
    add("--final-deals", type=int, default=1000, metavar="N",
        help="duplicate deals per opponent in the final evaluation (default: 1000)")
    add("--imitate", default="none", metavar="SPEC",
        help="warm start: before PPO, fit the policy to this bot's moves (e.g. greedy) and "
        "the critic to the results; PPO then trains on the zero-sum reward as usual; none: "
        "learn from a random policy (default: none)")
    add("--imitate-samples", type=int, default=100_000, metavar="N",
        help="decisions of the teacher to fit (default: 100000)")
    add("--imitate-epochs", type=int, default=10, metavar="N",
        help="passes over them (default: 10)")
    add("--workers", type=int, default=2,
        help="processes for the final evaluation (default: 2)")
    add("--round-rewards", action=argparse.BooleanOptionalAction, default=None,
        help="pay every deal's zero-sum result too (default: on for whole-game episodes)")
    add("--shaping", type=float, default=DEFAULT_SHAPING, metavar="C",
        help="optional SHAPED reward on top of the true one: C x the progress since the "
        "previous learner decision (own share of the layout face-up minus the opponents' "
        "mean, per deal; agents/shaping.py); it telescopes within a deal to that difference "
        "at the deal's end; the episode figures and every evaluation keep the true result; "
        f"0: off (default: {DEFAULT_SHAPING})")
    add("--shaping-until", type=float, default=DEFAULT_SHAPING_UNTIL, metavar="F",
        help="anneal the shaping coefficient linearly from C at step 0 to 0 at F x "
        "--timesteps, so the updates after that see the true reward alone (default: "
        f"{DEFAULT_SHAPING_UNTIL})")
    add("--net", default="128,128", help="hidden layer sizes of the MLP (default: 128,128)")
    add("--features", choices=("obs", "pairs"), default="pairs",
        help="the network's inputs: obs, the observation alone; pairs, the observation plus "
             "the products 'the card on offer has rank r and my slot r is in state s' and "
             "'the card on offer is wild' (agents/features.py; no parameters) "
             "(default: pairs)")
    add("--lr", type=float, default=1e-3,
        help="learning rate (default: 1e-3; 1e-4 suits fine-tuning after --imitate)")
    add("--n-steps", type=int, default=_Default(512),
        help="rollout steps per env (default: 16 with --vec batched, 512 with dummy or "
        "subproc: 4,096 and 2,048 samples per rollout with the default --envs; on --resume, "
        "the checkpoint's)")
    add("--batch-size", type=int, default=_Default(DEFAULT_BATCH_SIZE),
        help=f"minibatch size (default: {DEFAULT_BATCH_SIZE}, or one rollout if smaller)")
    add("--epochs", type=int, default=2, help="PPO epochs per rollout (default: 2)")
    add("--gamma", type=float, default=0.995, help="discount (default: 0.995)")
    add("--ent-coef", type=float, default=0.01,
        help="entropy bonus (default: 0.01; 0.001 suits fine-tuning after --imitate)")
    add("--threads", type=int, default=1, help="torch threads (default: 1)")
    add("--no-progress", action="store_true", help="no progress bar")
    add_rules_arguments(parser)
    return parser


INT_BOUNDS = {  # flag -> (lowest, highest)
    "timesteps": (1, MAX_TIMESTEPS),
    "seed": (0, 2**32 - 1),
    "envs": (1, MAX_ENVS),
    "checkpoint_every": (1, MAX_TIMESTEPS),
    "snapshot_every": (1, MAX_TIMESTEPS),
    "pool_size": (1, 100),
    "eval_every": (0, MAX_TIMESTEPS),
    "eval_deals": (1, MAX_DEALS),
    "final_deals": (1, MAX_DEALS),
    "imitate_samples": (1, MAX_SAMPLES),
    "imitate_epochs": (1, 1000),
    "workers": (1, 256),
    "n_steps": (2, 2**16),
    "batch_size": (2, 2**20),
    "epochs": (1, 1000),
    "threads": (1, 256),
}


def check_args(args: argparse.Namespace) -> None:
    """Every flag checked before any work, with an error naming the flag and the allowed
    values: sizes within bounds (ceilings on the budgets), gamma in (0, 1], finite learning
    rate and entropy coefficient, writable output paths, a readable checkpoint."""
    from trash_env.cli import check_float, check_int
    from trash_env.files import check_output_path

    for name, (low, high) in INT_BOUNDS.items():
        check_int("--" + name.replace("_", "-"), getattr(args, name), low, high)
    check_float("--gamma", args.gamma, 0.0, 1.0, low_open=True)
    check_float("--lr", args.lr, 0.0, 1.0, low_open=True)
    check_float("--ent-coef", args.ent_coef, 0.0, 10.0)
    check_float("--shaping", args.shaping, 0.0, 10.0)
    check_float("--shaping-until", args.shaping_until, 0.0, 1.0, low_open=True)
    from agents.model_file import MAX_LAYERS, MAX_WIDTH

    try:
        args.net_arch = [int(x) for x in args.net.split(",")]
        assert 1 <= len(args.net_arch) <= MAX_LAYERS
        assert all(1 <= x <= MAX_WIDTH for x in args.net_arch)
    except (ValueError, AssertionError):
        raise ValueError(f"--net must be 1 to {MAX_LAYERS} layer sizes from 1 to {MAX_WIDTH} "
                         f"like 128,128, got {args.net!r}") from None
    if args.out.suffix == ".zip":
        raise ValueError(f"--out must end in {MODEL_SUFFIX} (train.py no longer writes "
                         f".zip models, which run code when loaded), got {str(args.out)!r}")
    check_output_path("--out", args.out, (MODEL_SUFFIX,))
    stem = args.out.parent / args.out.stem
    check_output_path("--out (its CSV log)", Path(f"{stem}_log.csv"))
    check_output_path("--out (its curve)", Path(f"{stem}_curve.png"))
    for kind in ("checkpoints", "pool"):
        folder = Path(f"{stem}_{kind}")
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"--out: {str(folder)!r} must be a directory for the {kind}, "
                             "but it is a file")
    if args.tensorboard is not None:
        if args.tensorboard.exists() and not args.tensorboard.is_dir():
            raise ValueError(f"--tensorboard must be a directory, got the file "
                             f"{str(args.tensorboard)!r}")
        check_output_path("--tensorboard", args.tensorboard / "events")
    args.resume_state = None
    if args.resume is not None:
        args.resume_state = find_checkpoint(args.resume)
    from agents.base import make_agent

    for spec in args.opponents + ([args.imitate] if args.imitate != "none" else []):
        if spec != "self":
            make_agent(spec, seed=0)  # an unknown bot or option fails before any training
    choose_vec(args)
    if type(args.batch_size) is _Default:
        args.batch_size = min(int(args.batch_size), args.n_steps * args.envs)
    if args.batch_size > args.n_steps * args.envs:
        raise ValueError(f"--batch-size must be at most --n-steps x --envs = "
                         f"{args.n_steps * args.envs} (one rollout), got {args.batch_size}")


def batched_refusal(opponents: list[str]) -> str | None:
    """Why the batched env cannot play this ``--opponents`` list (None: it can). ``self``
    adds model-file snapshots, which it plays."""
    try:
        from trash_env.vector import supports_opponents
    except ImportError as error:
        return f"trash_env.vector is unavailable ({error})"
    for spec in opponents:
        if spec != "self" and not supports_opponents([spec]):
            return (f"it does not play the opponent {spec!r} (it plays random, greedy, "
                    "counting and model files)")
    return None


def choose_vec(args: argparse.Namespace) -> None:
    """Settle --vec, --envs and --n-steps: a resumed run takes the checkpoint's values of the
    ones not given; the batched path falls back to dummy (saying why, in one line) when the
    pool holds agents it refuses; the others take their path's defaults."""
    saved = args.resume_state.get("flags", {}) if args.resume_state else {}
    if args.vec is None:
        args.vec = saved.get("vec", "batched")
    if args.vec == "batched":
        reason = batched_refusal(args.opponents)
        if reason is not None:
            print(f"train.py: --vec batched: using dummy instead: {reason}", flush=True)
            args.vec = "dummy"
    envs, n_steps = PATH_DEFAULTS[args.vec]
    if type(args.envs) is _Default:
        args.envs = int(saved.get("envs", envs))
    if type(args.n_steps) is _Default:
        args.n_steps = int(saved.get("n_steps", n_steps))


# ---------------------------------------------------------------------------- checkpoints


def _checkpoint_step(path: Path) -> int:
    match = re.fullmatch(r"step_(\d+)" + re.escape(CHECKPOINT_SUFFIX), path.name)
    return int(match.group(1)) if match else -1


def write_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """The resume state, pickled behind a magic line and its SHA-256, written atomically: a
    torn or damaged file is recognised before anything is unpickled."""
    from trash_env.files import atomic_write_bytes

    payload = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    atomic_write_bytes(path, CHECKPOINT_MAGIC + hashlib.sha256(payload).digest() + payload)


def read_checkpoint_payload(path: Path) -> bytes:
    """The checked payload of a checkpoint file; ``ValueError`` saying why if damaged."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ValueError(f"cannot read it ({error})") from None
    head = len(CHECKPOINT_MAGIC)
    if not data.startswith(CHECKPOINT_MAGIC):
        raise ValueError("not a train.py checkpoint (wrong first bytes)")
    digest, payload = data[head:head + 32], data[head + 32:]
    if len(digest) < 32 or hashlib.sha256(payload).digest() != digest:
        raise ValueError("damaged or truncated (its SHA-256 does not match)")
    return payload


def find_checkpoint(where: Path) -> dict[str, Any]:
    """The newest good checkpoint: ``where`` itself, or (a directory) its latest; a damaged
    one is reported on stderr and the previous one is used. The chosen file is unpickled:
    a checkpoint is the user's own file (see --help)."""
    if where.is_dir():
        candidates = sorted(where.glob("step_*" + CHECKPOINT_SUFFIX), key=_checkpoint_step,
                            reverse=True)
        if not candidates:
            raise ValueError(f"--resume: no step_N{CHECKPOINT_SUFFIX} checkpoint in "
                             f"{str(where)!r}")
    elif where.is_file():
        if where.suffix != CHECKPOINT_SUFFIX:
            raise ValueError(f"--resume takes a step_N{CHECKPOINT_SUFFIX} checkpoint written "
                             f"by train.py or its directory, got {str(where)!r}")
        step = _checkpoint_step(where)
        older = [p for p in where.parent.glob("step_*" + CHECKPOINT_SUFFIX)
                 if 0 <= _checkpoint_step(p) < step]
        candidates = [where] + sorted(older, key=_checkpoint_step, reverse=True)
    else:
        raise ValueError(f"--resume: checkpoint {str(where)!r} not found")
    for path in candidates:
        try:
            payload = read_checkpoint_payload(path)
        except ValueError as error:
            print(f"train.py: --resume: skipping checkpoint {path}: {error}", file=sys.stderr)
            continue
        try:
            state = pickle.loads(payload)
        except Exception as error:  # a digest-valid file that does not unpickle: say so
            print(f"train.py: --resume: skipping checkpoint {path}: it does not load "
                  f"({type(error).__name__}: {error})", file=sys.stderr)
            continue
        if not isinstance(state, dict) or state.get("format") != "trash-env-checkpoint":
            print(f"train.py: --resume: skipping checkpoint {path}: not a train.py "
                  "checkpoint", file=sys.stderr)
            continue
        if path != candidates[0]:
            print(f"train.py: --resume: using the previous good checkpoint {path}",
                  file=sys.stderr)
        state["path"] = str(path)
        return state
    raise ValueError(f"--resume: no usable checkpoint in {str(where)!r} (every one is damaged)")


# Flags that change the trained weights: a resumed run must use the checkpoint's values.
RESUME_FLAGS = ("envs", "vec", "opponents", "snapshot_every", "pool_size", "net", "lr",
                "n_steps", "batch_size", "epochs", "gamma", "ent_coef", "round_rewards",
                "threads", "shaping", "shaping_until", "features")


# ---------------------------------------------------------------------------- evaluation


def evaluate_policy_vs(model_path: Path, opponent: str, deals: int, seed: int,
                       rules: dict[str, Any], workers: int = 1) -> dict[str, Any]:
    """The policy's figures against ``opponent`` from agents/evaluation.py (duplicate deals,
    seats rotated): games, wins, win_rate and its 95% Wilson interval ``ci95``, over the games
    where the policy holds one seat and copies of ``opponent`` the others (with two players:
    every game), as in ``evaluate.py --sizes``; its par is ``1 / players``."""
    from agents.evaluation import evaluate
    from agents.sizes import agent_figures
    from trash_env.rules import Rules

    report = evaluate([str(model_path), opponent], rules=Rules.from_options(**rules),
                      deals=deals, seed=seed, workers=workers)
    return agent_figures(report, str(model_path))


# ---------------------------------------------------------------------------- imitation


def collect_demonstrations(teacher: str, samples: int, opponents: list[str], seed: int,
                           rules: dict[str, Any], round_rewards: bool = False,
                           gamma: float = 1.0) -> tuple[Any, Any, Any, Any]:
    """``samples`` learner decisions of the ``teacher`` bot in the solo env against the bot
    ``opponents``: observations, masks, the teacher's actions and each decision's discounted
    return (the critic's Monte-Carlo target)."""
    import numpy as np

    from agents.base import make_agent
    from trash_env.solo import TrashSoloEnv
    from trash_env.view import PublicView

    bot = make_agent(teacher, seed=seed)
    env = TrashSoloEnv(opponents=opponents or ["random"], illegal="raise",
                       round_rewards=round_rewards, **rules)
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
    return (np.array(obs_list, np.float32), np.array(masks, bool), np.array(actions),
            np.array(returns, np.float32))


def imitate(model: Any, teacher: str, samples: int, epochs: int, seed: int,
            opponents: list[str], rules: dict[str, Any], round_rewards: bool = False,
            gamma: float = 1.0) -> dict[str, float]:
    """Warm start: fit the actor to the teacher's moves (masked cross-entropy) and the critic
    to the episode results, before PPO. The reward PPO then optimises is unchanged."""
    import numpy as np
    import torch

    obs, masks, actions, returns = collect_demonstrations(teacher, samples, opponents, seed,
                                                          rules, round_rewards, gamma)
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
                o, torch.as_tensor(actions[idx]), action_masks=masks[idx])
            loss = -log_prob.mean() + 0.5 * ((values.flatten()
                                              - torch.as_tensor(returns[idx])) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        dist = policy.get_distribution(torch.as_tensor(obs), action_masks=masks)
        agree = float((dist.get_actions(deterministic=True).numpy() == actions).mean())
    print(f"imitation of {teacher}: {len(actions)} decisions, {epochs} epochs, the policy's "
          f"argmax agrees with the teacher on {agree:.1%} of them", flush=True)
    return {"teacher_agreement": agree}


# ---------------------------------------------------------------------------- training


def policy_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The policy network: the MLP of --net over the inputs of --features."""
    kwargs: dict[str, Any] = {"net_arch": args.net_arch}
    if args.features == "pairs":
        from agents.features import torch_extractor

        kwargs["features_extractor_class"] = torch_extractor()
    return kwargs


def save_model(model: Any, path: Path, info: dict[str, Any]) -> None:
    """The policy as a ``.safetensors`` model file with its sidecar (atomic writes)."""
    from agents.convert import save_sb3_policy

    save_sb3_policy(model, path, {**info, "timesteps": int(model.num_timesteps)})


class TrainingMonitor:
    """The SB3 callback: snapshots for the self-play pool, checkpoints, periodic evaluation,
    the CSV log of training and evaluation figures."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        from stable_baselines3.common.callbacks import BaseCallback

        class _Monitor(BaseCallback):
            def __init__(self, run: Run) -> None:
                super().__init__()
                self.run = run
                self.next_snapshot = run.next_multiple(run.args.snapshot_every)
                self.next_checkpoint = run.next_multiple(run.args.checkpoint_every)
                self.next_eval = run.next_eval_after(run.start_steps)
                self.episodes = 0
                self.wins = 0
                self.reward_sum = 0.0
                self.shaping_sum = 0.0

            def _on_step(self) -> bool:
                for info, done in zip(self.locals["infos"], self.locals["dones"], strict=True):
                    if done:
                        episode = info.get("episode", {})
                        self.episodes += 1
                        self.wins += bool(info.get("won"))
                        self.reward_sum += float(episode.get("r", 0.0))  # the true reward
                        self.shaping_sum += float(episode.get("shaping", 0.0))
                return True

            def _on_rollout_start(self) -> None:
                # The previous rollout's PPO update is done: snapshots, checkpoints and
                # evaluations see the weights it produced, so resuming a checkpoint of step N
                # continues exactly where the uninterrupted run was.
                self.after_update(final=False)

            def _on_training_end(self) -> None:
                self.after_update(final=True)

            def after_update(self, final: bool) -> None:
                steps = self.model.num_timesteps
                if steps >= self.next_snapshot and not final:
                    self.run.add_snapshot(self.model)
                    while self.next_snapshot <= steps:
                        self.next_snapshot += self.run.args.snapshot_every
                if steps >= self.next_checkpoint:
                    self.run.checkpoint(self.model)
                    while self.next_checkpoint <= steps:
                        self.next_checkpoint += self.run.args.checkpoint_every
                if steps >= self.next_eval and not final:
                    self.run.log_row(self.model, self, evaluate=True)
                    self.next_eval = self.run.next_eval_after(steps)
                if not final:
                    self.run.set_shaping(steps)  # the coefficient for the coming rollout

        return _Monitor(*args, **kwargs)


class ProgressBar:
    """A tqdm bar over the learner steps (SB3's own bar needs rich, which tqdm alone does not)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        from stable_baselines3.common.callbacks import BaseCallback
        from tqdm import tqdm

        class _Bar(BaseCallback):
            def __init__(self, start: int, total: int) -> None:
                super().__init__()
                self.bar = tqdm(total=total, initial=start, unit="step", smoothing=0.1,
                                dynamic_ncols=True)
                self.shown = start

            def _on_step(self) -> bool:
                steps = self.model.num_timesteps
                if steps - self.shown >= 1000:
                    self.bar.update(steps - self.shown)
                    self.shown = steps
                return True

            def close(self) -> None:
                self.bar.update(self.model.num_timesteps - self.shown if self.model else 0)
                self.bar.close()

        return _Bar(*args, **kwargs)


class Run:
    """One training run: its paths, envs, model and log."""

    def __init__(self, args: argparse.Namespace) -> None:
        from trash_env.cli import rules_options
        from trash_env.rules import Rules

        self.args = args
        self.rules = rules_options(args)

        self.rules_obj = Rules.from_options(**self.rules)
        self.num_players = self.rules_obj.num_players
        if args.round_rewards is None:
            args.round_rewards = self.rules_obj.episode == "game"
        self.out = args.out
        self.dir = self.out.parent
        self.stem = self.out.stem
        self.pool_dir = self.dir / f"{self.stem}_pool"
        self.ckpt_dir = self.dir / f"{self.stem}_checkpoints"
        self.csv_path = self.dir / f"{self.stem}_log.csv"
        self.png_path = self.dir / f"{self.stem}_curve.png"
        self.snapshots: list[str] = []
        self.start_time = time.perf_counter()
        self.start_steps = 0
        self.bots = [spec for spec in args.opponents if spec != "self"]
        self.self_play = "self" in args.opponents
        self.eval_history: list[dict[str, Any]] = []
        self.last_eval = -1
        self.imitation: dict[str, float] = {}
        self.shaping_end = max(1, round(args.shaping_until * args.timesteps))
        if args.resume_state and "shaping_end" in args.resume_state:
            self.shaping_end = int(args.resume_state["shaping_end"])
        self.shaping_now = self.shaping_at(0)
        self.last_row = (0, self.start_time)  # (steps, time) of the last log row

    # -- info recorded in every sidecar
    def info(self) -> dict[str, Any]:
        from agents.model_file import trained_for

        return {
            "algorithm": "MaskablePPO",
            "num_players": self.num_players,
            "rules": self.rules_obj.to_dict(),
            "trained_for": trained_for(self.rules_obj),  # episode kind, layout sizes dealt
            "seed": self.args.seed,
            "opponents": self.args.opponents,
            "round_rewards": self.args.round_rewards,
            "net_arch": self.args.net_arch,
            "imitate": None if self.args.imitate == "none" else self.args.imitate,
            # The optional shaped reward (agents/shaping.py): its start coefficient and the
            # step where its annealing reached 0; evaluations score the true result only.
            "shaping": ({"reward": "progress potential", "coef": self.args.shaping,
                         "zero_at_step": self.shaping_end} if self.args.shaping else None),
            **({"imitation": self.imitation} if self.imitation else {}),
        }

    def shaping_at(self, steps: int) -> float:
        """The shaping coefficient at ``steps``: ``--shaping`` annealed linearly to 0 at
        ``shaping_end`` (``--shaping-until`` x the run's ``--timesteps``; a resumed run keeps
        its checkpoint's end)."""
        if not self.args.shaping or steps >= self.shaping_end:
            return 0.0
        return self.args.shaping * (1.0 - steps / self.shaping_end)

    def set_shaping(self, steps: int) -> None:
        coef = self.shaping_at(steps)
        if coef != self.shaping_now:
            self.venv.env_method("set_shaping", coef)
            self.shaping_now = coef

    def next_multiple(self, every: int) -> int:
        return (self.start_steps // every + 1) * every

    def next_eval_after(self, steps: int) -> float:
        """The next step to evaluate at after ``steps``: every --eval-every steps, and in the
        first interval also at 1/16, 1/8, 1/4 and 1/2 of it, where a run from scratch climbs
        fastest (the curve would hide the climb otherwise)."""
        every = self.args.eval_every
        if not every:
            return math.inf
        for point in (every // 16, every // 8, every // 4, every // 2):
            if point > steps:
                return point
        return (steps // every + 1) * every

    # -- the opponent pool
    def pool(self) -> list[str]:
        """Every --opponents entry equally often; ``self`` spread over the snapshots."""
        k = max(1, len(self.snapshots))
        pool: list[str] = []
        for spec in self.args.opponents:
            if spec == "self":
                pool += [f"{s}:deterministic=false" for s in self.snapshots] or []
            else:
                pool += [spec] * k
        return pool or ["random"]

    def add_snapshot(self, model: Any) -> None:
        if not self.self_play:
            return
        path = self.pool_dir / f"snapshot_{model.num_timesteps:09d}{MODEL_SUFFIX}"
        save_model(model, path, self.info())
        self.snapshots.append(str(path))
        self.snapshots = self.snapshots[-self.args.pool_size:]
        self.venv.env_method("set_opponents", self.pool())

    def checkpoint(self, model: Any) -> None:
        """``step_N.safetensors`` (the policy) and ``step_N.ckpt`` (everything resuming needs,
        pickled: the model with its optimizer, the envs, the pool, the random states)."""
        import random

        import numpy as np
        import torch

        steps = int(model.num_timesteps)
        save_model(model, self.ckpt_dir / f"step_{steps:09d}{MODEL_SUFFIX}", self.info())
        buffer = io.BytesIO()
        model.save(buffer)
        state = {
            "format": "trash-env-checkpoint",
            "timesteps": steps,
            "model": buffer.getvalue(),
            "envs": self.env_blobs(),
            "last_obs": model._last_obs,
            "last_episode_starts": model._last_episode_starts,
            "snapshots": list(self.snapshots),
            "imitation": self.imitation,
            "flags": {name: getattr(self.args, name) for name in RESUME_FLAGS},
            "shaping_end": self.shaping_end,
            "rng": {"torch": torch.get_rng_state(), "numpy": np.random.get_state(),
                    "python": random.getstate()},
        }
        write_checkpoint(self.ckpt_dir / f"step_{steps:09d}{CHECKPOINT_SUFFIX}", state)

    def env_blobs(self) -> list[bytes]:
        """The envs mid-episode, pickled: one blob for the whole batch (its arrays, opponent
        seats and generators), or one per env (fetched from wherever each env lives)."""
        if self.args.vec == "batched":
            return [pickle.dumps(self.venv, protocol=pickle.HIGHEST_PROTOCOL)]
        return self.venv.env_method("checkpoint_blob")

    # -- envs and model
    def make_venv(self) -> Any:
        from stable_baselines3.common.monitor import Monitor
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        from agents.shaping import ProgressShaping
        from trash_env.solo import TrashSoloEnv

        pool = self.pool()
        rules, round_rewards = self.rules, self.args.round_rewards
        shaping = self.shaping_now
        blobs = self.args.resume_state["envs"] if self.args.resume_state else None
        if self.args.vec == "batched":
            from trash_env.vector import TrashVecEnv, make_vec_env

            if blobs is None:
                return make_vec_env(self.args.envs, pool, self.rules, seed=self.args.seed,
                                    round_rewards=round_rewards, shaping=shaping)
            venv = pickle.loads(blobs[0])  # the batch of the checkpoint, mid-episode
            if not isinstance(venv, TrashVecEnv) or venv.num_envs != self.args.envs:
                raise ValueError("--resume: the checkpoint's batched envs do not match --envs "
                                 f"{self.args.envs}")
            return venv

        def factory(rank: int) -> Any:
            def make() -> Any:
                import torch

                torch.set_num_threads(1)
                if blobs is not None:  # the envs of the checkpoint, mid-episode
                    return _checkpointable(pickle.loads(blobs[rank]))
                env = TrashSoloEnv(opponents=pool, round_rewards=round_rewards, **rules)
                # Monitor below the shaping: its episode figures are the true rewards.
                shaped = ProgressShaping(Monitor(env), shaping)
                shaped.reset(seed=self.args.seed * 1000 + rank)
                return _checkpointable(shaped)

            return make

        makers = [factory(rank) for rank in range(self.args.envs)]
        if self.args.vec == "subproc":
            return SubprocVecEnv(makers, start_method="spawn")
        return DummyVecEnv(makers)

    def make_model(self) -> Any:
        from sb3_contrib import MaskablePPO

        args = self.args
        tensorboard = str(args.tensorboard) if args.tensorboard else None
        if tensorboard:
            try:
                import tensorboard as _  # noqa: F401
            except ImportError:
                raise ValueError("--tensorboard needs the tensorboard package "
                                 "(pip install tensorboard)") from None
        state = args.resume_state
        if state is not None:
            import random

            import numpy as np
            import torch

            model = MaskablePPO.load(io.BytesIO(state["model"]), env=self.venv, device="cpu",
                                     tensorboard_log=tensorboard, force_reset=False)
            if model.observation_space.shape != self.venv.observation_space.shape:
                raise ValueError("--resume: the checkpoint's model does not fit these envs")
            model._last_obs = state["last_obs"]
            model._last_episode_starts = state["last_episode_starts"]
            # load() reseeded every generator: put back the states of the checkpoint's moment.
            torch.set_rng_state(state["rng"]["torch"])
            np.random.set_state(state["rng"]["numpy"])
            random.setstate(state["rng"]["python"])
            self.start_steps = int(model.num_timesteps)
            return model
        return MaskablePPO(
            "MlpPolicy", self.venv, learning_rate=args.lr, n_steps=args.n_steps,
            batch_size=args.batch_size, n_epochs=args.epochs, gamma=args.gamma,
            gae_lambda=GAE_LAMBDA, ent_coef=args.ent_coef, seed=args.seed, device="cpu",
            policy_kwargs=policy_kwargs(args), tensorboard_log=tensorboard, verbose=0,
        )

    # -- log
    def log_row(self, model: Any, monitor: Any, evaluate: bool) -> dict[str, Any]:
        steps = int(model.num_timesteps)
        now = time.perf_counter()
        elapsed = now - self.start_time
        since, self.last_row = self.last_row, (steps, now)
        row: dict[str, Any] = {
            "timesteps": steps,
            "seconds": round(elapsed, 1),
            "steps_per_s": round((steps - self.start_steps) / max(elapsed, 1e-9), 1),
            # training alone since the previous row (whose evaluations are left out)
            "interval_steps_per_s": round((steps - since[0]) / max(now - since[1], 1e-9), 1)
            if steps > since[0] else "",
            "episodes": monitor.episodes,
            "train_win_rate": round(monitor.wins / monitor.episodes, 4) if monitor.episodes
            else "",
            "train_mean_reward": round(monitor.reward_sum / monitor.episodes, 4)
            if monitor.episodes else "",
            "train_mean_shaping": round(monitor.shaping_sum / monitor.episodes, 4)
            if monitor.episodes else "",
            "shaping_coef": round(self.shaping_now or 0.0, 6),
            # eval_*: against greedy (the columns of the earlier logs); random_*: against random.
            "eval_opponent": "", "eval_games": "", "eval_win_rate": "",
            "eval_ci_low": "", "eval_ci_high": "",
            "random_games": "", "random_win_rate": "", "random_ci_low": "", "random_ci_high": "",
            "eval_seconds": "",
        }
        monitor.episodes = monitor.wins = 0
        monitor.reward_sum = monitor.shaping_sum = 0.0
        if evaluate:
            started = time.perf_counter()
            path = self.pool_dir / f"eval_current{MODEL_SUFFIX}"
            save_model(model, path, self.info())
            for opponent, prefix in (("greedy", "eval"), ("random", "random")):
                figures = evaluate_policy_vs(path, opponent, self.args.eval_deals,
                                             self.args.seed + steps, self.rules)
                row.update({f"{prefix}_games": figures["games"],
                            f"{prefix}_win_rate": round(figures["win_rate"], 4),
                            f"{prefix}_ci_low": round(figures["ci95"][0], 4),
                            f"{prefix}_ci_high": round(figures["ci95"][1], 4)})
            row.update(eval_opponent="greedy",
                       eval_seconds=round(time.perf_counter() - started, 1))
            self.eval_history.append(row)
            self.last_eval = steps
            self.last_row = (steps, time.perf_counter())
        new = not self.csv_path.exists()
        self.csv_path.parent.mkdir(parents=True, exist_ok=True)
        with self.csv_path.open("a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)
        if evaluate:
            print(f"[{steps} steps, {row['steps_per_s']:.0f} steps/s] vs greedy: "
                  f"{row['eval_win_rate']:.3f} [{row['eval_ci_low']:.3f}, "
                  f"{row['eval_ci_high']:.3f}], vs random: {row['random_win_rate']:.3f} over "
                  f"{row['eval_games']} games each ({row['eval_seconds']} s); training win rate "
                  f"{row['train_win_rate']}, mean reward {row['train_mean_reward']}", flush=True)
        return row


def plot_curve(csv_path: Path, png_path: Path, title: str, par: float = 0.5) -> Path | None:
    """The learning curve from the CSV log, against the learner steps, in three panels: the
    periodic win rates against ``greedy`` and ``random`` with their 95% Wilson bands and the
    par line (``par``, 1 / players); the training episodes' mean true reward (and the
    shaping's mean per episode, when shaped); the training throughput (steps/s between two
    log rows, evaluations left out)."""
    with csv_path.open() as handle:
        rows = [row for row in csv.DictReader(handle) if row.get("timesteps")]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def series(key: str, subset: list[dict[str, str]]) -> tuple[list[int], list[float]]:
        pairs = [(int(r["timesteps"]), float(r[key])) for r in subset if r.get(key)]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    fig, (ax_win, ax_reward, ax_speed) = plt.subplots(
        3, 1, figsize=(7.5, 8.5), sharex=True, gridspec_kw={"height_ratios": [2, 1, 1]})
    for prefix, label, color in (("eval", "greedy", "C0"), ("random", "random", "C1")):
        evaluated = [r for r in rows if r.get(f"{prefix}_win_rate")]
        if not evaluated:
            continue
        steps, rate = series(f"{prefix}_win_rate", evaluated)
        _, low = series(f"{prefix}_ci_low", evaluated)
        _, high = series(f"{prefix}_ci_high", evaluated)
        games = evaluated[-1].get(f"{prefix}_games", "")
        ax_win.fill_between(steps, low, high, color=color, alpha=0.2)
        ax_win.plot(steps, rate, marker="o", markersize=3, color=color,
                    label=f"vs {label} ({games} games, 95% Wilson band)")
    ax_win.axhline(par, color="grey", linestyle="--", linewidth=1)
    ax_win.text(0.0, par, f" par {par:.3g}", color="grey", fontsize=8, va="bottom",
                transform=ax_win.get_yaxis_transform())
    ax_win.set_ylabel("win rate (duplicate deals;\none agent seat)" if par < 0.5
                      else "win rate (duplicate deals)")
    ax_win.set_ylim(0, 1)
    if ax_win.get_legend_handles_labels()[0]:
        ax_win.legend(loc="lower right", fontsize=8)
    else:
        ax_win.text(0.5, 0.5, "no periodic evaluation (--eval-every 0)", ha="center",
                    transform=ax_win.transAxes)
    ax_win.set_title(title)
    steps, reward = series("train_mean_reward", rows)
    ax_reward.plot(steps, reward, color="C2", label="true reward (zero-sum result)")
    steps_s, shaping = series("train_mean_shaping", rows)
    if any(shaping):
        ax_reward.plot(steps_s, shaping, color="C3", linestyle=":",
                       label="shaping added in training (not in the true reward)")
    ax_reward.axhline(0.0, color="grey", linewidth=0.5)
    ax_reward.set_ylabel("mean per training\nepisode")
    ax_reward.legend(loc="lower right", fontsize=8)
    steps, speed = series("interval_steps_per_s", rows)
    ax_speed.plot(steps, speed, color="C4", marker=".")
    ax_speed.set_ylabel("training steps/s")
    ax_speed.set_ylim(bottom=0)
    ax_speed.set_xlabel("learner steps")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    from trash_env.files import atomic_write_bytes

    atomic_write_bytes(png_path, buffer.getvalue())
    return png_path


def _checkpointable(env: Any) -> Any:
    """``env`` (a Monitor) in a wrapper whose ``checkpoint_blob()`` pickles it, in whichever
    process it lives (``VecEnv.env_method``): a checkpoint holds the envs mid-episode."""
    import gymnasium as gym

    class Checkpointable(gym.Wrapper):
        def checkpoint_blob(self) -> bytes:
            return pickle.dumps(self.env, protocol=pickle.HIGHEST_PROTOCOL)

    return Checkpointable(env)


def _check_resume_flags(args: argparse.Namespace) -> None:
    """A resumed run reproduces the uninterrupted one only with the same training flags."""
    saved = args.resume_state.get("flags", {})
    differ = [name for name in RESUME_FLAGS if name in saved and saved[name] != getattr(
        args, name)]
    if differ:
        shown = "; ".join(f"--{n.replace('_', '-')} {saved[n]!r} (given {getattr(args, n)!r})"
                          for n in differ)
        raise ValueError(f"--resume: the checkpoint was trained with other flags: {shown}; "
                         "give the checkpoint's values")


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Run the training that ``args`` describe and return the final sidecar."""
    import torch

    if not hasattr(args, "resume_state"):
        args.resume_state = None
    torch.set_num_threads(args.threads)
    # The distributions' argument checks cost ~10% of a batched run and catch nothing here:
    # the masks come from the engine.
    torch.distributions.Distribution.set_default_validate_args(False)
    run = Run(args)
    state = args.resume_state
    if state is not None:
        _check_resume_flags(args)
        if args.vec != "batched" and len(state["envs"]) != args.envs:
            raise ValueError(f"--resume: the checkpoint holds {len(state['envs'])} envs, "
                             f"--envs is {args.envs}")
        if int(state["timesteps"]) > args.timesteps:
            raise ValueError(f"--timesteps {args.timesteps} is below the checkpoint's step "
                             f"{state['timesteps']}")
        run.snapshots = list(state["snapshots"])
        run.imitation = dict(state["imitation"])
        print(f"resuming from {state['path']} (step {state['timesteps']})", flush=True)
    run.dir.mkdir(parents=True, exist_ok=True)
    run.venv = run.make_venv()
    if state is not None:  # the batch of the checkpoint holds its own coefficient: set ours
        run.shaping_now = None
        run.set_shaping(int(state["timesteps"]))
    model = run.make_model()
    if args.imitate != "none" and state is None:
        run.imitation = imitate(model, args.imitate, args.imitate_samples, args.imitate_epochs,
                                args.seed, run.bots, run.rules, args.round_rewards,
                                args.gamma)
    if not run.snapshots and run.self_play:
        run.add_snapshot(model)  # the self-play pool starts with the untrained policy
    remaining = args.timesteps - run.start_steps
    print(f"training {remaining} steps ({run.start_steps} done) on {args.envs} {args.vec} envs, "
          f"opponents {' '.join(args.opponents)}, rules {run.rules or 'standard'}", flush=True)
    monitor = TrainingMonitor(run)
    run.last_row = (run.start_steps, time.perf_counter())
    if args.eval_every and state is None:
        run.log_row(model, monitor, evaluate=True)  # the level at step 0 (warm start or not)
    callbacks = [monitor] if args.no_progress else [monitor, ProgressBar(run.start_steps,
                                                                         args.timesteps)]
    if remaining > 0:
        from stable_baselines3.common.callbacks import CallbackList

        model.learn(remaining, callback=CallbackList(callbacks),
                    reset_num_timesteps=state is None, tb_log_name=run.stem)
    if not args.no_progress:
        callbacks[1].close()
    elapsed = time.perf_counter() - run.start_time
    throughput = (model.num_timesteps - run.start_steps) / max(elapsed, 1e-9)
    run.log_row(model, monitor,
                evaluate=bool(args.eval_every) and run.last_eval != model.num_timesteps)
    run.venv.close()
    # Evaluated from a file beside the pool; --out is replaced only once all is done, so a run
    # killed before the end leaves the previous --out model as it was.
    final = run.pool_dir / f"final{MODEL_SUFFIX}"
    save_model(model, final, run.info())
    evaluation = {}
    for opponent in ("random", "greedy"):
        figures = evaluate_policy_vs(final, opponent, args.final_deals, args.seed + 1,
                                     run.rules, workers=args.workers)
        evaluation[opponent] = figures
        low, high = figures["ci95"]
        print(f"final: vs {opponent}: win rate {figures['win_rate']:.3f} "
              f"[{low:.3f}, {high:.3f}] over {figures['games']} games "
              f"({figures['wins']} wins)", flush=True)
    info = {**run.info(), "evaluation": evaluation,
            "training_seconds": round(elapsed, 1), "steps_per_s": round(throughput, 1),
            "evaluation_deals": args.final_deals}
    info["timesteps"] = int(model.num_timesteps)
    save_model(model, args.out, info)
    png = plot_curve(run.csv_path, run.png_path,
                     f"{run.stem}: {run.num_players} players, {run.rules_obj.episode} episodes",
                     par=1.0 / run.num_players)
    print(f"saved {args.out} (+ {args.out.with_suffix('.json').name}); log {run.csv_path}"
          + (f"; curve {png}" if png else "") + f"; {throughput:.0f} steps/s", flush=True)
    return json.loads(args.out.with_suffix(".json").read_text())


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_args(args)
        train(args)
    except ValueError as error:
        parser.print_usage(sys.stderr)
        print(f"train.py: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
