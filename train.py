"""Train a Trash agent with MaskablePPO against bots and frozen snapshots of itself.

    python train.py                       # the default run: a few minutes on 2 cores
    python train.py --episode round --timesteps 3000000 --out runs/long/model.zip
    python train.py --imitate none --lr 3e-4 --ent-coef 0.01   # pure RL from a random policy

Why it is built this way:

- The learner plays :class:`trash_env.solo.TrashSoloEnv` (one seat; the opponents act inside
  ``step``) on ``--envs`` parallel envs. Each opponent seat draws, per episode, one entry of the
  ``--opponents`` list; ``self`` stands for the self-play pool: the last ``--pool-size``
  snapshots of the learner, saved every ``--snapshot-every`` steps and pushed to every env
  (``set_opponents``), played by sampling from their masked policy (varied opponents).
- MaskablePPO always sees the action mask, so every action is legal.
- Warm start (``--imitate greedy``, the default): the reward is a +-1 result decided mostly by
  the luck of the deal, so PPO from a random policy needs millions of steps to discover even
  "take the discard when it fits". Fitting the actor to a bot's moves first (and the critic to
  the results) starts PPO from the bot's level; PPO then optimises the unchanged zero-sum reward.
- Rewards are the zero-sum result of the episode. In whole-game episodes (the default rules)
  ``--round-rewards`` (on by default there) also pays every deal its zero-sum result, as the
  AEC env's ``round_rewards`` does: the same game, with the outcome of each deal visible.
- Every ``--eval-every`` steps the deterministic policy is evaluated against ``greedy`` on
  duplicate deals (agents/evaluation.py); the figures go to the CSV log and the learning-curve
  PNG. At the end it is evaluated against ``random`` and ``greedy`` and saved with a JSON sidecar
  (rules, observation version and size, timesteps, seed, evaluation figures).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path("runs/default/model.zip")


# ---------------------------------------------------------------------------- options


def build_parser() -> argparse.ArgumentParser:
    from trash_env.cli import add_rules_arguments

    parser = argparse.ArgumentParser(
        prog="python train.py",
        description="Train a Trash agent (MaskablePPO) against bots and snapshots of itself.",
    )
    add = parser.add_argument
    add("--timesteps", type=int, default=300_000, help="total learner steps (default: 300000)")
    add("--seed", type=int, default=0, help="seed of everything (default: 0)")
    add("--envs", type=int, default=4, help="parallel envs (default: 4)")
    add("--vec", choices=("dummy", "subproc"), default="dummy",
        help="DummyVecEnv (one process; fastest on 2 cores, where the network dominates) or "
        "SubprocVecEnv (default: dummy)")
    add("--opponents", nargs="+", default=["random", "greedy", "self"], metavar="SPEC",
        help="opponent pool: bot specs (random, greedy, counting, search:rollouts=20, a "
        "model .zip) and/or self (the self-play pool); each entry is drawn equally often "
        "(default: random greedy self)")
    add("--out", type=Path, default=DEFAULT_OUT,
        help=f"model path; the sidecar, CSV log and PNG go beside it (default: {DEFAULT_OUT})")
    add("--resume", type=Path, default=None, metavar="CKPT",
        help="continue training this checkpoint (.zip) up to --timesteps in total")
    add("--tensorboard", type=Path, default=None, metavar="DIR", help="TensorBoard log dir")
    add("--checkpoint-every", type=int, default=100_000, metavar="N",
        help="save a checkpoint every N steps (default: 100000)")
    add("--snapshot-every", type=int, default=50_000, metavar="N",
        help="add a self-play snapshot every N steps (default: 50000)")
    add("--pool-size", type=int, default=5, help="self-play snapshots kept (default: 5)")
    add("--eval-every", type=int, default=50_000, metavar="N",
        help="evaluate against greedy every N steps, 0 for never (default: 50000)")
    add("--eval-deals", type=int, default=300, metavar="N",
        help="duplicate deals per periodic evaluation (default: 300)")
    add("--final-deals", type=int, default=1000, metavar="N",
        help="duplicate deals per opponent in the final evaluation (default: 1000)")
    add("--imitate", default="greedy", metavar="SPEC",
        help="warm start: before PPO, fit the policy to this bot's moves and the critic to "
        "the results; PPO then trains on the zero-sum reward as usual; none for pure RL "
        "from a random policy (default: greedy)")
    add("--imitate-samples", type=int, default=100_000, metavar="N",
        help="decisions of the teacher to fit (default: 100000)")
    add("--imitate-epochs", type=int, default=10, metavar="N",
        help="passes over them (default: 10)")
    add("--workers", type=int, default=2,
        help="processes for the final evaluation (default: 2)")
    add("--round-rewards", action=argparse.BooleanOptionalAction, default=None,
        help="pay every deal's zero-sum result too (default: on for whole-game episodes)")
    add("--net", default="128,128", help="hidden layer sizes of the MLP (default: 128,128)")
    add("--lr", type=float, default=1e-4,
        help="learning rate (default: 1e-4; 3e-4 suits --imitate none)")
    add("--n-steps", type=int, default=512, help="rollout steps per env (default: 512)")
    add("--batch-size", type=int, default=256, help="minibatch size (default: 256)")
    add("--epochs", type=int, default=5, help="PPO epochs per rollout (default: 5)")
    add("--gamma", type=float, default=0.995, help="discount (default: 0.995)")
    add("--ent-coef", type=float, default=0.001,
        help="entropy bonus (default: 0.001; 0.01 suits --imitate none)")
    add("--threads", type=int, default=1, help="torch threads (default: 1)")
    add("--no-progress", action="store_true", help="no progress bar")
    add_rules_arguments(parser)
    return parser


def check_args(args: argparse.Namespace) -> None:
    """Clear errors for values argparse cannot check."""
    for name in ("timesteps", "envs", "checkpoint_every", "snapshot_every", "pool_size",
                 "eval_deals", "final_deals", "n_steps", "batch_size", "epochs", "threads"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be 1 or more, got "
                             f"{getattr(args, name)}")
    if args.eval_every < 0:
        raise ValueError(f"--eval-every must be 0 or more, got {args.eval_every}")
    try:
        args.net_arch = [int(x) for x in args.net.split(",")]
        assert args.net_arch and all(x > 0 for x in args.net_arch)
    except (ValueError, AssertionError):
        raise ValueError(f"--net must be sizes like 128,128, got {args.net!r}") from None
    if args.out.suffix != ".zip":
        raise ValueError(f"--out must end in .zip, got {args.out}")
    if args.resume is not None and not args.resume.is_file():
        raise ValueError(f"--resume: checkpoint {args.resume} not found")
    if args.workers < 1:
        raise ValueError(f"--workers must be 1 or more, got {args.workers}")
    from agents.base import make_agent

    for spec in args.opponents + ([args.imitate] if args.imitate != "none" else []):
        if spec != "self":
            make_agent(spec, seed=0)  # an unknown bot or option fails before any training
    if args.imitate_samples < 1 or args.imitate_epochs < 1:
        raise ValueError("--imitate-samples and --imitate-epochs must be 1 or more")


# ---------------------------------------------------------------------------- evaluation


def evaluate_policy_vs(model_path: Path, opponent: str, deals: int, seed: int,
                       rules: dict[str, Any], workers: int = 1) -> dict[str, Any]:
    """The policy's figures against ``opponent`` from agents/evaluation.py (duplicate deals,
    seats rotated): games, wins, win_rate and its 95% Wilson interval ``ci95``."""
    from agents.evaluation import evaluate
    from trash_env.rules import Rules

    report = evaluate([str(model_path), opponent], rules=Rules.from_options(**rules),
                      deals=deals, seed=seed, workers=workers)
    mine = report.agents[str(model_path)]
    return {key: mine[key] for key in ("games", "wins", "win_rate", "ci95")}


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


def save_model(model: Any, path: Path, info: dict[str, Any]) -> None:
    from agents.policy import write_sidecar

    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(str(path))
    write_sidecar(path, {**info, "timesteps": int(model.num_timesteps)})


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
                self.next_eval = (run.next_multiple(run.args.eval_every)
                                  if run.args.eval_every else math.inf)
                self.episodes = 0
                self.wins = 0
                self.reward_sum = 0.0

            def _on_step(self) -> bool:
                for info, done in zip(self.locals["infos"], self.locals["dones"], strict=True):
                    if done:
                        self.episodes += 1
                        self.wins += bool(info.get("won"))
                        self.reward_sum += float(info.get("episode", {}).get("r", 0.0))
                steps = self.model.num_timesteps
                if steps >= self.next_snapshot:
                    self.run.add_snapshot(self.model)
                    self.next_snapshot += self.run.args.snapshot_every
                if steps >= self.next_checkpoint:
                    self.run.checkpoint(self.model)
                    self.next_checkpoint += self.run.args.checkpoint_every
                if steps >= self.next_eval:
                    self.run.log_row(self.model, self, evaluate=True)
                    self.next_eval += self.run.args.eval_every
                return True

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

    # -- info recorded in every sidecar
    def info(self) -> dict[str, Any]:
        return {
            "algorithm": "MaskablePPO",
            "num_players": self.num_players,
            "rules": self.rules_obj.to_dict(),
            "seed": self.args.seed,
            "opponents": self.args.opponents,
            "round_rewards": self.args.round_rewards,
            "net_arch": self.args.net_arch,
            "imitate": None if self.args.imitate == "none" else self.args.imitate,
            **({"imitation": self.imitation} if self.imitation else {}),
        }

    def next_multiple(self, every: int) -> int:
        return (self.start_steps // every + 1) * every

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
        path = self.pool_dir / f"snapshot_{model.num_timesteps:09d}.zip"
        save_model(model, path, self.info())
        self.snapshots.append(str(path))
        self.snapshots = self.snapshots[-self.args.pool_size:]
        self.venv.env_method("set_opponents", self.pool())

    def checkpoint(self, model: Any) -> None:
        save_model(model, self.ckpt_dir / f"step_{model.num_timesteps:09d}.zip", self.info())

    # -- envs and model
    def make_venv(self) -> Any:
        from stable_baselines3.common.monitor import Monitor
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        from trash_env.solo import TrashSoloEnv

        pool = self.pool()
        rules, round_rewards = self.rules, self.args.round_rewards

        def factory(rank: int) -> Any:
            def make() -> Any:
                import torch

                torch.set_num_threads(1)
                env = TrashSoloEnv(opponents=pool, round_rewards=round_rewards, **rules)
                env.reset(seed=self.args.seed * 1000 + rank)
                return Monitor(env)

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
        if args.resume is not None:
            from agents.policy import read_sidecar

            read_sidecar(args.resume)  # a checkpoint for another layout fails clearly here
            model = MaskablePPO.load(str(args.resume), env=self.venv, device="cpu",
                                     tensorboard_log=tensorboard)
            self.start_steps = int(model.num_timesteps)
            return model
        return MaskablePPO(
            "MlpPolicy", self.venv, learning_rate=args.lr, n_steps=args.n_steps,
            batch_size=args.batch_size, n_epochs=args.epochs, gamma=args.gamma,
            gae_lambda=0.95, ent_coef=args.ent_coef, seed=args.seed, device="cpu",
            policy_kwargs={"net_arch": args.net_arch}, tensorboard_log=tensorboard, verbose=0,
        )

    # -- log
    def log_row(self, model: Any, monitor: Any, evaluate: bool) -> dict[str, Any]:
        steps = int(model.num_timesteps)
        elapsed = time.perf_counter() - self.start_time
        row: dict[str, Any] = {
            "timesteps": steps,
            "seconds": round(elapsed, 1),
            "steps_per_s": round((steps - self.start_steps) / max(elapsed, 1e-9), 1),
            "episodes": monitor.episodes,
            "train_win_rate": round(monitor.wins / monitor.episodes, 4) if monitor.episodes
            else "",
            "train_mean_reward": round(monitor.reward_sum / monitor.episodes, 4)
            if monitor.episodes else "",
            "eval_opponent": "", "eval_games": "", "eval_win_rate": "",
            "eval_ci_low": "", "eval_ci_high": "",
        }
        monitor.episodes = monitor.wins = 0
        monitor.reward_sum = 0.0
        if evaluate:
            path = self.pool_dir / "eval_current.zip"
            save_model(model, path, self.info())
            figures = evaluate_policy_vs(path, "greedy", self.args.eval_deals,
                                         self.args.seed + steps, self.rules)
            row.update(eval_opponent="greedy", eval_games=figures["games"],
                       eval_win_rate=round(figures["win_rate"], 4),
                       eval_ci_low=round(figures["ci95"][0], 4),
                       eval_ci_high=round(figures["ci95"][1], 4))
            self.eval_history.append(row)
            self.last_eval = steps
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
                  f"{row['eval_ci_high']:.3f}] over {row['eval_games']} games; "
                  f"training win rate {row['train_win_rate']}", flush=True)
        return row


def plot_curve(csv_path: Path, png_path: Path, title: str) -> Path | None:
    """Win rate against greedy (with its 95% interval) over training steps, from the CSV."""
    rows = []
    with csv_path.open() as handle:
        for row in csv.DictReader(handle):
            if row.get("eval_win_rate"):
                rows.append(row)
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [int(r["timesteps"]) for r in rows]
    rate = [float(r["eval_win_rate"]) for r in rows]
    low = [float(r["eval_ci_low"]) for r in rows]
    high = [float(r["eval_ci_high"]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.fill_between(steps, low, high, alpha=0.25, label="95% interval")
    ax.plot(steps, rate, marker="o", label="win rate vs greedy")
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate (duplicate deals)")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
    return png_path


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Run the training that ``args`` describe and return the final sidecar."""
    import torch

    torch.set_num_threads(args.threads)
    run = Run(args)
    run.dir.mkdir(parents=True, exist_ok=True)
    if args.resume is not None:
        run.snapshots = [str(args.resume)] if run.self_play else []
    run.venv = run.make_venv()
    model = run.make_model()
    if args.imitate != "none" and args.resume is None:
        run.imitation = imitate(model, args.imitate, args.imitate_samples, args.imitate_epochs,
                                args.seed, run.bots, run.rules, args.round_rewards,
                                args.gamma)
    if not run.snapshots and run.self_play:
        run.add_snapshot(model)  # the self-play pool starts with the untrained policy
    remaining = args.timesteps - run.start_steps
    print(f"training {remaining} steps ({run.start_steps} done) on {args.envs} {args.vec} envs, "
          f"opponents {' '.join(args.opponents)}, rules {run.rules or 'standard'}", flush=True)
    monitor = TrainingMonitor(run)
    if run.imitation and args.eval_every:
        run.log_row(model, monitor, evaluate=True)  # the warm start's level, at step 0
    callbacks = [monitor] if args.no_progress else [monitor, ProgressBar(run.start_steps,
                                                                         args.timesteps)]
    if remaining > 0:
        from stable_baselines3.common.callbacks import CallbackList

        model.learn(remaining, callback=CallbackList(callbacks),
                    reset_num_timesteps=args.resume is None, tb_log_name=run.stem)
    if not args.no_progress:
        callbacks[1].close()
    elapsed = time.perf_counter() - run.start_time
    throughput = (model.num_timesteps - run.start_steps) / max(elapsed, 1e-9)
    run.log_row(model, monitor,
                evaluate=bool(args.eval_every) and run.last_eval != model.num_timesteps)
    run.venv.close()
    save_model(model, args.out, run.info())
    evaluation = {}
    for opponent in ("random", "greedy"):
        figures = evaluate_policy_vs(args.out, opponent, args.final_deals, args.seed + 1,
                                     run.rules, workers=args.workers)
        evaluation[opponent] = figures
        low, high = figures["ci95"]
        print(f"final: vs {opponent}: win rate {figures['win_rate']:.3f} "
              f"[{low:.3f}, {high:.3f}] over {figures['games']} games "
              f"({figures['wins']} wins)", flush=True)
    info = {**run.info(), "evaluation": evaluation,
            "training_seconds": round(elapsed, 1), "steps_per_s": round(throughput, 1),
            "evaluation_deals": args.final_deals}
    from agents.policy import write_sidecar

    info["timesteps"] = int(model.num_timesteps)
    write_sidecar(args.out, info)
    png = plot_curve(run.csv_path, run.png_path,
                     f"{run.stem}: {run.num_players} players, {run.rules_obj.episode} episodes")
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
