"""The stable-baselines3 callbacks of a run: the monitor (episode figures, and after each PPO
update the snapshots, checkpoints, evaluations and shaping coefficient) and the progress bar."""

from __future__ import annotations

from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from agents.training.schedules import next_eval_after, next_multiple


class TrainingMonitor(BaseCallback):
    """Counts the finished episodes; after each PPO update (at the start of the next rollout,
    and at the end of training) takes the snapshot, checkpoint and evaluation that are due,
    so that they see the weights the update produced and a run resumed from a checkpoint of
    step N continues exactly where the uninterrupted run was."""

    def __init__(self, run: Any) -> None:
        """``run``: the :class:`agents.training.run.Run` whose stages it calls."""
        super().__init__()
        self.run = run
        config, start = run.config, run.start_steps
        self.next_snapshot = next_multiple(start, config.snapshot_every)
        self.next_checkpoint = next_multiple(start, config.checkpoint_every)
        self.next_eval = next_eval_after(start, config.eval_every)

    def _on_step(self) -> bool:
        for info, done in zip(self.locals["infos"], self.locals["dones"], strict=True):
            if done:
                self.run.stats.add(info)
        return True

    def _on_rollout_start(self) -> None:
        self.after_update(final=False)

    def _on_training_end(self) -> None:
        self.after_update(final=True)

    def after_update(self, final: bool) -> None:
        run, config = self.run, self.run.config
        steps = self.model.num_timesteps
        if steps >= self.next_snapshot and not final:
            run.add_snapshot()
            while self.next_snapshot <= steps:
                self.next_snapshot += config.snapshot_every
        # The log row before the checkpoint: a run killed after the checkpoint of this step
        # has the row too, and its resumption keeps the rows up to this step.
        if steps >= self.next_eval and not final:
            run.log_row(evaluate=True)
            self.next_eval = next_eval_after(steps, config.eval_every)
        if steps >= self.next_checkpoint:
            run.checkpoint()
            while self.next_checkpoint <= steps:
                self.next_checkpoint += config.checkpoint_every
        if not final:
            run.set_shaping(steps)  # the coefficient for the coming rollout


class ProgressBar(BaseCallback):
    """A tqdm bar over the learner steps (SB3's own bar needs rich). It stops at ``total``:
    the last rollout may run past it, which the bar does not show as an overshoot."""

    def __init__(self, start: int, total: int) -> None:
        from tqdm import tqdm

        super().__init__()
        self.total = total
        self.bar = tqdm(
            total=total, initial=min(start, total), unit="step", smoothing=0.1, dynamic_ncols=True
        )
        self.shown = min(start, total)

    def _on_step(self) -> bool:
        steps = min(self.model.num_timesteps, self.total)
        if steps - self.shown >= 1000:
            self.bar.update(steps - self.shown)
            self.shown = steps
        return True

    def close(self) -> None:
        if getattr(self, "model", None) is not None:
            self.bar.update(min(self.model.num_timesteps, self.total) - self.shown)
        self.bar.close()
