"""The README and the pages under docs/ point only at what the repository holds: every relative
link and image resolves to a file in the repository, every #anchor to a heading of its page (as
both GitHub and the mkdocs site spell it), pages under docs/ stay inside docs/ (the mkdocs site
is built from that folder alone), and nothing points at a sibling checkout (`../shared`)."""

from __future__ import annotations

import re
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
    assert {"README.md", "docs/rules.md", "docs/environment.md", "docs/agents.md",
            "docs/training.md", "docs/pretrained.md", "docs/benchmarks.md"} <= names
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
    nav = config[config.index("\nnav:"):]
    listed = re.findall(r"^\s*-\s+(?:[^:\n]+:\s+)?(\S+\.md)\s*$", nav, re.M)
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(listed) == pages
    modules = []
    for page in (DOCS / "api").glob("*.md"):
        modules += re.findall(r"^:::\s+([\w.]+)\s*$", page.read_text(), re.M)
    for module in modules:
        path = ROOT / module.replace(".", "/")
        assert path.with_suffix(".py").exists() or (path / "__init__.py").exists(), module
    for module in ("trash_env.engine", "trash_env.env", "trash_env.solo", "trash_env.vector",
                   "agents.base", "agents.evaluation"):
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
