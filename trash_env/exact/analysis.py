"""Exact figures from the round graphs, no sampling: the value of any pair of fixed policies,
greedy's distance to optimal play, a skill index, and whole games composed from rounds.

A matchup's *win rate* for policy X against Y is X's probability of winning the round averaged
over X's seat and the first player (the four seatings equally likely), as evaluate.py's
duplicate deals average them. A round that never ends counts for neither.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from trash_env.exact.model import Model
from trash_env.exact.rounds import SolvedStates, enumerate_states, solve_states
from trash_env.rules import Rules

POLICIES = ("optimal", "greedy", "random")
# The matchups evaluated (X against Y); each is two policy pairs, X at seat 0 and at seat 1.
PAIRS = (
    ("optimal", "optimal"),
    ("optimal", "greedy"),
    ("greedy", "optimal"),
    ("optimal", "random"),
    ("greedy", "greedy"),
    ("greedy", "random"),
)
_ENDS = ("optimal", "optimal", 1.0, 1.0)  # 1 for either win: the probability the round ends


# counting's wild choice reads the card under the discard top: evaluated on keys that keep it.
COUNTING_PAIRS = (("optimal", "counting"), ("counting", "greedy"), ("counting", "random"))


def matchups(pairs: tuple[tuple[str, str], ...] = PAIRS) -> list[tuple[str, str, float, float]]:
    """The policy pairs of ``pairs`` (X's wins counted 1, X at seat 0 then at seat 1) and the
    round's end under optimal play, as :func:`~trash_env.exact.rounds.solve_states` takes
    them."""
    rows = []
    for policy, against in pairs:
        rows.append((policy, against, 1.0, 0.0))
        rows.append((against, policy, 0.0, 1.0))
    return rows + [_ENDS]


def evaluate(
    sizes: tuple[int, int],
    rules: Rules,
    progress: Callable[[int], None] | None = None,
    counting: bool = False,
) -> SolvedStates:
    """Enumerate and solve the round ``sizes`` in compiled code and evaluate every matchup
    exactly (one pass, layout pair by layout pair); ``counting``: the matchups of
    :data:`COUNTING_PAIRS`, on keys that keep the card under the discard top."""
    model = Model(sizes, rules)
    keys = enumerate_states(model, progress, pile_top=counting)
    rows = matchups(COUNTING_PAIRS if counting else PAIRS)
    return solve_states(model, keys, rows, progress, pile_top=counting)


@lru_cache(maxsize=4)
def solved(sizes: tuple[int, int], rules: Rules, counting: bool = False) -> SolvedStates:
    return evaluate(sizes, rules, counting=counting)


def win_rate(found: SolvedStates, policy: str, against: str) -> float:
    """``policy``'s probability of winning the round against ``against`` (seats and first
    player averaged)."""
    rows = [(policy, against, 1.0, 0.0), (against, policy, 0.0, 1.0)]
    if not all(row in found.matchups for row in rows):
        pairs = [f"{x} vs {y}" for x, y, win, _ in found.matchups if win == 1.0 and x != y]
        raise ValueError(
            f"the matchups evaluated are {', '.join(pairs)}; not {policy} vs {against}"
        )
    indices = [found.matchups.index(row) for row in rows]
    return sum(found.start_value(first, row) for row in indices for first in (0, 1)) / 4


def greedy_gap(found: SolvedStates) -> dict[str, float]:
    """Decision states where greedy's move is not optimal: their share and the value (seat
    to act's, in points of the env's return) lost there."""
    worse = found.greedy_not_optimal
    return {
        "states": len(found.keys),
        "not_optimal": worse,
        "share": worse / len(found.keys),
        "mean_loss_there": found.greedy_loss_there / worse if worse else 0.0,
        "max_loss": found.greedy_max_loss,
    }


def end_probability(found: SolvedStates) -> tuple[float, float]:
    """The probability that the round ends under optimal play, per first player."""
    row = found.matchups.index(_ENDS)
    return found.start_value(0, row), found.start_value(1, row)


def never_finished(found: SolvedStates) -> dict[str, float]:
    """Where the env's return and the probability of winning part: the decision states from
    which optimal play (for the env's return) leaves the round unfinished with positive
    probability (there the return is 2 P(win) - P(end), not 2 P(win) - 1), and the largest
    probability of never finishing."""
    ends = found.follows[found.matchups.index(_ENDS)]
    unfinished = 1.0 - ends
    return {
        "states": int((unfinished > 1e-9).sum()),
        "largest": float(unfinished.max()) if len(unfinished) else 0.0,
    }


def skill_index(found: SolvedStates) -> float:
    """Skill's share of the result: how far optimal play lifts the win rate above a beginner
    (uniformly random play) towards a sure win, ``(W(optimal vs random) - 1/2) / (1 - 1/2)``
    (docs/skill.md): 0 when a beginner does as well, 1 when optimal play always wins."""
    return (win_rate(found, "optimal", "random") - 0.5) / 0.5


def round_report(
    sizes: tuple[int, int],
    rules: Rules | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict:
    """Every exact figure of the round ``sizes`` (docs/skill.md, item by item)."""
    rules = rules or Rules()
    found = solved(sizes, rules) if progress is None else evaluate(sizes, rules, progress)
    rates = {
        f"{a} vs {b}": win_rate(found, a, b) for a, b in PAIRS if (a, b) != ("greedy", "optimal")
    }
    return {
        "sizes": list(sizes),
        "states": len(found.keys),
        # Seat 0's probability of winning under optimal play, seat 0 first and seat 1 first.
        "optimal_seat0_wins": [(1 + found.start_value(f)) / 2 for f in (0, 1)],
        "win_rates": rates,
        "greedy_loss_points": 100 * (0.5 - win_rate(found, "greedy", "optimal")),
        "greedy_gap": greedy_gap(found),
        "skill_index": skill_index(found),
        "end_probability_optimal": end_probability(found),
        "never_finished_states": never_finished(found),
        "cutoff_recursion": {
            "open_states": found.cutoff.open_states,
            "swept_states": found.cutoff.swept_states,
            "largest_disagreement": found.cutoff.largest_disagreement,
            "sweeps": found.cutoff.sweeps,
            "determined_gap": found.cutoff.determined_gap,
            "alternating_states": found.cutoff.alternating_states,
            "largest_swing": found.cutoff.largest_swing,
        },
    }


def counting_report(
    sizes: tuple[int, int],
    rules: Rules | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict:
    """``counting``'s exact win rates (:data:`COUNTING_PAIRS`) in the round ``sizes``."""
    rules = rules or Rules()
    found = evaluate(sizes, rules, progress, counting=True)
    return {
        "sizes": list(sizes),
        "states_with_pile_top": len(found.keys),
        "win_rates": {f"{a} vs {b}": win_rate(found, a, b) for a, b in COUNTING_PAIRS},
    }


def game_win_probability(
    round_win: dict[tuple[int, int, int], float], sizes: tuple[int, int], first: int
) -> float:
    """Seat 0's probability of winning the game from layouts ``sizes`` with seat ``first`` to
    start, when ``round_win[(a, b, f)]`` is seat 0's probability of winning a round at sizes
    ``(a, b)`` with ``f`` first: the winner shrinks by one and starts the next round, and the
    first to shrink to 0 wins."""
    memo: dict[tuple[int, int, int], float] = {}

    def win(a: int, b: int, f: int) -> float:
        if a == 0:
            return 1.0
        if b == 0:
            return 0.0
        if (a, b, f) not in memo:
            p = round_win[(a, b, f)]
            memo[(a, b, f)] = p * win(a - 1, b, 0) + (1 - p) * win(a, b - 1, 1)
        return memo[(a, b, f)]

    return win(sizes[0], sizes[1], first)
