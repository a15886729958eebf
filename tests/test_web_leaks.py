"""Nothing hidden reaches the browser during a live game.

At random points of games played over the API, the hidden cards of the server's game are
re-dealt behind its back (``resample_hidden``, then two face-down cards of different ranks
swapped, then a face-down card swapped with a stock card, as tests/test_env_leaks.py does):
everything the server sends about the game (its whole state, every event from the start)
must stay byte for byte the same.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_env_leaks import swap_face_down_with_stock, swap_two_face_down
from web_support import serving

from agents.web.state import open_state

VARIANTS = [
    dict(players=2, rules={}),
    dict(players=3, rules={"jokers": True, "losers_reveal": True}),
    dict(
        players=2,
        rules={"wilds": "none", "losers_reveal": True, "free_draws": 3, "call_trash": True},
    ),
    dict(players=6, rules={"wilds": "kings", "reshuffle": "all", "target_size": 8}),
    dict(players=4, rules={"start_size": 5, "wilds": "faces", "first_player": "rotate"}),
]


def sent(client, game_id: str) -> bytes:
    return json.dumps(client.get(f"/api/games/{game_id}?since=0"), sort_keys=True).encode()


@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: f"{o['players']}p-{len(o['rules'])}")
def test_redealt_hidden_cards_change_nothing_sent(tmp_path, options):
    rng = np.random.default_rng(options["players"])
    changed = {"resample": 0, "slots": 0, "stock": 0}
    with serving(tmp_path / "logs") as (client, config):
        for seed in range(1):
            state = client.post("/api/games", {"opponents": ["counting"], "seed": seed, **options})
            game_id = state["id"]
            game = config.tables[game_id].game
            while not state["done"]:
                if rng.random() < 0.2:
                    before = sent(client, game_id)
                    game.resample_hidden(rng)
                    game.check_invariants()
                    assert sent(client, game_id) == before, "a re-deal changed what was sent"
                    changed["resample"] += 1
                    if swap_two_face_down(game, rng):
                        assert sent(client, game_id) == before, "a face-down swap leaked"
                        changed["slots"] += 1
                    if swap_face_down_with_stock(game, rng):
                        assert sent(client, game_id) == before, "a slot/stock swap leaked"
                        changed["stock"] += 1
                if state["legal"]:
                    body = {"action": int(rng.choice(state["legal"])), "since": 10**9}
                    state = client.post(f"/api/games/{game_id}/act", body)
                else:
                    state = client.post(f"/api/games/{game_id}/step", {"since": 10**9})
    assert min(changed.values()) >= 3, changed


def test_the_comparison_sees_a_leak(tmp_path):
    """The open state (every card shown, for replays of finished games) does change under the
    same tampering: the comparison above would catch a state that showed hidden cards."""
    with serving(tmp_path / "logs") as (client, config):
        state = client.post("/api/games", {"opponents": ["greedy"], "seed": 0})
        game = config.tables[state["id"]].game
        before = open_state(game, state["names"])
        assert swap_two_face_down(game, np.random.default_rng(0))
        assert open_state(game, state["names"]) != before
