"""Soak test: many random games over every rule variant, the invariants checked after every
decision.

    python benchmarks/soak.py [--games 1000000] [--reference-games 2000] [--seed 0] [--json PATH]

The variants are every combination of the options with a few values (read from ``Rules``:
players 2..6 and every option declared with choices, today wilds, jokers, first player,
reshuffle, losers' reveal, free draws where allowed, the call, the episode), each with its
integer options (decks, start and target sizes, a deal limit, a short
turn limit now and then) drawn at random from the values the rules allow. Game ``i`` plays
variant ``i % V``, so ``--games`` of at least V covers them all.

The batched engine (``trash_env.vector``) plays ``--games`` games with uniform random legal
actions, the compiled invariant check (``VectorGame.check_invariants``' kernel) after every
decision; the reference engine (``trash_env.engine.Game``) plays ``--reference-games`` more
with ``Game.check_invariants`` after every decision, the variants taken in the same order.
Prints the games, decisions and variants covered per engine and the number of violations;
exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
import warnings
from dataclasses import fields
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from trash_env.engine import Game, InvariantError  # noqa: E402
from trash_env.rules import (  # noqa: E402
    MAX_PLAYERS,
    MIN_PLAYERS,
    Rules,
    RulesWarning,
    option_spec,
)

MAX_GAMES = 10**9


def few_valued() -> dict[str, tuple]:
    """Every ``Rules`` option with a few values, in field order: those declared with
    ``choices`` (bools, string choices, ``free_draws``) and the player counts. A new option
    declared so joins the combinations here with no edit."""
    out: dict[str, tuple] = {}
    for option in fields(Rules):
        spec = option_spec(option)
        if spec["choices"] is not None:
            out[option.name] = tuple(spec["choices"])
        elif option.name == "num_players":
            out[option.name] = tuple(range(MIN_PLAYERS, MAX_PLAYERS + 1))
    return out


# The integer options, drawn per variant by ``variants`` (an option in neither list stops the
# soak, naming it: give it values here).
DRAWN = ("start_size", "target_size", "num_decks", "max_deals", "max_turns")


def variants(seed: int) -> list[Rules]:
    """Every combination of the few-valued options that the rules allow, with random integer
    options."""
    choices = few_valued()
    missing = sorted(set(Rules.option_names()) - set(choices) - set(DRAWN))
    if missing:
        raise SystemExit(f"soak.py: no values for the rules option(s) {', '.join(missing)}")
    rng = np.random.default_rng(seed)
    out = []
    for combo in itertools.product(*choices.values()):
        named = dict(zip(choices, combo, strict=True))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RulesWarning)
                Rules(**named)
        except ValueError:  # a combination the rules refuse (free_draws without its table)
            continue
        while True:
            start = int(rng.integers(1, 11))
            options = {
                **named,
                "start_size": start,
                "target_size": int(rng.integers(0, start)),
                "num_decks": None if rng.random() < 0.5 else int(rng.integers(1, 13)),
                "max_deals": None if rng.random() < 0.5 else int(rng.integers(1, 11)),
                "max_turns": int(rng.integers(1, 300)) if rng.random() < 0.2 else 20_000,
            }
            try:
                with warnings.catch_warnings():
                    # Rounds that can get stuck (docs/rules.md) are soaked too: they end at
                    # max_turns, and the invariants hold on the way.
                    warnings.simplefilter("ignore", RulesWarning)
                    out.append(Rules(**options))
                break
            except ValueError:  # too few cards for these layouts: draw again
                continue
    return out


def soak_batched(rules_list: list[Rules], games: int, seed: int) -> dict:
    from trash_env.vector import VectorGame
    from trash_env.vector import _kernels as K
    from trash_env.vector.batch import VIOLATIONS

    total = decisions = 0
    covered = 0
    broken: list[str] = []
    rng = np.random.default_rng(seed)
    count = len(rules_list)
    for v, rules in enumerate(rules_list):
        size = games // count + (1 if v < games % count else 0)
        if size == 0:
            break
        covered += 1
        batch = VectorGame(rules, size, seed=int(rng.integers(2**63)))
        words = np.zeros((size, 6), np.uint64)
        words[:, :4] = rng.integers(0, 2**64, size=(size, 4), dtype=np.uint64)
        words[:, 3] |= np.uint64(1)  # a PCG64 increment is odd
        out = np.zeros((size, 2), np.int64)
        a = batch.arrays
        K.batch_soak(batch.games, words, out, a.cfg, a.wild, a.deck, a.totals)
        total += size
        decisions += int(out[:, 0].sum())
        for g in np.flatnonzero(out[:, 1]):
            broken.append(f"{rules}: game seed {int(batch.seeds[g])}: {VIOLATIONS[out[g, 1] - 1]}")
    return {"games": total, "decisions": decisions, "variants": covered, "violations": broken}


def soak_reference(rules_list: list[Rules], games: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    decisions = 0
    broken: list[str] = []
    for i in range(games):
        rules = rules_list[i % len(rules_list)]
        game_seed = int(rng.integers(2**63))
        game = Game(rules, seed=game_seed)
        try:
            game.check_invariants()
            while not game.done:
                legal = game.legal_actions()
                game.step(legal[int(rng.integers(len(legal)))])
                decisions += 1
                game.check_invariants()
        except (InvariantError, ValueError) as error:
            broken.append(f"{rules}: game seed {game_seed}: {error}")
    return {
        "games": games,
        "decisions": decisions,
        "variants": min(games, len(rules_list)),
        "violations": broken,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--games",
        type=int,
        default=1_000_000,
        help="games played by the batched engine (default 1,000,000)",
    )
    parser.add_argument(
        "--reference-games",
        type=int,
        default=2000,
        help="games played by the reference engine (default 2,000)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the variants and games")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)
    for flag, value in (("--games", args.games), ("--reference-games", args.reference_games)):
        if not 0 <= value <= MAX_GAMES:
            parser.error(f"{flag} must be an integer from 0 to {MAX_GAMES:,}, got {value}")
    if args.seed < 0:
        parser.error(f"--seed must be a non-negative integer, got {args.seed}")
    rules_list = variants(args.seed)
    report: dict = {
        "command": " ".join(["python", "benchmarks/soak.py", *(argv or sys.argv[1:])]),
        "variant_count": len(rules_list),
    }
    for name, play, games in (
        ("batched", soak_batched, args.games),
        ("reference", soak_reference, args.reference_games),
    ):
        start = time.perf_counter()
        figures = play(rules_list, games, args.seed + 1)
        figures["seconds"] = round(time.perf_counter() - start, 1)
        report[name] = figures
        print(
            f"{name}: {figures['games']:,} games, {figures['decisions']:,} decisions, "
            f"{figures['variants']:,} of {len(rules_list):,} variants, "
            f"{len(figures['violations'])} violations, {figures['seconds']} s",
            flush=True,
        )
        for line in figures["violations"][:10]:
            print("  " + line)
    violations = sum(len(report[name]["violations"]) for name in ("batched", "reference"))
    print(f"violations: {violations}")
    if args.json:
        from trash_env.files import atomic_write_text

        atomic_write_text(args.json, json.dumps(report, indent=2) + "\n")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
