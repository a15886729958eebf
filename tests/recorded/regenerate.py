"""Write the recorded games of tests/recorded/ again: ``python tests/recorded/regenerate.py``.

Each recorded game is one small JSON file: the rules, the seed, and for every decision the
player to act, the decision, the action played and digests of what that player observes; then
every engine event and the result. tests/test_recorded.py replays the files on the reference
engine, the PettingZoo env, the batched engine and the OpenSpiel game and compares everything,
so a change of seeding, event names or observation layout fails CI instead of silently breaking
every published seed and saved log. Run this only when such a change is intended, and say so
in the commit (docs/development.md).

Seeding, one seed ``s`` per file, as each adapter documents it: the game seed is
``numpy.random.default_rng(s).integers(2**63)``, which is what ``env.reset(seed=s)``,
``VectorGame(rules, 1, seed=s)`` and ``pyspiel.load_game("python_trash", {"rng_seed": s, ...})``
each deal from. The games are played by seeded random legal actions (always calling "Trash!",
as the envs do), from the engine alone.

The JAX engine deals from a key, not a seed: the games of ``tests/recorded/jax/`` are dealt by
``jax.random.PRNGKey(s)`` (the reference game plays them on that key's chain:
``trash_env.jax_env.reference.reference_game``), and tests/test_recorded.py replays them on
the JAX env, ``make(**rules).init(PRNGKey(s))``. Writing them needs jax (the ``jax`` extra).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from trash_env.engine import CALL_TRASH, Decision, Game
from trash_env.files import atomic_write_text
from trash_env.observation import action_mask, encode_observation
from trash_env.pairs import add_pairs
from trash_env.rules import Rules

FORMAT = "trash_env.recorded/1"
FOLDER = Path(__file__).resolve().parent
DIGEST_CHARS = 16  # of sha256's 64 hex digits: 64 bits, plenty to tell two observations apart

# (file name, the variant family it covers, Rules options, seed): every rules family the rule
# book has (docs/rules.md), 2 to 6 players, several start sizes and deck counts. Short games:
# small layouts, or one deal (``episode="round"``).
GAMES: tuple[tuple[str, str, dict[str, Any], int], ...] = (
    ("standard_2p_deal", "standard rules, one deal of 10", {"episode": "round"}, 92),
    ("standard_2p_game", "a whole game from layouts of 3", {"start_size": 3}, 141),
    (
        "kings_3p",
        "Kings wild (Jacks and Queens end the turn)",
        {"num_players": 3, "wilds": "kings", "start_size": 4},
        123,
    ),
    (
        "faces_jokers_4p",
        "J, Q, K and jokers wild",
        {"num_players": 4, "wilds": "faces", "jokers": True, "start_size": 4, "episode": "round"},
        265,
    ),
    (
        "no_wilds_reshuffle_all_2p",
        "no wilds, the whole discard pile reshuffled",
        {"wilds": "none", "reshuffle": "all", "num_decks": 1, "start_size": 6, "episode": "round"},
        229,
    ),
    (
        "no_wilds_keep_top_3p",
        "no wilds, one deck, reshuffles keeping the discard top",
        {"num_players": 3, "wilds": "none", "num_decks": 1, "start_size": 5, "episode": "round"},
        89,
    ),
    (
        "call_trash_3p",
        '"Trash!" called before the last slot',
        {"num_players": 3, "call_trash": True, "start_size": 2},
        115,
    ),
    (
        "free_draws_2p",
        "the loser's three free turns, then the reveal",
        {"losers_reveal": True, "free_draws": 3, "start_size": 4},
        295,
    ),
    (
        "losers_reveal_5p",
        "losers turn up their cards and may shrink too, three decks",
        {"num_players": 5, "losers_reveal": True, "start_size": 3, "num_decks": 3},
        294,
    ),
    (
        "six_players_2_decks",
        "six players from two decks, the first player rotating",
        {"num_players": 6, "num_decks": 2, "start_size": 2, "first_player": "rotate"},
        166,
    ),
    (
        "target_max_deals_4p",
        "target size 2, at most 3 deals",
        {"num_players": 4, "start_size": 5, "target_size": 2, "max_deals": 3},
        87,
    ),
    ("truncated_3p", "cut off at the turn limit", {"num_players": 3, "max_turns": 40}, 1),
)
# The JAX engine's recorded games (tests/recorded/jax/), dealt from ``jax.random.PRNGKey(seed)``:
# 2-player games of one deck, so that the replay compiles the JAX env once.
JAX_FOLDER = FOLDER / "jax"
JAX_GAMES: tuple[tuple[str, str, dict[str, Any], int], ...] = (
    ("standard_2p_deal", "standard rules, one deal of 10", {"episode": "round", "num_decks": 1}, 0),
    (
        "call_trash_2p",
        '"Trash!" called before the last slot, a whole game from layouts of 3',
        {"call_trash": True, "start_size": 3, "num_decks": 1},
        0,
    ),
    (
        "free_draws_2p",
        "the loser's three free turns, then the reveal",
        {"losers_reveal": True, "free_draws": 3, "start_size": 4, "num_decks": 1},
        0,
    ),
    (
        "no_wilds_reshuffle_all_2p",
        "no wilds, the whole discard pile reshuffled",
        {"wilds": "none", "reshuffle": "all", "num_decks": 1, "start_size": 6, "episode": "round"},
        229,
    ),
)
# What each file must show, so that it covers its family (event kinds, or the result).
MUST_SHOW = {
    "no_wilds_reshuffle_all_2p": ("reshuffle",),
    "no_wilds_keep_top_3p": ("reshuffle",),
    "call_trash_3p": ("call",),
    "free_draws_2p": ("free_draws", "reveal"),
    "losers_reveal_5p": ("reveal",),
    "truncated_3p": ("truncated",),
    "kings_3p": ("wild", "swap"),
    "faces_jokers_4p": ("wild",),
    "call_trash_2p": ("call",),
}


def game_seed(seed: int) -> int:
    """The engine seed every adapter deals from for ``seed`` (see the module docstring)."""
    return int(np.random.default_rng(seed).integers(2**63))


def digest(vector: np.ndarray, mask: np.ndarray) -> str:
    """The first DIGEST_CHARS hex digits of sha256 over the float32 observation's bytes and the
    int8 action mask's bytes."""
    data = np.asarray(vector, np.float32).tobytes() + np.asarray(mask, np.int8).tobytes()
    return hashlib.sha256(data).hexdigest()[:DIGEST_CHARS]


def observed(game: Game, player: int) -> list[str]:
    """The digests of what ``player`` observes now: the plain observation and the pairs one."""
    plain = encode_observation(game, player)
    mask = action_mask(game, player)
    return [digest(plain, mask), digest(add_pairs(plain, game.num_players), mask)]


def result(game: Game) -> dict[str, Any]:
    return {
        "done": game.done,
        "truncated": game.truncated,
        "winners": list(game.winners),
        "placings": None if game.placings is None else list(game.placings),
        "rounds_won": list(game.rounds_won),
        "returns": game.returns(),
        "deals": game.deal_number,
        "turns": game.turns,
    }


def record(
    name: str, about: str, options: dict[str, Any], seed: int, by_key: bool = False
) -> dict[str, Any]:
    """Play the game of ``seed`` under ``options`` by seeded random legal actions (calling
    "Trash!" always) and record it; ``by_key``: the JAX engine's game of
    ``jax.random.PRNGKey(seed)``."""
    rules = Rules(**options)
    if by_key:
        import jax

        from trash_env.jax_env.reference import reference_game

        game = reference_game(rules, jax.random.PRNGKey(seed))
    else:
        game = Game(rules, seed=game_seed(seed))
    policy = np.random.default_rng([seed, 1])
    decisions = []
    while not game.done:
        legal = game.legal_actions()
        if game.decision is Decision.CALL:
            action = CALL_TRASH
        else:
            action = int(legal[policy.integers(len(legal))])
        player = game.current
        decisions.append([player, int(game.decision), action, *observed(game, player)])
        game.step(action)
    kinds = {event.kind for event in game.events}
    missing = [kind for kind in MUST_SHOW.get(name, ()) if kind not in kinds]
    if missing:
        raise SystemExit(f"{name}: seed {seed} shows no {', '.join(missing)}: pick another seed")
    return {
        "format": FORMAT,
        "about": about,
        "rules": rules.to_dict(),
        "seed": seed,
        **({"key": f"jax.random.PRNGKey({seed})"} if by_key else {"game_seed": game_seed(seed)}),
        "decisions": decisions,
        "events": [list(event) for event in game.events],
        "final": [observed(game, p) for p in range(game.num_players)],
        "result": result(game),
    }


def dumps(data: dict[str, Any]) -> str:
    """JSON with one decision or event a line (small diffs when a change is intended)."""
    parts = []
    for key, value in data.items():
        if isinstance(value, list) and value and isinstance(value[0], list):
            rows = ",\n  ".join(json.dumps(row) for row in value)
            parts.append(f' "{key}": [\n  {rows}\n ]')
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tests/recorded/regenerate.py",
        description="Write the recorded games of tests/recorded/ again (only when a change of "
        "seeding, events or observations is intended).",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; list the files that would change and exit 1 if any would",
    )
    args = parser.parse_args(argv)
    changed = []
    games = [(FOLDER, game, False) for game in GAMES]
    games += [(JAX_FOLDER, game, True) for game in JAX_GAMES]
    for folder, (name, about, options, seed), by_key in games:
        path = folder / f"{name}.json"
        text = dumps(record(name, about, options, seed, by_key))
        if path.exists() and path.read_text() == text:
            continue
        changed.append(path.relative_to(FOLDER).as_posix())
        if not args.check:
            atomic_write_text(path, text)
    verb = "would change" if args.check else "written"
    print(f"{len(changed)} of {len(games)} recorded games {verb}: {' '.join(changed) or '-'}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
