"""No hidden information reaches an agent through its observation or action mask.

At random points of random games the hidden cards are changed behind the env's back
(re-dealt with ``resample_hidden``, or two face-down cards of different rank swapped, or a
face-down card swapped with a stock card): every agent's observation and mask must stay the
same. The env's observation cache is cleared first, so the encoder really runs again. The env
observes in its ``"pairs"`` form, whose first entries are the plain observation: the appended
entries (trash_env/pairs.py) are checked with it.
"""

from __future__ import annotations

import numpy as np
import pytest

import trash_env
from trash_env.engine import DOWN
from trash_env.pairs import observation_width

LEAK_VARIANTS = [
    dict(num_players=2),
    dict(num_players=3, jokers=True),
    dict(num_players=4, wilds="faces", losers_reveal=True),
    dict(num_players=6, wilds="kings", reshuffle="all"),
    dict(num_players=2, wilds="none", losers_reveal=True, free_draws=3, call_trash=True),
    dict(num_players=3, start_size=5, first_player="rotate", episode="round"),
]


def observations(e) -> list[tuple[bytes, bytes]]:
    e._obs_cache.clear()  # recompute from the game, not from the cache
    out = []
    for agent in e.possible_agents:
        obs = e.observe(agent)
        out.append((obs["observation"].tobytes(), obs["action_mask"].tobytes()))
    return out


def face_down_spots(game) -> list[tuple[int, int]]:
    return [(p, s) for p in range(game.num_players) for s in range(10) if game.state[p][s] == DOWN]


def swap_two_face_down(game, rng) -> bool:
    spots = face_down_spots(game)
    rng.shuffle(spots)
    for i, (p, s) in enumerate(spots):
        for q, t in spots[i + 1 :]:
            if game.layout[p][s] != game.layout[q][t]:
                game.layout[p][s], game.layout[q][t] = game.layout[q][t], game.layout[p][s]
                return True
    return False


def swap_face_down_with_stock(game, rng) -> bool:
    spots = face_down_spots(game)
    rng.shuffle(spots)
    for p, s in spots:
        for i in rng.permutation(len(game.stock)):
            if game.stock[i] != game.layout[p][s]:
                game.stock[i], game.layout[p][s] = game.layout[p][s], game.stock[i]
                return True
    return False


@pytest.mark.parametrize("options", LEAK_VARIANTS, ids=lambda o: "-".join(map(str, o.values())))
def test_hidden_cards_never_reach_observations(options):
    # "pairs" holds the plain vector as its prefix: one run checks both forms.
    e = trash_env.raw_env(observation="pairs", **options)
    rng = np.random.default_rng(len(options))
    changed = {"resample": 0, "slots": 0, "stock": 0}
    for seed in range(3):
        e.reset(seed=seed)
        assert len(e.observe(e.agent_selection)["observation"]) == observation_width(
            e.game.num_players, "pairs"
        )
        while not e.game.done:
            game = e.game
            if rng.random() < 0.15:
                before = observations(e)
                game.resample_hidden(rng)
                game.check_invariants()
                assert observations(e) == before, "resample_hidden changed an observation"
                changed["resample"] += 1
                if swap_two_face_down(game, rng):
                    game.check_invariants()
                    assert observations(e) == before, "a face-down swap changed an observation"
                    changed["slots"] += 1
                if swap_face_down_with_stock(game, rng):
                    game.check_invariants()
                    assert observations(e) == before, "a slot/stock swap changed an observation"
                    changed["stock"] += 1
            obs = e.observe(e.agent_selection)
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert min(changed.values()) >= 5, changed


def test_the_test_sees_a_leak():
    """The comparison above is sharp: the full state (which does hold hidden cards) changes
    under the same tampering."""
    e = trash_env.raw_env(num_players=2)
    e.reset(seed=0)
    before = e.state()
    assert swap_two_face_down(e.game, np.random.default_rng(0))
    assert not np.array_equal(e.state(), before)
