"""``TrashSoloEnv`` for a batch: one learner seat per game against opponents that act inside
the step, as a stable-baselines3 ``VecEnv`` (:class:`TrashVecEnv`) and a Gymnasium
``VectorEnv`` (:class:`TrashVectorEnv`).

Same spaces and reward semantics as :class:`trash_env.solo.TrashSoloEnv`: observations are the
learner's ``encode_observation`` (``Box(0, 1, (observation_size(n),), float32)``; with
``observation="pairs"`` the 108 products of :mod:`trash_env.pairs` follow, with ``"fits"``
those and its two fit entries), actions
``Discrete(13)``, ``action_masks()`` the learner's legal actions; per episode the learner's
seat (unless fixed) and, per opponent seat, one entry of the opponent pool are drawn; a
``CALL`` decision is answered with ``CALL_TRASH`` for every seat; the final step pays the
learner's share of ``Game.returns()`` (zero-sum; 0 when truncated at ``max_turns``), and with
``round_rewards`` every finished deal is paid too; a deal decided before the learner's first
decision is re-dealt. An illegal action ends the episode with reward -1. ``shaping`` (default
0, off) adds the optional progress shaping of :mod:`agents.training.shaping` to the rewards; the
``episode`` statistics keep the true return (and the shaping's sum under ``"shaping"``).

Opponents: ``random``, ``greedy`` and ``counting`` (with ``discard_weight``) run compiled
inside the step; trained policies (a model file spec, ``pretrained``, a ``PolicyAgent``, or a
stable-baselines3 policy object such as ``model.policy``) run as one batched forward pass per
round of decisions over every game where such a seat is to act. Other agents (search, human)
are refused with a ``ValueError``: :func:`supports_opponents` tells train.py when to fall back
to ``DummyVecEnv``.

Randomness: ``seed`` seeds the batch's generator. Each new episode draws, in this order, the
learner seats and the opponents of the slots being reset
(:meth:`trash_env.opponents.OpponentPool.draw`: an entry for every seat, the learner's
dropped), the opponents' own streams and the game seeds of the slots being reset
(``VectorGame``: slot ``i``'s game is ``Game(rules, seed=seeds[i])``).
"""

from __future__ import annotations

import functools
import time
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import gymnasium.vector as gym_vector
import numpy as np
from gymnasium import spaces

from trash_env.actions import check_actions
from trash_env.agent import Agent
from trash_env.engine import NUM_ACTIONS
from trash_env.observation import OBS_VERSION, observation_size
from trash_env.opponents import LEARNER, OpponentPool, build
from trash_env.pairs import check_observation, extend, observation_width
from trash_env.progress import ProgressFollower, check_coef, progress_potential
from trash_env.reward import learner_reward
from trash_env.rules import Rules
from trash_env.sampling import masked_choice
from trash_env.solo import learner_info, solo_rules
from trash_env.vector import _kernels as K
from trash_env.vector.batch import VectorGame

MAX_REDEALS = 1000


def _count(num_envs: object) -> int:
    """``num_envs`` as a Python int (numpy's integers too), or a ValueError naming it."""
    if (
        isinstance(num_envs, (bool, np.bool_))
        or not isinstance(num_envs, (int, np.integer))
        or (num_envs < 1)
    ):
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    return int(num_envs)


class _Policy:
    """A trained policy acting for a batch of observations at once."""

    def __init__(self, source: Any, name: str) -> None:
        self.source = source
        self.name = name

    def act(
        self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        source = self.source
        if hasattr(source, "layers") and hasattr(source, "forward"):  # agents' PolicyAgent
            # The policy agent's own draw, for the batch (trash_env.sampling).
            return masked_choice(source.forward(observations), masks, rng, source.deterministic)
        # A stable-baselines3 (maskable) policy: one batched forward pass in torch.
        actions, _ = source.predict(observations, action_masks=masks, deterministic=True)
        return np.asarray(actions, np.int64)


def _classify(entry: Any) -> tuple[int, float, _Policy | None]:
    """(kind, counting weight, policy) of one opponent pool entry. A bot runs compiled when its
    class declares ``batch_kernel`` in its own body (``agents``' random, greedy and counting):
    a subclass may play differently, so it does not inherit the claim."""
    agent: Any = build(entry)
    kernel = type(agent).__dict__.get("batch_kernel")
    if kernel == "random":
        return K.BOT_RANDOM, 0.0, None
    if kernel == "greedy":
        return K.BOT_GREEDY, 0.0, None
    if kernel == "counting":
        return K.BOT_COUNTING, float(agent.discard_weight), None
    if hasattr(agent, "layers") and hasattr(agent, "forward"):
        return K.BOT_POLICY, 0.0, _Policy(agent, str(getattr(agent, "name", "policy")))
    if not isinstance(agent, Agent) and hasattr(agent, "predict"):
        return K.BOT_POLICY, 0.0, _Policy(agent, type(agent).__name__)
    raise ValueError(
        f"opponent {entry!r}: the batched env plays random, greedy, counting and trained "
        "policies (model files, pretrained, PolicyAgent, a stable-baselines3 policy); use "
        "TrashSoloEnv for other agents"
    )


def batch_policy(entry: Any) -> Any:
    """The batched policy an opponent pool entry plays with (None for a compiled bot), as
    the batch seats it: a checkpoint's self-play snapshots are seated again through it."""
    return _classify(entry)[2]


def supports_opponents(opponents: Sequence[Any] | str) -> bool:
    """Whether every entry of this opponent pool can play inside the batched env."""
    try:
        for entry in OpponentPool(opponents, policies=True).entries:
            _classify(entry)
    except ValueError:
        return False
    return True


class SoloBatch:
    """The array core shared by both vector envs (see the module docstring)."""

    def __init__(
        self,
        num_envs: int,
        opponents: Sequence[Any] | str = ("random",),
        seat: int | None = None,
        round_rewards: bool = False,
        seed: int | None = None,
        shaping: float = 0.0,
        observation: str = "plain",
        **options: Any,
    ) -> None:
        self.shaping = check_coef(shaping)
        self.rules = solo_rules(seat, round_rewards, options)
        self.observation = check_observation(observation)
        n = self.rules.num_players
        self.num_envs = num_envs
        self.seat_option = seat
        self.round_rewards = round_rewards
        self.rng = np.random.default_rng(seed)
        self.batch = VectorGame(self.rules, num_envs, seed=int(self.rng.integers(2**63)))
        self.set_opponents(opponents)
        self.seats = np.zeros(num_envs, np.int64)
        self.kinds = np.zeros((num_envs, self.batch.games["sizes"].shape[1]), np.int64)
        self.weights = np.zeros(self.kinds.shape, np.float64)
        self.policy_of = np.full(self.kinds.shape, -1, np.int64)
        self.orngs = np.zeros((num_envs, 6), np.uint64)
        self.obs_size = observation_size(n)  # the plain observation: what opponents see
        self.episode_return = np.zeros(num_envs)
        self.episode_length = np.zeros(num_envs, np.int64)
        self.episode_start = np.zeros(num_envs)
        self.episode_shaping = np.zeros(num_envs)
        self.follower = ProgressFollower(num_envs)  # the progress shaping's phi per slot
        self._all = np.arange(num_envs)

    def set_shaping(self, coef: float) -> None:
        """The progress shaping's coefficient from the next step on (agents/training/shaping.py).
        Progress is followed only while the coefficient is not 0; turning it on picks up each
        episode where a follower from its start would stand."""
        coef = check_coef(coef)
        if coef and not self.shaping:
            n = self.rules.num_players
            games = self.batch.games
            phi = progress_potential(games["sizes"][:, :n], games["face_down"][:, :n], self.seats)
            self.follower.pick_up(phi, games["deal_number"], self.episode_length == 0)
        self.shaping = coef

    def _progress(self, ended: np.ndarray) -> np.ndarray:
        """Every slot's progress (:class:`trash_env.progress.ProgressFollower`) since its
        previous learner decision; ``ended``: the episode is over."""
        n = self.rules.num_players
        games = self.batch.games
        sizes, seats = games["sizes"][:, :n], self.seats
        # The last finished deal's end: its sizes before the shrink and its face-down left.
        at_end = progress_potential(
            sizes + games["shrunk"][:, :n], games["face_down_left"][:, :n], seats
        )
        now = progress_potential(sizes, games["face_down"][:, :n], seats)
        return self.follower.advance(games["deal_number"], at_end, now, ended)

    # ------------------------------------------------------------------ opponents

    def set_opponents(self, opponents: Sequence[Any] | str) -> None:
        """Replace the opponent pool from each slot's next episode on."""
        pool = OpponentPool(opponents, policies=True)
        classified = [_classify(entry) for entry in pool.entries]
        size = observation_size(self.rules.num_players)
        for entry, (_, _, policy) in zip(pool.entries, classified, strict=True):
            check = getattr(policy.source, "check_rules", None) if policy is not None else None
            if check is not None:  # a PolicyAgent: refuses another player count (pretrained
                check(self.rules)  # picks its count's model) and warns on untrained rules
            wanted = getattr(policy.source, "input_size", size) if policy is not None else size
            if wanted != size:
                raise ValueError(
                    f"opponent {entry!r} was trained for observations of size {wanted}, but "
                    f"{self.rules.num_players} players give {size}: play it at its table size"
                )
        self.opponent_specs = pool.specs
        self.pool = pool
        self.pool_kind = np.array([c[0] for c in classified], np.int64)
        self.pool_weight = np.array([c[1] for c in classified], np.float64)
        # Episodes under way keep their opponents (as TrashSoloEnv's do): ``policies[j]`` is
        # pool entry j's policy (None for the built-in bots), followed by the earlier pools'
        # policies still seated in some game; ``policy_of`` indexes that list.
        old = getattr(self, "policies", [])
        seated = getattr(self, "policy_of", None)
        policies = [c[2] for c in classified]
        if seated is not None:
            keep = sorted(set(seated[seated >= 0].tolist()))
            remap = np.full(len(old) + 1, -1, np.int64)  # remap[-1]: a bot stays -1
            remap[keep] = len(policies) + np.arange(len(keep))
            policies += [old[i] for i in keep]
            self.policy_of = remap[seated]
        self.policies = policies

    # ------------------------------------------------------------------ episodes

    def reset_slots(self, index: np.ndarray) -> None:
        """New episodes in the slots ``index``, re-dealt while a deal ends before the
        learner's first decision."""
        for _ in range(MAX_REDEALS):
            if index.size == 0:
                return
            k, n = index.size, self.rules.num_players
            rng = self.rng
            seats, drawn = self.pool.draw(rng, k, n, self.seat_option, every_seat=True)
            learner = drawn == LEARNER
            kinds = np.where(learner, K.BOT_LEARNER, self.pool_kind[drawn])
            weights = np.where(learner, 0.0, self.pool_weight[drawn])
            policy_of = np.where(kinds == K.BOT_POLICY, drawn, -1)
            words = rng.integers(0, 2**64, size=(k, 4), dtype=np.uint64)
            words[:, 3] |= np.uint64(1)  # a PCG64 increment is odd
            self.seats[index] = seats
            self.kinds[index, :n] = kinds
            self.weights[index, :n] = weights
            self.policy_of[index, :n] = policy_of
            self.orngs[index, :4] = words
            self.orngs[index, 4:] = 0
            self.batch.reset(index)
            self.advance(index)
            self.episode_return[index] = 0.0
            self.episode_length[index] = 0
            self.episode_start[index] = time.time()
            self.episode_shaping[index] = 0.0
            self.follower.start(index, self.batch.games["deal_number"][index])
            index = index[self.batch.done[index]]
        raise RuntimeError(f"no deal in {MAX_REDEALS} left the learner a decision")

    def advance(self, index: np.ndarray) -> None:
        """Play the opponents in the slots ``index`` until the learner decides or the game
        ends: the bots compiled, the policies batched over every game where one is to act."""
        b = self.batch
        a = b.arrays
        args = (self.kinds, self.weights, self.orngs, self.seats, a.cfg, a.wild, a.deck, a.totals)
        K.batch_advance(b.games, index, *args)
        if not any(p is not None for p in self.policies):
            return
        while True:
            current = b.current[index].astype(np.int64)
            waiting = index[(~b.done[index]) & (current != self.seats[index])]
            if waiting.size == 0:
                return
            who = b.current[waiting].astype(np.int64)
            pid = self.policy_of[waiting, who]
            observations = np.empty((waiting.size, self.obs_size), np.float32)
            masks = np.empty((waiting.size, NUM_ACTIONS), np.int8)
            K.batch_observe_index(b.games, waiting, who, observations, a.cfg, a.wild, a.totals)
            K.batch_masks_index(b.games, waiting, who, masks)
            actions = np.zeros(waiting.size, np.int64)
            for p in np.unique(pid):
                rows = pid == p
                actions[rows] = self.policies[p].act(
                    observations[rows], masks[rows].astype(bool), self.rng
                )
            legal = np.zeros(waiting.size, np.bool_)
            K.batch_step_index(b.games, waiting, actions, legal, a.cfg, a.wild, a.deck, a.totals)
            if not legal.all():
                bad = int(waiting[~legal][0])
                raise RuntimeError(f"policy opponent chose an illegal action in game {bad}")
            K.batch_advance(b.games, waiting, *args)

    def reset(self, seed: int | None = None) -> np.ndarray:
        if seed is not None:  # the whole batch restarts from this seed, as at construction
            self.rng = np.random.default_rng(seed)
            self.batch.reseed(int(self.rng.integers(2**63)))
        self.reset_slots(self._all)
        return self.observe()

    def observe(self) -> np.ndarray:
        """The learners' observations, in the ``observation`` form."""
        return self._learner_form(self.batch.observations(self.seats))

    def observe_slots(self, index: np.ndarray) -> np.ndarray:
        a = self.batch.arrays
        out = np.empty((index.size, self.obs_size), np.float32)
        K.batch_observe_index(
            self.batch.games, index, self.seats[index], out, a.cfg, a.wild, a.totals
        )
        return self._learner_form(out)

    def _learner_form(self, plain: np.ndarray) -> np.ndarray:
        return extend(plain, self.rules.num_players, self.observation)

    def action_masks(self) -> np.ndarray:
        return self.batch.action_masks(self.seats).astype(bool)

    def step(self, actions: np.ndarray) -> tuple:
        """Learner actions in every slot; returns (observations after auto-reset, rewards,
        terminated, truncated, illegal, the finished slots' final observations or None)."""
        b = self.batch
        a = b.arrays
        acts = check_actions(actions, self.num_envs, NUM_ACTIONS - 1)
        legal = np.zeros(self.num_envs, np.bool_)
        K.batch_step(b.games, acts, legal, a.cfg, a.wild, a.deck, a.totals)
        self.advance(self._all)
        games = b.games
        done = b.done.copy()
        truncated = done & games["truncated"]
        illegal = ~legal
        rewards = learner_reward(b.payments(self.round_rewards)[self._all, self.seats], illegal)
        terminated = (done & ~truncated) | illegal
        self.episode_return += rewards
        self.episode_length += 1
        # The progress shaping (agents/training/shaping.py), added after the true return is
        # recorded;
        # followed only while it is on (set_shaping picks it up where it stands).
        if self.shaping:
            term = self.shaping * self._progress(terminated | truncated)
            self.episode_shaping += term
            rewards += term
        observations = self.observe()
        final = None
        finished = np.flatnonzero(terminated | truncated)
        if finished.size:
            final = observations[finished].copy()
            self.finished: list[dict] | None = self._finished_info(finished, illegal)
            self.reset_slots(finished)
            observations[finished] = self.observe_slots(finished)
        else:
            self.finished = None
        return observations, rewards.astype(np.float32), terminated, truncated, illegal, final

    def _finished_info(self, finished: np.ndarray, illegal: np.ndarray) -> list[dict]:
        """Each finished episode's info: TrashSoloEnv's final info (``learner_info``) plus
        Monitor's ``episode``."""
        games = self.batch.games
        n = self.rules.num_players
        masks = self.batch.action_masks(self.seats)
        now = time.time()
        infos = []
        for g in finished.tolist():
            seat = int(self.seats[g])
            winners = games["winners"][g, :n].copy()
            result = {
                "placing": int(games["placings"][g, seat])
                if games["done"][g] and winners.any()
                else 0,
                "winners": winners,
                "rounds_won": int(games["rounds_won"][g, seat]),
                "truncated": bool(games["truncated"][g]),
            }
            episode = {
                "r": round(float(self.episode_return[g]), 6),
                "l": int(self.episode_length[g]),
                "t": round(now - self.episode_start[g], 6),
            }
            if self.shaping:
                episode["shaping"] = round(float(self.episode_shaping[g]), 6)
            infos.append(
                {"episode": episode, **learner_info(seat, masks[g], bool(illegal[g]), result)}
            )
        return infos


OBS_INFO = {"obs_version": OBS_VERSION}


def _spaces(num_players: int, observation: str) -> tuple[spaces.Box, spaces.Discrete]:
    return (
        spaces.Box(0.0, 1.0, (observation_width(num_players, observation),), np.float32),
        spaces.Discrete(NUM_ACTIONS),
    )


class _BatchMethods:
    """What both vector envs ask of their :class:`SoloBatch` the same way."""

    core: SoloBatch
    rules: Rules
    render_mode: str | None

    def _start(
        self, num_envs: object, opponents: Sequence[Any] | str, settings: dict[str, Any]
    ) -> tuple[spaces.Box, spaces.Discrete]:
        """Build the batch (``settings``: :class:`SoloBatch`'s ``seat``, ``round_rewards``,
        ``seed``, ``shaping``, ``observation`` and every ``Rules`` option); return one env's
        observation and action spaces."""
        self.core = SoloBatch(_count(num_envs), opponents, **settings)
        self.rules = self.core.rules
        self.render_mode = None
        return _spaces(self.rules.num_players, self.core.observation)

    def action_masks(self) -> np.ndarray:
        """bool ``(num_envs, 13)``: each learner's legal actions."""
        return self.core.action_masks()

    def set_opponents(self, opponents: Sequence[Any] | str) -> None:
        """Replace the opponent pool from each slot's next episode on."""
        self.core.set_opponents(opponents)

    def set_shaping(self, coef: float) -> None:
        """The progress shaping's coefficient (agents/training/shaping.py), for the whole batch."""
        self.core.set_shaping(coef)


# TrashVecEnv's base, stable-baselines3's VecEnv, imports SB3 and torch (seconds): the class is
# built on the first use of its name (``__getattr__`` below), so that SoloBatch, TrashVectorEnv
# and supports_opponents do not pay for them. The methods are _TrashVecEnv's.
if TYPE_CHECKING:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv as _VecEnv
else:
    _VecEnv = object


@functools.cache
def _sb3_vec_env() -> type | None:
    """SB3's VecEnv, or None where the train extra is not installed."""
    try:
        from stable_baselines3.common.vec_env.base_vec_env import VecEnv
    except ImportError:
        return None
    return VecEnv


def __getattr__(name: str) -> Any:
    """``TrashVecEnv``, built on first use: :class:`_TrashVecEnv`'s methods on SB3's VecEnv."""
    if name != "TrashVecEnv":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in globals():  # built already (make_vec_env calls this directly)
        return globals()[name]
    base = _sb3_vec_env()
    body = {"__module__": __name__, "__qualname__": name, "__doc__": _TrashVecEnv.__doc__}
    built = types.new_class(
        name,
        (_TrashVecEnv,) if base is None else (_TrashVecEnv, base),
        {},
        lambda ns: ns.update(body),
    )
    globals()[name] = built
    return built


class _TrashVecEnv(_BatchMethods, _VecEnv):
    """A stable-baselines3 ``VecEnv`` of ``num_envs`` TrashSolo games stepped as one batch.

    Arguments as :class:`trash_env.solo.TrashSoloEnv` (``opponents``, ``seat``,
    ``round_rewards``, ``observation``, every ``Rules`` option) plus ``num_envs`` and ``seed``.
    Each finished
    episode's info holds ``episode`` (``r``, ``l``, ``t``: what ``Monitor`` records, so SB3
    logs ``ep_rew_mean``), ``terminal_observation``, ``TimeLimit.truncated``, ``seat``,
    ``winners``, ``won`` and ``placing``. ``action_masks()`` (and ``env_method("action_masks")``,
    which MaskablePPO calls) gives the learners' masks; ``env_method("set_opponents", pool)``
    replaces the opponent pool, as train.py's self-play does.
    """

    def __init__(
        self, num_envs: int, opponents: Sequence[Any] | str = ("random",), **settings: Any
    ) -> None:
        if _sb3_vec_env() is None:
            raise ImportError("TrashVecEnv needs stable-baselines3 (pip install trash-env[train])")
        observation_space, action_space = self._start(num_envs, opponents, settings)
        self.obs_version = OBS_VERSION
        super().__init__(self.core.num_envs, observation_space, action_space)
        self._actions: np.ndarray | None = None
        self._started = False

    def state_dict(self) -> dict[str, Any]:
        """The batch's games and game-seed stream (:meth:`VectorGame.state_dict`); the seating,
        episode figures and opponents are the core's public arrays (``self.core``)."""
        return self.core.batch.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """The batch as :meth:`state_dict` gave it (checked by the caller), stepped on from
        there without a reset."""
        self.core.batch.load_state_dict(state)
        self._started = True

    # -- VecEnv API
    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        self._seeds = [None] * self.num_envs
        observations = self.core.reset(seed)
        self._started = True
        self.reset_infos = [{"seat": int(s)} for s in self.core.seats]
        return observations

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions  # as given: the core checks them (bools inside a list too)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._actions is None:
            raise RuntimeError("call step_async(actions) before step_wait()")
        observations, rewards, terminated, truncated, _, final = self.core.step(self._actions)
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        if final is not None:
            assert self.core.finished is not None  # set by the same step as final
            finished = np.flatnonzero(terminated | truncated)
            for k, (g, info) in enumerate(zip(finished.tolist(), self.core.finished, strict=True)):
                info["terminal_observation"] = final[k]
                info["TimeLimit.truncated"] = bool(truncated[g] and not terminated[g])
                infos[g] = info
        return observations, rewards, terminated | truncated, infos

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        if attr_name == "seat":
            return [int(s) for s in self.core.seats[self._indices(indices)]]
        value = (
            getattr(self, attr_name) if hasattr(self, attr_name) else getattr(self.core, attr_name)
        )
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(
            f"TrashVecEnv: attributes are shared by the batch; {attr_name} cannot be set per env"
        )

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        index = self._indices(indices)
        if method_name == "action_masks":
            masks = self.core.action_masks()
            return list(masks[index])
        if method_name == "set_opponents":
            if len(index) != self.num_envs:
                raise ValueError("set_opponents applies to every env of the batch at once")
            self.core.set_opponents(*method_args, **method_kwargs)
            return [None] * len(index)
        if method_name == "set_shaping":
            if len(index) != self.num_envs:
                raise ValueError("set_shaping applies to every env of the batch at once")
            self.core.set_shaping(*method_args, **method_kwargs)
            return [None] * len(index)
        raise AttributeError(
            f"TrashVecEnv has no per-env method {method_name!r} "
            "(action_masks, set_opponents, set_shaping)"
        )

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)


if TYPE_CHECKING:
    TrashVecEnv = _TrashVecEnv


def make_vec_env(
    n_envs: int,
    opponents: Sequence[Any] | str = ("random",),
    rules: Rules | dict | None = None,
    seed: int | None = None,
    round_rewards: bool = False,
    shaping: float = 0.0,
    observation: str = "plain",
) -> TrashVecEnv:
    """The batched ``VecEnv`` train.py uses when :func:`supports_opponents` allows it:
    ``n_envs`` learner games against the opponent pool, ``rules`` a ``Rules`` or its options;
    ``shaping`` the progress shaping's coefficient (agents/training/shaping.py; 0: the true reward);
    ``observation`` ``"plain"``, ``"pairs"`` or ``"fits"`` (:mod:`trash_env.pairs`)."""
    options = rules.to_dict() if isinstance(rules, Rules) else dict(rules or {})
    return __getattr__("TrashVecEnv")(
        n_envs,
        opponents,
        round_rewards=round_rewards,
        seed=seed,
        shaping=shaping,
        observation=observation,
        **options,
    )


class TrashVectorEnv(_BatchMethods, gym_vector.VectorEnv):
    """A Gymnasium ``VectorEnv`` over the same batch (same arguments as :class:`TrashVecEnv`).

    Autoreset in the same step (``metadata["autoreset_mode"]`` is ``SAME_STEP``): a finished
    episode's last observation is ``infos["final_obs"][i]`` and its info (as
    :class:`TrashVecEnv`'s) ``infos["final_info"][i]``, marked by ``infos["_final_obs"]``;
    the returned observation is already the next episode's. ``infos["action_mask"]`` holds the
    learners' masks (``action_masks()`` too).
    """

    metadata = {"autoreset_mode": gym_vector.AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self, num_envs: int, opponents: Sequence[Any] | str = ("random",), **settings: Any
    ) -> None:
        spaces_of_one = self._start(num_envs, opponents, settings)
        self.single_observation_space, self.single_action_space = spaces_of_one
        num_envs = self.num_envs = self.core.num_envs
        self.observation_space = gym_vector.utils.batch_space(
            self.single_observation_space, num_envs
        )
        self.action_space = gym_vector.utils.batch_space(self.single_action_space, num_envs)
        self._started = False

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        if options:
            raise ValueError(f"reset options: none are accepted, got {sorted(options)}")
        observations = self.core.reset(seed)
        self._started = True
        return observations, self._infos()

    def step(self, actions: np.ndarray) -> tuple:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        observations, rewards, terminated, truncated, _, final = self.core.step(actions)
        infos = self._infos()
        if final is not None:
            assert self.core.finished is not None  # set by the same step as final
            finished = np.flatnonzero(terminated | truncated)
            final_obs = np.empty(self.num_envs, object)
            final_info = np.empty(self.num_envs, object)
            for k, g in enumerate(finished.tolist()):
                final_obs[g] = final[k]
                final_info[g] = self.core.finished[k]
            mask = np.zeros(self.num_envs, np.bool_)
            mask[finished] = True
            infos.update(
                final_obs=final_obs, _final_obs=mask, final_info=final_info, _final_info=mask.copy()
            )
        return (
            observations,
            rewards.astype(np.float64),
            terminated,
            truncated & ~terminated,
            infos,
        )

    def _infos(self) -> dict:
        masks = self.core.action_masks()
        return {
            "action_mask": masks,
            "_action_mask": np.ones(self.num_envs, np.bool_),
            "seat": self.core.seats.copy(),
            "_seat": np.ones(self.num_envs, np.bool_),
        }
