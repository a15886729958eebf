"""The training envs mid-episode as named fields, and their checks on the way back.

The batch: its games one array per record field, its seating, episode figures, generators and
pool; restored into a new batch once :mod:`trash_env.vector.validate` has checked them as new
games. A solo env: what replays its episode (the generator's state before the reset, the seed,
the pool then, the learner's actions) and the shaping's figures; restored by replaying it
through the engine, which checks every action.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import gymnasium as gym
import numpy as np

# Array name -> the batch core's attribute (SoloBatch): renaming one leaves files loadable.
BATCH_ARRAYS = {
    "game_seeds": "batch.seeds", "seats": "seats", "opponent_kinds": "kinds",
    "opponent_weights": "weights", "opponent_policy": "policy_of", "opponent_rngs": "orngs",
    "episode_return": "episode_return", "episode_length": "episode_length",
    "episode_start": "episode_start", "episode_shaping": "episode_shaping",
    "shaping_potential": "follower.potential", "shaping_deals": "follower.deals",
}  # fmt: skip
SNAPSHOT = ".safetensors:deterministic=false"  # a self-play snapshot's spec (envs.opponent_pool)


def _set(owner: Any, path: str, value: Any) -> None:
    parent, _, name = path.rpartition(".")
    setattr(attrgetter(parent)(owner) if parent else owner, name, value)


def check_from_run(specs: list[str | None], pool: list[str]) -> None:
    """Opponents a checkpoint names must be the run's: its pool's, or self-play snapshots."""
    for spec in specs:
        if spec is not None and spec not in pool and not spec.endswith(SNAPSHOT):
            raise ValueError(f"names an opponent outside the run's pool ({spec[:100]!r})")


def batched_env_state(venv: Any) -> tuple[dict, dict[str, np.ndarray]]:
    """The whole batch as a document and named arrays."""
    core, batch = venv.core, venv.core.batch
    specs = [getattr(p.source, "spec", None) if p is not None else None for p in core.policies]
    if any(p is not None and s is None for p, s in zip(core.policies, specs, strict=True)):
        raise ValueError("an opponent given as an object, not a spec, cannot be checkpointed")
    saved = venv.state_dict()  # the batch's games and game-seed stream
    arrays = {f"games/{name}": saved["games"][name] for name in batch.games.dtype.names}
    arrays["next_game_seeds"] = saved["next_game_seeds"]
    arrays.update({name: attrgetter(attr)(core) for name, attr in BATCH_ARRAYS.items()})
    document = {
        "kind": "batched",
        "rules": core.rules.to_dict(),
        "rng": core.rng.bit_generator.state,
        "game_rng": saved["rng"],
        "shaping": float(core.shaping),
        "opponents": list(core.opponent_specs),
        "policies": specs,
    }
    return document, {k: np.array(v) for k, v in arrays.items()}


def restore_batched_env(saved: list[Any], config: Any, reference: Any) -> Any:
    """``reference`` (a new batch of the run's settings) given the checkpoint's fields."""
    from trash_env.rules import Rules
    from trash_env.vector.env import batch_policy
    from trash_env.vector.validate import check_seats, games_from_fields

    if len(saved) != 1 or saved[0]["kind"] != "batched":
        raise ValueError("--resume: the checkpoint's envs are not one batch")
    env, core, arrays = saved[0], reference.core, dict(saved[0]["arrays"])
    try:
        if Rules.from_options(**env["rules"]) != core.rules:
            raise ValueError("plays other rules")
        if env["opponents"] != core.opponent_specs:
            raise ValueError("has another opponent pool")
        seated = env["policies"][len(core.opponent_specs) :]  # self-play snapshots since
        check_from_run(seated, core.opponent_specs)
        policies = core.policies + [None if s is None else batch_policy(s) for s in seated]
        fields = {k[6:]: arrays.pop(k) for k in list(arrays) if k.startswith("games/")}
        games = games_from_fields(fields, core.rules) if fields else np.zeros(0)
        if len(games) != config.envs:
            raise ValueError(f"does not match --envs {config.envs}")
        values = {name: arrays.pop(name, None) for name in BATCH_ARRAYS}
        for name, value in values.items():
            like = attrgetter(BATCH_ARRAYS[name])(core)
            if value is None or value.dtype != like.dtype or value.shape != like.shape:
                raise ValueError(f"has no {name} array of {like.dtype} {like.shape}")
        next_seeds = arrays.pop("next_game_seeds", np.zeros(0))
        if next_seeds.dtype != np.uint64 or next_seeds.ndim != 1 or arrays:
            raise ValueError(f"has bad arrays ({', '.join(sorted(arrays)) or 'next_game_seeds'})")
        counts = [values[n] for n in ("opponent_weights", "episode_length", "shaping_deals")]
        if any((v < 0).any() for v in counts) or not all(
            np.isfinite(v).all() for v in values.values() if v.dtype == np.float64
        ):
            raise ValueError("holds episode figures that are negative or not finite")
        check_seats(
            games, values["seats"], values["opponent_kinds"], values["opponent_policy"],
            len(policies), values["opponent_rngs"], core.rules.num_players,
        )  # fmt: skip
        if any(policies[i] is None for i in np.unique(values["opponent_policy"]) if i >= 0):
            raise ValueError("seats a policy it does not name")
        core.rng.bit_generator.state = env["rng"]
        reference.load_state_dict(
            {
                "games": games,
                "seeds": values["game_seeds"],
                "next_game_seeds": next_seeds,
                "rng": env["game_rng"],
            }
        )
    except (ValueError, TypeError) as error:
        raise ValueError(f"--resume: the checkpoint's batched env {error}") from None
    for name, value in values.items():
        _set(core, BATCH_ARRAYS[name], value.copy())
    core.policies, core.shaping = policies, env["shaping"]
    return reference


class Checkpointable(gym.Wrapper):
    """A solo env that keeps what replays its episode, so that a checkpoint can fetch it
    through ``VecEnv.env_method``, in whichever process the env lives."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.episode: dict[str, Any] | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
        solo: Any = self.env.unwrapped
        self.episode = {
            "seed": None if seed is None else int(seed),
            "rng": solo.state_dict()["rng"],
            "opponents": list(solo.opponent_specs),
            "actions": [],
            "replayable": not options and all(isinstance(e, str) for e in solo.pool.entries),
        }
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        if self.episode is not None:
            self.episode["actions"].append(int(action))
        return self.env.step(action)

    def checkpoint_state(self) -> dict[str, Any]:
        """The episode's replay and the shaping wrapper's figures, as JSON values."""
        episode = dict(self.episode) if self.episode is not None else None
        if episode is not None and not episode.pop("replayable"):
            raise ValueError("an episode reset with options or against agent objects (not specs)")
        shaping: Any = self.env  # a ProgressShaping (agents.training.envs.make_venv)
        return {"episode": episode, "shaping": shaping.state_dict()}


def restore_solo_env(saved: dict[str, Any], reference: Any, rank: int) -> Checkpointable:
    """``reference`` (a new ``ProgressShaping(Monitor(TrashSoloEnv))``) replaying the
    checkpoint's episode, with its shaping figures."""
    env, solo = Checkpointable(reference), reference.unwrapped
    episode, pool = saved["episode"], list(solo.pool.entries)
    try:
        if episode is not None:
            check_from_run(episode["opponents"], pool)
            solo.set_opponents(episode["opponents"])
            solo.load_state_dict({"rng": episode["rng"]})
            env.reset(seed=episode["seed"])
            for action in episode["actions"]:
                _, _, terminated, truncated, info = env.step(action)
                if terminated or truncated or info["illegal_action"]:
                    raise ValueError("episode does not replay (it ends before its last action)")
            solo.set_opponents(pool)
    except (ValueError, TypeError, RuntimeError) as error:
        raise ValueError(f"--resume: the checkpoint's env {rank}: {str(error)[:300]}") from None
    reference.load_state_dict(saved["shaping"])  # ProgressShaping's figures
    return env
