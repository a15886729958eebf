"""``greedy`` and ``counting`` play every rules option by that option's rules (issue 39).

Every move of both bots in whole games of each variant that docs/training.md's learning table
covers is held to greedy's rule of thumb written out here from docs/rules.md, not read from the
engine: the discard top is taken exactly when it fits (a wild rank of the variant while a slot is
face-down; a number up to the layout's size whose slot is face-down or holds a wild), a swap is
always taken, a wild goes on a face-down slot and the "Trash!" call is always made.
"""

from __future__ import annotations

import pytest

from agents.bots.heuristics import CountingAgent, GreedyAgent
from trash_env.cards import JACK, JOKER, KING, QUEEN
from trash_env.engine import (
    CALL_TRASH,
    DOWN,
    DRAW_STOCK,
    TAKE_DISCARD,
    WILD_UP,
    Decision,
    Game,
)
from trash_env.observation import action_mask
from trash_env.rules import Rules
from trash_env.view import PublicView

# The wild ranks of each wild setting, from docs/rules.md's options table.
WILD_RANKS = {"jacks": {JACK}, "kings": {KING}, "faces": {JACK, QUEEN, KING}, "none": set()}

VARIANTS = [
    dict(wilds="kings"),
    dict(wilds="faces"),
    dict(wilds="none"),
    dict(jokers=True),
    dict(num_decks=2),
    dict(reshuffle="all"),
    dict(first_player="rotate"),
    dict(losers_reveal=True),
    dict(losers_reveal=True, free_draws=3),
    dict(call_trash=True),
    dict(target_size=5),
    dict(max_deals=5),
    dict(episode="round"),
    dict(start_size=5),
]


def should_take(top: int, state: list[int], size: int, rules: Rules) -> bool:
    """Greedy's draw by the variant's own wild ranks: take the discard top exactly when it fits."""
    wild = WILD_RANKS[rules.wilds] | ({JOKER} if rules.jokers else set())
    if top < 0:
        return False
    if top in wild:
        return DOWN in state[:size]
    return 1 <= top <= size and state[top - 1] in (DOWN, WILD_UP)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(f"{k}={v[k]}" for k in v))
@pytest.mark.parametrize("bot", [GreedyAgent, CountingAgent], ids=["greedy", "counting"])
def test_bots_play_each_variant_by_its_rules(bot, variant):
    rules = Rules(num_players=2, **variant)
    seen: dict[Decision, int] = {d: 0 for d in Decision}
    for seed in range(4):
        g = Game(rules, seed=seed)
        agent = bot()
        while not g.done:
            me, decision = g.current, g.decision
            view = PublicView(g, me)
            action = agent.act(None, action_mask(g, me), view)
            assert action in g.legal_actions()
            seen[decision] += 1
            if decision is Decision.DRAW:
                top = g.discard[-1] if g.discard else -1
                take = should_take(top, list(g.state[me]), g.sizes[me], rules)
                assert action == (TAKE_DISCARD if take else DRAW_STOCK), (top, g.state[me])
            elif decision is Decision.SWAP:
                assert action == g.held - 1  # the swap, never the decline
            elif decision is Decision.WILD:
                assert g.state[me][action] == DOWN
            elif decision is Decision.CALL:
                assert action == CALL_TRASH
            g.step(action)
    assert seen[Decision.DRAW] > 0
    if rules.wilds != "none" or rules.jokers:
        assert seen[Decision.WILD] > 0 and seen[Decision.SWAP] > 0
    if rules.call_trash:
        assert seen[Decision.CALL] > 0
