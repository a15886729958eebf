"""Check that a speed-up changed nothing: the working tree's engine and observation encoder
against the versions of a git revision, on the same random games.

    python benchmarks/equivalence.py [--rev HEAD] [--games 400] [--seed 0]

Both versions play the same games (random rules options, seeded random legal actions); after
every step the event log, decision, player to act, legal actions, held card, piles, layouts,
results, every seat's observation and action mask and the full state encoding must be equal.
Clones and ``resample_hidden`` are exercised at one random point per game. Exits 1 on the
first difference, naming it.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from trash_env import engine as new_engine  # noqa: E402
from trash_env import observation as new_observation  # noqa: E402
from trash_env.rules import Rules  # noqa: E402


def load_revision(rev: str):
    """Import engine.py and observation.py of ``rev`` as stand-alone modules."""
    folder = Path(tempfile.mkdtemp(prefix="trash_ref_"))
    modules = []
    for name in ("engine", "observation"):
        text = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:trash_env/{name}.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        text = text.replace("from trash_env.engine import", "from trash_ref_engine import")
        path = folder / f"trash_ref_{name}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(f"trash_ref_{name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        modules.append(module)
    return modules


def random_rules(rng: np.random.Generator) -> Rules:
    n = int(rng.integers(2, 7))
    start = int(rng.choice([10, 10, 10, 5, 3, 1]))
    reveal = bool(rng.integers(2))
    options = dict(
        num_players=n,
        start_size=start,
        wilds=str(rng.choice(["jacks", "kings", "faces", "none"])),
        jokers=bool(rng.integers(2)),
        target_size=int(rng.integers(0, start)) if rng.random() < 0.3 else 0,
        max_deals=int(rng.integers(1, 6)) if rng.random() < 0.2 else None,
        first_player=str(rng.choice(["winner", "rotate"])),
        reshuffle=str(rng.choice(["keep_top", "all"])),
        losers_reveal=reveal,
        free_draws=3 if n == 2 and reveal and rng.random() < 0.6 else 0,
        call_trash=bool(rng.integers(2)),
        episode=str(rng.choice(["game", "round"])),
        max_turns=int(rng.choice([20_000, 300])),
    )
    return Rules(**options)


def snapshot(game, obs_module, full: bool = False) -> tuple:
    """Everything observable of ``game``; the event log whole if ``full``, else its length and
    last events (the whole log is compared at the end of every game)."""
    n = game.num_players
    events = game.events if full else game.events[-12:]
    obs = tuple(obs_module.encode_observation(game, p).tobytes() for p in range(n))
    masks = tuple(obs_module.action_mask(game, p).tobytes() for p in range(n))
    return (
        len(game.events),
        [tuple(e) for e in events],
        [type(e).__name__ for e in events],
        int(game.decision),
        game.current,
        game.legal_actions(),
        game.held,
        game.stock[:],
        game.discard[:],
        [r[:] for r in game.layout],
        [r[:] for r in game.state],
        game.sizes[:],
        game.rounds_won[:],
        game.done,
        game.truncated,
        game.winners,
        game.placings,
        game.returns(),
        game.turns,
        game.deal_number,
        game.round_results[:],
        game.hidden_counts(),
        [game.face_down_count(p) for p in range(n)],
        obs,
        masks,
        obs_module.encode_state(game).tobytes(),
    )


def compare(a: tuple, b: tuple, where: str) -> None:
    if a != b:
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                raise SystemExit(f"DIFFERENT at {where}, field {i}:\n  ref {x!r}\n  new {y!r}")


def play(ref_engine, ref_obs, rules: Rules, seed: int) -> int:
    rng = np.random.default_rng(seed)
    old = ref_engine.Game(rules, seed=seed)
    new = new_engine.Game(rules, seed=seed)
    compare(snapshot(old, ref_obs), snapshot(new, new_observation), f"seed {seed} deal")
    fork_at = int(rng.integers(0, 300))
    steps = 0
    while not old.done:
        legal = old.legal_actions()
        action = legal[int(rng.integers(len(legal)))]
        old.step(action)
        new.step(action)
        steps += 1
        new.check_invariants()
        compare(snapshot(old, ref_obs), snapshot(new, new_observation), f"seed {seed} step {steps}")
        if steps == fork_at:
            fork_seed = int(rng.integers(2**31))
            keep = bool(fork_seed % 2)
            old_c, new_c = old.clone(events=keep), new.clone(events=keep)
            old_c.resample_hidden(np.random.default_rng(fork_seed))
            new_c.resample_hidden(np.random.default_rng(fork_seed))
            sub = np.random.default_rng(fork_seed)
            while not old_c.done:
                legal = old_c.legal_actions()
                action = legal[int(sub.integers(len(legal)))]
                old_c.step(action)
                new_c.step(action)
                new_c.check_invariants()
            compare(
                snapshot(old_c, ref_obs, True),
                snapshot(new_c, new_observation, True),
                f"seed {seed} clone at {steps}",
            )
    compare(snapshot(old, ref_obs, True), snapshot(new, new_observation, True), f"seed {seed} end")
    return steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    ref_engine, ref_obs = load_revision(args.rev)
    rng = np.random.default_rng(args.seed)
    steps = 0
    for g in range(args.games):
        rules = Rules() if g % 4 == 0 else random_rules(rng)
        steps += play(ref_engine, ref_obs, rules, args.seed * 100_000 + g)
    print(f"identical to {args.rev}: {args.games} games, {steps} steps")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
