"""``train.py``'s command line: the flags, the :class:`TrainConfig` they describe, ``main``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from agents.training.config import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_OUT,
    DEFAULT_SHAPING,
    DEFAULT_SHAPING_UNTIL,
    FEATURE_CHOICES,
    FINAL_DEALS,
    PER_PLAYERS,
    VEC_CHOICES,
    TrainConfig,
)
from agents.training.resume import prepare
from agents.training.run import train
from trash_env.cli import (
    Parser,
    add_rules_arguments,
    extra_install,
    need_modules,
    program_name,
    rules_options,
    run_interruptible,
)
from trash_env.files import describe_os_error, safe_text


def per_players(name: str) -> str:
    """A :data:`PER_PLAYERS` field's default for each player count, for ``--help``."""
    shown = []
    for count, row in PER_PLAYERS.items():
        value = row[name]
        if isinstance(value, str):
            text = value
        elif isinstance(value, int):
            text = f"{value:,}"
        else:
            text = f"{value:g}"
        shown.append(f"{count}p {text}")
    return ", ".join(shown)


def build_parser() -> Parser:
    parser = Parser(
        prog=program_name("python train.py", "trash-train"),
        description="Train a Trash agent (MaskablePPO) against bots and snapshots of itself.",
    )
    add = parser.add_argument
    add(
        "--timesteps",
        type=int,
        default=None,
        help="total learner steps (default: the player count's, " + per_players("timesteps") + ")",
    )
    add("--seed", type=int, default=0, help="seed of everything (default: 0)")
    add(
        "--envs",
        type=int,
        default=None,
        help="parallel envs (default: 256 with --vec batched, 4 with dummy or subproc; on "
        "--resume, the checkpoint's)",
    )
    add(
        "--vec",
        choices=VEC_CHOICES,
        default=None,
        help="batched: one TrashVecEnv (trash_env.vector, the batched engine; needs numba) "
        "whenever the opponent pool allows it (random, greedy, counting, model files, self), "
        "else dummy with a one-line reason; dummy: DummyVecEnv (one process); subproc: "
        "SubprocVecEnv (default: batched; on --resume, the checkpoint's)",
    )
    add(
        "--opponents",
        nargs="+",
        default=["greedy"],
        metavar="SPEC",
        help="opponent pool: bot specs (random, greedy, counting, search:rollouts=20, a "
        "model .safetensors) and/or self (the self-play pool); each entry is drawn equally "
        "often (default: greedy)",
    )
    add(
        "--out",
        type=Path,
        default=None,
        help=f"model path (.safetensors); the sidecar copy (.json), CSV log, PNG, checkpoints "
        f"and self-play pool go beside it (default: {DEFAULT_OUT}; with --resume, the "
        "checkpoint's own run: DIR/NAME_checkpoints continues DIR/NAME.safetensors)",
    )
    add(
        "--resume",
        type=Path,
        default=None,
        metavar="CKPT",
        help="continue training from this checkpoint (a step_N.ckpt, or a checkpoints "
        "directory: its latest good one) up to --timesteps in total, writing into the "
        "checkpoint's own run unless --out names a new one (never into another run's files); "
        "a damaged checkpoint is skipped for the previous one; a .ckpt holds tensors and JSON "
        "only",
    )
    add("--tensorboard", type=Path, default=None, metavar="DIR", help="TensorBoard log dir")
    add(
        "--checkpoint-every",
        type=int,
        default=500_000,
        metavar="N",
        help="save a checkpoint after the PPO update at every N steps (default: 500000)",
    )
    add(
        "--snapshot-every",
        type=int,
        default=50_000,
        metavar="N",
        help="add a self-play snapshot every N steps (default: 50000)",
    )
    add("--pool-size", type=int, default=5, help="self-play snapshots kept (default: 5)")
    add(
        "--eval-every",
        type=int,
        default=250_000,
        metavar="N",
        help="evaluate against greedy and random at step 0, at N/16, N/8, N/4 and N/2 (the "
        "climb of a run from scratch), then every N steps; 0 for never (default: 250000)",
    )
    add(
        "--eval-deals",
        type=int,
        default=None,
        metavar="N",
        help="duplicate deals per opponent in a periodic evaluation (default: the player "
        "count's, " + per_players("eval_deals") + ")",
    )
    add(
        "--final-deals",
        type=int,
        default=FINAL_DEALS,
        metavar="N",
        help="duplicate deals per opponent in the final evaluation (the agent in one seat, "
        f"each seat in turn; default: {FINAL_DEALS})",
    )
    add(
        "--imitate",
        default="none",
        metavar="SPEC",
        help="warm start: before PPO, fit the policy to this bot's moves (e.g. greedy) and "
        "the critic to the results; PPO then trains on the zero-sum reward as usual; none: "
        "learn from a random policy (default: none)",
    )
    add(
        "--imitate-samples",
        type=int,
        default=100_000,
        metavar="N",
        help="decisions of the teacher to fit (default: 100000)",
    )
    add(
        "--imitate-epochs", type=int, default=10, metavar="N", help="passes over them (default: 10)"
    )
    add("--workers", type=int, default=2, help="processes for the final evaluation (default: 2)")
    add(
        "--round-rewards",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="pay every deal's zero-sum result too (default: on for whole-game episodes)",
    )
    add(
        "--shaping",
        type=float,
        default=DEFAULT_SHAPING,
        metavar="C",
        help="optional SHAPED reward on top of the true one: C x the progress since the "
        "previous learner decision (own share of the layout face-up minus the opponents' "
        "mean, per deal; agents/training/shaping.py); it telescopes within a deal to that "
        "difference at the deal's end; the episode figures and every evaluation keep the true "
        f"result; 0: off (default: {DEFAULT_SHAPING})",
    )
    add(
        "--shaping-until",
        type=float,
        default=DEFAULT_SHAPING_UNTIL,
        metavar="F",
        help="anneal the shaping coefficient linearly from C at step 0 to 0 at F x "
        "--timesteps, so the updates after that see the true reward alone (default: "
        f"{DEFAULT_SHAPING_UNTIL})",
    )
    add("--net", default="128,128", help="hidden layer sizes of the MLP (default: 128,128)")
    add(
        "--features",
        choices=FEATURE_CHOICES,
        default=None,
        help="the network's inputs: obs, the observation alone; pairs, the observation plus "
        "the products 'the card on offer has rank r and my slot r is in state s' and "
        "'the card on offer is wild'; fits, pairs plus 'the discard top fits my layout' and "
        "'the card in hand fits my layout' (agents/policies/features.py; no parameters) "
        "(default: the player count's, " + per_players("features") + "; on --resume, the "
        "checkpoint's)",
    )
    add(
        "--lr",
        type=float,
        default=None,
        help="learning rate at the start (default: the player count's, "
        + per_players("lr")
        + "; 1e-4 suits fine-tuning after --imitate)",
    )
    add(
        "--lr-decay",
        type=float,
        default=None,
        metavar="F",
        help="the learning rate falls linearly from --lr to (1 - F) x --lr at the end of the "
        "run; 0: constant (default: the player count's, " + per_players("lr_decay") + ")",
    )
    add(
        "--n-steps",
        type=int,
        default=None,
        help="rollout steps per env (default: 16 with --vec batched, 512 with dummy or "
        "subproc: 4,096 and 2,048 samples per rollout with the default --envs; on --resume, "
        "the checkpoint's)",
    )
    add(
        "--batch-size",
        type=int,
        default=None,
        help=f"minibatch size (default: {DEFAULT_BATCH_SIZE}, or one rollout if smaller)",
    )
    add("--epochs", type=int, default=2, help="PPO epochs per rollout (default: 2)")
    add("--gamma", type=float, default=0.995, help="discount (default: 0.995)")
    add(
        "--ent-coef",
        type=float,
        default=None,
        help="entropy bonus (default: the player count's, "
        + per_players("ent_coef")
        + "; 0.001 suits fine-tuning after --imitate)",
    )
    add("--threads", type=int, default=1, help="torch threads (default: 1)")
    add("--no-progress", action="store_true", help="no progress bar")
    add_rules_arguments(parser)
    return parser


def config_of(args: argparse.Namespace) -> TrainConfig:
    """The :class:`TrainConfig` that parsed flags describe (checked: ``ValueError``)."""
    values = {
        name: getattr(args, name)
        for name in TrainConfig.__dataclass_fields__
        if name not in ("progress", "rules", "opponents")
    }
    return TrainConfig(
        **values,
        opponents=tuple(args.opponents),
        progress=not args.no_progress,
        rules=rules_options(args),
    )


TRAIN_MODULES = ("torch", "stable_baselines3", "sb3_contrib", "matplotlib")


def main(argv: list[str] | None = None) -> int:
    """Parse, check, train; a bad flag or checkpoint exits 2 with one sentence on stderr, a
    file that cannot be written 1, Ctrl-C 130 and SIGTERM 143 (one line each, the last
    checkpoint kept)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    runs: list[Path] = []  # the run's model path, once the config has decided it
    return run_interruptible(parser.prog, lambda: _run(parser, args, runs), _kept(runs))


def _run(parser: Parser, args: argparse.Namespace, runs: list[Path]) -> int:
    try:
        need_modules("training", extra_install("train"), *TRAIN_MODULES)  # one line, first
        config, checkpoint = prepare(config_of(args))
        runs.append(config.out_path)
        train(config, checkpoint)
    except ValueError as error:
        return parser.refuse(error)
    except OSError as error:  # a full disk, a folder gone: the files written before stay whole
        print(f"{parser.prog}: error: {describe_os_error(error)}", file=sys.stderr)
        return 1
    return 0


def _kept(runs: list[Path]) -> Callable[[], str]:
    """The note an interrupted run prints: where its checkpoints are, if it wrote any by
    then (looked at when the run is interrupted). ``--resume`` of that folder alone
    continues this run, in its own files."""

    def note() -> str:
        if not runs:
            return ""
        out = runs[-1]
        folder = out.parent / f"{out.stem}_checkpoints"
        if not any(folder.glob("*.ckpt")):
            return ""
        return f" (checkpoints kept: continue with --resume {safe_text(folder)})"

    return note
