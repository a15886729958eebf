"""Determinism: the same seed and the same actions replay the same game; ``clone()`` gives an
independent copy (stepping one leaves the other unchanged)."""

import copy
import pickle

import numpy as np
import pytest
from helpers import A, K, Q, play_random, random_rules, since, snapshot, stacked_game

from trash_env.engine import DRAW_STOCK, Game
from trash_env.rules import Rules


@pytest.mark.parametrize("seed", range(40))
def test_same_seed_same_actions_same_game(seed):
    rules = random_rules(np.random.default_rng(seed))
    a = Game(rules, seed=seed)
    actions = play_random(a, np.random.default_rng(seed + 1))
    b = Game(rules, seed=seed)
    for action in actions:
        b.step(action)
    assert snapshot(a) == snapshot(b)


def test_different_seeds_deal_differently():
    deals = {tuple(Game(Rules(), seed=s).layout[0]) for s in range(20)}
    assert len(deals) > 15


def test_unseeded_games_differ():
    # No global random state: two unseeded games draw fresh entropy each.
    assert snapshot(Game(Rules())) != snapshot(Game(Rules()))


def test_global_random_state_is_not_used():
    np.random.seed(0)
    before = np.random.get_state()[1].copy()
    g = Game(Rules(num_players=4), seed=3)
    play_random(g, np.random.default_rng(0))
    assert (np.random.get_state()[1] == before).all()


@pytest.mark.parametrize("seed", range(20))
def test_clone_is_independent(seed):
    rng = np.random.default_rng(seed)
    g = Game(random_rules(rng), seed=seed)
    play_random(g, rng, limit=int(rng.integers(0, 60)))
    if g.done:
        return
    before = snapshot(g)
    c = g.clone()
    assert snapshot(c) == before
    play_random(c, np.random.default_rng(seed + 7))  # stepping the clone to its end ...
    assert snapshot(g) == before  # ... leaves the original as it was
    c2 = g.clone()
    frozen = snapshot(c2)
    play_random(g, np.random.default_rng(seed + 8))  # and the other way round
    assert snapshot(c2) == frozen


@pytest.mark.parametrize("seed", range(20))
def test_clone_replays_the_original(seed):
    # A clone carries the rng state: the same actions give the same future (reshuffles and
    # later deals included).
    rng = np.random.default_rng(seed)
    g = Game(random_rules(rng), seed=seed)
    play_random(g, rng, limit=int(rng.integers(0, 40)))
    c = g.clone()
    actions = play_random(g, np.random.default_rng(seed + 3))
    for action in actions:
        c.step(action)
    assert snapshot(c) == snapshot(g)


@pytest.mark.parametrize("seed", range(10))
def test_a_pickled_or_copied_game_plays_on_identically(seed):
    # Envs are pickled between processes (SubprocVecEnv) and copied: a Game restores from its
    # slots by the default protocol, every attribute and the rng state included.
    rng = np.random.default_rng(seed)
    g = Game(random_rules(rng), seed=seed)
    play_random(g, rng, limit=int(rng.integers(0, 40)))
    copies = [pickle.loads(pickle.dumps(g, protocol=p)) for p in (2, pickle.HIGHEST_PROTOCOL)]
    copies.append(copy.deepcopy(g))
    assert all(snapshot(c) == snapshot(g) for c in copies)
    actions = play_random(g, np.random.default_rng(seed + 5))
    for c in copies:
        for action in actions:
            c.step(action)
        assert snapshot(c) == snapshot(g)


def test_clone_without_events_and_with_pending_stacked_deals():
    # Deal 1: player 0 discards a Queen, player 1 wins at once. Deal 2 is stacked too.
    rules = Rules(start_size=2)
    g = stacked_game(
        rules,
        [
            ([[None] * 2, [2, A]], [Q, A]),
            ([[None] * 2, [K]], [9, 8]),  # player 1 starts with a layout of 1, draws a 9
        ],
    )
    c = g.clone(events=False)
    assert c.events == [] and len(g.events) > 1
    mark = len(g.events)
    for game_ in (g, c):
        game_.step(DRAW_STOCK)
    assert since(c, 0) == since(g, mark)  # the clone logs only what happened since
    for game_ in (g, c):
        assert game_.sizes == [2, 1]
        assert game_.layout[1][0] == K  # both dealt the stacked second deal
        assert game_.events[-2:] == [("draw_stock", 1, 9, -1), ("discard", 1, 9, -1)]
