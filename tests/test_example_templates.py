"""The pipeline examples read as templates (issue 26, item 7): a module docstring of a few
lines that says what the example does and how to run it, with no measured figures (those live
in docs/integrations.md), and the settings in one block at the top that the parser reads, so
no flag hides a default of its own. Read from the source, so no learning library is needed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PIPELINES = ["agilerl_ppo", "cleanrl_ppo", "rllib_ppo", "tianshou_ppo", "torchrl_ppo"]
# A win rate with its interval, a decisions/s rate or a CPU time: a measurement.
FIGURE = re.compile(r"\d\.\d{2,} \[|\d[\d,]* decisions/s|\d+ (CPU )?s(econds)? of (CPU|wall)")


def _tree(name: str) -> ast.Module:
    return ast.parse((ROOT / "examples" / f"{name}.py").read_text())


@pytest.mark.parametrize("name", PIPELINES)
def test_the_docstring_says_what_and_how_to_run_in_a_few_lines_without_figures(name):
    doc = ast.get_docstring(_tree(name)) or ""
    assert len(doc.splitlines()) <= 16, doc
    assert f"python examples/{name}.py" in doc and "docs/integrations.md" in doc
    assert "--wilds kings" in doc  # the rules flags, shown once
    assert not FIGURE.search(doc), FIGURE.search(doc)


def _parser_defaults(tree: ast.Module) -> list[ast.expr]:
    parse_args = next(
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name == "parse_args"
    )
    defaults = []
    for call in ast.walk(parse_args):
        if isinstance(call, ast.Call):
            defaults += [k.value for k in call.keywords if k.arg in ("default", "steps")]
            defaults += [k.value for k in call.keywords if k.arg == "eval_every"]
    return defaults


@pytest.mark.parametrize("name", PIPELINES)
def test_every_default_comes_from_the_settings_block_at_the_top(name):
    tree = _tree(name)
    constants = {
        target.id: node.lineno
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id.isupper()
    }
    first_function = min(n.lineno for n in tree.body if isinstance(n, ast.FunctionDef))
    defaults = _parser_defaults(tree)
    assert len(defaults) >= 5
    for value in defaults:
        if isinstance(value, ast.Constant) and value.value is None:
            continue  # "automatic": the help says which settings it picks
        shown = ast.unparse(value)
        assert isinstance(value, ast.Name), f"{name}: a default written in the parser: {shown}"
        assert constants.get(value.id, first_function) < first_function, value.id
