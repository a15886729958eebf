"""Odd inputs to the reference engine and the rules: bools are not integers, floats are not
truncated, numpy's integers, booleans and strings are Python's, and the invariant check raises
(not ``assert``), so ``python -O`` still catches a corrupted state."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from trash_env.engine import DRAW_STOCK, Game, InvariantError
from trash_env.rules import Rules


@pytest.mark.parametrize("action", [True, False, np.True_, 10.0, 10.7, "10", np.array(10), None])
def test_step_refuses_what_is_not_an_integer(action):
    game = Game(seed=0)
    events = len(game.events)
    with pytest.raises(ValueError, match=r"illegal action .* legal actions: 10 \("):
        game.step(action)
    assert len(game.events) == events


@pytest.mark.parametrize("kind", [np.int8, np.int64, np.uint8, int])
def test_step_accepts_integers_of_any_kind(kind):
    game, twin = Game(seed=3), Game(seed=3)
    game.step(kind(DRAW_STOCK))
    twin.step(DRAW_STOCK)
    assert game.events == twin.events and game.decision == twin.decision


def test_step_with_a_wild_refuses_true_as_slot_two():
    for seed in range(200):
        game = Game(seed=seed)
        while not game.done and game.decision.name != "WILD":
            game.step(game.legal_actions()[0])
        if not game.done and 1 in game.legal_actions():
            with pytest.raises(ValueError, match="illegal action True"):
                game.step(True)
            return
    pytest.fail("no wild decision with slot 2 open in 200 games")


@pytest.mark.parametrize("first", [True, False, np.True_, 1.5, 1.0, "1", 2, -1])
def test_first_player_must_be_a_player(first):
    with pytest.raises(ValueError, match=r"first_player must be an integer from 0 to 1 or None"):
        Game(first_player=first)


def test_first_player_accepts_numpy_integers():
    game = Game(seed=0, first_player=np.int64(1))
    assert game.events[0].player == 1 and type(game.current) is int


def test_rules_store_numpy_values_as_python_ones():
    rules = Rules(
        jokers=np.bool_(True),
        wilds=np.str_("kings"),
        num_players=np.int64(3),
        num_decks=np.int16(2),
        max_deals=np.uint8(4),
        free_draws=np.int64(0),
    )
    plain = Rules(jokers=True, wilds="kings", num_players=3, num_decks=2, max_deals=4)
    assert rules == plain and hash(rules) == hash(plain)
    for name in Rules.option_names():
        assert type(getattr(rules, name)) is type(getattr(plain, name)), name


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": np.bool_(True)},
        {"jokers": np.int64(1)},
        {"free_draws": np.bool_(False)},
        {"wilds": np.bytes_(b"kings")},
        {"start_size": np.float64(5.0)},
    ],
)
def test_rules_still_refuse_bools_as_integers_and_the_reverse(options):
    (name,) = options
    with pytest.raises(ValueError, match=name):
        Rules(**options)


def _corrupt(game: Game) -> None:
    game.hidden[5] += 1


def test_check_invariants_raises_a_named_error():
    game = Game(seed=1)
    game.check_invariants()
    _corrupt(game)
    with pytest.raises(InvariantError, match="hidden counts"):
        game.check_invariants()


def test_check_invariants_still_checks_under_python_dash_o():
    code = (
        "from trash_env.engine import Game, InvariantError\n"
        "game = Game(seed=1)\n"
        "game.layout[0][0] = 99\n"
        "try:\n"
        "    game.check_invariants()\n"
        "except InvariantError as error:\n"
        "    print('caught', error)\n"
    )
    out = subprocess.run(
        [sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.startswith("caught not a card"), out
