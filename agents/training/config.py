"""The configuration of one training run: a frozen dataclass, checked when it is built.

``TrainConfig`` is what ``train.py``'s flags describe and what :func:`agents.training.run.train`
runs. The values that depend on the vec path, the player count or a checkpoint (``envs``,
``n_steps``, ``batch_size``, ``vec``, ``round_rewards``, and the :data:`PER_PLAYERS` fields)
may be left ``None``; :func:`settle` returns the config with all of them decided, which is the
one a run uses and records.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from agents.policies.features import FEATURES

T = TypeVar("T")

DEFAULT_OUT = Path("runs/default/model.safetensors")
MODEL_SUFFIX = ".safetensors"
# Ceilings: a typo (an extra zero or three) fails at once instead of running for days.
MAX_TIMESTEPS = 10**9
MAX_ENVS = 256
MAX_DEALS = 10**6
# The final evaluation's duplicate deals per opponent (train.py and every example): at 5,000
# deals the 95% interval of a 2-player win rate near 0.5 is about +-0.01 wide, so "reaches
# greedy's level" means at least about 0.49 (at 1,000 it was +-0.022). The batched engine
# plays them in seconds (docs/training.md).
FINAL_DEALS = 5_000
MAX_SAMPLES = 10**7
VEC_CHOICES = ("batched", "dummy", "subproc")
FEATURE_CHOICES = FEATURES  # named once, in agents/policies/features.py
# Per --vec path: (--envs, --n-steps) when not given. The batched env pays off with many envs
# (docs/vector.md); the one-process paths keep the smaller rollouts.
PATH_DEFAULTS = {"batched": (256, 16), "dummy": (4, 512), "subproc": (4, 512)}
DEFAULT_BATCH_SIZE = 1024  # or the whole rollout when that is smaller
GAE_LAMBDA = 0.95
# The optional progress shaping (agents/training/shaping.py) is off by default; docs/training.md
# says why.
DEFAULT_SHAPING = 0.0
DEFAULT_SHAPING_UNTIL = 0.25

# The settings a run takes from its player count when they are not given (settle()): one row
# per count the game offers. More players make each game longer and a learner decision's effect
# on the result smaller, so a run needs more steps to reach greedy's level; the learning rate
# falls linearly from ``lr`` by the fraction ``lr_decay`` so that the final policy does not
# drift on the last updates' noise; a periodic evaluation plays each deal once per seat, so
# ``eval_deals`` shrinks as the table grows to keep the curve's cost a small part of the run;
# every count but 3 reads the ``fits`` features (greedy's level in a quarter of the steps at 2;
# at 4 and 5 a run takes off early, where with ``pairs`` one held-back 4-player seed never did;
# at 6 the only input with which a run reached par), 3 ``pairs``, the features its row was
# measured with.
# How each row was chosen, on held-back seeds: docs/training.md.
_ROW = {"lr": 1e-3, "lr_decay": 1.0, "ent_coef": 0.01, "features": "pairs"}
PER_PLAYERS: dict[int, dict[str, Any]] = {
    2: {"timesteps": 4_000_000, **_ROW, "eval_deals": 200, "features": "fits"},
    3: {"timesteps": 5_000_000, **_ROW, "eval_deals": 100},
    4: {"timesteps": 4_000_000, **_ROW, "eval_deals": 50, "features": "fits"},
    5: {"timesteps": 4_000_000, **_ROW, "eval_deals": 50, "features": "fits"},
    6: {"timesteps": 4_000_000, **_ROW, "eval_deals": 50, "features": "fits"},
}
PER_PLAYERS_FIELDS = ("timesteps", "lr", "lr_decay", "ent_coef", "eval_deals", "features")

INT_BOUNDS = {  # field -> (lowest, highest); None allowed where the field's default is None
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
FLOAT_BOUNDS = {  # field -> (lowest, highest, lowest excluded)
    "gamma": (0.0, 1.0, True),
    "lr": (0.0, 1.0, True),
    "lr_decay": (0.0, 1.0, False),
    "ent_coef": (0.0, 10.0, False),
    "shaping": (0.0, 10.0, False),
    "shaping_until": (0.0, 1.0, True),
}
# Resume flags a checkpoint written before them lacks, with the value such a run trained at.
FLAGS_ADDED = {"lr_decay": 0.0}
# Fields that change the trained weights: a resumed run must use the checkpoint's values.
RESUME_FLAGS = (
    "envs",
    "vec",
    "opponents",
    "snapshot_every",
    "pool_size",
    "net",
    "lr",
    "lr_decay",
    "n_steps",
    "batch_size",
    "epochs",
    "gamma",
    "ent_coef",
    "round_rewards",
    "threads",
    "shaping",
    "shaping_until",
    "features",
)


def run_of_checkpoints(resume: Path) -> Path | None:
    """The model path of the run whose checkpoints ``--resume`` names: a run at
    ``DIR/NAME.safetensors`` keeps them in ``DIR/NAME_checkpoints``. None where ``resume`` is
    no checkpoint or folder (reading it says why); ``ValueError`` for a folder not named so
    (its run is unknown: ``--out`` must say where to write)."""
    from trash_env.files import safe_text

    if resume.is_dir():
        folder = resume
    elif resume.is_file() and resume.suffix == ".ckpt":
        folder = resume.parent
    else:
        return None
    end = "_checkpoints"
    if not folder.name.endswith(end) or folder.name == end:
        raise ValueError(
            f"--resume: {safe_text(str(folder))!r} is not a run's NAME{end} folder, so the run "
            "to continue is unknown: give --out, a new model path for the resumed run"
        )
    return folder.parent / (folder.name[: -len(end)] + MODEL_SUFFIX)


def flag(name: str) -> str:
    """The command-line flag of a field: ``ent_coef`` -> ``--ent-coef``."""
    return "--" + name.replace("_", "-")


def _integer(name: str, value: object, low: int, high: int) -> int:
    """``value`` as a Python int (numpy integers too, never bools) within ``[low, high]``."""
    number = None
    if not isinstance(value, (bool, np.bool_, float, np.floating)):
        try:
            number = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            pass
    if number is None or not low <= number <= high:
        raise ValueError(f"{flag(name)} must be an integer from {low} to {high:,}, got {value!r}")
    return number


def _number(name: str, value: object, low: float, high: float, low_open: bool) -> float:
    """``value`` as a finite float within the range (numpy floats and ints too, not bools)."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )
    number = float(value) if ok else math.nan  # type: ignore[arg-type]
    if not (
        math.isfinite(number) and (number > low if low_open else number >= low) and number <= high
    ):
        raise ValueError(
            f"{flag(name)} must be a finite number in "
            f"{'(' if low_open else '['}{low:g}, {high:g}], got {value!r}"
        )
    return number


def parse_net(net: object) -> list[int]:
    """The hidden layer sizes of ``--net`` (``"128,128"``), or ``ValueError``."""
    from agents.policies.model_file import MAX_LAYERS, MAX_WIDTH

    try:
        sizes = [int(x) for x in str(net).split(",")]
        if not 1 <= len(sizes) <= MAX_LAYERS or not all(1 <= x <= MAX_WIDTH for x in sizes):
            raise ValueError
    except ValueError:
        raise ValueError(
            f"--net must be 1 to {MAX_LAYERS} layer sizes from 1 to {MAX_WIDTH} "
            f"like 128,128, got {net!r}"
        ) from None
    return sizes


@dataclass(frozen=True)
class TrainConfig:
    """Every setting of a training run; ``docs/training.md`` explains each (the fields are
    ``train.py``'s flags with ``-`` as ``_``; ``progress`` is ``not --no-progress``; ``rules``
    holds the rules options). Built from Python or by :func:`agents.training.cli.config_of`;
    every value is checked on construction (``ValueError`` naming the flag)."""

    timesteps: int | None = None
    seed: int = 0
    envs: int | None = None
    vec: str | None = None
    opponents: tuple[str, ...] = ("greedy",)
    out: Path | None = None  # None: the resumed checkpoint's own run, else DEFAULT_OUT
    resume: Path | None = None
    tensorboard: Path | None = None
    checkpoint_every: int = 500_000
    snapshot_every: int = 50_000
    pool_size: int = 5
    eval_every: int = 250_000
    eval_deals: int | None = None
    final_deals: int = FINAL_DEALS
    imitate: str = "none"
    imitate_samples: int = 100_000
    imitate_epochs: int = 10
    workers: int = 2
    round_rewards: bool | None = None
    shaping: float = DEFAULT_SHAPING
    shaping_until: float = DEFAULT_SHAPING_UNTIL
    net: str = "128,128"
    features: str | None = None
    lr: float | None = None
    lr_decay: float | None = None
    n_steps: int | None = None
    batch_size: int | None = None
    epochs: int = 2
    gamma: float = 0.995
    ent_coef: float | None = None
    threads: int = 1
    progress: bool = True
    rules: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        fix = object.__setattr__  # normalise in place: still frozen to everyone else
        open_ = ("envs", "n_steps", "batch_size", *PER_PLAYERS_FIELDS)  # settle() decides
        for name, (low, high) in INT_BOUNDS.items():
            value = getattr(self, name)
            if value is not None or name not in open_:
                fix(self, name, _integer(name, value, low, high))
        for name, (bottom, top, bottom_open) in FLOAT_BOUNDS.items():
            value = getattr(self, name)
            if value is not None or name not in open_:
                fix(self, name, _number(name, value, bottom, top, bottom_open))
        if self.vec is not None and str(self.vec) not in VEC_CHOICES:
            raise ValueError(f"--vec must be one of {', '.join(VEC_CHOICES)}, got {self.vec!r}")
        if self.vec is not None:
            fix(self, "vec", str(self.vec))
        if self.features is not None:
            if str(self.features) not in FEATURE_CHOICES:
                raise ValueError(
                    f"--features must be one of {', '.join(FEATURE_CHOICES)}, got {self.features!r}"
                )
            fix(self, "features", str(self.features))
        for name in ("round_rewards", "progress"):
            value = getattr(self, name)
            if not (value is None and name == "round_rewards"):
                if not isinstance(value, (bool, np.bool_)):
                    shown = "progress (--no-progress)" if name == "progress" else flag(name)
                    raise ValueError(f"{shown} must be True or False, got {value!r}")
                fix(self, name, bool(value))
        fix(self, "net", str(self.net))
        parse_net(self.net)
        self._check_agents()
        self._check_paths()
        from trash_env.rules import Rules

        if not isinstance(self.rules, dict):
            raise ValueError(f"rules must be a dict of rules options, got {self.rules!r}")
        try:
            Rules.from_options(**self.rules)
        except ValueError as error:
            raise ValueError(f"rules: {error}") from None
        fix(self, "rules", dict(self.rules))  # the config's own copy

    def _check_agents(self) -> None:
        opponents = self.opponents
        if isinstance(opponents, str) or not all(isinstance(s, str) for s in opponents):
            raise ValueError(f"--opponents must be a list of agent specs, got {opponents!r}")
        opponents = tuple(str(s) for s in opponents)
        if not opponents:
            raise ValueError("--opponents must name at least one agent")
        object.__setattr__(self, "opponents", opponents)
        if not isinstance(self.imitate, str):
            raise ValueError(f"--imitate must be an agent spec or none, got {self.imitate!r}")
        from agents.bots.base import make_agent, parse_spec

        named = [("--opponents", spec) for spec in opponents]
        named += [("--imitate", self.imitate)] if self.imitate != "none" else []
        for name, spec in named:
            if parse_spec(spec)[0] == "human":
                raise ValueError(
                    f"{name}: 'human' plays at a terminal, which training has "
                    "none of; give bots or model files"
                )
            if spec != "self":
                make_agent(spec, seed=0)  # an unknown bot or option fails before any training

    def _check_paths(self) -> None:
        from trash_env.files import check_output_path

        for name in ("out", "resume", "tensorboard"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, Path(value))
        if self.out is None:  # a resume continues its own run, never runs/default's
            own = run_of_checkpoints(self.resume) if self.resume is not None else None
            object.__setattr__(self, "out", own or DEFAULT_OUT)
        out = self.out_path
        if out.suffix == ".zip":
            raise ValueError(
                f"--out must end in {MODEL_SUFFIX} (train.py no longer writes "
                f".zip models, which run code when loaded), got {str(out)!r}"
            )
        check_output_path("--out", out, (MODEL_SUFFIX,))
        check_output_path("--out (its sidecar copy)", out.with_suffix(".json"))
        stem = out.parent / out.stem
        check_output_path("--out (its CSV log)", Path(f"{stem}_log.csv"))
        check_output_path("--out (its curve)", Path(f"{stem}_curve.png"))
        for kind in ("checkpoints", "pool"):
            folder = Path(f"{stem}_{kind}")
            if folder.exists() and not folder.is_dir():
                raise ValueError(
                    f"--out: {str(folder)!r} must be a directory for the {kind}, but it is a file"
                )
        if self.tensorboard is not None:
            if self.tensorboard.exists() and not self.tensorboard.is_dir():
                raise ValueError(
                    f"--tensorboard must be a directory, got the file {str(self.tensorboard)!r}"
                )
            check_output_path("--tensorboard", self.tensorboard / "events")

    @property
    def out_path(self) -> Path:
        """``out`` as construction decided it (given, the resumed run's, or the default)."""
        assert self.out is not None
        return self.out

    @property
    def net_arch(self) -> list[int]:
        return parse_net(self.net)

    @property
    def settled(self) -> bool:
        """Whether every value that depends on the path or a checkpoint is decided."""
        return None not in (
            self.vec,
            self.envs,
            self.n_steps,
            self.batch_size,
            self.round_rewards,
            *(getattr(self, name) for name in PER_PLAYERS_FIELDS),
        )

    def resume_flags(self) -> dict[str, Any]:
        """The values a checkpoint records and a resumed run must repeat (JSON types)."""
        return {
            name: list(self.opponents) if name == "opponents" else getattr(self, name)
            for name in RESUME_FLAGS
        }


def decided(value: T | None, name: str) -> T:
    """A value :func:`settle` decides (``envs``, ``n_steps``, ...), once it has."""
    if value is None:
        raise ValueError(f"{flag(name)} is not decided yet: settle() the config first")
    return value


def batched_refusal(opponents: tuple[str, ...] | list[str]) -> str | None:
    """Why the batched env cannot play this ``--opponents`` list (None: it can). ``self``
    adds model-file snapshots, which it plays."""
    try:
        from trash_env.vector import supports_opponents
    except ImportError as error:
        return f"trash_env.vector is unavailable ({error})"
    for spec in opponents:
        if spec != "self" and not supports_opponents([spec]):
            return (
                f"it does not play the opponent {spec!r} (it plays random, greedy, "
                "counting and model files)"
            )
    return None


def player_defaults(rules: dict[str, Any]) -> dict[str, Any]:
    """The :data:`PER_PLAYERS` row of these rules options' player count."""
    from trash_env.rules import Rules

    return dict(PER_PLAYERS[Rules.from_options(**rules).num_players])


def settle(config: TrainConfig, saved: dict[str, Any] | None = None) -> TrainConfig:
    """``config`` with ``vec``, ``envs``, ``n_steps``, ``batch_size``, ``round_rewards`` and
    the :data:`PER_PLAYERS` fields decided: the ones not given take a resumed checkpoint's
    values (``saved``, its flags), else their player count's row and their path's defaults;
    the batched path falls back to dummy (saying why, in one line) when the pool holds agents
    it refuses."""
    from trash_env.rules import Rules

    if config.settled:
        return config
    saved = saved or {}
    row = player_defaults(config.rules)
    if saved:
        saved = {**FLAGS_ADDED, **saved}
    tuned = {
        name: getattr(config, name)
        if getattr(config, name) is not None
        else saved.get(name, row[name])
        for name in PER_PLAYERS_FIELDS
    }
    vec = config.vec if config.vec is not None else saved.get("vec", "batched")
    if vec == "batched":
        reason = batched_refusal(config.opponents)
        if reason is not None:
            print(f"train.py: --vec batched: using dummy instead: {reason}", flush=True)
            vec = "dummy"
    envs, n_steps = PATH_DEFAULTS[vec]
    envs = config.envs if config.envs is not None else int(saved.get("envs", envs))
    n_steps = config.n_steps if config.n_steps is not None else int(saved.get("n_steps", n_steps))
    batch_size = config.batch_size
    if batch_size is None:
        batch_size = min(DEFAULT_BATCH_SIZE, n_steps * envs)
    if batch_size > n_steps * envs:
        raise ValueError(
            f"--batch-size must be at most --n-steps x --envs = "
            f"{n_steps * envs} (one rollout), got {batch_size}"
        )
    round_rewards = config.round_rewards
    if round_rewards is None:
        round_rewards = Rules.from_options(**config.rules).episode == "game"
    return dataclasses.replace(
        config,
        vec=vec,
        envs=envs,
        n_steps=n_steps,
        batch_size=batch_size,
        round_rewards=round_rewards,
        **tuned,
    )
