"""Rules under which a round can become impossible to finish warn with the reason: exactly the
configurations whose layouts can hold every card that fits a slot (every number up to the start
size and every wild card), shown stuck on such a stacked deal. docs/rules.md ("Rounds that
cannot finish") proves that no other configuration can get stuck."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from helpers import stack

from trash_env.cards import JACK, JOKER, KING, NUM_SLOTS, QUEEN, build_deck
from trash_env.engine import DOWN, Game
from trash_env.rules import MAX_PLAYERS, MIN_PLAYERS, WILDS, Rules, RulesWarning


def made(**options: object) -> tuple[Rules | None, str | None]:
    """The rules of ``options`` (None when refused) and the RulesWarning's text, if any."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            rules = Rules(**options)
        except ValueError:
            return None, None
    said = [str(w.message) for w in caught if issubclass(w.category, RulesWarning)]
    assert len(said) <= 1
    return rules, (said[0] if said else None)


def fitting_cards(rules: Rules) -> list[int]:
    """Every card that can fill a slot of a first-round layout: the numbers up to the start
    size and the wild cards."""
    wild = rules.wild_table()
    return [
        card
        for card in build_deck(rules.decks, rules.jokers)
        if wild[card] or 1 <= card <= rules.start_size
    ]


def stuck_deal(rules: Rules) -> list[int] | None:
    """A deal whose layouts hold every fitting card (None when they do not fit): the stock
    then holds nothing that fits a slot, and every face-down slot hides a card nobody can
    reach."""
    cards = fitting_cards(rules)
    n, size = rules.num_players, rules.start_size
    if len(cards) > n * size:
        return None
    cards += [None] * (n * size - len(cards))  # the rest: cards that fit no slot
    layouts = [cards[p * size : (p + 1) * size] for p in range(n)]
    order = stack(rules, layouts, fill=(QUEEN, KING, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, JACK, JOKER))
    wild = rules.wild_table()
    assert not any(wild[c] or 1 <= c <= size for c in order[n * size :])
    return order


CONFIGS = [
    {
        "num_players": n,
        "num_decks": decks,
        "start_size": size,
        "wilds": wilds,
        "jokers": jokers,
        "max_turns": 60,
    }
    for n, decks, size, wilds, jokers in itertools.product(
        range(MIN_PLAYERS, MAX_PLAYERS + 1),
        (1, 2, 3),
        range(1, NUM_SLOTS + 1),
        WILDS,
        (False, True),
    )
]


def test_the_reported_configuration_warns_with_the_reason() -> None:
    """6 players, 1 deck, layouts of 5, no wild cards: the issue's 10 of 10 rounds cut off."""
    with pytest.warns(RulesWarning) as caught:
        Rules(num_players=6, num_decks=1, start_size=5, wilds="none")
    (message,) = [str(w.message) for w in caught]
    assert message.startswith(
        "with 6 players, num_decks=1 and 0 wild cards a round can become impossible to finish: "
        "each number rank has only 4 copies"
    )
    assert message.endswith("runs to max_turns=20000; use num_decks >= 2 (or None)")


def test_the_warning_comes_exactly_where_a_stuck_deal_fits_and_that_deal_is_stuck() -> None:
    warned = 0
    for options in CONFIGS:
        rules, message = made(**options)
        if rules is None:
            continue  # too few cards for the layouts: refused already
        order = stuck_deal(rules)
        assert (message is not None) == (order is not None), options
        assert rules.stuck_round_reason() == message
        if order is None:
            continue
        warned += 1
        game = Game(rules, seed=0, deals=[order])
        rng = np.random.default_rng(0)
        while not game.done:
            game.step(int(rng.choice(game.legal_actions())))
        assert game.truncated and game.turns == rules.max_turns, options
        assert {kind for kind, *_ in game.events} <= {
            "deal", "draw_stock", "take_discard", "discard", "reshuffle", "truncated"
        }, options  # fmt: skip
        assert all(state == DOWN for row in game.state for state in row[: rules.start_size])
    # 1 deck only (2 decks hold 8 copies of each rank, more than 6 players): 4 players without
    # wild cards, 5 and 6 players with few enough wild cards for the layouts.
    assert warned == 100


def test_the_standard_deck_counts_never_warn() -> None:
    for n, size, wilds, jokers in itertools.product(
        range(MIN_PLAYERS, MAX_PLAYERS + 1), range(1, NUM_SLOTS + 1), WILDS, (False, True)
    ):
        rules, message = made(num_players=n, start_size=size, wilds=wilds, jokers=jokers)
        assert rules is not None and message is None


def test_wild_cards_count_the_decks_wild_ranks() -> None:
    for decks, wilds, jokers in itertools.product((1, 2, 3), WILDS, (False, True)):
        rules = Rules(num_players=2, num_decks=decks, wilds=wilds, jokers=jokers)
        wild = rules.wild_table()
        assert rules.wild_cards == sum(wild[c] for c in build_deck(decks, jokers))
    assert Rules(wilds="faces", jokers=True).wild_cards == 12 + 2
    assert not Rules(wilds="none").wild_table()[JACK] and Rules().wild_table()[JACK]
    assert Rules(jokers=True, wilds="none").wild_table()[JOKER]


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 4, "num_decks": 1, "start_size": 10, "wilds": "jacks"},  # 4 wilds
        {"num_players": 5, "num_decks": 1, "start_size": 10, "wilds": "faces"},  # 12 wilds
        {"num_players": 6, "num_decks": 1, "start_size": 5, "wilds": "faces"},  # 12 > 5 * 2
    ],
)
def test_the_tightest_configurations_without_the_warning_finish_their_rounds(options) -> None:
    """Not a proof (docs/rules.md has it): random play finishes these rounds."""
    rules, message = made(**options, episode="round", max_turns=3000)
    assert rules is not None and message is None
    for seed in range(5):
        game = Game(rules, seed=seed)
        rng = np.random.default_rng(seed)
        while not game.done:
            game.step(int(rng.choice(game.legal_actions())))
        assert not game.truncated and game.winners
