"""The OpenSpiel game (trash_env.spiel): OpenSpiel's own API checks on many variants, the same
games as the reference engine, no hidden card in any tensor or string, parameter errors,
clones and replays, and the ISMCTS example."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="OpenSpiel is not installed (the 'openspiel' extra)"
)

from trash_env import spiel  # noqa: E402  (after the skip: it imports pyspiel)
from trash_env.cards import NUM_SLOTS  # noqa: E402
from trash_env.engine import DOWN, DRAW_STOCK, Game  # noqa: E402
from trash_env.observation import encode_observation, observation_size  # noqa: E402
from trash_env.rules import Rules  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# Variants for OpenSpiel's random simulation test: 2 to 6 players, every wilds setting, jokers,
# losers_reveal with free draws, call_trash, one-round episodes, start and target sizes, deal
# limits, reshuffle and first-player variants, truncation.
VARIANTS = [
    {"players": 2},
    {"players": 3, "wilds": "kings"},
    {"players": 4, "wilds": "faces", "jokers": True},
    {"players": 6, "wilds": "none", "start_size": 4},
    {"players": 2, "losers_reveal": True, "free_draws": 3},
    {"players": 3, "call_trash": True, "losers_reveal": True},
    {"players": 2, "episode": "round"},
    {"players": 6, "episode": "round", "jokers": True, "call_trash": True},
    {"players": 5, "start_size": 4, "target_size": 2, "reshuffle": "all", "first_player": "rotate"},
    {"players": 4, "max_deals": 2, "num_decks": 3},
    {"players": 2, "max_turns": 30},
]


def load(**params: object) -> pyspiel.Game:
    return pyspiel.load_game(spiel.SHORT_NAME, params)


def dealt(game: pyspiel.Game, seed: int) -> spiel.TrashState:
    state = game.new_initial_state(seed=seed)
    state.apply_action(spiel.DEAL_ACTION)
    return state


def random_walk(
    state: spiel.TrashState, rng: np.random.Generator, steps: int, stock_first: bool = False
) -> None:
    """Up to ``steps`` uniformly random actions (stops at the end of the game);
    ``stock_first`` always draws from the stock, which runs it out sooner (reshuffles)."""
    for _ in range(steps):
        if state.is_terminal():
            return
        legal = state.legal_actions()
        if stock_first and DRAW_STOCK in legal:
            state.apply_action(DRAW_STOCK)
        else:
            state.apply_action(int(rng.choice(legal)))


@pytest.mark.parametrize(
    "params", VARIANTS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items())
)
def test_random_sim_test(params: dict) -> None:
    """OpenSpiel's API checks: clones, legal actions and masks, action strings, tensor sizes
    against the declared shapes, zero-sum returns within the utility bounds, game length."""
    # serialize=False: OpenSpiel serialises a sampled-stochastic game with GetRNGState, which
    # a Python game cannot implement (see docs/openspiel.md: replay from seed and history).
    pyspiel.random_sim_test(load(**params), num_sims=2, serialize=False, verbose=False)


def test_game_declares_the_engine_shapes_and_bounds() -> None:
    game = load(players=3)
    assert game.num_players() == 3
    assert game.num_distinct_actions() == 15
    assert game.max_chance_outcomes() == 1
    assert game.observation_tensor_shape() == [observation_size(3)]
    assert game.information_state_tensor_shape() == [spiel.information_state_size(3)]
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-0.5, 1.0, 0.0)
    kind = game.get_type()
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM


@pytest.mark.parametrize("params", VARIANTS[:9], ids=lambda p: ",".join(map(str, p.values())))
def test_same_games_as_the_engine(params: dict) -> None:
    """Played through pyspiel with a seed and actions, the game is the engine's game with that
    seed and those actions: same player to act, legal actions, events and returns."""
    game = load(**params)
    rules = spiel.rules_from_params(params)
    for seed in range(3):
        state = game.new_initial_state(seed=seed)
        assert state.is_chance_node() and state.chance_outcomes() == [(0, 1.0)]
        state.apply_action(spiel.DEAL_ACTION)
        engine = Game(rules, seed=seed)
        rng = np.random.default_rng(seed)
        while not engine.done:
            assert state.current_player() == engine.current
            assert state.legal_actions() == engine.legal_actions()
            assert state.rewards() == [0.0] * rules.num_players
            action = int(rng.choice(engine.legal_actions()))
            state.apply_action(action)
            engine.step(action)
            assert state.engine.events == engine.events
        assert state.is_terminal()
        assert state.current_player() == pyspiel.PlayerId.TERMINAL
        assert state.returns() == engine.returns()
        assert state.rewards() == engine.returns()  # terminal rewards: the whole return
        assert abs(sum(state.returns())) < 1e-12
        assert state.engine.winners == engine.winners


def test_rng_seed_gives_a_reproducible_sequence_of_deals() -> None:
    def deal_seeds(rng_seed: int) -> list[int]:
        game = load(rng_seed=rng_seed)
        seeds = []
        for _ in range(3):
            state = game.new_initial_state()
            assert state.seed is None  # drawn at the deal, so clones never consume seeds
            state.clone()
            state.apply_action(spiel.DEAL_ACTION)
            seeds.append(state.seed)
        return seeds

    first = deal_seeds(7)
    assert first == deal_seeds(7)
    assert len(set(first)) == 3
    assert first != deal_seeds(8)


# ------------------------------------------------------------------------------ no leaks


def hidden_cards(engine: Game) -> tuple:
    down = [
        engine.layout[p][s]
        for p in range(engine.num_players)
        for s in range(NUM_SLOTS)
        if engine.state[p][s] == DOWN
    ]
    return tuple(down), tuple(engine.stock)


def everything_observed(game: pyspiel.Game, state: spiel.TrashState) -> list:
    seen = []
    for p in range(game.num_players()):
        seen += [
            state.observation_tensor(p),
            state.information_state_tensor(p),
            state.observation_string(p),
            state.information_state_string(p),
        ]
    return seen


def reached_states(params: dict, seeds: range, steps: int) -> list[spiel.TrashState]:
    """States along random games, including ones after a reshuffle made the stock public."""
    game = load(**params)
    states = []
    for seed in seeds:
        state = dealt(game, seed)
        rng = np.random.default_rng(seed)
        while not state.is_terminal():
            random_walk(state, rng, steps, stock_first=seed % 2 == 1)
            states.append(state.clone())
    return states


@pytest.mark.parametrize(
    ("params", "reshuffles"),
    [
        ({"players": 2}, False),
        ({"players": 4, "num_decks": 1}, True),
        ({"players": 3, "wilds": "faces", "jokers": True, "losers_reveal": True}, False),
        ({"players": 2, "reshuffle": "all", "call_trash": True, "wilds": "none"}, True),
    ],
    ids=["standard", "4-players-1-deck", "faces-jokers-reveal", "reshuffle-all-call"],
)
def test_no_tensor_or_string_depends_on_hidden_cards(params: dict, reshuffles: bool) -> None:
    """Two states that differ only in the hidden cards (face-down cards and the stock order,
    re-dealt by the engine) give every player identical observation and information-state
    tensors and strings; also after a reshuffle made the stock's contents public."""
    game = load(**params)
    states = reached_states(params, range(2), steps=7)
    if reshuffles:
        assert any(s.engine.stock_known for s in states), "no state after a reshuffle"
    changed = 0
    for i, state in enumerate(states):
        other = state.clone()
        other.engine.resample_hidden(np.random.default_rng(i))
        other.engine.check_invariants()
        changed += hidden_cards(other.engine) != hidden_cards(state.engine)
        for mine, theirs in zip(
            everything_observed(game, state), everything_observed(game, other), strict=True
        ):
            assert np.array_equal(mine, theirs) if isinstance(mine, list) else mine == theirs
    assert changed > len(states) // 2  # the re-deal really moved hidden cards


def test_resample_from_infostate_keeps_the_information_state() -> None:
    """What ISMCTS relies on: a re-dealt world with the same information state, whose hidden
    cards vary between calls, reproducibly for a seeded sampler."""
    game = load(players=3)
    state = dealt(game, 4)
    random_walk(state, np.random.default_rng(4), 40)
    player = state.current_player()
    worlds = [
        state.resample_from_infostate(player, np.random.default_rng(k).random) for k in range(4)
    ]
    for world in worlds:
        assert world.information_state_string(player) == state.information_state_string(player)
        assert world.legal_actions() == state.legal_actions()
        world.engine.check_invariants()
    assert len({hidden_cards(w.engine) for w in worlds}) == 4
    again = state.resample_from_infostate(player, np.random.default_rng(0).random)
    assert hidden_cards(again.engine) == hidden_cards(worlds[0].engine)
    assert hidden_cards(state.engine) != hidden_cards(worlds[0].engine)


def test_tensors_are_the_engine_observation_plus_public_counts() -> None:
    game = load(players=2, reshuffle="keep_top")
    for state in reached_states({"players": 2}, range(1), steps=5)[::7]:
        engine = state.engine
        for p in range(2):
            obs = np.array(state.observation_tensor(p), np.float32)
            assert np.array_equal(obs, encode_observation(engine, p))
            info = np.array(state.information_state_tensor(p), np.float32)
            assert len(info) == game.information_state_tensor_size()
            assert np.array_equal(info[: len(obs)], obs)
            extra = info[len(obs) :]
            discard = extra[:14] * 4  # one deck: 4 of each rank (no jokers)
            assert np.allclose(discard, np.bincount(engine.discard, minlength=14))
            stock_known = extra[28]
            assert stock_known == float(engine.stock_known)
            if engine.stock_known:
                assert np.allclose(extra[29:43] * 4, np.bincount(engine.stock, minlength=14))
            else:
                assert not extra[29:43].any()


def extras(state: spiel.TrashState, player: int) -> dict[str, np.ndarray]:
    """The information-state tensor's public-state features of ``player``, by name."""
    n = state.num_players()
    info = np.array(state.information_state_tensor(player), np.float32)
    out, index = {}, observation_size(n)
    for name, width in spiel.public_state_features(n):
        out[name] = info[index : index + width]
        index += width
    assert index == len(info)
    return out


def test_information_state_tensor_shows_pending_claims_and_free_turns() -> None:
    """Public state the observation lacks: who missed the "Trash!" call and will claim the
    round (seats from the observer on), and the loser's free turns left."""
    game = load(players=3, call_trash=True)
    claims = 0
    for seed in range(10):
        state = dealt(game, seed)
        rng = np.random.default_rng(seed)
        while not state.is_terminal():
            pending = state.engine.pending_claims
            for p in range(3):
                expected = [float(pending[(p + k) % 3]) for k in range(3)]
                assert extras(state, p)["claim_pending"].tolist() == expected
            claims += any(pending)
            random_walk(state, rng, 1)
    assert claims > 0, "no missed call in these games"
    game = load(players=2, losers_reveal=True, free_draws=3)
    free = set()
    for seed in range(10):
        state = dealt(game, seed)
        rng = np.random.default_rng(seed)
        while not state.is_terminal():
            left = extras(state, 0)["free_turns_left"][0]
            assert left == state.engine.free_turns_left / 3
            free.add(round(float(left) * 3))
            random_walk(state, rng, 1)
    assert {1, 2, 3} <= free


def test_information_state_string_is_the_public_history() -> None:
    game = load(players=2)
    state = dealt(game, 1)
    rng = np.random.default_rng(1)
    before = state.information_state_string(0)
    random_walk(state, rng, 3)
    after = state.information_state_string(0)
    assert after.startswith(before)  # perfect recall: the history only grows
    assert after.split(" ")[1:] == [spiel.event_token(e) for e in state.engine.events]
    assert state.information_state_string(1) == "p1" + after[2:]


# ------------------------------------------------------------------------------ parameters


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"players": 7}, "players must be an integer from 2 to 6, got 7"),
        ({"players": 1}, "players must be an integer from 2 to 6, got 1"),
        ({"wilds": "queens"}, "wilds must be one of 'jacks', 'kings', 'faces', 'none'"),
        ({"start_size": 11}, "start_size must be an integer from 1 to 10"),
        ({"start_size": 4, "target_size": 4}, "target_size must be below start_size"),
        ({"players": 3, "losers_reveal": True, "free_draws": 3}, "free_draws=3 needs"),
        ({"free_draws": 2}, "free_draws must be one of 0, 3"),
        ({"players": 6, "num_decks": 1}, "num_decks=1 holds 52 cards"),
        ({"num_decks": -1}, "num_decks must be an integer from 1 to 12"),
        ({"max_deals": -2}, "max_deals must be an integer from 1 to 10000"),
        ({"first_player": "loser"}, "first_player must be one of 'winner', 'rotate'"),
        ({"reshuffle": "none"}, "reshuffle must be one of 'keep_top', 'all'"),
        ({"episode": "turn"}, "episode must be one of 'game', 'round'"),
        ({"max_turns": 0}, "max_turns must be an integer from 1"),
        ({"rng_seed": -1}, "rng_seed must be a non-negative integer, got -1"),
    ],
)
def test_bad_parameter_values_raise_the_rules_error(params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        load(**params)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        spiel.TrashGame(params)


def test_unknown_names_and_wrong_types_are_refused_by_openspiel() -> None:
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'num_players'"):
        load(num_players=3)
    with pytest.raises(pyspiel.SpielError, match="Wrong type for parameter wilds"):
        load(wilds=3)
    with pytest.raises(ValueError, match="unknown python_trash parameter.*bogus"):
        spiel.TrashGame({"bogus": 1})


def test_every_rules_option_is_a_parameter() -> None:
    rules = Rules(
        num_players=4,
        num_decks=3,
        start_size=6,
        wilds="faces",
        jokers=True,
        target_size=2,
        max_deals=5,
        first_player="rotate",
        reshuffle="all",
        losers_reveal=True,
        call_trash=True,
        episode="round",
        max_turns=999,
    )
    params = spiel.params_from_rules(rules, rng_seed=3)
    assert set(params) == set(spiel.PARAMETERS)
    assert len(params) == len(Rules.option_names()) + 2  # + rng_seed, observation
    assert spiel.rules_from_params(params) == rules
    game = pyspiel.load_game(spiel.SHORT_NAME, params)
    assert game.rules == rules
    assert pyspiel.load_game(str(game)).rules == rules  # the game string round-trips
    defaults = spiel.rules_from_params({})
    assert defaults == Rules()
    assert spiel.params_from_rules(defaults)["num_decks"] == 0  # None <-> 0


def test_new_initial_state_refuses_a_bad_seed() -> None:
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        load().new_initial_state(seed=-3)


def test_illegal_actions_are_refused_with_the_legal_ones_named() -> None:
    state = dealt(load(), 0)
    with pytest.raises(ValueError, match="legal actions:"):
        state.apply_action(3 if 3 not in state.legal_actions() else 14)
    with pytest.raises(ValueError, match="only chance outcome is 0"):
        load().new_initial_state().apply_action(1)


# ------------------------------------------------------------------------------ clone, replay


def test_clone_is_independent() -> None:
    state = dealt(load(players=3), 2)
    random_walk(state, np.random.default_rng(2), 20)
    clone = state.clone()
    assert str(clone) == str(state) and clone.history() == state.history()
    text = str(state)
    random_walk(clone, np.random.default_rng(3), 20)
    assert str(state) == text
    assert clone.engine is not state.engine and clone.engine.events != state.engine.events


def test_a_state_is_replayed_from_its_seed_and_history() -> None:
    """The safe way to save a state (OpenSpiel's own Python-game serialisation is a pickle,
    and unavailable for sampled-stochastic Python games): the game string, seed, history."""
    game = load(players=2, jokers=True)
    state = dealt(game, 11)
    random_walk(state, np.random.default_rng(11), 60)
    game_string, seed, history = str(game), state.seed, state.history()
    again = pyspiel.load_game(game_string).new_initial_state(seed=seed)
    for action in history:
        again.apply_action(action)
    assert str(again) == str(state)
    assert again.information_state_string(0) == state.information_state_string(0)


def test_openspiel_rl_environment_plays_it() -> None:
    """OpenSpiel's RL environment (what its DQN, NFSP and policy-gradient agents step) takes
    the game: information-state vectors of the declared size, legal actions, zero-sum
    rewards at each episode's end."""
    from open_spiel.python import rl_environment

    game = load(players=2, episode="round", start_size=5)
    env = rl_environment.Environment(game, seed=0)
    assert env.observation_spec()["info_state"] == (spiel.information_state_size(2),)
    assert env.action_spec()["num_actions"] == 15
    rng = np.random.default_rng(0)
    for _ in range(5):
        step = env.reset()
        while not step.last():
            player = step.observations["current_player"]
            assert len(step.observations["info_state"][player]) == spiel.information_state_size(2)
            step = env.step([int(rng.choice(step.observations["legal_actions"][player]))])
        assert abs(sum(step.rewards)) < 1e-12 and max(step.rewards) == 1.0


# ------------------------------------------------------------------------------ the example


def test_ismcts_example_runs_reproducibly() -> None:
    """The example runs with a tiny budget, prints its result as JSON and is reproducible."""
    command = [
        sys.executable,
        str(ROOT / "examples" / "openspiel_ismcts.py"),
        "--games",
        "3",
        "--simulations",
        "8",
    ]
    runs = [
        subprocess.run(command, capture_output=True, text=True, check=True, timeout=300)
        for _ in range(2)
    ]
    results = [json.loads(run.stdout.strip().splitlines()[-1]) for run in runs]
    for result in results:
        assert result["games"] == 3 and result["simulations"] == 8
        assert 0 <= result["ismcts_wins"] <= 3
        assert -1.0 <= result["ismcts_mean_return"] <= 1.0
        assert result["ismcts_decisions"] > 0
        result.pop("seconds")
    assert results[0] == results[1]
