"""Engine-level no-leak: ``resample_hidden`` re-deals only what nobody can see, keeps every
piece of public information and the legal actions, and its result depends on public
information and the rng alone, never on where the hidden cards really lie."""

from collections import Counter

import numpy as np
import pytest
from helpers import J, K, Q, game, play, play_random, random_rules, since, snapshot, stack

from trash_env.engine import DOWN, Decision, Game
from trash_env.rules import Rules


def public(g: Game) -> tuple:
    """Everything public: slot states, face-up cards, the discard pile, stock size, the held
    card, hidden rank counts, sizes, rounds won, whose decision and which actions."""
    n = g.num_players
    face_up = tuple(
        tuple(g.layout[p][s] if g.state[p][s] != DOWN else None for s in range(10))
        for p in range(n)
    )
    return (
        tuple(map(tuple, g.state)),
        face_up,
        tuple(g.discard),
        len(g.stock),
        g.held,
        tuple(g.hidden_counts()),
        tuple(g.sizes),
        tuple(g.rounds_won),
        g.decision,
        g.current,
        tuple(g.legal_actions()),
        g.turns,
        g.done,
    )


def face_down(g: Game) -> list[int]:
    return [
        g.layout[p][s] for p in range(g.num_players) for s in range(10) if g.state[p][s] == DOWN
    ]


def reshuffled_this_deal(g: Game) -> bool:
    for event in reversed(g.events):
        if event.kind == "reshuffle":
            return True
        if event.kind == "deal":
            return False
    return False


def _random_points(seeds, per_game=4):
    """(game, rng) at random running points of random games."""
    for seed in seeds:
        rng = np.random.default_rng(seed)
        g = Game(random_rules(rng), seed=seed)
        for _ in range(per_game):
            play_random(g, rng, limit=int(rng.integers(1, 40)))
            if g.done:
                break
            yield g, rng


def test_resample_keeps_public_information_and_invariants():
    checked = 0
    for g, rng in _random_points(range(250)):
        before = public(g)
        hidden = Counter(face_down(g) + g.stock)
        c = g.clone()
        c.resample_hidden(np.random.default_rng(int(rng.integers(2**32))))
        c.check_invariants()
        assert public(c) == before
        assert Counter(face_down(c) + c.stock) == hidden
        assert snapshot(g)[1:] == snapshot(g.clone())[1:]  # the original is untouched
        # The determinisation plays on like any game.
        play_random(c, rng, limit=30)
        c.check_invariants()
        checked += 1
    assert checked > 300


def test_resample_depends_only_on_public_information():
    # Two games differing only in where the hidden cards lie: permute the hidden cards of a
    # clone (face-down and stock together before a reshuffle, each within itself after one).
    checked = 0
    for g, rng in _random_points(range(1000, 1200), per_game=3):
        other = g.clone()
        spots = [(p, s) for p in range(g.num_players) for s in range(10) if g.state[p][s] == DOWN]
        cards = face_down(other)
        if reshuffled_this_deal(g):
            cards = list(rng.permutation(cards)) if cards else []
            stock = list(rng.permutation(other.stock)) if other.stock else []
        else:
            pool = list(rng.permutation(cards + other.stock))
            cards, stock = pool[: len(spots)], pool[len(spots) :]
        for (p, s), card in zip(spots, cards, strict=True):
            other.layout[p][s] = int(card)
        other.stock = [int(c) for c in stock]
        other.check_invariants()
        assert public(other) == public(g)
        seed = int(rng.integers(2**32))
        a, b = g.clone(), other.clone()
        a.resample_hidden(np.random.default_rng(seed))
        b.resample_hidden(np.random.default_rng(seed))
        assert a.layout == b.layout and a.stock == b.stock
        # ... and their futures agree too (the new rng comes from the given one).
        actions = play_random(a, np.random.default_rng(seed), limit=50)
        for action in actions:
            b.step(action)
        assert snapshot(a) == snapshot(b)
        checked += 1
    assert checked > 200


def test_stacked_games_differing_in_hidden_cards_determinise_alike():
    # Player 1's slots 1 and 2 and the stock's bottom differ; turn 1 reveals none of them.
    layouts_a = [[Q, None, None, None], [K, 9, None, None]]
    layouts_b = [[Q, None, None, None], [9, K, None, None]]
    a = game(layouts_a, stock=[J, 8])
    b = game(layouts_b, stock=[J, 8])
    play(a, 3)
    play(b, 3)
    assert public(a) == public(b) and a.layout != b.layout
    a.resample_hidden(np.random.default_rng(5))
    b.resample_hidden(np.random.default_rng(5))
    assert a.layout == b.layout and a.stock == b.stock


def test_resample_after_a_reshuffle_keeps_the_stock_multiset():
    checked = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        # Short stocks reshuffle often: 5 or 6 players of 8 to 10 cards from one or two decks.
        for _ in range(20):
            players = int(rng.integers(5, 7))
            try:
                rules = Rules(
                    num_players=players,
                    num_decks=1 if players == 5 else 2,
                    start_size=int(rng.integers(8, 11)),
                    reshuffle=str(rng.choice(["keep_top", "all"])),
                    episode="round",
                    max_turns=400,
                )
                break
            except ValueError:
                continue
        g = Game(rules, seed=seed)
        while not g.done:
            if reshuffled_this_deal(g) and rng.random() < 0.2:
                stock, down = Counter(g.stock), Counter(face_down(g))
                c = g.clone()
                c.resample_hidden(np.random.default_rng(seed))
                assert Counter(c.stock) == stock  # the stock's contents are public now
                assert Counter(face_down(c)) == down
                assert public(c) == public(g)
                # A game whose face-down cards and stock lie in another order determinises
                # alike (each is shuffled within itself, from sorted cards).
                other = g.clone()
                spots = [(p, s) for p in range(players) for s in range(10) if g.state[p][s] == DOWN]
                for (p, s), card in zip(spots, face_down(g)[::-1], strict=True):
                    other.layout[p][s] = card
                other.stock = other.stock[::-1]
                other.check_invariants()
                d = other.clone()
                d.resample_hidden(np.random.default_rng(seed))
                assert d.layout == c.layout and d.stock == c.stock
                checked += 1
            legal = g.legal_actions()
            g.step(legal[int(rng.integers(len(legal)))])
    assert checked > 100


def test_before_a_reshuffle_stock_and_face_down_cards_mix():
    # At the start of a deal nothing distinguishes a face-down card from a stock card: the
    # resampled cards in player 0's slot 1 follow the hidden rank counts.
    g = game([[None] * 10, [None] * 10], stock=[Q, K])  # player 0 discarded a Queen
    hidden = g.hidden_counts()
    total = sum(hidden)
    rng = np.random.default_rng(0)
    draws = 4000
    seen = Counter()
    stock_multisets = set()
    for _ in range(draws):
        c = g.clone(events=False)
        c.resample_hidden(rng)
        seen[c.layout[0][0]] += 1
        stock_multisets.add(tuple(sorted(Counter(c.stock).items())))
    for rank in range(14):
        expected = draws * hidden[rank] / total
        assert abs(seen[rank] - expected) < 5 * max(expected, 1) ** 0.5 + 1, (rank, seen)
    assert len(stock_multisets) > 100


def test_resample_is_a_real_redeal():
    # It moves hidden cards (a no-op would pass every preservation test).
    g = game([[None] * 10, [None] * 10], stock=[Q])
    layouts = set()
    for seed in range(10):
        c = g.clone()
        c.resample_hidden(np.random.default_rng(seed))
        layouts.add(tuple(map(tuple, c.layout)))
    assert len(layouts) == 10


def test_resample_then_later_deals_come_from_the_rng():
    # Stacked later deals are hidden too: after resampling they are dealt by the new rng.
    rules = Rules(start_size=2)
    deal = stack(rules, [[Q, Q], [Q, Q]], [K])  # player 0 discards a King
    g = Game(rules, seed=0, deals=[deal, deal, deal], first_player=0)
    assert since(g, 1) == [("draw_stock", 0, K, -1), ("discard", 0, K, -1)]
    layouts = set()
    for seed in range(8):
        c = g.clone()
        c.resample_hidden(np.random.default_rng(seed))
        rng = np.random.default_rng(seed)
        while c.deal_number == 0:
            legal = c.legal_actions()
            c.step(legal[int(rng.integers(len(legal)))])
        if not c.done:
            layouts.add(tuple(map(tuple, c.layout)))
    assert len(layouts) > 1


def test_determinize_via_the_public_view_keeps_public_information():
    from trash_env.view import PublicView

    for g, rng in _random_points(range(300, 330)):
        view = PublicView(g, seat=g.current)
        d = view.determinize(np.random.default_rng(int(rng.integers(2**32))))
        assert public(d) == public(g)
        d.check_invariants()
        assert view.discard_top == (g.discard[-1] if g.discard else -1)
        assert view.discard == g.discard and view.discard is not g.discard
    first = Game(seed=7)  # the first turn drew a wild: a decision with an empty discard pile
    assert first.decision == Decision.WILD and not first.discard
    assert PublicView(first, first.current).discard_top == -1


@pytest.mark.parametrize("seed", range(3))
def test_resample_does_not_touch_the_given_game_rng_sequence(seed):
    # The same rng state gives the same determinisation: results are reproducible.
    g = Game(Rules(num_players=3), seed=seed)
    a, b = g.clone(), g.clone()
    a.resample_hidden(np.random.default_rng(seed))
    b.resample_hidden(np.random.default_rng(seed))
    assert snapshot(a) == snapshot(b)
