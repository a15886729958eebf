"""Random play across random rules configurations (2..6 players, every option): the engine's
invariants hold after every step, every game ends or truncates, results are well formed.

Seeded loops (not hypothesis) so a failure names its seed and replays exactly:
``_play_one(seed)`` rebuilds the configuration and the game from it.
"""

import numpy as np
import pytest
from helpers import random_rules
from hypothesis import given, settings
from hypothesis import strategies as st

from trash_env.cards import build_deck
from trash_env.engine import (
    CALL_TRASH,
    DECLINE,
    DOWN,
    DRAW_STOCK,
    EVENT_KINDS,
    NUM_ENGINE_ACTIONS,
    STAY_SILENT,
    TAKE_DISCARD,
    WILD_UP,
    Decision,
    Game,
    InvariantError,
)
from trash_env.rules import EPISODE, FIRST_PLAYER, RESHUFFLE, WILDS, Rules

CHUNKS = 12
GAMES_PER_CHUNK = 200


def _check_decision(g: Game) -> None:
    """The decision on offer is a real choice of the kind docs/rules.md allows."""
    legal = g.legal_actions()
    d = g.decision
    if d == Decision.DRAW:
        assert legal == [DRAW_STOCK, TAKE_DISCARD] and g.stock and g.discard and g.held == -1
    elif d == Decision.WILD:
        assert g.wild[g.held] and len(legal) >= 2
        assert legal == [s for s in range(g.sizes[g.current]) if g.state[g.current][s] == DOWN]
    elif d == Decision.SWAP:
        v = g.held
        assert not g.wild[v] and 1 <= v <= g.sizes[g.current]
        assert g.state[g.current][v - 1] == WILD_UP and legal == [v - 1, DECLINE]
    elif d == Decision.CALL:
        assert g.rules.call_trash and legal == [CALL_TRASH, STAY_SILENT]
        assert g.face_down_count(g.current) == 1  # the held card would fill the last slot
    else:
        raise AssertionError(f"running game with decision {d!r}")


def _check_result(g: Game) -> None:
    rules, n = g.rules, g.num_players
    assert g.done and g.decision == Decision.NONE and g.legal_actions() == []
    returns = g.returns()
    assert abs(sum(returns)) < 1e-9
    if g.truncated:
        assert g.turns == rules.max_turns and g.events[-1].kind == "truncated"
        assert g.winners == () and returns == [0.0] * n and g.placings is None
        return
    assert g.turns < rules.max_turns and g.events[-1].kind == "game_over"
    winners = g.winners
    assert winners and len(set(winners)) == len(winners) and all(0 <= p < n for p in winners)
    k = len(winners)
    for p in range(n):
        expected = (n / k - 1) / (n - 1) if p in winners else -1 / (n - 1)
        assert abs(returns[p] - expected) < 1e-9
    # Placings: winners share 1st; the rest by fewest face-down slots left; ties share.
    placings = g.placings
    assert placings is not None and len(placings) == n
    assert all((placings[p] == 1) == (p in winners) for p in range(n))
    for p in range(n):
        assert placings[p] == 1 + sum(placings[q] < placings[p] for q in range(n))
    # Why the game ended.
    last = g.round_results[-1]
    assert len(g.round_results) == g.deal_number and last
    if any(g.sizes[p] <= rules.target_size for p in last):
        assert set(winners) == {p for p in last if g.sizes[p] <= rules.target_size}
    elif rules.episode == "round":
        assert g.deal_number == 1 and winners == last
    else:
        assert rules.max_deals == g.deal_number
        assert set(winners) == {p for p in range(n) if g.sizes[p] == min(g.sizes)}
    assert sum(g.rounds_won) == sum(len(r) for r in g.round_results)
    assert all(g.sizes[p] == rules.start_size - g.rounds_won[p] for p in range(n))


def _play_one(seed: int) -> int:
    rng = np.random.default_rng(seed)
    rules = random_rules(rng)
    g = Game(rules, seed=seed)
    g.check_invariants()
    steps = 0
    while not g.done:
        _check_decision(g)
        legal = g.legal_actions()
        if rng.random() < 0.02:  # an illegal action is refused and changes nothing
            illegal = [a for a in range(NUM_ENGINE_ACTIONS) if a not in legal]
            events = len(g.events)
            with pytest.raises(ValueError, match="illegal action"):
                g.step(illegal[int(rng.integers(len(illegal)))])
            assert len(g.events) == events
        g.step(legal[int(rng.integers(len(legal)))])
        g.check_invariants()
        steps += 1
        assert steps <= 4 * rules.max_turns + 100  # every step makes progress
    _check_result(g)
    return steps


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_play_keeps_invariants_and_ends(chunk):
    for i in range(GAMES_PER_CHUNK):
        seed = 1000 * chunk + i
        try:
            _play_one(seed)
        except (AssertionError, InvariantError) as error:  # name the seed that broke
            raise AssertionError(f"seed {seed}: {error}") from error


def test_random_configurations_cover_every_option():
    rng = np.random.default_rng(0)
    seen = {name: set() for name in Rules.option_names()}
    for _ in range(CHUNKS * GAMES_PER_CHUNK // 4):
        for name, value in random_rules(rng).to_dict().items():
            seen[name].add(value)
    assert seen["num_players"] == set(range(2, 7))
    assert seen["wilds"] == set(WILDS) and seen["episode"] == set(EPISODE)
    assert seen["first_player"] == set(FIRST_PLAYER) and seen["reshuffle"] == set(RESHUFFLE)
    for flag in ("jokers", "losers_reveal", "call_trash"):
        assert seen[flag] == {False, True}
    assert seen["free_draws"] == {0, 3} and len(seen["max_deals"]) > 2


def test_random_play_reaches_every_decision_and_event():
    decisions, kinds = set(), set()
    for seed in range(300):
        rng = np.random.default_rng(seed)
        g = Game(random_rules(rng), seed=seed)
        while not g.done:
            decisions.add(g.decision)
            legal = g.legal_actions()
            g.step(legal[int(rng.integers(len(legal)))])
        kinds.update(e.kind for e in g.events)
    assert decisions == {Decision.DRAW, Decision.WILD, Decision.SWAP, Decision.CALL}
    assert kinds == set(EVENT_KINDS)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@pytest.mark.slow
@given(
    data=st.data(),
    players=st.integers(2, 6),
    start=st.integers(1, 4),
    wilds=st.sampled_from(WILDS),
    jokers=st.booleans(),
    call=st.booleans(),
    reveal=st.booleans(),
)
def test_hypothesis_stacked_deals(data, players, start, wilds, jokers, call, reveal):
    # Hypothesis picks the stacked first deal and every choice; it shrinks a failure to a
    # small deal and a short list of actions.
    rules = Rules(
        num_players=players,
        start_size=start,
        wilds=wilds,
        jokers=jokers,
        call_trash=call,
        losers_reveal=reveal,
        max_turns=300,
    )
    deck = build_deck(rules.decks, rules.jokers)
    order = data.draw(st.permutations(deck), label="deal")
    g = Game(rules, seed=0, deals=[order], first_player=data.draw(st.integers(0, players - 1)))
    g.check_invariants()
    while not g.done:
        _check_decision(g)
        g.step(data.draw(st.sampled_from(g.legal_actions())))
        g.check_invariants()
    _check_result(g)
