"""The README and the pages under docs/ point only at what the repository holds: every relative
link and image resolves to a file in the repository, every #anchor to a heading of its page (as
both GitHub and the mkdocs site spell it), pages under docs/ stay inside docs/ (the mkdocs site
is built from that folder alone), and nothing points at a sibling checkout (`../shared`). Every
code block runs as pasted or names real scripts and flags (see "code blocks" below)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]

FENCE = re.compile(r"^(```|~~~)")
# [text](target) and ![alt](target); the target ends at the first space or ")" (a title may follow).
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_SRC = re.compile(r"""<(?:img|a)\b[^>]*?\b(?:src|href)\s*=\s*["']([^"']+)["']""", re.I)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # https:, mailto:, ...


def prose(text: str) -> list[str]:
    """The page's lines outside fenced code blocks, with inline code blanked out."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(re.sub(r"`[^`]*`", "``", line))
    return lines


def heading_texts(path: Path) -> list[str]:
    texts, fenced = [], False
    for line in path.read_text().splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced and (m := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)):
            texts.append(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1)))  # links -> text
    return texts


def github_slug(text: str) -> str:
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def mkdocs_slug(text: str) -> str:  # Python-Markdown's toc.slugify, the mkdocs default
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    """Anchors that work on GitHub and in the mkdocs site alike (the slugs on which they agree)."""
    texts = heading_texts(path)
    return {github_slug(t) for t in texts} & {mkdocs_slug(t) for t in texts}


def targets(path: Path) -> list[str]:
    found = []
    for line in prose(path.read_text()):
        found += LINK.findall(line) + HTML_SRC.findall(line)
    return found


def test_the_pages_are_found_and_have_links():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {
        "README.md",
        "docs/rules.md",
        "docs/environment.md",
        "docs/agents.md",
        "docs/training.md",
        "docs/pretrained.md",
        "docs/benchmarks.md",
    } <= names
    readme = targets(ROOT / "README.md")
    assert "docs/rules.md" in readme and "docs/environment.md" in readme
    assert any(t.endswith(".png") for t in readme)  # the learning curve is an image


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_and_image_resolves_inside_the_repository(page: Path):
    text = page.read_text()
    assert "../shared" not in text and "/work/shared" not in text
    bad = []
    for target in targets(page):
        if EXTERNAL.match(target):
            continue
        path, _, anchor = target.partition("#")
        if path.startswith("/"):
            bad.append(f"{target}: absolute path")
            continue
        file = (page.parent / path).resolve() if path else page
        if not file.is_relative_to(ROOT) or not file.exists():
            bad.append(f"{target}: no such file in the repository")
            continue
        if page.is_relative_to(DOCS) and not file.is_relative_to(DOCS):
            bad.append(f"{target}: outside docs/ (the mkdocs site holds docs/ only)")
            continue
        if anchor and file.suffix == ".md" and anchor not in anchors(file):
            bad.append(f"{target}: no heading with anchor #{anchor} in {file.name}")
    assert not bad, "\n".join(bad)


def test_the_link_check_catches_what_it_should(tmp_path):
    # The helpers above, on a made-up page: a real file, an image, an anchor, code is ignored.
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n## What `train.py` does\n\n"
        "[a](other.md) ![b](img/c.png) [d](#what-trainpy-does) [e](https://x.org/y) `[f](g.md)`\n"
        "```\n[h](i.md)\n## not a heading\n```\n"
    )
    assert targets(page) == ["other.md", "img/c.png", "#what-trainpy-does", "https://x.org/y"]
    assert anchors(page) == {"title", "what-trainpy-does"}
    assert github_slug("Measured (2 cores, 19:59–20:06 UTC)") == "measured-2-cores-19592006-utc"
    assert mkdocs_slug("A — B") != github_slug("A — B")  # such headings are not linkable


def test_the_site_nav_lists_every_page_and_the_api_pages_name_real_modules():
    # mkdocs build --strict (.ci/run) checks this too; here it is checked without mkdocs.
    config = (ROOT / "mkdocs.yml").read_text()
    nav = config[config.index("\nnav:") :]
    listed = re.findall(r"^\s*-\s+(?:[^:\n]+:\s+)?(\S+\.md)\s*$", nav, re.M)
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(listed) == pages
    modules = []
    for page in (DOCS / "api").glob("*.md"):
        modules += re.findall(r"^:::\s+([\w.]+)\s*$", page.read_text(), re.M)
    for module in modules:
        path = ROOT / module.replace(".", "/")
        assert path.with_suffix(".py").exists() or (path / "__init__.py").exists(), module
    for module in (
        "trash_env.engine",
        "trash_env.env",
        "trash_env.solo",
        "trash_env.vector",
        "agents.bots.base",
        "agents.evaluation",
    ):
        assert module in modules


def test_the_readme_starts_with_the_two_set_up_commands():
    # A newcomer's first code block: train on defaults, and the suite as .ci/run runs it.
    text = (ROOT / "README.md").read_text()
    first = re.search(r"```\w*\n(.*?)```", text, re.S)
    assert first is not None and text.index("## Set-up") < first.start()
    assert not re.search(r"^## ", text[: text.index("## Set-up")], re.M)  # the first section
    commands = [line.split("#")[0].strip() for line in first.group(1).splitlines()]
    assert commands == [
        'pip install torch==2.13.0 && pip install -e ".[train]" && python train.py',
        'pip install torch==2.13.0 && pip install -e ".[test]" && pytest',
    ]
    assert re.search(r"^pytest$", (ROOT / ".ci" / "run").read_text(), re.M)  # bare, as told


# ---------------------------------------------------------------------------- code blocks
#
# Every fenced block names its language. ```python blocks run as pasted, in a fresh
# interpreter, in a temporary folder that links to every top-level entry of the repository (so
# that they read the repository's files and write only their own); shell blocks (bash, sh,
# console) are checked without running them: each command names a script, module or tool that
# exists, a script's or module's flags are accepted by its own argparse parser (parsed, then
# stopped; a script whose optional library is not installed is only checked to exist), and
# `pip install` names extras that pyproject.toml defines. A block marked with
# `<!-- fragment -->` on the line above is neither (a continuation, or it needs files a reader
# makes first). Other languages (text, json, ...) are shown output and are not checked.

FRAGMENT = "<!-- fragment -->"
SHELL = ("bash", "sh", "console", "shell")
OPENING = re.compile(r"^(```|~~~)\s*([\w+-]*)")
SNIPPET_TIMEOUT = 300  # a bound on a hang under load; the docs promise ~20 s on an idle machine
# Commands that are not this project's: their flags are their own business.
TOOLS = {"pip", "pytest", "mkdocs", "ruff", "git", "ray", "cd", "export"}


def code_blocks() -> list[tuple[str, int, str, str, bool]]:
    """(page, line, language, body, marked as a fragment) of every fenced block."""
    found = []
    for path in PAGES:
        lines = path.read_text().splitlines()
        i = 0
        while i < len(lines):
            m = OPENING.match(lines[i].strip())
            if m:
                fence, start = m.group(1), i
                i += 1
                while i < len(lines) and lines[i].strip() != fence:
                    i += 1
                marked = start > 0 and lines[start - 1].strip() == FRAGMENT
                found.append(
                    (
                        path.relative_to(ROOT).as_posix(),
                        start + 1,
                        m.group(2),
                        "\n".join(lines[start + 1 : i]),
                        marked,
                    )
                )
            i += 1
    return found


BLOCKS = code_blocks()
PYTHON = [b for b in BLOCKS if b[2] == "python" and not b[4]]
COMMANDS = [b for b in BLOCKS if b[2] in SHELL and not b[4]]


def _ids(blocks: list) -> list[str]:
    return [f"{page}:{line}" for page, line, *_ in blocks]


def test_every_code_block_names_its_language():
    unnamed = [f"{page}:{line}" for page, line, language, _, _ in BLOCKS if not language]
    assert not unnamed, f"fenced blocks without a language (python, bash, text, ...): {unnamed}"
    assert len(PYTHON) >= 5 and len(COMMANDS) >= 10  # the checker finds the blocks


def _sandbox(tmp_path: Path) -> Path:
    """A folder that looks like the repository root to a snippet, but keeps what it writes."""
    for entry in ROOT.iterdir():
        if entry.name not in (".git",) and not (tmp_path / entry.name).exists():
            (tmp_path / entry.name).symlink_to(entry)
    return tmp_path


@pytest.mark.parametrize("block", PYTHON, ids=_ids(PYTHON))
def test_python_blocks_run_as_pasted(block, tmp_path):
    page, line, _, body, _ = block
    folder = _sandbox(tmp_path)
    (folder / "snippet.py").write_text(body + "\n")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    try:
        result = subprocess.run(
            [sys.executable, "snippet.py"],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=SNIPPET_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{page}:{line}: the block ran for more than {SNIPPET_TIMEOUT} s")
    assert result.returncode == 0, f"{page}:{line} failed:\n{result.stderr[-3000:]}"
    assert "Traceback" not in result.stderr, f"{page}:{line}:\n{result.stderr[-3000:]}"
    # What a reader pastes writes into runs/ (ignored by git) or a temporary folder, never
    # beside the repository's own files.
    written = sorted(
        entry.name
        for entry in folder.iterdir()
        if not entry.is_symlink() and entry.name not in ("snippet.py", "runs", "__pycache__")
    )
    assert not written, f"{page}:{line} wrote {written} into the repository's root"


def shell_commands(body: str) -> list[list[str]]:
    """The simple commands of a shell block: lines joined at a trailing backslash, comments
    dropped, split at ``&&``, ``||``, ``;`` and ``|``, leading ``VAR=value`` dropped."""
    text = re.sub(r"\\\n", " ", body)
    commands = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("$ "):  # a console prompt
            line = line[2:]
        words: list[str] = []
        for word in shlex.split(line, comments=True):
            if word in ("&&", "||", ";", "|"):
                commands.append(words)
                words = []
            else:
                words.append(word)
        commands.append(words)
    out = []
    for words in commands:
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]
        if words:
            out.append(words)
    return out


def test_shell_commands_are_split_as_a_shell_would():
    body = "A=1 python x.py --a 1 \\\n    --b 2   # note\npip install -e '.[test]' && pytest"
    assert shell_commands(body) == [
        ["python", "x.py", "--a", "1", "--b", "2"],
        ["pip", "install", "-e", ".[test]"],
        ["pytest"],
    ]


# Run in a subprocess: each command's script or module runs as __main__ until its parser has
# parsed the arguments, then stops (nothing is trained or played). Prints one line per command.
_PARSE_ONLY = r"""
import argparse, json, runpy, sys

class Parsed(BaseException):
    pass

real_args = argparse.ArgumentParser.parse_args
real_known = argparse.ArgumentParser.parse_known_args
inside = []

def parse_args(self, args=None, namespace=None):
    inside.append(self)
    try:
        real_args(self, args, namespace)  # a bad flag exits 2 here, with argparse's message
    finally:
        inside.pop()
    raise Parsed

def parse_known_args(self, args=None, namespace=None):
    result = real_known(self, args, namespace)
    if not inside:  # called by the script itself: what it accepts is what it parsed
        raise Parsed
    return result

argparse.ArgumentParser.parse_args = parse_args
argparse.ArgumentParser.parse_known_args = parse_known_args
for kind, target, argv in json.loads(sys.argv[1]):
    sys.argv = [target, *argv]
    try:
        if kind == "module":
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
        outcome = "ran to its end without parsing"
    except Parsed:
        outcome = "ok"
    except SystemExit as stop:
        outcome = f"exit {stop.code}"
    except ModuleNotFoundError as error:  # an optional library: its flags cannot be checked here
        outcome = f"needs {error.name}"
    except Exception as error:
        outcome = f"{type(error).__name__}: {error}"
    print(json.dumps([target, argv, outcome]), flush=True)
"""


def _extras() -> set[str]:
    """The extras of pyproject.toml (its [project.optional-dependencies] keys; no tomllib on
    Python 3.10)."""
    text = (ROOT / "pyproject.toml").read_text()
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([A-Za-z0-9_-]+)\s*=", section, re.M))


def _parse_only(runs: list[tuple[str, str, list[str]]], folder: Path) -> list[str]:
    """The outcome of parsing each ``(kind, target, argv)``: "ok", "exit 2", "needs ray"..."""
    result = subprocess.run(
        [sys.executable, "-c", _PARSE_ONLY, json.dumps(runs)],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=SNIPPET_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    outcomes = [json.loads(x)[2] for x in result.stdout.splitlines() if x.startswith("[")]
    assert len(outcomes) == len(runs), result.stderr[-3000:]
    return outcomes


def test_the_flag_check_refuses_a_flag_the_parser_does_not_know(tmp_path):
    runs = [
        ("path", str(ROOT / "evaluate.py"), ["--agents", "greedy", "--gmaes", "5"]),
        ("module", "agents.play", ["--seat", "one"]),
        ("path", str(ROOT / "evaluate.py"), ["--agents", "greedy", "random"]),
    ]
    assert _parse_only(runs, tmp_path) == ["exit 2", "exit 2", "ok"]


def test_shell_blocks_name_real_scripts_and_flags(tmp_path):
    runs, problems = [], []
    extras = _extras()
    for page, line, _, body, _ in COMMANDS:
        where = f"{page}:{line}"
        for words in shell_commands(body):
            program, args = words[0], words[1:]
            if program in ("python", "python3"):
                if args[:1] == ["-m"]:
                    module = args[1]
                    if importlib.util.find_spec(module) is None:
                        problems.append(f"{where}: no module {module}")
                    else:
                        runs.append((where, "module", module, args[2:]))
                elif not args or args[0].startswith("-"):
                    problems.append(f"{where}: python without a script: {words}")
                elif not (ROOT / args[0]).is_file():
                    problems.append(f"{where}: no script {args[0]}")
                else:
                    runs.append((where, "path", str(ROOT / args[0]), args[1:]))
            elif program == "pip":
                for word in args:
                    for extra in re.findall(r"\[([^\]]+)\]", word):
                        unknown = set(extra.split(",")) - extras
                        if unknown:
                            problems.append(
                                f"{where}: no extra {sorted(unknown)} in pyproject.toml"
                            )
            elif program in ("bash", "sh"):  # a shell script of the repository
                if not args or not (ROOT / args[0]).is_file():
                    problems.append(f"{where}: no shell script {args[:1]}")
            elif program not in TOOLS:
                problems.append(f"{where}: unknown command {program!r}")
    assert not problems, "\n".join(problems)
    if not runs:
        return
    outcomes = _parse_only([(kind, target, argv) for _, kind, target, argv in runs], tmp_path)
    bad = [
        f"{where}: {target} {' '.join(argv)}: {outcome}"
        for (where, _, target, argv), outcome in zip(runs, outcomes, strict=True)
        if outcome != "ok" and not outcome.startswith("needs ")
    ]
    assert not bad, "\n".join(bad)
