"""A short run of benchmarks/soak.py: random games over the rule variants with the invariants
checked after every decision, in both engines, and no violation (the full run: 10^6 games)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba", reason="numba is not installed (the 'vector' extra)")

ROOT = Path(__file__).resolve().parent.parent
SOAK = ROOT / "benchmarks" / "soak.py"


pytestmark = pytest.mark.slow  # the second tier: `pytest -m slow`


def _soak_module():
    spec = importlib.util.spec_from_file_location("soak", SOAK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_variants_cover_every_value_of_every_option():
    from trash_env.rules import Rules

    soak = _soak_module()
    rules_list = soak.variants(0)
    assert len(rules_list) == len(set(rules_list))  # the combinations: test_rule_options.py
    for name in Rules.option_names():
        values = {getattr(rules, name) for rules in rules_list}
        assert len(values) > 1, name
    assert {rules.free_draws for rules in rules_list} == {0, 3}
    assert {rules.num_players for rules in rules_list} == {2, 3, 4, 5, 6}


def test_a_short_soak_finds_no_violation(tmp_path):
    out = tmp_path / "soak.json"
    done = subprocess.run(
        [
            sys.executable,
            str(SOAK),
            "--games",
            "3000",
            "--reference-games",
            "40",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "violations: 0" in done.stdout
    report = json.loads(out.read_text())
    assert report["batched"]["games"] == 3000 and report["reference"]["games"] == 40
    assert report["batched"]["variants"] == min(3000, report["variant_count"])
    assert report["batched"]["decisions"] > 3000 and report["reference"]["decisions"] > 40


def test_the_soak_reports_a_violation_and_exits_1(monkeypatch, capsys):
    soak = _soak_module()

    def broken(rules_list, games, seed):
        return {"games": games, "decisions": 1, "variants": 1, "violations": ["made up"]}

    monkeypatch.setattr(soak, "soak_reference", broken)
    assert soak.main(["--games", "0", "--reference-games", "1"]) == 1
    assert "violations: 1" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv", [["--games", "-1"], ["--reference-games", "-5"], ["--seed", "-1"], ["--games", "x"]]
)
def test_the_soak_refuses_bad_flags(argv, capsys):
    with pytest.raises(SystemExit) as info:
        _soak_module().main(argv)
    assert info.value.code == 2
    assert argv[0] in capsys.readouterr().err
