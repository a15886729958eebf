"""Check that a speed-up changed nothing: the working tree's engine and observation encoder
against the versions of a git revision, on the same random games.

    python benchmarks/equivalence.py [--rev HEAD] [--games 400] [--seed 0]

Both versions play the same games (random rules options, seeded random legal actions); after
every step the event log, decision, player to act, legal actions, held card, piles, layouts,
results, every seat's observation and action mask and the full state encoding must be equal.
Clones and ``resample_hidden`` are exercised at one random point per game. Exits 1 on the
first difference, naming it.

    python benchmarks/equivalence.py --tables [--rev HEAD]

compares whole games through every table instead (for changes above the engine): the AEC env
(random agents, per-step rewards and infos), the single-agent env (random, greedy, counting and
search opponents, with and without round rewards), the evaluation (reports of small
tournaments), the terminal game (scripted keystrokes: its transcript, log and replay) and
train.py's demonstrations, over rules variants with the call, free draws, reveals and round
episodes. The revision's whole tree is exported and both trees compute SHA-256 digests of
those games in fresh processes; exits 1 naming the tables that differ.
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
if "--digest-of" in sys.argv:  # a child process digesting the tables of another tree
    sys.path.insert(0, sys.argv[sys.argv.index("--digest-of") + 1])
elif str(ROOT) not in sys.path:
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


# ---------------------------------------------------------------------- --tables

TABLE_VARIANTS = [
    {},
    {"call_trash": True},
    {"num_players": 3, "call_trash": True, "wilds": "kings"},
    {"num_players": 2, "losers_reveal": True, "free_draws": 3, "call_trash": True},
    {"num_players": 4, "start_size": 5, "episode": "round"},
    {"num_players": 2, "start_size": 1, "call_trash": True},
    {"num_players": 3, "max_turns": 300},
]


def _digest(value: object) -> str:
    import hashlib

    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def table_digests() -> dict[str, str]:
    """Digests of whole games through every table, with the trash_env and agents first on
    sys.path (written against the public API of both the old and the new layout)."""
    import io
    import json
    import tempfile

    import agents  # noqa: F401  (registers the bots in either layout)
    from agents.evaluation import evaluate
    from trash_env.env import raw_env
    from trash_env.solo import TrashSoloEnv

    try:
        from agents.play import game as terminal
    except ImportError:  # before the terminal game moved to agents/
        terminal = importlib.import_module("trash_env.play")
    out: dict[str, str] = {}
    record = []
    for vi, opts in enumerate(TABLE_VARIANTS):
        for round_rewards in (False, True):
            env = raw_env(round_rewards=round_rewards, **opts)
            rng = np.random.default_rng(vi)
            for g in range(4):
                env.reset(seed=vi * 100 + g)
                trace = []
                for agent in env.agent_iter(100_000):
                    obs, r, term, trunc, info = env.last()
                    trace.append(
                        (
                            agent,
                            r,
                            term,
                            trunc,
                            info["placing"],
                            info["rounds_won"],
                            info["truncated"],
                            tuple(info["winners"]),
                        )
                    )
                    action = None
                    if not (term or trunc):
                        legal = np.flatnonzero(obs["action_mask"])
                        action = int(legal[rng.integers(len(legal))])
                    env.step(action)
                trace.append([tuple(e) for e in env.game.events])
                record.append(_digest(trace))
    out["aec"] = _digest(record)
    record = []
    for vi, opts in enumerate(TABLE_VARIANTS):
        for round_rewards in (False, True):
            for pool in (["random"], ["greedy", "counting"], ["search:rollouts=4"]):
                env = TrashSoloEnv(opponents=pool, round_rewards=round_rewards, **opts)
                env.reset(seed=vi)
                rng = np.random.default_rng(vi)
                trace = []
                for _ in range(3):
                    done = False
                    while not done:
                        legal = np.flatnonzero(env.action_masks())
                        obs, r, term, trunc, info = env.step(int(legal[rng.integers(len(legal))]))
                        done = term or trunc
                        trace.append(
                            (
                                obs.tobytes(),
                                r,
                                term,
                                trunc,
                                tuple((k, repr(v)) for k, v in info.items()),
                            )
                        )
                    trace.append([tuple(e) for e in env.game.events])
                    env.reset()
                record.append(_digest(trace))
    out["solo"] = _digest(record)
    record = []
    for vi, opts in enumerate(TABLE_VARIANTS[:5]):
        rules = Rules(**opts)
        specs = ["random", "greedy", "counting", "search:rollouts=4"][
            : max(2, min(rules.num_players, 3))
        ]
        try:
            report = evaluate(specs, rules, games=12, seed=vi, keep_results=True)
        except TypeError:  # the layout before results were streamed kept them always
            report = evaluate(specs, rules, games=12, seed=vi)
        record += [
            _digest(report.results),
            _digest(json.dumps(report.to_json(), sort_keys=True, default=str)),
        ]
    out["evaluate"] = _digest(record)
    keys = ["s", "d", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "n", "trash", "", "t", "x"]
    texts, logs, replays = [], [], []
    for vi, opts in enumerate([{}, {"call_trash": True}, {"num_players": 3, "call_trash": True}]):
        rng = np.random.default_rng(vi)
        lines = "\n".join(keys[int(i)] for i in rng.integers(len(keys), size=20_000)) + "\n"
        flags = ["--seed", str(vi), "--opponents", "greedy" if vi != 2 else "counting"]
        flags += ["--call-trash"] if opts.get("call_trash") else []
        flags += ["--players", "3"] if opts.get("num_players") else []
        with tempfile.TemporaryDirectory() as folder:
            screen = io.StringIO()
            log_path = folder + "/log.json"
            code = terminal.main(
                [*flags, "--log", log_path], stdin=io.StringIO(lines), stdout=screen
            )
            # the last line names the log's path, which differs from run to run
            texts.append((code, _digest(screen.getvalue().rsplit("Game log written", 1)[0])))
            with open(log_path, encoding="utf-8") as file:
                log = json.load(file)
            log.pop("written")
            logs.append(_digest(json.dumps(log, sort_keys=True)))
            shown = io.StringIO()
            terminal.main(["--replay", log_path, "--no-pause"], stdout=shown)
            replays.append(_digest(shown.getvalue().split("\n", 1)[1]))  # after the date line
    out["play_text"], out["play_log"], out["replay_text"] = map(_digest, (texts, logs, replays))
    try:
        from agents.training.imitation import collect_demonstrations
    except ImportError:  # before training became the agents.training package
        from train import collect_demonstrations
    record = []
    for round_rewards in (False, True):
        demos = collect_demonstrations(
            "greedy",
            300,
            ["counting"],
            3,
            {"call_trash": True},
            round_rewards=round_rewards,
            gamma=0.99,
        )
        record.append(_digest([x.tobytes() for x in demos]))
    out["demos"] = _digest(record)
    return out


def compare_tables(rev: str) -> int:
    """Export ``rev``'s tree, digest the tables of both trees in fresh processes, compare."""
    import json
    import os

    folder = Path(tempfile.mkdtemp(prefix="trash_ref_tree_"))
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    digests = []
    for tree in (folder, ROOT):
        env = dict(os.environ, PYTHONPATH=str(tree))
        child = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--digest-of", str(tree)],
            capture_output=True,
            text=True,
            cwd=tree,
            env=env,
            check=False,
        )
        if child.returncode:
            raise SystemExit(f"digesting {tree} failed:\n{child.stderr[-3000:]}")
        digests.append(json.loads(child.stdout))
    old, new = digests
    different = [name for name in old if old[name] != new.get(name)]
    if different:
        raise SystemExit(f"DIFFERENT from {rev}: {', '.join(different)}")
    print(f"tables identical to {rev}: {', '.join(old)}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--tables",
        action="store_true",
        help="compare whole games through every table (see the docstring)",
    )
    parser.add_argument("--digest-of", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.digest_of is not None:
        import json

        print(json.dumps(table_digests()))
        return 0
    if args.tables:
        return compare_tables(args.rev)
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
