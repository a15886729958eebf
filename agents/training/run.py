"""One training run: :func:`train` runs what a :class:`TrainConfig` describes."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path
from typing import Any

from agents.training.config import GAE_LAMBDA, MODEL_SUFFIX, TrainConfig, decided, settle
from agents.training.envs import env_states, make_venv, opponent_pool
from agents.training.eval_curve import EVAL_COLUMNS, evaluate_vs, evaluation_columns
from agents.training.log import TRAIN_COLUMNS, EpisodeStats, append_row
from agents.training.records import cut_log, model_files, remove_temp_files, repair_sidecar_copy
from agents.training.resume import prepare
from agents.training.schedules import learning_rate, shaping_at, shaping_end


def policy_kwargs(config: TrainConfig) -> dict[str, Any]:
    """The policy network: the MLP of ``net`` over the inputs of ``features`` (settled)."""
    kwargs: dict[str, Any] = {"net_arch": config.net_arch}
    features = decided(config.features, "features")
    if features != "obs":
        from agents.policies.features import torch_extractor

        kwargs["features_extractor_class"] = torch_extractor()
        kwargs["features_extractor_kwargs"] = {"features": features}
    return kwargs


class Run:
    """The state of one training run: its paths, envs, model, opponent pool and log."""

    def __init__(self, config: TrainConfig, state: dict[str, Any] | None = None) -> None:
        from trash_env.rules import Rules

        config = settle(config)  # as train() runs it (already settled there)
        self.config = config
        self.state = state  # the checkpoint resumed from, or None
        self.rules = dict(config.rules)
        self.rules_obj = Rules.from_options(**self.rules)
        self.num_players = self.rules_obj.num_players
        out = config.out_path
        self.dir, self.stem = out.parent, out.stem
        self.pool_dir = self.dir / f"{self.stem}_pool"
        self.ckpt_dir = self.dir / f"{self.stem}_checkpoints"
        self.csv_path = self.dir / f"{self.stem}_log.csv"
        self.png_path = self.dir / f"{self.stem}_curve.png"
        self.bots = [spec for spec in config.opponents if spec != "self"]
        self.self_play = "self" in config.opponents
        self.start_time = time.perf_counter()
        self.start_steps = 0
        self.snapshots: list[str] = []
        self.imitation: dict[str, float] = {}
        self.timesteps = decided(config.timesteps, "timesteps")
        self.shaping_end = shaping_end(config.shaping_until, self.timesteps)
        if state is not None:
            self.snapshots = list(state["snapshots"])
            self.imitation = dict(state["imitation"])
            self.shaping_end = int(state["shaping_end"])
        self.shaping_now: float | None = self.shaping_at(0)
        self.last_eval = -1
        self.last_logged: int | None = None  # the step of the log's last row
        self.last_row = (0, self.start_time)  # (steps, time) of the last log row
        self.stats = EpisodeStats()
        self.venv: Any = None
        self.model: Any = None
        self.elapsed = 0.0

    # -- what every sidecar records
    def info(self) -> dict[str, Any]:
        from agents.policies.model_file import trained_for

        config = self.config
        return {
            "algorithm": "MaskablePPO",
            "num_players": self.num_players,
            "rules": self.rules_obj.to_dict(),
            "trained_for": trained_for(self.rules_obj),  # episode kind, layout sizes dealt
            "seed": config.seed,
            "opponents": list(config.opponents),
            "round_rewards": config.round_rewards,
            "net_arch": config.net_arch,
            "imitate": None if config.imitate == "none" else config.imitate,
            # The optional shaped reward: its start coefficient and the step where its
            # annealing reached 0; evaluations score the true result only.
            "shaping": (
                {
                    "reward": "progress potential",
                    "coef": config.shaping,
                    "zero_at_step": self.shaping_end,
                }
                if config.shaping
                else None
            ),
            **({"imitation": self.imitation} if self.imitation else {}),
        }

    def save_model(self, path: Path, info: dict[str, Any] | None = None) -> None:
        """The policy as a model file with its sidecar (atomic writes)."""
        from agents.training.export import export_sb3_policy

        export_sb3_policy(
            self.model, path, {**(info or self.info()), "timesteps": int(self.model.num_timesteps)}
        )

    # -- the shaping schedule
    def shaping_at(self, steps: int) -> float:
        return shaping_at(self.config.shaping, self.shaping_end, steps)

    def set_shaping(self, steps: int) -> None:
        coef = self.shaping_at(steps)
        if coef != self.shaping_now:
            self.venv.env_method("set_shaping", coef)
            self.shaping_now = coef

    # -- the opponent pool
    def pool(self) -> list[str]:
        return opponent_pool(self.config.opponents, self.snapshots)

    def add_snapshot(self) -> None:
        if not self.self_play:
            return
        path = self.pool_dir / f"snapshot_{self.model.num_timesteps:09d}{MODEL_SUFFIX}"
        self.save_model(path)
        self.snapshots.append(str(path))
        self.snapshots = self.snapshots[-self.config.pool_size :]
        self.venv.env_method("set_opponents", self.pool())

    # -- checkpoints
    def checkpoint(self) -> None:
        """``step_N.safetensors`` (the policy) and ``step_N.ckpt`` (everything resuming
        needs: the model with its optimizer, the envs, the pool, the random states)."""
        from agents.training.checkpoint import CHECKPOINT_SUFFIX, checkpoint_state, write_checkpoint

        steps = int(self.model.num_timesteps)
        self.save_model(self.ckpt_dir / f"step_{steps:09d}{MODEL_SUFFIX}")
        state = checkpoint_state(
            self.model,
            env_states(self.config, self.venv),
            snapshots=list(self.snapshots),
            imitation=dict(self.imitation),
            flags=dict(self.config.resume_flags()),
            shaping_end=int(self.shaping_end),
        )
        write_checkpoint(self.ckpt_dir / f"step_{steps:09d}{CHECKPOINT_SUFFIX}", state)

    # -- envs and model
    def make_model(self) -> Any:
        from sb3_contrib import MaskablePPO

        config = self.config
        tensorboard = str(config.tensorboard) if config.tensorboard else None
        if tensorboard and importlib.util.find_spec("tensorboard") is None:
            raise ValueError(
                "--tensorboard needs the tensorboard package (pip install tensorboard)"
            )
        model = MaskablePPO(
            "MlpPolicy",
            self.venv,
            learning_rate=learning_rate(
                decided(config.lr, "lr"), decided(config.lr_decay, "lr_decay")
            ),
            n_steps=decided(config.n_steps, "n_steps"),
            batch_size=decided(config.batch_size, "batch_size"),
            n_epochs=config.epochs,
            gamma=config.gamma,
            gae_lambda=GAE_LAMBDA,
            ent_coef=decided(config.ent_coef, "ent_coef"),
            seed=config.seed,
            device="cpu",
            policy_kwargs=policy_kwargs(config),
            tensorboard_log=tensorboard,
            verbose=0,
        )
        if self.state is not None:
            from agents.training.checkpoint import restore_model

            restore_model(self.state, self.venv, model)
            self.start_steps = int(model.num_timesteps)
        return model

    # -- the run's three stages
    def start(self) -> None:
        """Tidy what a killed run left, build the envs and the model (from the checkpoint
        when resuming), warm-start it if asked, seat the first self-play snapshot."""
        from trash_env.files import safe_text

        config, state = self.config, self.state
        if state is not None:
            print(
                f"resuming from {safe_text(state['path'])} (step {state['timesteps']})", flush=True
            )
        self.dir.mkdir(parents=True, exist_ok=True)
        # What a killed run left: temp files, sidecar copies of another step, log rows after
        # the checkpoint resumed from (the resumed run writes those steps again).
        remove_temp_files(self.dir, self.stem)
        for path in model_files(self.dir, self.stem):
            repair_sidecar_copy(path)
        # The checkpoint's envs, checked as new games, before the log is touched.
        self.venv = make_venv(
            config,
            self.pool(),
            self.shaping_now or 0.0,
            state["envs"] if state is not None else None,
        )
        try:  # the checkpoint's every tensor checked against the network before the log is cut
            self.model = self.make_model()
        except ValueError:
            self.venv.close()
            raise
        if state is not None:
            self.last_logged = cut_log(self.csv_path, int(state["timesteps"]))
        if config.checkpoint_every <= self.timesteps:
            try:  # an env a checkpoint cannot hold fails now, not at the first checkpoint
                env_states(config, self.venv)
            except ValueError as error:
                self.venv.close()
                raise ValueError(
                    f"--checkpoint-every: the envs cannot be checkpointed: {error}"
                ) from None
        if state is not None:  # the batch of the checkpoint holds its own coefficient
            self.shaping_now = None
            self.set_shaping(int(state["timesteps"]))
        if config.imitate != "none" and state is None:
            from agents.training.imitation import imitate

            self.imitation = imitate(
                self.model,
                config.imitate,
                config.imitate_samples,
                config.imitate_epochs,
                config.seed,
                self.bots,
                self.rules,
                decided(config.round_rewards, "round_rewards"),
                config.gamma,
            )
        if not self.snapshots and self.self_play:
            self.add_snapshot()  # the self-play pool starts with the untrained policy

    def learn(self) -> None:
        """PPO up to ``timesteps`` (with the step-0 evaluation of a new run), then the log's
        last row."""
        from agents.training.callbacks import ProgressBar, TrainingMonitor
        from trash_env.files import safe_text

        config, model = self.config, self.model
        remaining = self.timesteps - self.start_steps
        print(
            f"training {remaining} steps ({self.start_steps} done) on {config.envs} "
            f"{config.vec} envs, opponents {safe_text(' '.join(config.opponents))}, rules "
            f"{self.rules or 'standard'}",
            flush=True,
        )
        monitor = TrainingMonitor(self)
        self.last_row = (self.start_steps, time.perf_counter())
        if config.eval_every and self.state is None:
            self.log_row(evaluate=True)  # the level at step 0 (warm start or not)
        bar = ProgressBar(self.start_steps, self.timesteps) if config.progress else None
        if remaining > 0:
            from stable_baselines3.common.callbacks import CallbackList

            model.learn(
                remaining,
                callback=CallbackList([monitor] + ([bar] if bar else [])),
                reset_num_timesteps=self.state is None,
                tb_log_name=self.stem,
            )
        if bar is not None:
            bar.close()
        self.elapsed = time.perf_counter() - self.start_time
        if self.last_logged != model.num_timesteps:  # a finished run resumed has its row
            self.log_row(evaluate=bool(config.eval_every) and self.last_eval != model.num_timesteps)
        self.venv.close()

    def finish(self) -> dict[str, Any]:
        """The final evaluation, the model saved to ``out`` with its figures, the curve;
        returns the sidecar written."""
        from agents.training.curve import plot_curve
        from trash_env.files import safe_text

        config, model = self.config, self.model
        throughput = (model.num_timesteps - self.start_steps) / max(self.elapsed, 1e-9)
        # Evaluated from a file beside the pool; ``out`` is replaced only once all is done,
        # so a run killed before the end leaves the previous model there as it was.
        final = self.pool_dir / f"final{MODEL_SUFFIX}"
        self.save_model(final)
        evaluation = {}
        for opponent in ("random", "greedy"):
            figures = evaluate_vs(
                final,
                opponent,
                config.final_deals,
                config.seed + 1,
                self.rules,
                workers=config.workers,
            )
            evaluation[opponent] = figures
            low, high = figures["ci95"]
            print(
                f"final: vs {opponent}: win rate {figures['win_rate']:.3f} "
                f"[{low:.3f}, {high:.3f}] over {figures['games']} games "
                f"({figures['wins']} wins)",
                flush=True,
            )
        info = {
            **self.info(),
            "evaluation": evaluation,
            "training_seconds": round(self.elapsed, 1),
            "steps_per_s": round(throughput, 1),
            "evaluation_deals": config.final_deals,
        }
        out = config.out_path
        self.save_model(out, info)
        png = plot_curve(
            self.csv_path,
            self.png_path,
            f"{self.stem}: {self.num_players} players, {self.rules_obj.episode} episodes",
            par=1.0 / self.num_players,
        )
        print(
            safe_text(
                f"saved {out} (+ {out.with_suffix('.json').name}); log "
                f"{self.csv_path}"
                + (f"; curve {png}" if png else "")
                + f"; {throughput:.0f} steps/s"
            ),
            flush=True,
        )
        return json.loads(out.with_suffix(".json").read_text())

    # -- log
    def log_row(self, evaluate: bool) -> dict[str, Any]:
        """Append a row of training figures (and, when ``evaluate``, the evaluation against
        greedy and random) to the CSV log; the training figures restart from there."""
        steps = int(self.model.num_timesteps)
        now = time.perf_counter()
        elapsed = now - self.start_time
        since, self.last_row = self.last_row, (steps, now)
        stats = self.stats
        per_episode = (
            (lambda total: round(total / stats.episodes, 4))
            if stats.episodes
            else (lambda total: "")
        )
        values = [
            steps,
            round(elapsed, 1),
            round((steps - self.start_steps) / max(elapsed, 1e-9), 1),
            # training alone since the previous row (whose evaluations are left out)
            round((steps - since[0]) / max(now - since[1], 1e-9), 1) if steps > since[0] else "",
            stats.episodes,
            per_episode(stats.wins),
            per_episode(stats.reward_sum),
            per_episode(stats.shaping_sum),
            round(self.shaping_now or 0.0, 6),
        ]
        row: dict[str, Any] = {
            **dict(zip(TRAIN_COLUMNS, values, strict=True)),
            **dict.fromkeys(EVAL_COLUMNS, ""),
        }
        stats.clear()
        if evaluate:
            path = self.pool_dir / f"eval_current{MODEL_SUFFIX}"
            self.save_model(path)
            row.update(
                evaluation_columns(
                    path,
                    decided(self.config.eval_deals, "eval_deals"),
                    self.config.seed + steps,
                    self.rules,
                )
            )
            self.last_eval = steps
            self.last_row = (steps, time.perf_counter())
        append_row(self.csv_path, row)
        self.last_logged = steps
        if evaluate:
            training = (
                f"training win rate {row['train_win_rate']}, mean reward {row['train_mean_reward']}"
                if row["episodes"]
                else "no training episode finished since the last row"
            )
            print(
                f"[{steps} steps, {row['steps_per_s']:.0f} steps/s] vs greedy: "
                f"{row['eval_win_rate']:.3f} [{row['eval_ci_low']:.3f}, "
                f"{row['eval_ci_high']:.3f}], vs random: {row['random_win_rate']:.3f} over "
                f"{row['eval_games']} games each ({row['eval_seconds']} s); {training}",
                flush=True,
            )
        return row


def train(config: TrainConfig, checkpoint: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run the training ``config`` describes; returns the final model's sidecar. A bad
    setting or checkpoint raises ``ValueError`` before any training. ``checkpoint``: the
    state :func:`prepare` returned for this (settled) config, when the caller has it."""
    import torch

    if checkpoint is None:
        config, checkpoint = prepare(config)
    torch.set_num_threads(config.threads)
    # The distributions' argument checks cost time (docs/training.md) and catch nothing
    # here: the masks come from the engine.
    torch.distributions.Distribution.set_default_validate_args(False)
    run = Run(config, checkpoint)
    run.start()
    run.learn()
    return run.finish()
