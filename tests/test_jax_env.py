"""The JAX engine's Pgx API (trash_env.jax_env): the contract a Pgx user relies on, the bad
options refused at ``make``, ``auto_reset``, Pgx's own API test where Pgx is installed, and
the JAX bots against the Python ones. The rules themselves are held to the reference engine
by tests/test_vector_differential.py."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="needs jax (the jax extra)")
import jax.numpy as jnp  # noqa: E402
from test_vector_differential import JAX_BATCH, JaxEngine  # noqa: E402

from agents.bots.heuristics import CountingAgent, GreedyAgent  # noqa: E402
from trash_env.engine import NUM_ACTIONS  # noqa: E402
from trash_env.jax_env import auto_reset, make  # noqa: E402
from trash_env.jax_env import bots as B  # noqa: E402
from trash_env.jax_env.env import init_state, step_state  # noqa: E402
from trash_env.observation import action_mask  # noqa: E402
from trash_env.pairs import observation_width  # noqa: E402
from trash_env.rules import Rules  # noqa: E402
from trash_env.view import PublicView  # noqa: E402

# Compiled once per player count and observation kind, shared by every variant and test:
# batches, and one game (``one_init(env)`` and ``one_step(env)`` are ``jax.jit(env.init)``
# and ``jax.jit(env.step)`` through the shared programs, the rules passed as arrays). Each
# compilation of the engine costs seconds, so the tests share them wherever what they
# check is not the compilation of a new program itself.
_init = jax.jit(jax.vmap(init_state, in_axes=(0, None, None, None)), static_argnums=(2, 3))
_step = jax.jit(jax.vmap(step_state, in_axes=(0, 0, None, None, None)), static_argnums=(3, 4))
_init1 = jax.jit(init_state, static_argnums=(2, 3))
_step1 = jax.jit(step_state, static_argnums=(3, 4))
_random = jax.jit(jax.vmap(B.random_action))
_random1 = jax.jit(B.random_action)


pytestmark = pytest.mark.slow  # the second tier: `pytest -m slow`


def one_init(env: object) -> object:
    return lambda key: _init1(
        key,
        env.arrays,  # type: ignore[attr-defined]
        env.num_players,  # type: ignore[attr-defined]
        env.observation_kind,  # type: ignore[attr-defined]
    )


def one_step(env: object) -> object:
    return lambda state, action, key=None: _step1(
        state,
        jnp.asarray(action, jnp.int32),
        key,
        env.num_players,  # type: ignore[attr-defined]
        env.observation_kind,  # type: ignore[attr-defined]
    )


def test_make_refuses_bad_options() -> None:
    with pytest.raises(ValueError, match="num_players must be an integer from 2 to 6"):
        make(num_players=7)
    with pytest.raises(ValueError, match="unknown rules option"):
        make(wild="kings")
    with pytest.raises(ValueError, match="observation must be one of 'plain', 'pairs'"):
        make(observation="image")
    with pytest.raises(ValueError, match="free_draws=3 needs num_players=2"):
        make(num_players=3, free_draws=3, losers_reveal=True)


def test_env_describes_itself() -> None:
    env = make(num_players=4, observation="pairs")
    assert (env.id, env.version, env.num_players, env.num_actions) == ("trash", "v0", 4, 13)
    assert env.observation_shape == (observation_width(4, "pairs"),)
    state = env.init(jax.random.PRNGKey(0))
    assert state.observation.shape == env.observation_shape
    assert state.observation.dtype == jnp.float32
    assert state.current_player.dtype == jnp.int32
    assert state.rewards.dtype == jnp.float32 and state.rewards.shape == (4,)
    assert state.legal_action_mask.dtype == jnp.bool_
    np.testing.assert_array_equal(env.observe(state, 2), env.observe(state, jnp.int32(2)))
    assert not np.array_equal(env.observe(state, 0), env.observe(state, 1))


CONTRACT_BATCH = 24  # the contract's games a batch (the illegal action's test reuses its programs)
CONTRACT_VARIANTS = [
    {},
    {"num_players": 3, "call_trash": True, "start_size": 3},
    {"losers_reveal": True, "free_draws": 3, "call_trash": True, "start_size": 4},
    {"start_size": 2, "max_turns": 30},
    {"num_players": 3, "episode": "round", "wilds": "faces", "jokers": True},
]


def _play(options: dict, batch: int, seed: int, steps: int = 4000) -> None:
    """Random legal play checking Pgx's contract after every step."""
    rules = Rules(**options)
    env = make(**options)
    n = rules.num_players
    keys = jax.random.split(jax.random.PRNGKey(seed), batch)
    state = _init(keys, env.arrays, n, "plain")
    paid = np.zeros((batch, n), np.float64)
    ended = np.zeros(batch, bool)
    key = jax.random.PRNGKey(seed + 1)
    for _ in range(steps):
        before = jax.device_get(state)
        key, sub = jax.random.split(key)
        action = _random(jax.random.split(sub, batch), state)
        state = _step(state, action, None, n, "plain")
        after = jax.device_get(state)
        over = after.terminated | after.truncated
        was_over = before.terminated | before.truncated
        rewards = np.asarray(after.rewards)
        # Masks are never empty: the player to act has a move; a finished game's is all True.
        assert after.legal_action_mask.any(axis=1).all()
        assert after.legal_action_mask[over].all()
        # Rewards only at the step that ends a game, zero-sum there.
        assert not rewards[~over].any()
        assert not rewards[was_over].any()
        assert np.abs(rewards.sum(axis=1)).max() < 1e-6
        # A finished game stays finished and unchanged.
        assert over[was_over].all()
        for name in ("current_player", "observation", "terminated", "truncated", "_step_count"):
            old, new = getattr(before, name), getattr(after, name)
            np.testing.assert_array_equal(np.asarray(new)[was_over], np.asarray(old)[was_over])
        counted = np.asarray(before._step_count) + 1
        assert (np.asarray(after._step_count)[~was_over] == counted[~was_over]).all()
        paid += rewards
        ended |= over
        if over.all():
            break
    assert ended.all()
    for i in range(batch):
        game = jax.tree.map(lambda x, i=i: np.asarray(x[i]), after._game)
        expected = B_returns(game, n)
        np.testing.assert_allclose(paid[i], expected, atol=1e-6)


def B_returns(game: object, n: int) -> np.ndarray:
    """What ``Game.returns()`` pays for the finished JAX game ``game`` (zero if truncated)."""
    winners = np.flatnonzero(game.winners)  # type: ignore[attr-defined]
    if game.truncated or not winners.size:  # type: ignore[attr-defined]
        return np.zeros(n)
    share = n / winners.size
    return np.array([((share if p in winners else 0.0) - 1.0) / (n - 1) for p in range(n)])


@pytest.mark.parametrize("variant", range(len(CONTRACT_VARIANTS)))
def test_pgx_contract_over_random_play(variant: int) -> None:
    _play(CONTRACT_VARIANTS[variant], batch=CONTRACT_BATCH, seed=variant)


def test_illegal_action_ends_the_game_with_the_offenders_loss() -> None:
    env = make(num_players=3)
    arrays, games = env.arrays, np.arange(CONTRACT_BATCH)

    def step(state: object, action: object) -> object:
        action = np.broadcast_to(np.asarray(action, np.int32), (CONTRACT_BATCH,))
        return _step(state, action, None, 3, "plain")

    state = _init(jax.random.split(jax.random.PRNGKey(3), CONTRACT_BATCH), arrays, 3, "plain")
    mask = np.asarray(state.legal_action_mask)
    illegal = np.argmin(mask, axis=1)  # each game's first illegal action
    assert not mask[games, illegal].any()
    actor = np.asarray(state.current_player)
    after = step(state, illegal)
    assert np.asarray(after.terminated).all() and not np.asarray(after.truncated).any()
    expected = np.full((CONTRACT_BATCH, 3), 0.5, np.float32)
    expected[games, actor] = -1.0
    np.testing.assert_array_equal(after.rewards, expected)
    assert np.asarray(after.legal_action_mask).all()
    # The game is not played on: the player to act and the observation stay the state's.
    np.testing.assert_array_equal(after.current_player, actor)
    np.testing.assert_array_equal(after.observation, state.observation)
    again = step(after, 0)
    assert np.asarray(again.terminated).all() and not np.asarray(again.rewards).any()
    np.testing.assert_array_equal(again.current_player, actor)
    np.testing.assert_array_equal(again.observation, state.observation)
    # Out-of-range actions are illegal too.
    assert np.asarray(step(state, NUM_ACTIONS).terminated).all()
    assert np.asarray(step(state, -1).terminated).all()


def test_step_key_draws_the_chance_and_none_uses_the_games_key() -> None:
    env = make(start_size=1)
    step = one_step(env)
    state = one_init(env)(jax.random.PRNGKey(1))
    action = int(np.flatnonzero(np.asarray(state.legal_action_mask))[0])
    one = step(state, action)
    two = step(state, action)
    np.testing.assert_array_equal(one._game.stock, two._game.stock)
    np.testing.assert_array_equal(one._game.key, two._game.key)
    keyed = step(state, action, jax.random.PRNGKey(99))
    assert not np.array_equal(keyed._game.key, one._game.key)


def test_auto_reset_starts_a_new_game_and_keeps_the_final_step() -> None:
    env = make(start_size=1, num_players=2)
    step = jax.jit(auto_reset(env.step, env.init))
    plain_step, init = one_step(env), one_init(env)
    state = init(jax.random.PRNGKey(0))
    key = jax.random.PRNGKey(1)
    ends = 0
    while bool(state.terminated):  # this start can end before a decision: deal again
        key, sub = jax.random.split(key)
        state = init(sub)
    for _ in range(300):
        key, k1, k2 = jax.random.split(key, 3)
        action = _random1(k1, state)
        before, state = state, step(state, action, k2)
        # Pgx's keys: the step draws from split(k2)[0], a new game from split(k2)[1] (dealt
        # again from further splits while it ends before a decision). A state that ended
        # holds the new game already: its step plays that game.
        k_step, k_new = jax.random.split(k2)
        before = before.replace(
            terminated=jnp.bool_(False), truncated=jnp.bool_(False), rewards=0 * before.rewards
        )
        expected = plain_step(before, action, k_step)
        if bool(expected.terminated | expected.truncated):
            fresh = init(k_new)
            while bool(fresh.terminated | fresh.truncated):
                k_new, sub = jax.random.split(k_new)
                fresh = init(sub)
            expected = fresh.replace(
                terminated=expected.terminated,
                truncated=expected.truncated,
                rewards=expected.rewards,
            )
        jax.tree.map(np.testing.assert_array_equal, state, expected)
        if bool(state.terminated):
            ends += 1
            assert float(jnp.abs(state.rewards).sum()) > 0
            assert int(state._step_count) == 0 and not bool(state._game.done)
            assert bool(state.legal_action_mask.any())
        else:
            assert not np.asarray(state.rewards).any()
    assert ends >= 5


# Games that can end before their first decision (start_size 1), calls answered: the batch,
# and the programs of the two tests below (compiled once for both).
SHORT_START_GAMES = 32


@pytest.fixture(scope="module")
def short_start() -> tuple:
    """The env, ``jit(vmap(env.init))`` and ``jit(vmap(auto_reset(env.step, env.init)))``."""
    env = make(start_size=1, num_players=3, call_trash=True)
    return env, jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(auto_reset(env.step, env.init)))


def test_auto_reset_of_the_env_is_the_generic_wrapper_under_vmap(short_start: tuple) -> None:
    """``auto_reset(env.step, env.init)`` deals the new game inside the step's engine run
    (``env.step_and_reset``); wrapped functions that are not the env's own take Pgx's path
    (a step, then ``init`` where it ended). Both give the same states, step after step: with
    illegal actions (the game ends at once), calls answered, and a start that can end before
    its first decision (dealt again)."""
    env, init, fused = short_start
    generic = jax.jit(
        jax.vmap(auto_reset(lambda s, a, k: env.step(s, a, k), lambda k: env.init(k)))
    )
    games = SHORT_START_GAMES
    state = init(jax.random.split(jax.random.PRNGKey(3), games))
    rng = np.random.default_rng(4)
    ends = illegal = 0
    for t in range(120):
        mask = np.asarray(state.legal_action_mask)
        action = np.array([rng.choice(np.flatnonzero(m)) for m in mask], np.int32)
        bad = rng.random(games) < 0.02
        action = np.where(bad, (action + 1 + rng.integers(0, 12, games)) % 13, action)
        illegal += int((~mask[np.arange(games), action]).sum())
        keys = jax.random.split(jax.random.PRNGKey(100 + t), games)
        state, expected = fused(state, action, keys), generic(state, action, keys)
        # Bit for bit, the observation too (its divisions by the rules' counts are divisions
        # in both programs, though ``env.init`` bakes the rules in: observe.py).
        jax.tree.map(np.testing.assert_array_equal, state, expected)
        ends += int(np.asarray(state.terminated | state.truncated).sum())
    assert ends >= 20 and illegal >= 5


def test_init_observes_as_the_reference_though_it_bakes_the_rules_in(short_start: tuple) -> None:
    """``env.init`` compiles the rules in as constants; its observations are still the
    reference's, byte for byte (XLA would turn a division by the deck's 54 cards into a
    product with 1/54, which rounds differently: observe.py divides behind a barrier).
    Compared where the reference game waits at the same decision (the env answers calls)."""
    from trash_env.engine import Decision
    from trash_env.jax_env.reference import reference_game
    from trash_env.observation import encode_observation

    env, init, _ = short_start
    keys = jax.random.split(jax.random.PRNGKey(11), SHORT_START_GAMES)
    state = init(keys)
    compared = 0
    for i in range(SHORT_START_GAMES):
        game = reference_game(env.rules, keys[i])
        if game.done or game.decision is Decision.CALL:
            continue
        expected = encode_observation(game, game.current)
        np.testing.assert_array_equal(np.asarray(state.observation[i]), expected)
        compared += 1
    assert compared >= SHORT_START_GAMES // 2


def test_a_game_over_before_its_first_decision_pays_at_init(short_start: tuple) -> None:
    _, init, step = short_start
    state = init(jax.random.split(jax.random.PRNGKey(0), SHORT_START_GAMES))
    over = np.asarray(state.terminated)
    assert over.any() and not over.all()
    rewards = np.asarray(state.rewards)
    assert (np.abs(rewards[over]).sum(axis=1) > 0).all() and not rewards[~over].any()
    keys = jax.random.split(jax.random.PRNGKey(1), SHORT_START_GAMES)
    after = step(state, jax.vmap(B.greedy_action)(state), keys)
    # Games auto_reset starts always have a decision.
    assert np.asarray(after.legal_action_mask)[over].sum(axis=1).min() >= 1
    assert not np.asarray(after._game.done)[over].any()


@pytest.mark.parametrize("capacity", [54, 108, 648])
def test_a_shuffle_sorts_random_words_high_bits_ties_in_index_order(capacity: int) -> None:
    """``rules.shuffle_order``: the first m entries sorted by their random word's high bits
    (the low bits number the entries), equal high bits in index order; the rest in place."""
    from trash_env.jax_env import threefry
    from trash_env.jax_env.rules import shuffle_order

    games = 64
    m = np.random.default_rng(capacity).integers(0, capacity + 1, games)
    m[:4] = (0, 1, capacity - 1, capacity)
    keys = jax.random.split(jax.random.PRNGKey(capacity), games)
    order = jax.jit(jax.vmap(shuffle_order, (0, 0, None)), static_argnums=2)
    got = np.asarray(order(keys, jnp.asarray(m, jnp.int32), capacity))
    shift = (capacity - 1).bit_length()
    for i in range(games):
        high = np.asarray(threefry.bits(keys[i], capacity))[: m[i]] >> shift
        want = [*np.argsort(high, kind="stable"), *range(m[i], capacity)]
        assert got[i].tolist() == want


def test_nothing_imports_torch_numba_or_sb3() -> None:
    code = (
        "import sys, trash_env.jax_env, trash_env.jax_env.bots;"
        "bad = [m for m in ('torch', 'numba', 'stable_baselines3') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_pgx_api_test_passes() -> None:
    """Pgx's own API test, where Pgx is installed. Three of its checks are about Pgx's own
    setting and are adapted here: the env id must be one of Pgx's ids (ours is added), the
    state must draw with Pgx's visualizer (ours writes its own picture), and its one-game
    half draws actions with ``act_randomly(key, mask)``, which samples along axis 1 and so
    fails on one game's mask (on Pgx's own tic_tac_toe too, with jax 0.10): it gets the
    same draw through a batch of one."""
    pgx = pytest.importorskip("pgx", reason="needs pgx (in the test extra)")
    from typing import get_args

    from pgx._src import api_test

    env = make(start_size=3)
    assert isinstance(env, pgx.Env) and issubclass(type(env), pgx.Env)
    ids = (*get_args(pgx.core.EnvId), env.id)
    batch_act = api_test.act_randomly
    saved = api_test.get_args, api_test.act_randomly
    api_test.get_args = lambda _: ids
    api_test.act_randomly = lambda key, mask: batch_act(key, mask[None])[0]
    try:
        api_test.api_test_single(env, num=2)
        api_test.act_randomly = batch_act
        api_test.api_test_batch(env, num=1)
    finally:
        api_test.get_args, api_test.act_randomly = saved


# ---------------------------------------------------------------------- bots


def test_greedy_and_counting_choose_as_the_python_bots() -> None:
    """On the states of random games (every decision, reference and JAX in lock-step), the
    JAX greedy and counting choose what GreedyAgent and CountingAgent choose."""
    greedy, counting = GreedyAgent(), CountingAgent(discard_weight=0.5)
    pick = jax.jit(jax.vmap(lambda g: (B.greedy_game(g), B.counting_game(g, 0.5))))
    compared = 0
    for options, seed in (({}, 1), ({"num_players": 4, "jokers": True, "wilds": "faces"}, 2)):
        engine = JaxEngine(Rules(call_trash=True, **options), JAX_BATCH, seed)
        choose = np.random.default_rng(seed)
        for _ in range(400):
            games = jax.tree.map(jnp.asarray, engine.games)
            ours = [np.asarray(a) for a in pick(games)]
            actions = np.zeros(JAX_BATCH, np.int64)
            for i, game in enumerate(engine.refs):
                if game.done:
                    continue
                view = PublicView(game, game.current)
                mask = action_mask(game, game.current)
                assert int(ours[0][i]) == greedy.act(None, mask, view)
                assert int(ours[1][i]) == counting.act(None, mask, view)
                compared += 1
                legal = game.legal_actions()
                actions[i] = legal[int(choose.integers(len(legal)))]
                game.step(int(actions[i]))
            engine.step(actions)
            if all(game.done for game in engine.refs):
                break
    assert compared > 5000


def test_random_is_uniform_over_the_legal_actions() -> None:
    env = make()
    step = one_step(env)
    state = one_init(env)(jax.random.PRNGKey(0))
    # Play at random until a wild decision (several legal slots).
    key = jax.random.PRNGKey(5)
    while int(state._game.decision) != 2 or int(state.legal_action_mask.sum()) < 3:
        key, sub = jax.random.split(key)
        state = step(state, _random1(sub, state))
    legal = np.flatnonzero(np.asarray(state.legal_action_mask))
    draws = 12_000
    keys = jax.random.split(jax.random.PRNGKey(7), draws)
    picks = np.asarray(jax.vmap(B.random_action, in_axes=(0, None))(keys, state))
    assert set(picks.tolist()) == set(legal.tolist())
    counts = np.bincount(picks, minlength=NUM_ACTIONS)[legal]
    expected = draws / legal.size
    assert np.abs(counts - expected).max() < 5 * np.sqrt(expected)
