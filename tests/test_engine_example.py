"""The worked example of seed 001 ("Beispielrunde"), step by step.

A player with ten face-down cards draws a 5 and lays it in slot 5; under it lies a 2, which goes
to slot 2; under that a Jack, which the player chooses to lay on slot 9; under that a Queen,
which has no place: it is discarded and the next player is on turn.
"""

from helpers import J, Q, game, since

from trash_env.engine import DOWN, DRAW_STOCK, NATURAL, TAKE_DISCARD, WILD_UP, Decision


def test_beispielrunde_step_by_step():
    # Player 0: slot 2 hides the Jack, slot 5 the 2, slot 9 the Queen; the stock's top is a 5.
    g = game(
        [[8, J, 7, 6, 2, 4, 3, 10, Q, 9], [None] * 10],
        stock=[5],
        first_player=0,
    )
    g.check_invariants()
    assert g.events[0] == ("deal", 0, -1, 0)  # deal 1, player 0 plays first
    # First turn of the round: the discard pile is empty, so the stock is drawn without asking.
    # 5 -> slot 5, the 2 under it -> slot 2, the Jack under that: a choice of slot.
    assert since(g, 1) == [
        ("draw_stock", 0, 5, -1),
        ("place", 0, 5, 4),
        ("pickup", 0, 2, 4),
        ("place", 0, 2, 1),
        ("pickup", 0, J, 1),
    ]
    assert g.decision == Decision.WILD
    assert g.current == 0
    assert g.held == J
    assert g.state[0] == [DOWN, NATURAL, DOWN, DOWN, NATURAL, DOWN, DOWN, DOWN, DOWN, DOWN]
    assert g.layout[0][1] == 2 and g.layout[0][4] == 5
    # Any face-down slot may take the Jack (slots 1, 3, 4, 6..10), none of the face-up ones.
    assert g.legal_actions() == [0, 2, 3, 5, 6, 7, 8, 9]
    assert g.discard == []

    mark = len(g.events)
    g.step(8)  # the player chooses slot 9
    g.check_invariants()
    assert since(g, mark) == [
        ("wild", 0, J, 8),
        ("pickup", 0, Q, 8),
        ("discard", 0, Q, -1),
    ]
    assert g.state[0] == [DOWN, NATURAL, DOWN, DOWN, NATURAL, DOWN, DOWN, DOWN, WILD_UP, DOWN]
    assert g.layout[0][8] == J
    assert g.face_down_count(0) == 7
    # The Queen ends the turn on the discard pile; the next player now chooses where to draw.
    assert g.discard == [Q]
    assert g.held == -1
    assert g.current == 1
    assert g.decision == Decision.DRAW
    assert g.legal_actions() == [DRAW_STOCK, TAKE_DISCARD]
    assert g.turns == 1
    assert g.state[1] == [DOWN] * 10
