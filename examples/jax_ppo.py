"""Masked PPO in JAX, the environment, the greedy opponents and the learner in one compiled
``lax.scan`` (the PureJaxRL pattern), on the JAX engine (``trash_env.jax_env``, the ``jax``
extra).

    python examples/jax_ppo.py                                  # the default run
    python examples/jax_ppo.py --steps 100000 --eval-every 0    # a short look

The PPO settings are those of examples/cleanrl_ppo.py and train.py: 2-player whole games, the
learner in a random seat of each game against ``greedy`` opponents (the JAX bot, choice for
choice the Python one), 256 games x 16 decisions a rollout, 4 minibatches, 2 epochs, lr 1e-3
decayed linearly to 0, gamma 0.995, GAE lambda 0.95, entropy 0.01, separate actor and critic
MLPs 128-128 tanh, orthogonal initialisation. The network reads train.py's 2-player input, the
``fits`` features (the ``pairs`` observation and the two entries "the discard top fits my
layout", "the card in hand fits my layout", computed as agents/policies/features.py computes
them), with which 500k decisions suffice (2M with ``pairs`` alone). Illegal actions get logit
-1e9 (probability 0) in the rollout and in the loss. The reward is the learner's share of the
game's zero-sum returns, paid at the game's end.

Every rollout and update runs inside ``jax.jit``: a segment of updates is one loop (its length
an argument: one compilation serves segments of every length) whose body steps all games (the
learner's decision, then the opponents' turns in a ``lax.while_loop``, then a new game where
one ended), computes GAE and runs the epochs. Between segments (every ``--eval-every``
decisions) and at the end, the actor is written as the model file ``--out`` through the
project's exporter (plain arrays, no torch) and evaluated with evaluate.py's machinery against
greedy and random on duplicate deals; the last line of output is the summary JSON.
``python evaluate.py --agents PATH.safetensors greedy random`` and ``python -m agents.play``
load the file.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from agents.training.pipeline import (  # noqa: E402
    PipelineRun,
    check_command_line,
    example_parser,
    whole_number,
)

NAME = "jax_ppo"
TOTAL_STEPS = 500_000  # --steps: learner decisions of training
EVAL_EVERY = 125_000
NUM_ENVS = 256
NUM_STEPS = 16
LEARNING_RATE = 1e-3
GAMMA = 0.995
GAE_LAMBDA = 0.95
NUM_MINIBATCHES = 4
UPDATE_EPOCHS = 2
CLIP_COEF = 0.2
ENT_COEF = 0.01
VF_COEF = 0.5
MAX_GRAD_NORM = 0.5
HIDDEN = 128
ILLEGAL = -1e9


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = example_parser(
        NAME, __doc__.split("\n\n")[0], steps=TOTAL_STEPS, eval_every=EVAL_EVERY
    )
    parser.add_argument(
        "--envs", type=whole_number(4, 1 << 20), default=NUM_ENVS, help="games stepped together"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":  # --help and bad flags answered before the library loads
    check_command_line(NAME, parse_args, "jax", "jax", "optax", "matplotlib")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

from agents.policies.features import FIT_FEATURES, fit_columns, fit_entries  # noqa: E402
from trash_env.jax_env import engine as E  # noqa: E402
from trash_env.jax_env import make  # noqa: E402
from trash_env.jax_env.batching import where_needed  # noqa: E402
from trash_env.jax_env.bots import greedy_game  # noqa: E402
from trash_env.jax_env.env import NEW_GAME_SHARE, observe_game  # noqa: E402
from trash_env.jax_env.observe import action_mask  # noqa: E402
from trash_env.pairs import PAIR_FEATURES  # noqa: E402

# ---------------------------------------------------------------------- networks


def init_mlp(key: jax.Array, sizes: list[int], last_std: float) -> list[tuple]:
    """Orthogonal weights (sqrt 2 between hidden layers, ``last_std`` at the head), zero
    biases; layers as (weight (out, in), bias), as the exporter and nn.Linear hold them."""
    layers = []
    keys = jax.random.split(key, len(sizes) - 1)
    for i, (k, n_in, n_out) in enumerate(zip(keys, sizes[:-1], sizes[1:], strict=True)):
        std = last_std if i == len(sizes) - 2 else float(np.sqrt(2))
        w = jax.nn.initializers.orthogonal(std)(k, (n_out, n_in), jnp.float32)
        layers.append((w, jnp.zeros(n_out, jnp.float32)))
    return layers


def mlp(layers: list[tuple], x: jax.Array) -> jax.Array:
    for w, b in layers[:-1]:
        x = jnp.tanh(x @ w.T + b)
    w, b = layers[-1]
    return x @ w.T + b


class Transition(NamedTuple):
    obs: jax.Array
    mask: jax.Array
    action: jax.Array
    logp: jax.Array
    value: jax.Array
    reward: jax.Array
    done: jax.Array


class Games(NamedTuple):
    game: E.Game  # the engine's game: the env's rules without its per-step observations
    learner: jax.Array  # the learner's seat in each game


# ---------------------------------------------------------------------- the environment


def make_env_fns(rules: dict[str, Any]) -> tuple:
    """The learner's view of the game at the engine's level (``trash_env.jax_env.engine``,
    calls answered as the env answers them): the opponents' turns cost no observation."""
    env = make(observation="pairs", **rules)  # the run's rules (PipelineRun.env_options)
    players = env.num_players
    arrays = env.arrays

    def opponents(g: E.Game, learner: jax.Array) -> E.Game:
        """Greedy plays every seat but the learner's until the learner acts or the game
        ends."""

        def going(g: E.Game) -> jax.Array:
            return ~g.done & (g.current != learner)

        def play(g: E.Game) -> E.Game:
            return E.step(g, greedy_game(g), answer_calls=True)[0]

        return jax.lax.while_loop(going, play, g)

    def reset(key: jax.Array) -> Games:
        """A new game at the learner's first decision (dealt again while one ends first)."""

        def deal(key: jax.Array) -> Games:
            k_game, k_seat = jax.random.split(key)
            learner = jax.random.randint(k_seat, (), 0, players, jnp.int32)
            g = E.init(k_game, arrays, players, answer_calls=True)
            return Games(opponents(g, learner), learner)

        def again(c: tuple) -> tuple:
            key, sub = jax.random.split(c[1])
            return deal(sub), key

        return jax.lax.while_loop(lambda c: c[0].game.done, again, (deal(key), key))[0]

    plain = env.observation_shape[0] - PAIR_FEATURES  # the plain observation's width
    slots, wilds = (jnp.asarray(t) for t in fit_entries())

    def look(games: Games) -> tuple[jax.Array, jax.Array]:
        """The network's input (the ``pairs`` observation and the two ``fits`` entries, as
        agents/policies/features.py computes them) and the action mask."""
        g, me = games.game, games.learner
        obs = observe_game(g, me, players, "pairs")
        fit = fit_columns(obs, obs[plain:], slots, wilds).astype(obs.dtype)
        return jnp.concatenate([obs, fit]), action_mask(g, me)

    def step(games: Games, action: jax.Array, key: jax.Array) -> tuple[Games, jax.Array, jax.Array]:
        g, _ = E.step(games.game, action, answer_calls=True)
        g = opponents(g, games.learner)
        done = g.done
        reward = jnp.where(done, E.returns(g)[games.learner], 0.0)
        # A new game where one ended, dealt for those games only (where_needed).
        renew = where_needed(
            done, lambda c: (reset(c[1]), c[1]), (games._replace(game=g), key), NEW_GAME_SHARE
        )
        return renew[0], reward, done

    return env, reset, step, look


# ---------------------------------------------------------------------- PPO


def make_segment(rules: dict[str, Any], total_updates: int) -> Any:
    """A jitted function ``segment(carry, updates)`` running ``updates`` PPO updates (rollout,
    GAE, epochs) in one loop: one compilation for segments of every length."""
    env, reset, env_step, look = make_env_fns(rules)
    batch = NUM_ENVS * NUM_STEPS
    minibatch = batch // NUM_MINIBATCHES

    def policy(params: dict, obs: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
        logits = jnp.where(mask, mlp(params["actor"], obs), ILLEGAL)
        return logits, mlp(params["critic"], obs)[..., 0]

    def loss_fn(params: dict, t: Transition, adv: jax.Array, ret: jax.Array) -> jax.Array:
        logits, value = policy(params, t.obs, t.mask)
        logp_all = jax.nn.log_softmax(logits)
        logp = jnp.take_along_axis(logp_all, t.action[:, None], axis=1)[:, 0]
        ratio = jnp.exp(logp - t.logp)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        pg = jnp.maximum(-adv * ratio, -adv * jnp.clip(ratio, 1 - CLIP_COEF, 1 + CLIP_COEF))
        probs = jnp.exp(logp_all)
        entropy = -jnp.sum(jnp.where(t.mask, probs * logp_all, 0.0), axis=1)
        v_loss = 0.5 * ((value - ret) ** 2).mean()
        return pg.mean() + VF_COEF * v_loss - ENT_COEF * entropy.mean()

    def update(carry: tuple, _: None) -> tuple:
        params, opt_state, games, key, illegal = carry

        def rollout(c: tuple, _: None) -> tuple:
            games, key, illegal = c
            key, k_act, k_env = jax.random.split(key, 3)
            obs, mask = jax.vmap(look)(games)
            logits, value = policy(params, obs, mask)
            action = jax.random.categorical(k_act, logits)
            logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], 1)[:, 0]
            illegal += (~jnp.take_along_axis(mask, action[:, None], 1)).sum()
            games, reward, done = jax.vmap(env_step)(
                games, action, jax.random.split(k_env, NUM_ENVS)
            )
            t = Transition(obs, mask, action, logp, value, reward, done)
            return (games, key, illegal), t

        (games, key, illegal), traj = jax.lax.scan(
            rollout, (games, key, illegal), None, length=NUM_STEPS
        )
        _, last_value = policy(params, *jax.vmap(look)(games))

        def gae(c: tuple, t: Transition) -> tuple:
            next_adv, next_value = c
            live = 1.0 - t.done
            delta = t.reward + GAMMA * next_value * live - t.value
            adv = delta + GAMMA * GAE_LAMBDA * live * next_adv
            return (adv, t.value), adv

        _, adv = jax.lax.scan(gae, (jnp.zeros_like(last_value), last_value), traj, reverse=True)
        ret = adv + traj.value
        flat = jax.tree.map(lambda x: x.reshape((batch, *x.shape[2:])), (traj, adv, ret))

        def epoch(c: tuple, _: None) -> tuple:
            params, opt_state, key = c
            key, k_perm = jax.random.split(key)
            order = jax.random.permutation(k_perm, batch).reshape(NUM_MINIBATCHES, minibatch)

            def step(c: tuple, idx: jax.Array) -> tuple:
                params, opt_state = c
                t, a, r = jax.tree.map(lambda x: x[idx], flat)
                grads = jax.grad(loss_fn)(params, t, a, r)
                changes, opt_state = optimizer.update(grads, opt_state, params)
                return (optax.apply_updates(params, changes), opt_state), None

            (params, opt_state), _ = jax.lax.scan(step, (params, opt_state), order)
            return (params, opt_state, key), None

        (params, opt_state, key), _ = jax.lax.scan(
            epoch, (params, opt_state, key), None, length=UPDATE_EPOCHS
        )
        return (params, opt_state, games, key, illegal), None

    steps_per_decay = total_updates * UPDATE_EPOCHS * NUM_MINIBATCHES
    schedule = optax.linear_schedule(LEARNING_RATE, 0.0, max(steps_per_decay, 1))
    optimizer = optax.chain(
        optax.clip_by_global_norm(MAX_GRAD_NORM), optax.adam(schedule, eps=1e-5)
    )

    @jax.jit
    def segment(carry: tuple, updates: jax.Array) -> tuple:
        return jax.lax.fori_loop(0, updates, lambda _, c: update(c, None)[0], carry)

    def start(key: jax.Array, obs_width: int) -> tuple:
        k_actor, k_critic, k_games, key = jax.random.split(key, 4)
        params = {
            "actor": init_mlp(k_actor, [obs_width, HIDDEN, HIDDEN, 13], 0.01),
            "critic": init_mlp(k_critic, [obs_width, HIDDEN, HIDDEN, 1], 1.0),
        }
        games = jax.vmap(reset)(jax.random.split(k_games, NUM_ENVS))
        return params, optimizer.init(params), games, key, jnp.int32(0)

    return env, segment, partial(start, obs_width=env.observation_shape[0] + FIT_FEATURES)


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    globals()["NUM_ENVS"] = args.envs
    run = PipelineRun(args, NAME, "jax", features="fits")
    per_update = NUM_ENVS * NUM_STEPS
    total = max(1, -(-args.steps // per_update))
    # segments end at or just past each --eval-every multiple, where the curve takes a point
    every = total if args.eval_every == 0 else max(1, -(-args.eval_every // per_update))
    _, segment, start = make_segment(run.env_options, total)
    print(
        "compiling the JAX engine and the training loop (about a minute on a 2-core CPU, "
        "several under load) ...",
        flush=True,
    )
    carry = start(jax.random.PRNGKey(args.seed))
    done = 0
    while done < total:
        n = min(every, total - done)
        carry = segment(carry, jnp.int32(n))
        done += n
        actor = [(np.asarray(w), np.asarray(b)) for w, b in carry[0]["actor"]]
        critic = [(np.asarray(w), np.asarray(b)) for w, b in carry[0]["critic"]]
        if done < total:
            run.progress(done * per_update, actor, critic, activation="tanh")
    return run.finish(
        total * per_update, actor, critic, activation="tanh", illegal_moves=int(carry[4])
    )


if __name__ == "__main__":
    main()
