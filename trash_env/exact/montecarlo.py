"""Exact win rates held to play in the real engine: rounds dealt at any layout sizes, each
seat playing a policy read from the public state (``optimal`` from the tables, ``greedy``,
``counting``, ``random``), the win rate over the four seatings with its standard error.

The policies are the model's (:mod:`trash_env.exact.policies`, the compiled ``counting`` move)
so that the check needs no agent package; tests/test_exact_compiled.py holds the compiled
``counting`` to the bot's move.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from trash_env.engine import Game
from trash_env.exact import compiled
from trash_env.exact.model import WILD, Model, from_game
from trash_env.exact.policies import greedy_action
from trash_env.exact.rounds import Packing
from trash_env.exact.tables import Tables
from trash_env.rules import Rules

POLICIES = ("optimal", "greedy", "counting", "random")


def round_game(sizes: tuple[int, int], rules: Rules, seed: int, first: int) -> Game:
    """An engine round dealt at layouts of ``sizes`` slots, seat ``first`` to draw: a game
    whose start size is the larger, started at ``sizes`` as after rounds won."""
    rules = Rules(**{**rules.to_dict(), "start_size": max(sizes)})
    return Game(rules, seed, first_player=first, sizes=sizes)


def policy(
    name: str, sizes: tuple[int, int], rules: Rules, tables: Tables | None, seed: int
) -> Callable[[Game], int]:
    """The move of policy ``name`` at an engine game's decision, from public information."""
    if name not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {name!r}")
    model = Model(sizes, rules)
    rng = np.random.default_rng(seed)
    packing = Packing.of(model, pile_top=True)

    def act(game: Game) -> int:
        if name == "random":
            legal = game.legal_actions()
            return int(legal[rng.integers(len(legal))])
        state = from_game(game, sizes)
        if name == "optimal":
            if tables is None:
                raise ValueError("optimal needs the exact tables")
            return tables.lookup(sizes, state)[1]
        if name == "counting" and state.phase == WILD:
            count = model.classes.count
            stock = state.stock if state.stock is not None else (0,) * count
            top = model.classes.of(game.discard[-1]) if game.discard else -1
            flat = [m for row in state.slots for m in row]
            flat += [state.player, state.phase, state.held, state.top, *state.below]
            flat += [0 if state.stock is None else 1, *stock, -1, top]
            fields = np.array(flat, dtype=np.int64)
            return int(compiled.counting_action(*packing.rules[:4], fields))
        return greedy_action(model, state)

    return act


def engine_win_rate(
    sizes: tuple[int, int],
    mine: str,
    against: str,
    deals: int,
    tables: Tables | None = None,
    rules: Rules | None = None,
    seed: int = 0,
) -> tuple[float, float]:
    """``mine``'s round win rate against ``against`` in the engine, its seat and the first
    player cycling over the four seatings, with the standard error of the mean."""
    rules = Rules(**{**(rules or Rules()).to_dict(), "episode": "round"})
    players = [
        policy(mine, sizes, rules, tables, seed),
        policy(against, sizes, rules, tables, seed + 1),
    ]
    wins = np.zeros(deals)
    for deal in range(deals):
        seat, first = deal % 2, (deal // 2) % 2
        acts = players if seat == 0 else players[::-1]
        game = round_game(sizes, rules, seed + deal, first)
        for _ in range(100_000):
            if game.done:
                break
            game.step(acts[game.current](game))
        wins[deal] = game.done and game.round_results[-1] == (seat,)
    return float(wins.mean()), float(wins.std(ddof=1) / np.sqrt(deals))
