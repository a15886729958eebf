"""Output files: special files refused up front and never replaced, symlinks written through,
a full disk and interrupts answered in one line with the last good file kept and no temp file
left (trash_env/files.py, evaluate.py, train.py)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers import ROOT, launched, start_interruptible

from agents.evaluation import cli
from trash_env.files import atomic_write_text, check_output_path, sweep_temp_files

LINUX = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")


def _temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".*.tmp"))


@pytest.fixture
def specials(tmp_path):
    """A FIFO, a socket, a directory, links to a device and to a FIFO, in ``tmp_path``."""
    os.mkfifo(tmp_path / "fifo")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    (tmp_path / "dir").mkdir()
    (tmp_path / "to_null").symlink_to("/dev/null")
    (tmp_path / "to_fifo").symlink_to(tmp_path / "fifo")
    yield tmp_path
    server.close()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("/dev/null", "is a device"),
        ("{tmp}/fifo", "is a FIFO"),
        ("{tmp}/sock", "is a socket"),
        ("{tmp}/dir", "is a directory"),
        ("{tmp}/to_null", "is a device"),
        ("{tmp}/to_fifo", "is a FIFO"),
    ],
)
def test_special_files_are_refused_before_any_game(name, message, specials, capsys, monkeypatch):
    def no_games(*args, **kwargs):
        raise AssertionError("evaluate() ran before the output paths were checked")

    monkeypatch.setattr(cli, "evaluate", no_games)
    path = name.replace("{tmp}", str(specials))
    before = os.lstat(path)
    for flag in ("--json", "--csv"):
        assert cli.main(["--agents", "greedy", "random", flag, path]) == 2
        err = capsys.readouterr().err
        assert f"{flag}: " in err and message in err, err
    after = os.lstat(path)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)


def test_the_terminal_games_log_is_checked_before_the_game(specials):

    for path in ("/dev/null", specials / "fifo", specials / "dir"):
        result = subprocess.run(
            [sys.executable, "-m", "agents.play", "--log", str(path), "--seed", "1"],
            input="",
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
        assert result.returncode == 2 and result.stdout == "", result.stdout
        assert result.stderr.splitlines()[-1].startswith("python -m agents.play: error: --log: ")


@LINUX
def test_an_image_where_no_file_can_be_created_is_refused_up_front(capsys, monkeypatch):
    """Root may "write" /proc by its permission bits; a probe file there fails, so the check
    refuses it before the games instead of the plot failing after them."""
    monkeypatch.setattr(cli, "evaluate", lambda *a, **k: pytest.fail("games were played"))
    assert cli.main(["--agents", "greedy", "random", "--png", "/proc/x.png"]) == 2
    assert "--png: cannot write '/proc/x.png'" in capsys.readouterr().err


def test_writes_never_replace_a_special_file(specials):
    for name in ("/dev/null", specials / "fifo", specials / "sock", specials / "to_fifo"):
        before = os.stat(name)
        with pytest.raises(OSError, match="not a regular file: not replaced"):
            atomic_write_text(name, "data")
        after = os.stat(name)
        assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode)
        assert after.st_ino == before.st_ino
    assert (specials / "to_fifo").is_symlink()
    assert _temp_files(specials) == []


def test_a_symlink_is_written_through_to_its_target_and_kept(tmp_path):
    """The documented choice (docs/agents.md, Outputs): as the shell's ``>`` would."""
    target = tmp_path / "real" / "r.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert check_output_path("--json", link) == link
    atomic_write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "made" / "later.json")
    check_output_path("--json", dangling)
    atomic_write_text(dangling, "made")
    assert dangling.is_symlink() and (tmp_path / "made" / "later.json").read_text() == "made"
    assert _temp_files(tmp_path) == []


# ---------------------------------------------------------------------------- a full disk


def _run_limited(args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """``ulimit -f 8`` (8 KiB) for the child: its larger writes fail with EFBIG."""
    return subprocess.run(
        launched([sys.executable, *args], file_size=8 * 1024),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_full_disk_under_save_games_is_one_line_and_keeps_the_last_good_file(tmp_path, workers):
    # The same run without the limit first: numba writes its compiled kernels' cache files on
    # first use, and under the limit that write, not the saved game's, would fail first.
    warm = tmp_path / "warm"
    warm.mkdir()
    args = ["--agents", "greedy", "random", "--games", "20", "--workers", workers]
    subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), *args, "--save-games", "g", "--quiet"],
        cwd=warm,
        check=True,
        capture_output=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    games = tmp_path / "games"
    games.mkdir()
    (games / "000000.json").write_text("the last good file\n")
    result = _run_limited(
        [
            str(ROOT / "evaluate.py"),
            "--agents",
            "greedy",
            "random",
            "--games",
            "20",
            "--workers",
            workers,
            "--save-games",
            "games",
            "--no-progress",
            "--quiet",
        ],
        tmp_path,
    )
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "File too large" in lines[0], result.stderr
    assert lines[0].startswith("python evaluate.py: error: cannot write games/")
    assert (games / "000000.json").read_text() == "the last good file\n"
    assert _temp_files(tmp_path) == []


def test_a_report_that_does_not_fit_is_one_line_and_keeps_the_last_good_file(tmp_path):
    (tmp_path / "r.json").write_text("the last good report\n")
    result = subprocess.run(
        launched(
            [
                sys.executable,
                str(ROOT / "evaluate.py"),
                "--agents",
                "greedy",
                "random",
                "--games",
                "4",
                "--json",
                "r.json",
                "--no-progress",
                "--quiet",
            ],
            file_size=512,
        ),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [
        "python evaluate.py: error: cannot write r.json: File too large"
    ]
    assert (tmp_path / "r.json").read_text() == "the last good report\n"
    assert _temp_files(tmp_path) == []


TINY_TRAIN = [
    "--envs",
    "2",
    "--n-steps",
    "64",
    "--batch-size",
    "64",
    "--epochs",
    "1",
    "--eval-every",
    "0",
    "--final-deals",
    "1",
    "--workers",
    "1",
    "--imitate",
    "none",
    "--opponents",
    "random",
    "--vec",
    "dummy",
    "--episode",
    "round",
    "--no-progress",
]


def test_a_full_disk_under_train_is_one_line_and_keeps_the_last_good_model(tmp_path):
    pytest.importorskip("sb3_contrib", reason="train.py needs the train extra")
    from agents.policies.policy import PRETRAINED

    out = tmp_path / "model.safetensors"
    shutil.copy(PRETRAINED, out)
    before = out.read_bytes()
    args = [str(ROOT / "train.py"), "--out", str(out), "--timesteps", "256", *TINY_TRAIN]
    result = _run_limited(args, tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "File too large" in lines[0], result.stderr
    assert lines[0].startswith("python train.py: error: cannot write ")
    assert out.read_bytes() == before
    assert _temp_files(tmp_path) == []


# ---------------------------------------------------------------------------- interrupts


def _wait(condition, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout  # a bound on a hang, not how long a step takes
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@LINUX
@pytest.mark.parametrize("how", ["Ctrl-C", "SIGKILL"])
def test_an_interrupted_evaluation_saving_games_leaves_no_temp_file(tmp_path, how):
    games = tmp_path / "games"
    process = start_interruptible(
        [
            sys.executable,
            str(ROOT / "evaluate.py"),
            "--agents",
            "greedy",
            "random",
            "--deals",
            "50000",
            "--workers",
            "2",
            "--engine",  # the worker processes' clean-up is what is tested
            "reference",
            "--save-games",
            str(games),
            "--no-progress",
            "--quiet",
        ],
        tmp_path,
    )
    try:
        _wait(lambda: games.is_dir() and len(os.listdir(games)) >= 40, "saved games")
        if how == "Ctrl-C":  # a terminal sends SIGINT to the whole foreground group
            os.killpg(process.pid, signal.SIGINT)
        else:  # the parent alone, outright: its workers notice and end
            os.kill(process.pid, signal.SIGKILL)
        _, err = process.communicate(timeout=120)

        def group_gone() -> bool:
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                return True
            return False

        _wait(group_gone, "every worker to end", 60)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if how == "Ctrl-C":
        assert (process.returncode, err.strip()) == (130, "python evaluate.py: interrupted")
    assert _temp_files(games) == []


def test_a_later_run_sweeps_the_temp_files_of_saved_games_and_nothing_else(tmp_path):
    """What a run killed between a worker's write and its rename leaves: the next run into
    the folder removes its own pattern only."""
    games = tmp_path / "games"
    games.mkdir()
    stale = [".000003.json.k2j4_x9a.tmp", ".123456.json.abcdefgh.tmp"]
    kept = [".notes.txt.abcdefgh.tmp", "000003.json.tmp", ".000003.json.tmp", "mine.json"]
    for name in stale + kept:
        (games / name).write_text("x")
    from agents.evaluation import evaluate
    from trash_env import Rules

    evaluate(["greedy", "random"], Rules(episode="round"), deals=1, save_games=games)
    left = sorted(p.name for p in games.iterdir())
    assert left == sorted(kept + ["000000.json", "000001.json"])
    assert sweep_temp_files(tmp_path / "absent", r"[0-9]+\.json") == 0


_WRITER = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    from trash_env import files
    from agents.evaluation import pool

    started = threading.Event()
    real_fsync = os.fsync

    def slow_fsync(fd):
        started.set()
        time.sleep(600)  # a write in flight, held here

    os.fsync = slow_fsync
    how = sys.argv[1]
    if how == "sigterm":  # what a worker does on the parent's SIGTERM
        signal.signal(signal.SIGTERM, pool._terminated)
        print("ready", flush=True)
        files.atomic_write_text("out/000000.json", "x" * 100)
    else:  # what a worker's watch thread does once its parent is gone
        threading.Thread(
            target=files.atomic_write_text, args=("out/000000.json", "x"), daemon=True
        ).start()
        started.wait()
        files.abandon_temp_files()
        os._exit(1)
    """
)


@pytest.mark.parametrize("how", ["sigterm", "parent gone"])
def test_a_worker_ending_mid_write_removes_its_temp_file(tmp_path, how):
    (tmp_path / "out").mkdir()
    process = subprocess.Popen(
        [sys.executable, "-c", _WRITER, how],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    try:
        if how == "sigterm":
            assert process.stdout.readline() == "ready\n"
            _wait(lambda: _temp_files(tmp_path / "out"), "the temp file", 60)
            process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 1
    finally:
        process.kill()
    assert os.listdir(tmp_path / "out") == []


def test_abandon_keeps_later_writes_from_landing(tmp_path):
    """After abandon_temp_files() the process is about to end: no write may complete."""
    script = textwrap.dedent(
        """
        import os, threading
        from trash_env import files
        files.abandon_temp_files()
        t = threading.Thread(target=files.atomic_write_text, args=("late.json", "x"), daemon=True)
        t.start()
        t.join(2)
        print(t.is_alive(), sorted(os.listdir(".")))
        os._exit(0)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert result.stdout.strip() == "True []", result.stderr
    assert os.listdir(tmp_path) == []


@LINUX
def test_train_ctrl_c_is_one_line_exit_130_and_keeps_its_checkpoints(tmp_path):
    pytest.importorskip("sb3_contrib", reason="train.py needs the train extra")
    out = tmp_path / "model.safetensors"
    args = ["--timesteps", "10000000", "--checkpoint-every", "128", *TINY_TRAIN]
    process = start_interruptible(
        [sys.executable, str(ROOT / "train.py"), "--out", str(out), *args], tmp_path
    )
    folder = tmp_path / "model_checkpoints"
    try:
        _wait(lambda: len(list(folder.glob("*.ckpt"))) >= 2, "two checkpoints", 180)
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert process.returncode == 130, err
    assert err.strip() == (
        f"python train.py: interrupted (checkpoints kept: continue with --resume {folder})"
    )
    from agents.training.checkpoint import read_checkpoint

    for path in folder.glob("*.ckpt"):
        read_checkpoint(path)  # every one whole
    assert _temp_files(tmp_path) == []
