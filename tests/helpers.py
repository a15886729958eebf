"""Stacked-deal builders for the engine's rule tests.

A stacked deal (``Game(rules, deals=[order])``) lists player 0's slots 1..L, then player 1's, ...,
then the stock from its top down, and must hold exactly the cards of the decks. Writing 52+
cards by hand for every test hides what the test is about, so :func:`stack` takes only the cards
that matter and fills the rest from what is left of the decks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from trash_env.cards import JACK, JOKER, KING, NUM_RANKS, NUM_SLOTS, QUEEN, build_deck
from trash_env.engine import DOWN, Game
from trash_env.rules import EPISODE, FIRST_PLAYER, RESHUFFLE, WILDS, Rules

# Filler preference: cards that end a turn under the standard rules come first, so an
# unspecified card rarely starts an unplanned chain. Tests that care specify every card.
FILL_ORDER = (QUEEN, KING, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, JACK, JOKER)

Q, K, J, A = QUEEN, KING, JACK, 1


def stack(
    rules: Rules,
    layouts: Sequence[Sequence[int | None]],
    stock: Sequence[int] = (),
    fill: Sequence[int] = FILL_ORDER,
) -> list[int]:
    """One stacked deal order.

    ``layouts[p]`` is player p's layout, slot 1 first, one entry per slot of the deal's layout
    size (``None``: any card left over). ``stock`` is the top of the stock, top card first; the
    cards left over go below it, in ``fill`` order. Raises if a card is used more often than the
    decks hold it."""
    pool = Counter(build_deck(rules.decks, rules.jokers))

    def take(card: int) -> int:
        if pool[card] <= 0:
            raise AssertionError(f"stacked deal uses more cards of rank {card} than the decks hold")
        pool[card] -= 1
        return card

    for row in layouts:
        for card in row:
            if card is not None:
                take(card)
    for card in stock:
        take(card)

    def next_filler() -> int:
        for card in fill:
            if pool[card] > 0:
                return take(card)
        for card in sorted(pool):
            if pool[card] > 0:
                return take(card)
        raise AssertionError("stacked deal: the decks ran out of cards")

    order: list[int] = []
    for row in layouts:
        order += [card if card is not None else next_filler() for card in row]
    order += list(stock)
    while sum(pool.values()):
        order.append(next_filler())
    return order


def game(
    layouts: Sequence[Sequence[int | None]],
    stock: Sequence[int] = (),
    first_player: int = 0,
    more_deals: Sequence[Sequence[int]] = (),
    **options: object,
) -> Game:
    """A game whose first deal is stacked (see :func:`stack`); ``options`` are Rules options.
    The number of players is the number of layouts unless given."""
    options.setdefault("num_players", len(layouts))
    if layouts:
        options.setdefault("start_size", len(layouts[0]))
    rules = Rules.from_options(**options)
    order = stack(rules, layouts, stock)
    return Game(rules, seed=0, deals=[order, *more_deals], first_player=first_player)


def play(g: Game, *actions: int) -> Game:
    """Step ``actions`` in order, checking the invariants after each; returns the game."""
    for action in actions:
        assert action in g.legal_actions(), (action, g.decision, g.legal_actions())
        g.step(action)
        g.check_invariants()
    return g


def since(g: Game, mark: int) -> list[tuple]:
    """The events logged since ``len(g.events) == mark``, as plain tuples."""
    return [tuple(e) for e in g.events[mark:]]


def down_slots(g: Game, player: int) -> list[int]:
    """0-based indices of the player's face-down slots."""
    return [s for s, st in enumerate(g.state[player]) if st == DOWN]


def slots(g: Game, player: int) -> list[int]:
    """The states of the player's slots 1..L (without the absent ones)."""
    return g.state[player][: g.sizes[player]]


def stacked_game(
    rules: Rules,
    specs: Sequence[tuple[Sequence[Sequence[int | None]], Sequence[int]]],
    first_player: int = 0,
    seed: int = 0,
) -> Game:
    """A game whose first deals are stacked: ``specs[i] = (layouts, stock_top)`` of deal i
    (see :func:`stack`; each deal's layouts have that deal's layout sizes)."""
    orders = [stack(rules, layouts, stock) for layouts, stock in specs]
    return Game(rules, seed=seed, deals=orders, first_player=first_player)


def random_rules(rng: np.random.Generator) -> Rules:
    """A valid random configuration; small layouts are likelier so full games stay short."""
    while True:
        n = int(rng.integers(2, 7))
        start = int(rng.choice([1, 2, 3, 4, 5, 10], p=[0.15, 0.25, 0.25, 0.15, 0.1, 0.1]))
        reveal = bool(rng.random() < 0.4)
        options = dict(
            num_players=n,
            num_decks=None if rng.random() < 0.7 else int(rng.integers(1, 4)),
            start_size=start,
            wilds=str(rng.choice(WILDS)),
            jokers=bool(rng.random() < 0.4),
            target_size=int(rng.integers(0, start)) if rng.random() < 0.3 else 0,
            max_deals=None if rng.random() < 0.7 else int(rng.integers(1, 6)),
            first_player=str(rng.choice(FIRST_PLAYER)),
            reshuffle=str(rng.choice(RESHUFFLE)),
            losers_reveal=reveal,
            free_draws=3 if n == 2 and reveal and rng.random() < 0.6 else 0,
            call_trash=bool(rng.random() < 0.4),
            episode=str(rng.choice(EPISODE, p=[0.6, 0.4])),
            max_turns=int(rng.integers(1, 60)) if rng.random() < 0.1 else 20_000,
        )
        try:
            return Rules(**options)
        except ValueError:
            continue  # too few cards for these layouts: draw again


def snapshot(g: Game) -> tuple:
    """Everything a game holds, hidden parts and rng state included."""
    return (
        tuple(g.events),
        tuple(map(tuple, g.layout)),
        tuple(map(tuple, g.state)),
        tuple(g.stock),
        tuple(g.discard),
        g.held,
        tuple(g.sizes),
        tuple(g.rounds_won),
        g.decision,
        g.current,
        g.turns,
        g.deal_number,
        g.done,
        g.truncated,
        g.winners,
        g.placings,
        tuple(g.hidden_counts()),
        tuple(g.round_results),
        str(g.rng.bit_generator.state),
    )


def play_random(g: Game, rng: np.random.Generator, limit: int = 10**6) -> list[int]:
    actions = []
    while not g.done and len(actions) < limit:
        legal = g.legal_actions()
        action = legal[int(rng.integers(len(legal)))]
        g.step(action)
        actions.append(action)
    return actions


def expected_pairs(g: Game, observer: int) -> np.ndarray:
    """The 108 pair entries of trash_env/pairs.py, computed from the game's own state (not from
    an observation): what ``observation="pairs"`` and the ``pairs`` network features must hold."""
    top = g.discard[-1] if g.discard else None
    held = g.held if g.held >= 0 else None
    out = []
    for card in (top, held):
        for slot in range(NUM_SLOTS):
            for state in range(4):
                out.append(float(card == slot + 1 and g.state[observer][slot] == state))
    for card in (top, held):
        out += [float(card == rank and bool(g.wild[rank])) for rank in range(NUM_RANKS)]
    return np.array(out, np.float32)


# Sets up the child, then becomes the program (argv: the file-size limit or -1, the program).
_LAUNCHER = (
    "import os, resource, signal, sys\n"
    "if int(sys.argv[1]) >= 0:\n"
    "    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]),) * 2)\n"
    "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def launched(args: Sequence[str], file_size: int | None = None) -> list[str]:
    """``args`` started through a small launcher that gives the program the default SIGINT a
    terminal gives (a job started in the background of a script, ``pytest ... &`` or a CI
    runner, inherits SIGINT *ignored*, and a program rightly keeps an inherited ignore, so a
    test that interrupts it restores the default) and, with ``file_size``, ``ulimit -f`` in
    bytes, then executes it. Not a ``preexec_fn``: that runs Python in a fork of the test
    process, unsafe once JAX has started its threads there (JAX warns "os.fork() was
    called")."""
    limit = -1 if file_size is None else file_size
    return [sys.executable, "-c", _LAUNCHER, str(limit), *args]


ROOT = Path(__file__).resolve().parents[1]


def start_interruptible(
    args: Sequence[str], cwd: Path, stdout: int = subprocess.DEVNULL
) -> subprocess.Popen:
    """Start a program a test interrupts (Ctrl-C, SIGKILL) in a session of its own, with the
    default SIGINT (:func:`launched`) and this checkout first on its path; stderr is piped,
    as text."""
    return subprocess.Popen(
        launched(args),
        cwd=cwd,
        start_new_session=True,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )


def evaluate_model(model: Path, *flags: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python evaluate.py --agents MODEL random --deals 2 [flags]``, as a user runs it: a
    model file an example or a pipeline wrote enters the project's evaluation."""
    return subprocess.run(
        [sys.executable, "evaluate.py", "--agents", str(model), "random", "--deals", "2", *flags],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=dict(os.environ, PYTHONWARNINGS="ignore"),
    )
