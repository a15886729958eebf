"""trash_env/vector/validate.py: a batch's arrays from outside are checked before the compiled
kernels read them. Games the engine plays pass at every step (no false alarm, over the variant
families); each out-of-range field, a broken invariant and a bad seating is refused in one
sentence naming the game and the field. The resume path that uses it is tested in
tests/test_train_checkpoint.py."""

from __future__ import annotations

import numpy as np
import pytest

from trash_env.rules import Rules
from trash_env.vector import _kernels as K
from trash_env.vector import make_vec_env
from trash_env.vector.batch import VectorGame
from trash_env.vector.validate import check_games, check_seats, games_from_fields

VARIANTS = [
    {},
    {"num_players": 6},
    {"num_players": 4, "start_size": 5, "call_trash": True},
    {"num_players": 2, "losers_reveal": True, "free_draws": 3},
    {"num_players": 3, "jokers": True, "reshuffle": "all", "first_player": "rotate"},
    {"num_players": 5, "num_decks": 3, "target_size": 6, "max_deals": 3},
]


def _random_actions(batch: VectorGame, orngs: np.ndarray) -> np.ndarray:
    out = np.zeros(batch.batch_size, np.int64)
    K.batch_random_actions(batch.games, orngs, out)
    return np.maximum(out, 0)


@pytest.mark.parametrize("options", VARIANTS)
def test_games_the_engine_plays_pass_at_every_step(options):
    rules = Rules.from_options(**options)
    batch = VectorGame(rules, 32, seed=3)
    orngs = np.zeros((32, 6), np.uint64)
    orngs[:, 1], orngs[:, 3] = np.arange(32), 1
    for _ in range(300):
        batch.step(_random_actions(batch, orngs), autoreset=True)
        check_games(batch.games, rules)
    assert batch.games["deal_number"].max() > 0  # deals were finished along the way


def test_a_learner_batch_at_rest_passes_its_seating_check():
    venv = make_vec_env(8, ["random", "greedy", "counting"], {"num_players": 4}, seed=1)
    venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(200):
        core = venv.core
        check_games(core.batch.games, core.rules)
        check_seats(
            core.batch.games, core.seats, core.kinds, core.policy_of, len(core.policies),
            core.orngs, 4,
        )  # fmt: skip
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks()]))


def _set(field: str, index: tuple, value: int):
    def change(games: np.ndarray) -> None:
        view = games[field]
        (view.view(np.uint8) if view.dtype.itemsize == 1 else view)[index] = value  # raw bytes

    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_set("layout", (1, 0, 3), 200), "game 1 .* layout outside -1..13"),
        (_set("state", (0, 1, 0), 7), "state outside 0..3"),
        (_set("sizes", (0, 0), 11), "sizes outside 0..10"),
        (_set("sizes", (0, 4), 3), "sizes set for a seat beyond 3 players"),
        (_set("current", (2,), 3), "game 2 .* current outside 0..2"),
        (_set("decision", (0,), 9), "decision outside"),
        (_set("round_winner", (0,), 5), "round_winner outside -1..2"),
        (_set("nstock", (0,), 200), "nstock outside 0..108"),
        (_set("held", (0,), 14), "held outside -1..13"),
        (_set("done", (0,), 2), "a done flag that is not 0 or 1"),
        (_set("winners", (0, 0), 2), "winners outside 0..1"),
        (_set("stock", (0, 0), 255), "a stock card that is not a card"),
        (_set("rng", (0, 3), 8), "a game generator state that is not a PCG64 state"),
        (_set("hidden", (0, 2), 9), "more hidden cards than the decks hold"),
        (_set("truncated", (0,), 1), "a truncated game not over"),
        (_set("turns", (0,), 20001), "turns outside 0..20000"),
    ],
)
def test_each_field_out_of_range_is_refused_naming_game_and_field(change, message):
    rules = Rules.from_options(num_players=3)
    games = VectorGame(rules, 4, seed=2).games.copy()
    change(games)
    with pytest.raises(ValueError, match=message):
        check_games(games, rules)


def test_a_broken_invariant_in_range_is_refused_by_the_engine_checks():
    rules = Rules()
    games = VectorGame(rules, 2, seed=5).games.copy()
    top = games["nstock"][1] - 1
    games["stock"][1, top] = (games["stock"][1, top] % 13) + 1  # one rank too many, one missing
    with pytest.raises(ValueError, match="game 1 .* cards not conserved|hidden counts"):
        check_games(games, rules)


def test_games_from_fields_takes_exactly_the_record_fields():
    rules = Rules()
    games = VectorGame(rules, 3, seed=1).games
    fields = {name: games[name].copy() for name in games.dtype.names}
    assert np.array_equal(games_from_fields(fields, rules), games)
    with pytest.raises(ValueError, match=r"differ from this version's \(held\)"):
        games_from_fields({k: v for k, v in fields.items() if k != "held"}, rules)
    with pytest.raises(ValueError, match="field sizes is int16"):
        games_from_fields({**fields, "sizes": fields["sizes"].astype(np.int16)}, rules)
    with pytest.raises(ValueError, match="field layout is"):
        games_from_fields({**fields, "layout": fields["layout"][:, :2]}, rules)


def test_a_bad_seating_is_refused():
    venv = make_vec_env(4, ["random", "greedy"], {}, seed=0)
    venv.reset()
    core = venv.core

    def check(**changed):
        arrays = {
            "seats": core.seats.copy(),
            "kinds": core.kinds.copy(),
            "policy_of": core.policy_of.copy(),
            "orngs": core.orngs.copy(),
        }
        for name, (index, value) in changed.items():
            arrays[name][index] = value
        check_seats(core.batch.games, policies=2, num_players=2, **arrays)

    check()
    with pytest.raises(ValueError, match="learner seat outside 0..1"):
        check(seats=(0, 2))
    with pytest.raises(ValueError, match="no learner decision waiting"):
        check(seats=(0, 1 - core.seats[0]))
    with pytest.raises(ValueError, match="a bad opponent seat"):
        check(kinds=((0, 1 - core.seats[0]), 9))
    with pytest.raises(ValueError, match="a bad opponent seat"):
        check(policy_of=((0, 1 - core.seats[0]), 0))  # a policy index at a bot's seat
    with pytest.raises(ValueError, match="opponent generator state that is not a PCG64"):
        check(orngs=((1, 3), 4))
