"""The public-state model (trash_env/exact/model.py) held to the engine: from positions of real
engine games both agree on the legal actions and the public successor states, and the engine's
frequencies of public states match the model's chance probabilities (chi-square, 10^5 deals)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from trash_env.cards import build_deck
from trash_env.engine import ABSENT, DECLINE, DRAW_STOCK, TAKE_DISCARD, Game
from trash_env.exact.model import (
    DEAD,
    DRAW,
    OVER,
    Classes,
    Model,
    State,
    check_rules,
    from_game,
)
from trash_env.rules import Rules

RULES = {
    "jacks": Rules(episode="round"),
    "kings": Rules(episode="round", wilds="kings"),
    "jokers": Rules(episode="round", jokers=True),
}


def round_game(sizes: tuple[int, int], rules: Rules, seed: int, first: int = 0) -> Game:
    """An engine game dealt at layout sizes ``sizes`` (unequal ones as a game reaches them
    after rounds won: the engine's ``sizes`` argument)."""
    rules = Rules(**{**rules.to_dict(), "start_size": max(sizes)})
    return Game(rules, seed=seed, first_player=first, sizes=sizes)


def test_the_engine_starts_a_game_at_chosen_layout_sizes():
    game = Game(Rules(start_size=3), seed=4, first_player=1, sizes=(1, 3))
    assert game.sizes == [1, 3] and [sum(m != ABSENT for m in row) for row in game.state] == [1, 3]
    for bad in [(1, 4), (0, 2), (2,), (1, 2, 3), (True, 2), "12", (1.0, 2)]:
        with pytest.raises(ValueError, match="sizes must give 2 layout sizes, each an integer"):
            Game(Rules(start_size=3), sizes=bad)


def test_a_game_dealt_at_chosen_sizes_deals_plays_and_shrinks_by_them():
    # Stacked: seat 0's one slot holds a 5, seat 1's three hold 2, 3, 4, and the stock's top is an
    # Ace. Seat 0 places it, picks up the 5, and its one-slot layout is complete: it wins the
    # round and its size goes from 1 to 0, which ends the game (target size 0).
    order = build_deck(1, False)
    for card in (1, 4, 3, 2, 5):
        order.remove(card)
        order.insert(0, card)
    game = Game(Rules(start_size=3), deals=[order], first_player=0, sizes=(1, 3))
    assert game.layout[1][:4] == [2, 3, 4, -1]
    kinds = [(e.kind, e.player, e.card, e.slot) for e in game.events[:5]]
    assert kinds == [
        ("deal", 0, -1, 0),
        ("draw_stock", 0, 1, -1),
        ("place", 0, 1, 0),
        ("pickup", 0, 5, 0),
        ("round_won", 0, -1, -1),
    ]
    assert game.round_results == [(0,)] and game.sizes == [0, 3] and game.done


def test_classes_group_the_ranks_no_layout_can_use():
    jacks = Classes((2, 3), Rules())
    assert [jacks.of(r) for r in range(1, 14)] == [1, 2, 3] + [DEAD] * 7 + [4, DEAD, DEAD]
    assert jacks.totals() == (36, 4, 4, 4, 4)
    kings = Classes((2, 3), Rules(wilds="kings", jokers=True))
    assert kings.of(11) == DEAD and kings.of(13) == kings.wild and kings.of(0) == kings.wild
    assert kings.totals() == (36, 4, 4, 4, 6)


@pytest.mark.parametrize(
    "rules",
    [Rules(num_players=3), Rules(wilds="faces"), Rules(call_trash=True), Rules(num_decks=2)],
)
def test_rules_the_model_does_not_cover_are_refused_in_one_sentence(rules):
    with pytest.raises(ValueError, match="the exact model covers 2-player") as error:
        check_rules(rules)
    assert "\n" not in str(error.value)


def walk(
    model: Model, game: Game, first: int | None, rng: np.random.Generator
) -> tuple[int, set[str]]:
    """Play ``game`` to its end at random, checking the model at every decision (and, given
    the ``first`` player of a fresh deal, the deal itself); return the decisions checked and
    the kinds of state seen."""
    kinds: set[str] = set()
    state = from_game(game, model.sizes)
    if first is not None:
        starts = model.next_decisions(model.initial(first))
        assert state in starts, (state, starts)
    checked = 0
    while not game.done:
        assert model.legal_actions(state) == game.legal_actions()
        action = int(rng.choice(game.legal_actions()))
        successors = model.next_decisions(state, action)
        assert abs(sum(successors.values()) - 1.0) < 1e-12
        if action == TAKE_DISCARD:
            kinds.add("take")
        if action == DECLINE:
            kinds.add("decline")
        if state.stock is not None:
            kinds.add("reshuffled")
        game.step(action)
        state = from_game(game, model.sizes)
        assert successors.get(state, 0.0) > 0.0, (action, state, successors)
        checked += 1
    assert state.phase == OVER and state.winner == game.round_results[-1][0]
    return checked, kinds


@pytest.mark.parametrize("name", sorted(RULES))
@pytest.mark.parametrize("sizes", [(1, 1), (2, 2), (1, 3), (3, 2), (4, 4)])
def test_model_and_engine_agree_on_actions_and_successors(name, sizes):
    rules = RULES[name]
    model = Model(sizes, rules)
    rng = np.random.default_rng(7)
    checked, kinds = 0, set()
    for seed in range(40):
        game = round_game(sizes, rules, seed, first=seed % 2)
        n, seen = walk(model, game, seed % 2, rng)
        checked, kinds = checked + n, kinds | seen
    assert checked > 100
    assert "take" in kinds


def drained(rules: Rules, seed: int, left: int) -> Game | None:
    """A 2-slot game at its first draw decision whose stock has ``left`` cards: the others were
    drawn and discarded (moved, in their order, under the discard top), so the next turns
    reshuffle the pile into a known stock. None when the deal ended before that decision."""
    game = Game(Rules(**{**rules.to_dict(), "start_size": 2}), seed=seed, first_player=0)
    if game.done or game.legal_actions() != [DRAW_STOCK, TAKE_DISCARD]:
        return None
    moved = game.stock[left:][::-1]  # the top of the stock, in the order it would be drawn
    del game.stock[left:]
    game.discard[:0] = moved
    for card in moved:
        game.hidden[card] -= 1
    game.check_invariants()
    return game


@pytest.mark.parametrize("name", sorted(RULES))
def test_model_and_engine_agree_after_reshuffles(name):
    """Positions whose stock is nearly drawn: the stock is rebuilt from the pile (a known
    multiset, kept apart from the face-down cards), drawn, and rebuilt again."""
    model = Model((2, 2), RULES[name])
    rng = np.random.default_rng(11)
    reshuffled = checked = 0
    for seed in range(60):
        game = drained(RULES[name], seed, left=int(rng.integers(1, 4)))
        if game is None:
            continue
        n, kinds = walk(model, game, None, rng)
        checked += n
        reshuffled += "reshuffled" in kinds
    assert reshuffled >= 30 and checked > 200


def first_action(model: Model, state: State) -> int:
    """A fixed policy of the public state: draw from the stock, else the first legal action."""
    legal = model.legal_actions(state)
    return DRAW_STOCK if state.phase == DRAW else legal[0]


def exact_distribution(model: Model, first: int, decisions: int) -> dict[State, float]:
    """The model's probabilities of the public state after ``decisions`` decisions of
    :func:`first_action` (or the end)."""
    dist = model.next_decisions(model.initial(first))
    for _ in range(decisions):
        nxt: dict[State, float] = Counter()
        for state, p in dist.items():
            if state.phase == OVER:
                nxt[state] += p
                continue
            for child, q in model.next_decisions(state, first_action(model, state)).items():
                nxt[child] += p * q
        dist = nxt
    return dist


@pytest.mark.parametrize("sizes,decisions", [((2, 2), 6)])
def test_engine_frequencies_match_the_model_probabilities(sizes, decisions):
    """10^5 engine deals played by the same fixed policy: the public states after a few
    decisions are distributed as the model's chance probabilities say."""
    rules = Rules(episode="round", start_size=sizes[0])
    model = Model(sizes, rules)
    expected = exact_distribution(model, 0, decisions)
    counts: Counter[State] = Counter()
    samples = 100_000
    for seed in range(samples):
        game = Game(rules, seed=seed, first_player=0)
        for _ in range(decisions):
            if game.done:
                break
            game.step(first_action(model, from_game(game, model.sizes)))
        counts[from_game(game, model.sizes)] += 1
    assert set(counts) <= set(expected)
    # Categories expected fewer than 5 times are pooled into one, as a chi-square test needs.
    big = [s for s, p in expected.items() if p * samples >= 5]
    observed = [counts[s] for s in big] + [samples - sum(counts[s] for s in big)]
    wanted = [expected[s] * samples for s in big]
    wanted.append(samples - sum(wanted))
    assert len(big) > 50
    result = chisquare(observed, wanted)
    assert result.pvalue > 1e-4, result
