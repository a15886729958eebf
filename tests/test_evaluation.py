"""The evaluation library and evaluate.py: line-ups, duplicate deals, the figures, intervals,
workers (a dead worker or a script without a __main__ guard is an error, not a hang), outputs
(checked before the first game, written atomically) and errors."""

from __future__ import annotations

import contextlib
import csv
import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import start_interruptible

from agents.bots.base import Agent
from agents.evaluation import (
    GameResult,
    cli,
    deal_seed,
    evaluate,
    lineups,
    play_game,
    seat_orders,
    wilson_interval,
)
from trash_env.engine import Game
from trash_env.rules import Rules

ROUND = Rules(episode="round")


def test_lineups_cover_every_multiset_or_combination():
    assert lineups(["a", "b"], 2) == [("a", "b")]
    assert lineups(["a", "b"], 4) == [
        ("a", "a", "a", "b"),
        ("a", "a", "b", "b"),
        ("a", "b", "b", "b"),
    ]
    ups = lineups(["a", "b", "c"], 4)
    assert len(ups) == 3 and all(set(u) == {"a", "b", "c"} and len(u) == 4 for u in ups)
    assert lineups(["a", "b", "c"], 2) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert lineups(["a"], 3) == [("a", "a", "a")]
    with pytest.raises(ValueError, match="each spec once"):
        lineups(["a", "a"], 2)
    with pytest.raises(ValueError, match="at least one agent spec"):
        lineups([], 2)


def test_seat_orders_rotate_or_permute():
    assert seat_orders(("a", "b", "c")) == [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]
    perms = seat_orders(("a", "b", "c"), "permutations")
    assert len(perms) == 6 and len(set(perms)) == 6
    assert len(seat_orders(("a", "a", "b"), "permutations")) == 3
    # Rotations put every spec at every seat as often as it has copies.
    for seat in range(4):
        column = [order[seat] for order in seat_orders(("a", "a", "a", "b"))]
        assert column.count("b") == 1
    with pytest.raises(ValueError, match="seatings must be one of rotations, permutations"):
        seat_orders(("a", "b"), "shuffled")


def test_deal_seed_depends_on_master_seed_and_deal_only():
    assert deal_seed(0, 5, 4) == deal_seed(0, 5, 4)
    assert deal_seed(0, 5, 4) != deal_seed(0, 6, 4) != deal_seed(1, 5, 4)
    assert 0 <= deal_seed(3, 2, 4)[1] < 4


def test_games_of_a_deal_start_from_the_same_cards():
    rules = Rules(num_players=3)
    seed, first = deal_seed(7, 0, 3)
    games = [Game(rules, seed=seed, first_player=first) for _ in range(3)]
    starts = [(g.layout, g.stock, g.discard, g.current) for g in games]
    assert starts[0] == starts[1] == starts[2]


def test_an_agent_against_a_copy_of_itself_scores_exactly_par_on_duplicate_deals():
    # Without wilds, counting plays exactly like greedy: the two seatings of each deal are the
    # same game with the seats swapped, so duplicate deals cancel all luck.
    report = evaluate(["greedy", "counting"], Rules(wilds="none", episode="round"), deals=100)
    assert report.agents["greedy"]["wins"] == report.agents["counting"]["wins"] == 100
    assert report.head_to_head("greedy", "counting")["rate"] == 0.5


def test_interval_covers_the_true_rate_of_random_against_random():
    # "random" and "random:" are the same bot with other seeds: the true rate is 1/2.
    report = evaluate(["random", "random:"], ROUND, deals=300, seed=4)
    low, high = report.agents["random"]["ci95"]
    assert low < 0.5 < high
    low, high = report.head_to_head("random", "random:")["ci95"]
    assert low < 0.5 < high


def test_wilson_interval_has_its_coverage():
    rng = np.random.default_rng(0)
    for p, n in ((0.5, 200), (0.1, 100), (0.8, 50)):
        wins = rng.binomial(n, p, size=4000)
        cover = np.mean([lo <= p <= hi for lo, hi in (wilson_interval(w, n) for w in wins)])
        assert 0.93 < cover < 0.97, (p, n, cover)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(10, 10)
    assert high == 1.0 and 0.6 < low < 0.75


def test_report_figures_add_up():
    report = evaluate(
        ["greedy", "random", "counting"], Rules(num_players=4, episode="round"), games=40, seed=2
    )
    # 3 line-ups (one spec doubled each) x 4 rotations = 12 games per deal; 40 -> 4 deals.
    assert report.deals == 4 and report.games == 48
    data = report.to_json()
    assert data["games_per_deal"] == 12 and data["deals"] == 4 and data["par"] == 0.25
    seats = sum(a["games"] for a in data["agents"].values())
    assert seats == 4 * 48
    wins = sum(a["wins"] for a in data["agents"].values())
    assert wins == pytest.approx(48 - data["summary"]["truncated"])
    for spec, a in data["agents"].items():
        assert a["win_rate"] == pytest.approx(a["wins"] / a["games"])
        assert a["ci95"][0] <= a["win_rate"] <= a["ci95"][1]
        assert 1 <= a["mean_placing"] <= 4
        assert set(a["rating"]) == {"mu", "sigma", "conservative", "ci95", "rank", "tied"}, spec
    for name, pair in data["pairs"].items():
        back = data["pairs"][f"{pair['opponent']} vs {pair['agent']}"]
        assert pair["rate"] + back["rate"] == pytest.approx(1.0), name
        assert pair["comparisons"] == back["comparisons"]
    assert sum(s["games"] for s in data["seats"]) == 4 * 48
    assert data["summary"]["mean_rounds"] == 1.0 and data["summary"]["mean_turns"] > 4
    assert data["agents"]["greedy"]["rating"]["mu"] > data["agents"]["random"]["rating"]["mu"]
    json.dumps(data)  # plain JSON


def test_workers_do_not_change_the_numbers():
    args = (["greedy", "random", "counting"], Rules(num_players=3, episode="round"))
    one = evaluate(*args, deals=12, seed=9, workers=1, engine="reference").to_json()
    two = evaluate(*args, deals=12, seed=9, workers=2, chunk=2, engine="reference").to_json()
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    other = evaluate(*args, deals=12, seed=10, workers=1).to_json()
    assert other["agents"] != one["agents"]


def test_whole_games_and_progress():
    seen = []
    report = evaluate(["greedy", "random"], Rules(), games=6, seed=1, progress=seen.append, chunk=1)
    assert report.games == 6 and seen == [2, 4, 6]
    assert report.summary["mean_rounds"] > 5  # whole games: many deals each
    assert report.head_to_head("greedy", "random")["rate"] > 0.5


class Illegal(Agent):
    name = "illegal"

    def act(self, observation, mask, view) -> int:
        return int(np.flatnonzero(mask == 0)[0])


def test_an_illegal_action_is_an_error_naming_the_agent():
    # Seat 0's first draw is forced (empty discard pile): seat 1 decides first.
    message = "agent 'illegal' at seat 1 chose illegal action 0 at a DRAW"
    with pytest.raises(ValueError, match=message):
        play_game(ROUND, [Illegal(), Illegal()], seed=0, first_player=0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(agent_specs=["greedy", "nope"]), "unknown agent 'nope'"),
        (dict(agent_specs=["greedy", "greedy"]), "each spec once"),
        (dict(agent_specs=["greedy"], games=0), "games must be an integer from 1 to 10,000,000"),
        (dict(agent_specs=["greedy"], games=10**12), "games must be an integer from 1 to"),
        (dict(agent_specs=["greedy"], deals=10**9), "at most 5,000,000 deals"),
        (dict(agent_specs=["greedy"], workers=0), "workers must be an integer from 1 to 256"),
        (dict(agent_specs=["greedy"], rules={"num_players": 2}), "rules must be a"),
        (dict(agent_specs=["greedy"], seed=-1), "seed must be an integer 0 or more"),
        (dict(agent_specs=["greedy"], deals=0), "deals must be an integer 1 or more"),
        (dict(agent_specs=["greedy"], seatings="all"), "seatings must be one of"),
        (dict(agent_specs=["greedy", "human"]), "'human' cannot sit in a tournament"),
    ],
)
def test_evaluate_errors_are_clear(kwargs, message):
    with pytest.raises(ValueError, match=message):
        evaluate(**kwargs)


def test_cli_writes_json_csv_png(tmp_path, capsys):
    out = tmp_path / "r"
    code = cli.main(
        [
            "--agents",
            "greedy",
            "random",
            "--games",
            "8",
            "--episode",
            "round",
            "--wilds",
            "kings",
            "--jokers",
            "--seed",
            "3",
            "--no-progress",
            "--json",
            f"{out}.json",
            "--csv",
            f"{out}.csv",
            "--png",
            f"{out}.png",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "4 deals x 2 games per deal = 8 games" in text and "greedy" in text
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["rules"]["wilds"] == "kings" and data["rules"]["jokers"] is True
    assert data["games"] == 8 and data["seed"] == 3
    for spec in ("greedy", "random"):
        assert {"games", "wins", "win_rate", "ci95"} <= set(data["agents"][spec])
        assert len(data["agents"][spec]["ci95"]) == 2
    rows = list(csv.DictReader(open(tmp_path / "r.csv")))
    assert [r["kind"] for r in rows] == ["agent", "agent", "pair", "pair"]
    assert float(rows[0]["rate"]) == pytest.approx(data["agents"]["greedy"]["win_rate"])
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agents", "greedy", "bogus:x=1"], "unknown agent 'bogus'"),
        (["--agents", "search:rollouts=x"], "option rollouts must be int"),
        (["--agents", "greedy", "--players", "9"], "num_players must be an integer from 2 to 6"),
        (["--agents", "greedy", "--free-draws", "3"], "free_draws=3 needs num_players=2"),
    ],
)
def test_cli_errors_exit_2_with_the_reason(argv, message, capsys):
    assert cli.main([*argv, "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_permutation_seatings_play_every_seat_order():
    report = evaluate(
        ["greedy", "counting", "random"],
        Rules(num_players=3, episode="round"),
        deals=2,
        seatings="permutations",
        keep_results=True,
    )
    assert report.games == 12 and report.to_json()["games_per_deal"] == 6
    orders = {res.seats for res in report.results if res.deal == 0}
    assert len(orders) == 6
    assert all(a["games"] == 12 for a in report.agents.values())


def test_truncated_games_count_as_games_without_wins():
    report = evaluate(["greedy", "random"], Rules(max_turns=5), deals=3)
    assert report.summary["truncated"] == report.games == 6
    assert all(a["wins"] == 0 and a["mean_placing"] is None for a in report.agents.values())
    assert report.head_to_head("greedy", "random")["rate"] == 0.5
    assert "truncated 6" in report.table()


class _Recorder(Agent):
    """Plays the first legal action and records the observations it was given."""

    def __init__(self, uses_observation: bool) -> None:
        super().__init__(seed=0)
        self.uses_observation = uses_observation
        self.seen: list = []

    def act(self, observation, action_mask, view):
        self.seen.append(observation)
        return int(np.flatnonzero(action_mask)[0])


def test_agents_that_do_not_use_observations_get_none_and_others_get_theirs():
    from trash_env.observation import observation_size

    reader, skipper = _Recorder(True), _Recorder(False)
    play_game(Rules(start_size=3), [reader, skipper], seed=5)
    assert reader.seen and skipper.seen
    assert all(o is None for o in skipper.seen)
    assert all(o.shape == (observation_size(2),) for o in reader.seen)
    # The built-in bots that decide from the view alone skip the encoding.
    from agents.bots.base import make_agent

    assert not any(make_agent(s).uses_observation for s in ("random", "greedy", "search"))


def test_two_player_trueskill_update_is_the_librarys():
    """The closed form used for 1-vs-1 games gives trueskill's own rate() numbers."""
    import trueskill

    from agents.evaluation.scoring import rate_two

    env = trueskill.TrueSkill(draw_probability=0.05)
    margin = trueskill.calc_draw_margin(env.draw_probability, 2, env)
    rng = np.random.default_rng(0)
    checked = set()
    for i in range(600):
        a = env.create_rating(rng.uniform(0, 50), rng.uniform(0.5, 9))
        b = env.create_rating(rng.uniform(0, 50), rng.uniform(0.5, 9))
        placings = [(1, 2), (2, 1), (1, 1)][i % 3]
        expected = env.rate([(a,), (b,)], ranks=[p - 1 for p in placings])
        got = rate_two(env, margin, a, b, placings)
        for (want,), (have,) in zip(expected, got, strict=True):
            assert have.mu == pytest.approx(want.mu, abs=1e-9)
            assert have.sigma == pytest.approx(want.sigma, abs=1e-9)
        checked.add(placings)
    assert len(checked) == 3


# ---------------------------------------------------------------------------- dead workers

ROOT = Path(__file__).resolve().parents[1]


def _run_script(tmp_path: Path, body: str, timeout: float = 90) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    try:
        return subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=timeout, cwd=ROOT
        )
    except subprocess.TimeoutExpired:  # the old multiprocessing.Pool respawned forever
        pytest.fail(f"the script hung for {timeout} s instead of failing")


@pytest.mark.slow
def test_evaluate_from_a_script_without_main_guard_fails_clearly_instead_of_hanging(tmp_path):
    result = _run_script(
        tmp_path,
        """
        from agents.evaluation import evaluate
        evaluate(["random", "greedy"], deals=4, workers=2, engine="reference")
        print("finished")
    """,
    )
    assert result.returncode != 0 and "finished" not in result.stdout
    assert "a worker process died" in result.stderr
    assert 'if __name__ == "__main__":' in result.stderr


@pytest.mark.slow
def test_a_worker_that_crashes_ends_the_evaluation_with_a_clear_error(tmp_path):
    result = _run_script(
        tmp_path,
        """
        import os
        from agents.bots.base import Agent, register_agent
        from agents.evaluation import evaluate

        class Crash(Agent):
            name = "crash"
            def act(self, observation, action_mask, view):
                os._exit(7)  # a worker dying without an exception (segfault, OOM kill)

        register_agent("crash", Crash)  # the workers re-import this script and see it too

        if __name__ == "__main__":
            try:
                evaluate(["crash", "random"], deals=8, workers=2)
            except RuntimeError as error:
                print("RuntimeError:", error)
    """,
    )
    assert result.returncode == 0, result.stderr
    assert "RuntimeError: evaluate(): a worker process died" in result.stdout


# ---------------------------------------------------------------------------- checks first


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--png", "{tmp}/plot.jpg"], "--png must end in .png"),
        (["--png", "{tmp}/folder.png"], "is a directory"),
        (["--json", "{tmp}"], "--json: "),
        (["--csv", "{tmp}/file.txt/x.csv"], "is not a directory"),
        (["--json", "{tmp}/ro/r.json"], "not writable"),
        (["--json", "{tmp}/same", "--csv", "{tmp}/same"], "different files"),
        (["--games", "100000000"], "--games must be an integer from 1 to 10,000,000"),
        (["--deals", "100000000"], "--deals must be an integer from 1 to 10,000,000"),
        (["--workers", "0"], "--workers must be an integer from 1 to 256"),
        (["--workers", "1000"], "--workers must be an integer from 1 to 256"),
    ],
)
def test_cli_checks_outputs_and_bounds_before_playing(argv, message, tmp_path, capsys, monkeypatch):
    import os

    (tmp_path / "file.txt").write_text("a file")
    (tmp_path / "ro").mkdir()
    (tmp_path / "folder.png").mkdir()
    os.chmod(tmp_path / "ro", 0o500)
    if os.access(tmp_path / "ro", os.W_OK) and "ro/" in " ".join(argv):
        pytest.skip("running as a user who may write anywhere")

    def no_games(*args, **kwargs):
        raise AssertionError("evaluate() ran before the options were checked")

    monkeypatch.setattr(cli, "evaluate", no_games)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert cli.main(["--agents", "greedy", "random", "--no-progress", *argv]) == 2
    assert message in capsys.readouterr().err


def test_report_names_from_paths_are_printed_without_control_characters(tmp_path):
    import shutil

    from agents.policies.policy import PRETRAINED

    name = tmp_path / "evil\x1b[2J\x07.safetensors"
    shutil.copy(PRETRAINED, name)
    report = evaluate([str(name), "random"], Rules(episode="round"), deals=1)
    table = report.table()
    assert "\x1b" not in table and "\x07" not in table
    assert "evil\\x1b[2J\\x07.safetensors" in table


def test_outputs_go_into_directories_that_do_not_exist_yet(tmp_path):
    out = tmp_path / "new" / "dir"
    assert (
        cli.main(
            [
                "--agents",
                "greedy",
                "random",
                "--games",
                "2",
                "--episode",
                "round",
                "--no-progress",
                "--quiet",
                "--json",
                f"{out}/r.json",
                "--csv",
                f"{out}/r.csv",
                "--png",
                f"{out}/r.png",
            ]
        )
        == 0
    )
    assert sorted(p.name for p in out.iterdir()) == ["r.csv", "r.json", "r.png"]


def test_outputs_are_written_atomically(tmp_path, monkeypatch):
    import os

    report = evaluate(["greedy", "random"], ROUND, deals=2)
    target = tmp_path / "r.json"
    target.write_text("previous")

    def failing_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="No space"):
        report.write_json(target)
    assert target.read_text() == "previous"  # the old file is whole
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temp file left


# ---------------------------------------------------------------------------- interrupting


def _session(sid: int) -> list[str]:
    """The live processes of session ``sid`` (the evaluation, its workers and the resource
    tracker), read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # it ended meanwhile
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(command)
    return found


def _wait(condition, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout  # a bound on a hang, not how long a step takes
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _start_evaluation() -> subprocess.Popen:
    """evaluate.py with 2 workers, long enough never to finish, in its own session."""
    process = start_interruptible(
        [
            sys.executable,
            "evaluate.py",
            "--agents",
            "greedy",
            "random",
            "--games",
            "2000000",
            "--workers",
            "2",
            "--engine",
            "reference",
            "--no-progress",
            "--quiet",
        ],
        ROOT,
        stdout=subprocess.PIPE,
    )
    # The parent, the resource tracker and both workers exist.
    _wait(lambda: len(_session(process.pid)) >= 4, "the workers to start")
    return process


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL", "Ctrl-C"])
def test_an_interrupted_or_killed_evaluation_leaves_no_process_and_says_one_line(how):
    process = _start_evaluation()
    try:
        if how == "Ctrl-C":  # a terminal sends SIGINT to the whole foreground group
            os.killpg(process.pid, signal.SIGINT)
        else:
            os.kill(process.pid, getattr(signal, how))
        _, err = process.communicate(timeout=120)
        _wait(lambda: not _session(process.pid), "every worker process to end", 60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    if how == "SIGKILL":  # nothing to say: the workers notice their parent is gone
        assert process.returncode == -signal.SIGKILL
        return
    expected = {
        "SIGTERM": (143, "python evaluate.py: terminated"),
        "Ctrl-C": (130, "python evaluate.py: interrupted"),
    }[how]
    assert (process.returncode, err.strip()) == expected, err


# A user's run of evaluate.py whose first worker gets the signal at the worst moment: started,
# its start-up data not yet written (the Ctrl-C goes to the whole group, as a terminal's does).
# The race is made certain by wrapping multiprocessing's spawn; run as a script, so workers
# re-import it under their own __name__ and skip main().
_SIGNAL_WHILE_SPAWNING = """
import os, signal, sys
import multiprocessing.util

def main(how):
    spawn = multiprocessing.util.spawnv_passfds
    sent = []

    def spawn_then_signal(path, args, passfds):
        pid = spawn(path, args, passfds)
        if not sent and any("spawn_main" in os.fsdecode(a) for a in args):  # not the tracker
            sent.append(how)
            if how == "Ctrl-C":
                os.killpg(0, signal.SIGINT)
            else:
                os.kill(os.getpid(), signal.SIGTERM)
        return pid

    multiprocessing.util.spawnv_passfds = spawn_then_signal
    from agents.evaluation.cli import main as evaluate
    return evaluate(sys.argv[2:])

if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C"])
def test_a_signal_while_a_worker_is_spawning_says_one_line_and_no_traceback(how, tmp_path):
    """Before the fix the half-started worker printed multiprocessing's ``EOFError`` traceback
    (SIGTERM), or the Ctrl-C was lost and the evaluation ran on."""
    script = tmp_path / "evaluate_signalled.py"
    script.write_text(_SIGNAL_WHILE_SPAWNING)
    process = start_interruptible(
        [
            sys.executable,
            str(script),
            how,
            *"--agents greedy random --games 2000000".split(),
            *"--workers 2 --engine reference --no-progress --quiet".split(),
        ],
        ROOT,
    )
    try:
        try:  # a bound on a hang: it ends within seconds of the signal
            _, err = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{how} while a worker was spawning was lost: the evaluation ran on")
        _wait(lambda: not _session(process.pid), "every worker process to end", 60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    expected = {
        "SIGTERM": (143, "python evaluate.py: terminated"),
        "Ctrl-C": (130, "python evaluate.py: interrupted"),
    }[how]
    assert (process.returncode, err.strip()) == expected, err


@pytest.mark.slow
def test_results_stream_into_the_statistics_instead_of_piling_up():
    """Memory flat in the number of games: the GameResults alive at any moment are those of
    the chunks in flight, however many games are done."""
    alive = []

    def count(done: int) -> None:
        alive.append(sum(type(o) is GameResult for o in gc.get_objects()))

    for workers in (1, 2):
        alive.clear()
        report = evaluate(
            ["random", "random:"],
            Rules(episode="round", start_size=2),
            deals=300,
            chunk=5,
            workers=workers,
            progress=count,
        )
        assert report.games == 600 and report.results is None
        assert len(alive) == 60
        # At most the chunks in flight: 2 per worker, plus the one being counted.
        assert max(alive) <= (2 * workers + 1) * 5 * 2, alive
    kept = evaluate(
        ["random", "random:"], Rules(episode="round", start_size=2), deals=30, keep_results=True
    )
    assert len(kept.results) == kept.games == 60
    assert (
        kept.to_json()
        == evaluate(
            ["random", "random:"],
            Rules(episode="round", start_size=2),
            deals=30,
            workers=2,
            chunk=3,
        ).to_json()
    )


# ---------------------------------------------------------------------------- saved games


@pytest.mark.slow
def test_saved_games_are_game_logs_that_validate_replay_and_rebuild_every_card(tmp_path):
    import io

    from agents.play.game_log import read_log
    from agents.play.replay import replay

    rules = Rules(num_players=3, episode="round", start_size=3)
    folder = tmp_path / "games"
    report = evaluate(["greedy", "random"], rules, deals=2, seed=3, save_games=folder)
    saved = report.to_json()["games"]
    # 2 line-ups (greedy doubled, random doubled) x 3 rotations x 2 deals.
    assert saved["count"] == report.games == 12 and saved["dir"] == str(folder)
    assert [e["file"] for e in saved["index"]] == [f"{i:06d}.json" for i in range(12)]
    assert sorted(p.name for p in folder.iterdir()) == [e["file"] for e in saved["index"]]
    for entry in saved["index"]:
        log = read_log(folder / entry["file"])
        assert log["agents"] == log["names"] == entry["specs"] and log["seat"] is None
        assert log["finished"] and log["winners"] == entry["winners"]
        assert log["seed"] == entry["deal_seed"]
        # The log holds every card: the engine replays its actions to the same events.
        game = Game(rules, seed=log["seed"], first_player=log["events"][0][1])
        for player, action in log["actions"]:
            assert game.current == player
            game.step(action)
        assert game.done and [list(e) for e in game.events] == log["events"]
        out = io.StringIO()
        replay(log, out)
        assert "won" in out.getvalue()
    deals = {e["deal_seed"] for e in saved["index"]}
    assert len(deals) == 2  # one seed per duplicate deal, shared by its 6 games
    again = evaluate(
        ["greedy", "random"], rules, deals=2, seed=3, workers=2, save_games=tmp_path / "again"
    )
    assert again.to_json()["games"]["index"] == saved["index"]
    for entry in saved["index"]:
        first = json.loads((folder / entry["file"]).read_text())
        second = json.loads((tmp_path / "again" / entry["file"]).read_text())
        first.pop("written"), second.pop("written")
        assert first == second


def test_saving_games_is_bounded_and_checked_before_playing(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"at most 100,000 games are saved"):
        evaluate(["greedy", "random"], games=100_002, save_games=tmp_path / "g")
    assert not (tmp_path / "g").exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="exists and is not a folder"):
        evaluate(["greedy", "random"], games=2, save_games=tmp_path / "file")
    assert (
        cli.main(
            [
                "--agents",
                "greedy",
                "random",
                "--save-games",
                str(tmp_path / "file"),
                "--no-progress",
                "--quiet",
            ]
        )
        == 2
    )
    assert "--save-games" in capsys.readouterr().err
    assert (
        cli.main(
            [
                "--agents",
                "greedy",
                "random",
                "--sizes",
                "3",
                "--save-games",
                str(tmp_path / "s"),
                "--no-progress",
                "--quiet",
            ]
        )
        == 2
    )
    assert "cannot be combined with --sizes" in capsys.readouterr().err


def test_ratings_that_cannot_be_told_apart_share_a_rank():
    from agents.evaluation.scoring import rating_ranks

    # The README's case: 24.93 against 24.88 at sigma 0.8 says nothing about who is better.
    ranks = rating_ranks({"a": (24.93, 0.8), "b": (24.88, 0.8), "c": (20.0, 0.8)})
    assert ranks == {"a": (1, True), "b": (1, True), "c": (3, False)}
    assert rating_ranks({"a": (30.0, 0.8), "b": (20.0, 0.8)}) == {"a": (1, False), "b": (2, False)}
    # Overlapping neighbours, separated ends: each sits below only what is clearly above it.
    chain = rating_ranks({"a": (30.0, 1.0), "b": (27.0, 1.0), "c": (24.0, 1.0)})
    assert chain == {"a": (1, True), "b": (1, True), "c": (2, False)}


def test_the_table_shows_each_ratings_interval_and_its_shared_rank():
    # greedy and counting play alike without wilds: their ratings cannot be told apart.
    report = evaluate(
        ["greedy", "counting", "random"], Rules(wilds="none", episode="round"), deals=50, seed=0
    )
    rows = {line.split()[0]: line for line in report.table().splitlines()[4:7]}
    for spec in ("greedy", "counting"):
        rating = report.agents[spec]["rating"]
        assert rating["rank"] == 1 and rating["tied"]
        assert rows[spec].rstrip().endswith("1=")
        assert f"{rating['mu']:.2f} +- {rating['ci95'][1] - rating['mu']:.2f}" in rows[spec]
    assert report.agents["random"]["rating"]["rank"] == 3
    assert not rows["random"].rstrip().endswith("=")


def test_cli_refuses_a_model_trained_under_other_rules_unless_told(tmp_path, capsys):
    """A model file trained with --wilds kings is refused in the standard game (the reason and
    its own game's flags, before any game), seated in its own game, and in another one only
    with --other-rules (then with the training-mismatch warning)."""
    torch = pytest.importorskip("torch", reason="the model file is written from a torch net")
    from agents.policies.policy import TrainingMismatchWarning
    from agents.training.export import export_mlp
    from trash_env.observation import observation_size

    kings = Rules(wilds="kings", jokers=True)
    actor = torch.nn.Sequential(torch.nn.Linear(observation_size(2), 13))
    model = export_mlp(tmp_path / "kings.safetensors", actor, rules=kings)
    flags = ["--agents", str(model), "random", "--deals", "1", "--no-progress", "--quiet"]
    assert cli.main(flags) == 2
    err = capsys.readouterr().err
    assert "kings.safetensors was trained under other rules than this game's:" in err
    assert "wilds='jacks' (trained: 'kings'), jokers=False (trained: True)" in err
    assert "(--wilds kings --jokers)" in err and "--other-rules" in err
    assert cli.main([*flags, "--wilds", "kings", "--jokers"]) == 0
    with pytest.warns(TrainingMismatchWarning, match="wilds='jacks' \\(trained: 'kings'\\)"):
        assert cli.main([*flags, "--other-rules"]) == 0


@pytest.mark.parametrize("players", [3, 4])
def test_cli_seats_pretrained_at_every_count_in_the_default_game(players, capsys):
    """``pretrained`` is checked against the rules as the model of the game's own player
    count (3 and 4 players deal two decks by default); the 2-player model's one deck once
    refused it before any game."""
    pytest.importorskip("safetensors", reason="the shipped models are safetensors files")
    flags = ["--agents", "pretrained", "greedy", "--players", str(players), "--deals", "1"]
    assert cli.main([*flags, "--no-progress", "--quiet"]) == 0, capsys.readouterr().err
