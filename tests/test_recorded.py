"""Recorded games (tests/recorded/*.json) replayed on every engine and adapter: the reference
engine, the PettingZoo env (plain and pairs observations), the batched engine and the OpenSpiel
game, each compared decision by decision (player, decision, observation digests) and at the end
(events, result, every seat's last observation).

Determinism inside one process is tested elsewhere; these files were written by an earlier
process and are checked in, so a change of seeding, event names or observation layout that
would break every published seed and saved log fails here. When such a change is intended,
``python tests/recorded/regenerate.py`` writes them again (docs/development.md).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import trash_env
from trash_env.engine import Decision, Event, Game
from trash_env.observation import action_mask, encode_observation
from trash_env.pairs import add_pairs
from trash_env.rules import Rules

FOLDER = Path(__file__).resolve().parent / "recorded"
FILES = sorted(FOLDER.glob("*.json"))
NUMBA = importlib.util.find_spec("numba") is not None
PYSPIEL = importlib.util.find_spec("pyspiel") is not None


def _regenerate() -> Any:
    """tests/recorded/regenerate.py as a module (digests and seeding are defined once there)."""
    spec = importlib.util.spec_from_file_location("recorded_regenerate", FOLDER / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REGEN = _regenerate()


def load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    assert data["format"] == REGEN.FORMAT
    return data


@pytest.fixture(params=FILES, ids=lambda p: p.stem)
def recorded(request: pytest.FixtureRequest) -> dict[str, Any]:
    return load(request.param)


def _where(data: dict[str, Any], k: int) -> str:
    return f"seed {data['seed']}, decision {k}"


def _digests(vector: np.ndarray, mask: np.ndarray, num_players: int) -> list[str]:
    return [REGEN.digest(vector, mask), REGEN.digest(add_pairs(vector, num_players), mask)]


# ---------------------------------------------------------------------- the set itself


def test_a_dozen_games_cover_the_variant_families_and_2_to_6_players():
    games = [load(path) for path in FILES]
    assert len(games) >= 12
    assert {path.stem for path in FILES} == {name for name, *_ in REGEN.GAMES}
    rules = [Rules(**g["rules"]) for g in games]
    assert {r.num_players for r in rules} == {2, 3, 4, 5, 6}
    assert {r.wilds for r in rules} == {"jacks", "kings", "faces", "none"}
    assert {r.reshuffle for r in rules} == {"keep_top", "all"}
    assert {r.episode for r in rules} == {"game", "round"}
    assert any(r.jokers for r in rules) and any(r.call_trash for r in rules)
    assert any(r.free_draws for r in rules) and any(r.losers_reveal for r in rules)
    assert len({r.start_size for r in rules}) >= 4 and len({r.decks for r in rules}) >= 3
    assert any(r.target_size for r in rules) and any(r.max_deals for r in rules)
    kinds = {event[0] for g in games for event in g["events"]}
    for kind in ("reshuffle", "call", "free_draws", "reveal", "shrink", "swap", "truncated"):
        assert kind in kinds
    assert all(len(path.read_bytes()) < 32_000 for path in FILES)  # small files


def test_the_files_are_what_regenerate_writes_today():
    # The files and the recording code agree (regenerate.py --check exits 0): a change to the
    # recording (policy, digest, format) shows here, a change to the engines in the tests below.
    for name, about, options, seed in REGEN.GAMES:
        expected = REGEN.dumps(REGEN.record(name, about, options, seed))
        assert (FOLDER / f"{name}.json").read_text() == expected, name


def test_a_changed_observation_or_event_is_caught(recorded):
    # The comparison can fail: one byte of an observation, or one event, changes the digests.
    game = Game(Rules(**recorded["rules"]), seed=recorded["game_seed"])
    plain = encode_observation(game, game.current)
    mask = action_mask(game, game.current)
    assert _digests(plain, mask, game.num_players) == recorded["decisions"][0][3:]
    plain[0] = 1.0 - plain[0]
    assert _digests(plain, mask, game.num_players)[0] != recorded["decisions"][0][3]


# ---------------------------------------------------------------------- the engines


def test_reference_engine(recorded):
    rules = Rules(**recorded["rules"])
    assert REGEN.game_seed(recorded["seed"]) == recorded["game_seed"]
    game = Game(rules, seed=recorded["game_seed"])
    for k, (player, decision, action, *digests) in enumerate(recorded["decisions"]):
        where = _where(recorded, k)
        assert (game.current, int(game.decision)) == (player, decision), where
        plain = encode_observation(game, player)
        assert _digests(plain, action_mask(game, player), rules.num_players) == digests, where
        assert action in game.legal_actions(), where
        game.step(action)
    assert [list(e) for e in game.events] == recorded["events"]
    assert REGEN.result(game) == recorded["result"]
    for p, digests in enumerate(recorded["final"]):
        plain = encode_observation(game, p)
        assert _digests(plain, action_mask(game, p), rules.num_players) == digests


@pytest.mark.parametrize("observation", ["plain", "pairs"])
def test_pettingzoo_env(recorded, observation):
    """``env.reset(seed=s)`` deals the recorded game; each agent's observation and mask at its
    turn, the events, the returns and the last observations are the recorded ones. The env
    answers "Trash!" itself, so the recorded calls are not stepped."""
    column = 3 if observation == "plain" else 4
    env = trash_env.env(**recorded["rules"], observation=observation)
    env.reset(seed=recorded["seed"])
    expected = [d for d in recorded["decisions"] if d[1] != Decision.CALL]
    final = {}
    k = 0
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        returns[agent] += reward
        seat = env.possible_agents.index(agent)
        if terminated or truncated:
            final[seat] = REGEN.digest(obs["observation"], obs["action_mask"])
            env.step(None)
            continue
        player, _, action, *digests = expected[k]
        where = _where(recorded, k)
        assert seat == player, where
        assert REGEN.digest(obs["observation"], obs["action_mask"]) == digests[column - 3], where
        env.step(action)
        k += 1
    assert k == len(expected)
    game = env.unwrapped.game
    assert [list(e) for e in game.events] == recorded["events"]
    assert [returns[a] for a in env.possible_agents] == pytest.approx(recorded["result"]["returns"])
    assert [final[p] for p in range(len(final))] == [d[column - 3] for d in recorded["final"]]


@pytest.mark.skipif(not NUMBA, reason="the batched engine needs numba (the 'vector' extra)")
def test_batched_engine(recorded):
    """``VectorGame(rules, 1, seed=s)`` deals game seed ``recorded["game_seed"]`` and, given
    the recorded actions, observes and ends as recorded (it keeps no event log: its state and
    observations are compared)."""
    from trash_env.vector import VectorGame

    rules = Rules(**recorded["rules"])
    n = rules.num_players
    batch = VectorGame(rules, 1, seed=recorded["seed"])
    assert int(batch.seeds[0]) == recorded["game_seed"]
    for k, (player, decision, action, *digests) in enumerate(recorded["decisions"]):
        where = _where(recorded, k)
        assert (int(batch.current[0]), int(batch.decision[0])) == (player, decision), where
        plain = batch.observations()[0]
        assert _digests(plain, batch.action_masks()[0], n) == digests, where
        assert batch.step([action])[0], where
    games, result = batch.games[0], recorded["result"]
    assert bool(games["done"]) and bool(games["truncated"]) == result["truncated"]
    assert sorted(np.flatnonzero(games["winners"][:n]).tolist()) == sorted(result["winners"])
    assert games["rounds_won"][:n].tolist() == result["rounds_won"]
    if result["placings"] is not None:
        assert games["placings"][:n].tolist() == result["placings"]
    assert (int(games["deal_number"]), int(games["turns"])) == (result["deals"], result["turns"])
    assert batch.returns()[0].tolist() == pytest.approx(result["returns"])
    for p, digests in enumerate(recorded["final"]):
        plain = batch.observations(np.array([p]))[0]
        assert _digests(plain, batch.action_masks(np.array([p]))[0], n) == digests


@pytest.mark.skipif(not PYSPIEL, reason="the OpenSpiel game needs pyspiel (the 'openspiel' extra)")
@pytest.mark.parametrize("observation", ["plain", "pairs"])
def test_openspiel_game(recorded, observation):
    """``load_game("python_trash", {..., "rng_seed": s})``: the deal (its one chance outcome)
    draws game seed ``recorded["game_seed"]``; each observation tensor, the legal actions, the
    public history (information-state string) and the returns are the recorded ones."""
    import pyspiel

    from trash_env.spiel import SHORT_NAME, event_token, params_from_rules

    rules = Rules(**recorded["rules"])
    params = params_from_rules(rules, rng_seed=recorded["seed"], observation=observation)
    game = pyspiel.load_game(SHORT_NAME, params)
    state = game.new_initial_state()
    assert state.is_chance_node()
    state.apply_action(0)
    assert state.seed == recorded["game_seed"]
    column = 3 if observation == "plain" else 4

    def seen(player: int) -> str:
        mask = np.zeros(13, np.int8)
        if not state.is_terminal() and state.current_player() == player:
            mask[[a for a in state.legal_actions() if a < 13]] = 1
        return REGEN.digest(np.asarray(state.observation_tensor(player), np.float32), mask)

    for k, (player, _, action, *digests) in enumerate(recorded["decisions"]):
        where = _where(recorded, k)
        assert state.current_player() == player, where
        assert seen(player) == digests[column - 3], where
        assert action in state.legal_actions(), where
        state.apply_action(action)
    assert state.is_terminal()
    assert state.returns() == pytest.approx(recorded["result"]["returns"])
    tokens = " ".join(event_token(Event(*e)) for e in recorded["events"])
    for p in range(rules.num_players):
        assert state.information_state_string(p) == f"p{p} {tokens}"
        assert seen(p) == recorded["final"][p][column - 3]


# ---------------------------------------------------------------------- the JAX engine, by key

JAX_FILES = sorted(REGEN.JAX_FOLDER.glob("*.json"))
JAX = importlib.util.find_spec("jax") is not None


@pytest.fixture(params=JAX_FILES, ids=lambda p: p.stem)
def recorded_by_key(request: pytest.FixtureRequest) -> dict[str, Any]:
    return load(request.param)


def test_the_jax_games_are_what_regenerate_writes_and_cover_their_families():
    pytest.importorskip("jax", reason="the JAX games are dealt by jax keys (the 'jax' extra)")
    assert {p.stem for p in JAX_FILES} == {name for name, *_ in REGEN.JAX_GAMES}
    for name, about, options, seed in REGEN.JAX_GAMES:
        expected = REGEN.dumps(REGEN.record(name, about, options, seed, by_key=True))
        assert (REGEN.JAX_FOLDER / f"{name}.json").read_text() == expected, name
    kinds = {event[0] for path in JAX_FILES for event in load(path)["events"]}
    for kind in ("reshuffle", "call", "free_draws", "reveal", "shrink", "wild"):
        assert kind in kinds
    assert all(len(path.read_bytes()) < 32_000 for path in JAX_FILES)


_JAX_PROGRAMS: dict[str, Any] = {}


def _jax_env_programs() -> tuple[Any, Any]:
    """``init_state`` and ``step_state`` (plain observations, 2 players) compiled once: the
    rules are arguments, so every recorded JAX game shares the compilation."""
    if not _JAX_PROGRAMS:
        import jax

        from trash_env.jax_env.env import init_state, step_state

        _JAX_PROGRAMS["init"] = jax.jit(lambda key, arrays: init_state(key, arrays, 2, "plain"))
        _JAX_PROGRAMS["step"] = jax.jit(lambda s, a: step_state(s, a, None, 2, "plain"))
    return _JAX_PROGRAMS["init"], _JAX_PROGRAMS["step"]


@pytest.mark.slow  # compiles the JAX engine
@pytest.mark.skipif(not JAX, reason="the JAX engine needs jax (the 'jax' extra)")
def test_jax_env_replays_the_game_of_its_key(recorded_by_key):
    """``make(**rules).init(PRNGKey(seed))`` deals the recorded game: at every decision (the
    env answers "Trash!" itself, so the recorded calls are not stepped) the player to act, the
    observation and the mask are the recorded ones (digests), and the game ends with the
    recorded returns and placings."""
    import jax

    from trash_env.jax_env import make

    data = recorded_by_key
    rules = Rules(**data["rules"])
    assert rules.num_players == 2 and data["key"] == f"jax.random.PRNGKey({data['seed']})"
    init, step = _jax_env_programs()
    state = init(jax.random.PRNGKey(data["seed"]), make(**data["rules"]).arrays)
    returns = np.zeros(2)
    expected = [d for d in data["decisions"] if d[1] != Decision.CALL]
    for k, (player, _, action, *digests) in enumerate(expected):
        where = _where(data, k)
        assert not bool(state.terminated | state.truncated), where
        assert int(state.current_player) == player, where
        plain = np.asarray(state.observation)
        mask = np.asarray(state.legal_action_mask).astype(np.int8)
        assert _digests(plain, mask, 2) == digests, where
        state = step(state, np.int32(action))
        returns += np.asarray(state.rewards)
    result = data["result"]
    assert (
        bool(state.terminated) != result["truncated"]
        and bool(state.truncated) == result["truncated"]
    )
    assert returns.tolist() == pytest.approx(result["returns"])
    game = state._game
    assert np.asarray(game.rounds_won).tolist() == result["rounds_won"]
    assert sorted(np.flatnonzero(np.asarray(game.winners)).tolist()) == sorted(result["winners"])
    assert (int(game.deal_number), int(game.turns)) == (result["deals"], result["turns"])


@pytest.mark.skipif(not JAX, reason="the JAX engine needs jax (the 'jax' extra)")
def test_the_reference_plays_the_game_of_a_jax_key(recorded_by_key):
    """``reference_game(rules, PRNGKey(seed))`` replays the recorded decisions and events."""
    import jax

    from trash_env.jax_env.reference import reference_game

    data = recorded_by_key
    game = reference_game(Rules(**data["rules"]), jax.random.PRNGKey(data["seed"]))
    for k, (player, decision, action, *digests) in enumerate(data["decisions"]):
        assert (game.current, int(game.decision)) == (player, decision), _where(data, k)
        assert REGEN.observed(game, player) == digests, _where(data, k)
        game.step(action)
    assert [list(e) for e in game.events] == data["events"]
    assert REGEN.result(game) == data["result"]
