"""``Match.advance(moves=k)``: the web table plays its bots one move at a time through the
one loop; ``k`` moves at a time give the same game, actions and payments as one call."""

from __future__ import annotations

import pytest

from agents.bots.base import make_agent
from trash_env.engine import CALL_TRASH, Game
from trash_env.match import Match
from trash_env.rules import Rules


def seated(n: int, seed: int) -> list:
    return [make_agent("greedy" if p % 2 else "random", seed=seed + p) for p in range(n)]


@pytest.mark.parametrize(
    "options", [dict(num_players=2), dict(num_players=3, call_trash=True, start_size=4)]
)
def test_one_move_at_a_time_plays_the_same_game(options):
    rules = Rules.from_options(**options)
    whole: list[tuple[int, int]] = []
    one: list[tuple[int, int]] = []
    a = Match(
        Game(rules, seed=3), seated(rules.num_players, 3), on_action=lambda *x: whole.append(x)
    )
    a.play()
    b = Match(
        Game(rules, seed=3),
        seated(rules.num_players, 3),
        on_action=lambda *x: one.append(x),
        round_rewards=True,
    )
    paid = [0.0] * rules.num_players
    requests = 0
    while not b.game.done:
        agent_moves = sum(1 for _, action in one if action != CALL_TRASH)
        got = b.advance(moves=1)
        requests += 1
        if got is not None:
            paid = [x + y for x, y in zip(paid, got, strict=True)]
        # exactly one agent move per call (a "Trash!" call that follows it comes with it)
        assert sum(1 for _, action in one if action != CALL_TRASH) == agent_moves + 1
    assert one == whole and list(b.game.events) == list(a.game.events)
    assert requests == sum(1 for _, action in whole if action != CALL_TRASH)
    # every deal's zero-sum result as it ends, then the game's returns once (Match pays both)
    final = b.game.returns()
    assert paid == pytest.approx(
        [
            sum(b.game.shares_to_returns(r)[p] for r in b.game.round_results) + final[p]
            for p in range(len(paid))
        ]
    )
    if rules.call_trash:
        assert any(action == CALL_TRASH for _, action in whole)


def test_zero_moves_plays_nothing():
    match = Match(Game(Rules(), seed=1), seated(2, 1))
    before = (match.game.turns, len(match.game.events))
    match.advance(moves=0)
    assert (match.game.turns, len(match.game.events)) == before
