"""The ``pairs`` observation (trash_env/pairs.py) in every form of the environment: each entry
means what the table says, recomputed from the game's own state (not from the observation); the
option is checked; the spaces follow it; the batched envs equal the single-agent env entry for
entry on the same deals; OpenSpiel's tensors carry the same entries and no hidden card."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import expected_pairs

from trash_env.engine import Game
from trash_env.env import raw_env
from trash_env.observation import encode_observation, observation_size
from trash_env.pairs import (
    OBSERVATIONS,
    PAIR_FEATURES,
    add_pairs,
    check_observation,
    observation_width,
    pair_indices,
)
from trash_env.solo import TrashSoloEnv

SPIEL = "OpenSpiel is not installed (the 'openspiel' extra)"


def check_vector(vector: np.ndarray, g: Game, observer: int) -> None:
    n = g.num_players
    assert vector.dtype == np.float32 and vector.shape == (observation_width(n, "pairs"),)
    plain = observation_size(n)
    assert np.array_equal(vector[:plain], encode_observation(g, observer))
    assert np.array_equal(vector[plain:], expected_pairs(g, observer))


VARIANTS = [
    dict(num_players=2),
    dict(num_players=3, jokers=True, wilds="faces"),
    dict(num_players=6, wilds="kings", losers_reveal=True),
]


def test_the_definition_has_108_entries_and_one_table():
    from agents.policies.features import PairFeatures, extra_inputs

    assert OBSERVATIONS[0] == "plain" and PAIR_FEATURES == 108
    for n in range(2, 7):
        left, right = pair_indices(n)
        assert len(left) == len(right) == PAIR_FEATURES
        assert max(left.max(), right.max()) < observation_size(n)
        assert observation_width(n, "pairs") == observation_size(n) + 108
        assert observation_width(n) == observation_size(n)
        assert extra_inputs("pairs", n) == PAIR_FEATURES
        x = np.random.default_rng(n).random((3, observation_size(n)), dtype=np.float32)
        assert np.array_equal(PairFeatures(n)(x), add_pairs(x, n))  # agents use this table
    pair_indices(2)[0][0] = -1  # a copy: the cached table is untouched
    assert pair_indices(2)[0][0] >= 0


@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: str(o["num_players"]))
def test_aec_env_entries_mean_what_the_table_says(options):
    e = raw_env(observation="pairs", **options)
    rng = np.random.default_rng(options["num_players"])
    checked = lit = 0
    for seed in range(3):
        e.reset(seed=seed)
        while not e.game.done and checked < 300 * (seed + 1):
            for p, agent in enumerate(e.possible_agents):
                vector = e.observe(agent)["observation"]
                assert e.observation_space(agent)["observation"].contains(vector)
                check_vector(vector, e.game, p)
                lit += int(vector[observation_size(e.game.num_players) :].any())
            mask = e.observe(e.agent_selection)["action_mask"]
            e.step(int(rng.choice(np.flatnonzero(mask))))
            checked += 1
    assert checked > 300 and lit > checked  # the entries are not all zero


@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: str(o["num_players"]))
def test_solo_env_entries_mean_what_the_table_says(options):
    env = TrashSoloEnv(opponents=["greedy", "random"], observation="pairs", **options)
    rng = np.random.default_rng(5)
    obs, _ = env.reset(seed=2)
    for _ in range(300):
        assert env.observation_space.contains(obs)
        check_vector(obs, env.game, env.seat)
        obs, _, terminated, truncated, _ = env.step(
            int(rng.choice(np.flatnonzero(env.action_masks())))
        )
        if terminated or truncated:
            obs, _ = env.reset()


@pytest.mark.parametrize("bad", ["Pairs", "obs", "", 1, None, True, ["pairs"]])
def test_a_bad_observation_option_is_named(bad):
    message = "observation must be one of 'plain', 'pairs'"
    makers = [lambda: raw_env(observation=bad), lambda: TrashSoloEnv(observation=bad)]
    try:  # the batched env needs numba (the vector extra; CI's floors venv has none)
        from trash_env.vector.env import TrashVectorEnv

        makers.append(lambda: TrashVectorEnv(2, observation=bad))
    except ModuleNotFoundError:
        pass
    for make in makers:
        with pytest.raises(ValueError, match=message):
            make()


def test_numpy_strings_are_taken_and_the_default_is_plain():
    assert check_observation(np.str_("pairs")) == "pairs"
    assert type(check_observation(np.str_("pairs"))) is str
    e = raw_env(num_players=3, observation=np.str_("pairs"))
    assert e.observation == "pairs"
    assert e.observation_space("player_0")["observation"].shape == (observation_size(3) + 108,)
    assert raw_env(num_players=3).observation_space("player_0")["observation"].shape == (
        observation_size(3),
    )
    assert TrashSoloEnv().observation_space.shape == (observation_size(2),)
    assert TrashSoloEnv(observation=np.str_("pairs")).observation_space.shape == (261,)


def replay_slot(core, g: int) -> TrashSoloEnv:
    """A TrashSoloEnv (greedy opponents, pairs) at the start of slot g's current episode."""
    from agents.bots.base import make_agent

    rules = core.rules
    solo = TrashSoloEnv(opponents=["greedy"], observation="pairs", **rules.to_dict())
    seat = int(core.seats[g])
    solo.seat = seat
    solo.table = [
        None if p == seat else make_agent("greedy", seed=0) for p in range(rules.num_players)
    ]
    solo.game = Game(rules, seed=int(core.batch.seeds[g]))
    solo._deals_paid, solo._last_events, solo._illegal = 0, 0, False
    solo._pending = solo._advance()
    assert not solo.game.done
    return solo


@pytest.mark.parametrize("options", VARIANTS[:2], ids=lambda o: str(o["num_players"]))
def test_batched_envs_equal_the_solo_env_entry_for_entry(options):
    """Both batched envs, replayed slot by slot on TrashSoloEnv with the same deals, seats and
    learner actions: the same pairs observations (also the final ones), and every entry is
    the table's, recomputed from the replayed game."""
    pytest.importorskip("numba", reason="the batched envs need numba (the vector extra)")
    from trash_env.vector.env import TrashVecEnv, TrashVectorEnv

    envs = 6
    vec = TrashVecEnv(envs, ["greedy"], seed=3, observation="pairs", **options)
    gym_vec = TrashVectorEnv(envs, ["greedy"], seed=3, observation="pairs", **options)
    observations = vec.reset()
    gym_observations, _ = gym_vec.reset(seed=None)
    assert vec.observation_space.shape == gym_vec.single_observation_space.shape
    assert observations.shape == (envs, observation_width(options["num_players"], "pairs"))
    solos = [replay_slot(vec.core, g) for g in range(envs)]
    choose = np.random.default_rng(1)
    finished = 0
    for _ in range(250):
        assert np.array_equal(observations, gym_observations)
        for g, solo in enumerate(solos):
            assert vec.observation_space.contains(observations[g])
            assert observations[g].tobytes() == solo._observe().tobytes()
            check_vector(observations[g], solo.game, solo.seat)
        masks = vec.action_masks()
        actions = np.array([choose.choice(np.flatnonzero(m)) for m in masks])
        vec.step_async(actions)
        observations, _, dones, infos = vec.step_wait()
        gym_observations, *_ = gym_vec.step(actions)
        for g, solo in enumerate(solos):
            obs, _, terminated, truncated, _ = solo.step(int(actions[g]))
            if dones[g]:
                finished += 1
                assert infos[g]["terminal_observation"].tobytes() == obs.tobytes()
                solos[g] = replay_slot(vec.core, g)
    assert finished >= envs


def test_batched_opponents_keep_the_plain_observation():
    """A trained opponent sees the plain vector it was trained on, whatever the learner's form:
    a pairs or fits learner against the shipped model plays as a plain one does, move for move."""
    pytest.importorskip("numba", reason="the batched envs need numba (the vector extra)")
    from trash_env.vector.env import TrashVecEnv

    runs = []
    for form in OBSERVATIONS:
        vec = TrashVecEnv(4, ["pretrained"], seed=5, observation=form)
        obs = vec.reset()
        trace = [obs[:, : observation_size(2)].copy()]
        for _ in range(60):
            masks = vec.action_masks()
            obs, rewards, dones, _ = vec.step(np.argmax(masks, axis=1))
            trace += [obs[:, : observation_size(2)].copy(), rewards, dones]
        runs.append(trace)
    for first, *others in zip(*runs, strict=True):
        assert all(np.array_equal(first, other) for other in others)


@pytest.mark.slow
def test_openspiel_tensors_carry_the_pairs():
    pyspiel = pytest.importorskip("pyspiel", reason=SPIEL)
    from trash_env import spiel

    for n in (2, 4):
        game = pyspiel.load_game("python_trash", {"players": n, "observation": "pairs"})
        plain_game = pyspiel.load_game("python_trash", {"players": n})
        width = observation_width(n, "pairs")
        assert game.observation_tensor_shape() == [width]
        assert plain_game.observation_tensor_shape() == [observation_size(n)]
        assert game.information_state_tensor_shape() == [spiel.information_state_size(n, "pairs")]
        assert spiel.information_state_size(n, "pairs") == spiel.information_state_size(n) + 108
        rng = np.random.default_rng(n)
        state = game.new_initial_state(seed=7)
        plain_state = plain_game.new_initial_state(seed=7)
        checked = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(0)
                plain_state.apply_action(0)
                continue
            engine = state.engine
            for p in range(n):
                obs = np.array(state.observation_tensor(p), np.float32)
                check_vector(obs, engine, p)
                info = np.array(state.information_state_tensor(p), np.float32)
                plain_info = np.array(plain_state.information_state_tensor(p), np.float32)
                # the pairs sit between the observation and the public-state features
                assert np.array_equal(info[:width], obs)
                assert np.array_equal(info[width:], plain_info[observation_size(n) :])
            action = int(rng.choice(state.legal_actions()))
            state.apply_action(action)
            plain_state.apply_action(action)
            checked += 1
        assert checked > 50


def test_openspiel_pairs_hold_no_hidden_card():
    pyspiel = pytest.importorskip("pyspiel", reason=SPIEL)
    import trash_env.spiel  # noqa: F401  registers python_trash (no other test may have)

    game = pyspiel.load_game("python_trash", {"players": 3, "observation": "pairs"})
    rng = np.random.default_rng(0)
    state = game.new_initial_state(seed=1)
    state.apply_action(0)
    redealt = 0
    while not state.is_terminal() and redealt < 40:
        before = [state.observation_tensor(p) + state.information_state_tensor(p) for p in range(3)]
        other = state.clone()
        other.engine.resample_hidden(rng)
        assert [
            other.observation_tensor(p) + other.information_state_tensor(p) for p in range(3)
        ] == before
        redealt += 1
        state.apply_action(int(rng.choice(state.legal_actions())))
    assert redealt == 40


def test_openspiel_parameter_is_checked_and_round_trips():
    pyspiel = pytest.importorskip("pyspiel", reason=SPIEL)
    from trash_env import spiel
    from trash_env.rules import Rules

    with pytest.raises(ValueError, match="observation must be one of 'plain', 'pairs'"):
        pyspiel.load_game("python_trash", {"observation": "both"})
    rules = Rules.from_options(num_players=3)
    params = spiel.params_from_rules(rules, observation="pairs")
    assert params["observation"] == "pairs" and set(params) == set(spiel.PARAMETERS)
    assert spiel.rules_from_params(params) == rules
    assert pyspiel.load_game("python_trash", params).observation_tensor_shape() == [
        observation_width(3, "pairs")
    ]
