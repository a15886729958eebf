"""The import graph: trash_env never imports agents (agents build on trash_env), no cycle
between the packages nor between modules, nothing outside the engine reads a private Game
name; and the spec registry finds the built-in bots through entry points, or says how to
register them."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from trash_env.engine import Game

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("trash_env", "agents")


def modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def module_path(name: str) -> Path | None:
    """The file of module ``name`` in the repository, if it is one."""
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports, at any depth (function-local imports included), with
    relative imports resolved, and the names given to ``importlib.import_module``. ``from pkg
    import name`` gives ``pkg.name`` when that is a module of the repository, else ``pkg``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            for alias in node.names:
                sub = f"{name}.{alias.name}"
                # from . import x: always the module x of that package
                is_module = not node.module or module_path(sub) is not None
                found.append((node.lineno, sub if is_module else name))
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def top(name: str) -> str:
    return name.split(".")[0]


def test_the_checker_sees_function_local_and_relative_imports(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    probe = tmp_path / "pkg" / "probe.py"
    probe.write_text(
        "def f():\n    from agents.bots.base import Agent\n    import agents.bots.search\n"
        "from . import sibling\nimport importlib\nimportlib.import_module('agents')\n"
    )
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        names = [name for _, name in imported(probe)]
    finally:
        ROOT = saved
    assert (
        names.count("agents") == 1 and "agents.bots.base" in names and "agents.bots.search" in names
    )
    assert "pkg.sibling" in names


def test_trash_env_never_imports_agents() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in modules("trash_env")
        for line, name in imported(path)
        if top(name) == "agents"
    ]
    assert not offenders, "trash_env must not import agents:\n" + "\n".join(offenders)


# trash_env/ by floor (docs/development.md draws it, from the import graph): a module imports
# only modules on the floors below its own; a sub-package (vector, jax_env, exact,
# integrations) is one unit, free inside. ``__init__`` is the package's own module.
TRASH_ENV_FLOORS: tuple[tuple[str, frozenset[str]], ...] = tuple(
    (floor, frozenset(names.split()))
    for floor, names in (
        ("basics", "actions cards files numba_cache progress sampling seeding spiel_text"),
        ("rules", "rules"),
        ("rule book", "cli codes engine"),
        ("what a seat sees", "observation reward rules_arrays text view"),
        ("seats", "agent pairs render"),
        ("games", "match opponents spiel"),
        ("envs", "env solo"),
        ("the other engines", "exact jax_env vector"),
        ("the package", "__init__"),
        ("integrations", "integrations"),
    )
)


def trash_env_unit(name: str) -> str:
    """The floor's unit of module ``name`` of trash_env: a top-level module, a sub-package or
    ``__init__`` (the package itself)."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_trash_env_modules_import_only_the_floors_below_them() -> None:
    floor_of = {unit: k for k, (_, units) in enumerate(TRASH_ENV_FLOORS) for unit in units}
    offenders = []
    for path in modules("trash_env"):
        source = trash_env_unit(module_name(path))
        assert source in floor_of, f"trash_env.{source} is on no floor: add it to TRASH_ENV_FLOORS"
        for line, name in imported(path):
            target = trash_env_unit(name)
            if top(name) != "trash_env" or target == source:
                continue
            if floor_of.get(target, len(TRASH_ENV_FLOORS)) >= floor_of[source]:
                where = TRASH_ENV_FLOORS[floor_of[source]][0]
                offenders.append(f"{path.relative_to(ROOT)}:{line} ({where}) imports {name}")
    assert not offenders, "an import against trash_env's floors:\n" + "\n".join(offenders)


# agents/ by job (docs/development.md draws it): each sub-package may import only the ones
# listed for it; web and training sit on top, the policies' model files at the bottom.
AGENT_LAYERS = {
    "policies": set(),
    "bots": {"policies"},
    "play": {"bots", "policies"},
    "evaluation": {"bots", "policies", "play"},
    "training": {"bots", "policies", "play", "evaluation"},
    "web": {"bots", "policies", "play", "evaluation"},
}


def test_agents_is_split_into_the_drawn_sub_packages_each_with_its_job_in_a_docstring() -> None:
    loose = sorted(p.name for p in (ROOT / "agents").glob("*.py") if p.name != "__init__.py")
    assert loose == [], f"agents/ keeps only sub-packages; move {loose} into one"
    packages = {p.parent.name for p in (ROOT / "agents").glob("*/__init__.py")}
    assert packages == set(AGENT_LAYERS)
    for name in packages:
        tree = ast.parse((ROOT / "agents" / name / "__init__.py").read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"agents/{name}/__init__.py needs a docstring"


def test_agents_sub_packages_import_only_the_layers_below_them() -> None:
    offenders = []
    for layer, allowed in AGENT_LAYERS.items():
        for path in sorted((ROOT / "agents" / layer).rglob("*.py")):
            for line, name in imported(path):
                parts = name.split(".")
                if parts[0] != "agents" or len(parts) < 2 or parts[1] == layer:
                    continue
                if parts[1] not in allowed:
                    offenders.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not offenders, "an import against the layers:\n" + "\n".join(offenders)


def test_no_import_cycle_between_packages() -> None:
    """The package graph (trash_env, its subpackages, agents) is acyclic."""

    def unit(name: str) -> str:
        parts = name.split(".")
        if parts[0] == "trash_env" and len(parts) > 1 and (ROOT / parts[0] / parts[1]).is_dir():
            return ".".join(parts[:2])
        return parts[0]

    edges: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in modules(package):
            source = unit(".".join(path.relative_to(ROOT).with_suffix("").parts))
            for _, name in imported(path):
                target = unit(name)
                if top(target) in PACKAGES and target != source:
                    edges.setdefault(source, set()).add(target)
    assert "agents" in edges.get("agents", set()) or "trash_env" in edges["agents"]

    def cycle_from(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return path[path.index(node) :] + [node]
        for nxt in sorted(edges.get(node, ())):
            found = cycle_from(nxt, path + [node])
            if found:
                return found
        return None

    for node in sorted(edges):
        found = cycle_from(node, [])
        assert found is None, "import cycle between packages: " + " -> ".join(found)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_graph() -> dict[str, set[str]]:
    """Module -> the modules of trash_env and agents it imports. Every import counts: at
    module level, inside a function (it runs on first use) and under ``TYPE_CHECKING`` (the
    modules still depend on each other's names). ``from pkg import sub`` is an edge to the
    module ``pkg.sub`` when it is one, else to ``pkg``. Importing ``pkg.sub`` runs
    ``pkg/__init__.py`` first, but that is no edge: every submodule would then form a cycle
    with a package that imports any of them."""
    known = {module_name(path) for package in PACKAGES for path in modules(package)}
    graph: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in modules(package):
            source = module_name(path)
            graph[source] = {name for _, name in imported(path) if name in known}
            graph[source].discard(source)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan): each is a set of
    modules that import each other, directly or through the others."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


# Cycles tolerated for now (none): a cycle not listed here fails, and so does a listed one
# that is gone (take it off the list).
KNOWN_CYCLES: list[frozenset[str]] = []


def test_the_cycle_finder_sees_every_kind_of_import(tmp_path: Path, monkeypatch) -> None:
    """Function-local, ``TYPE_CHECKING`` and ``from pkg import module`` imports close cycles;
    a package importing its own submodule does not."""
    (tmp_path / "pkg").mkdir()
    for name, text in {
        "__init__.py": "from pkg import a\n",
        "a.py": "def f():\n    import pkg.b\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n",
        "c.py": "from pkg import d\n",
        "d.py": "from pkg.c import x\n",
        "e.py": "import pkg.a\n",
    }.items():
        (tmp_path / "pkg" / name).write_text(text)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGES", ("pkg",))
    cycles = import_cycles(module_graph())
    assert sorted(map(sorted, cycles)) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.d"]]


def test_no_import_cycle_between_modules() -> None:
    """No two modules of trash_env and agents import each other, directly or through others
    (besides the known cycles being removed)."""
    cycles = set(import_cycles(module_graph()))
    new = [" <-> ".join(sorted(cycle)) for cycle in cycles - set(KNOWN_CYCLES)]
    gone = [" <-> ".join(sorted(cycle)) for cycle in set(KNOWN_CYCLES) - cycles]
    assert not new, "import cycles between modules:\n" + "\n".join(sorted(new))
    assert not gone, "no longer cycles, take them off KNOWN_CYCLES:\n" + "\n".join(sorted(gone))


PRIVATE = {
    name
    for name in set(Game.__slots__) | set(vars(Game))
    if name.startswith("_") and not name.startswith("__")
}


def test_only_the_engine_reads_private_game_names() -> None:
    """Outside engine.py, no ``x._name`` where ``_name`` is a private Game attribute or method
    (``self._name`` of other classes is their own business)."""
    assert {"_refuse", "_stock_known", "_free_left"} <= PRIVATE
    offenders = []
    for package in PACKAGES:
        for path in modules(package):
            if path == ROOT / "trash_env" / "engine.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr in PRIVATE
                    and not (isinstance(node.value, ast.Name) and node.value.id == "self")
                ):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
    assert not offenders, "private Game names used outside the engine:\n" + "\n".join(offenders)


def run(code: str, env_path: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env_path]))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def entry_points_table() -> dict[str, str]:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11+")
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return data["project"]["entry-points"]["trash_env.agents"]


def test_entry_points_register_the_builtin_bots_without_importing_agents(tmp_path: Path) -> None:
    """What an installed trash-env gives: ``TrashSoloEnv(opponents=["greedy"])`` resolves the
    spec through the pyproject's entry points, with no ``import agents`` by the user."""
    table = entry_points_table()
    assert {"random", "greedy", "counting", "search", "human", "pretrained"} <= set(table)
    info = tmp_path / "trash_env_agents_probe-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: trash-env-agents-probe\nVersion: 0\n"
    )
    (info / "entry_points.txt").write_text(
        "[trash_env.agents]\n" + "".join(f"{k} = {v}\n" for k, v in table.items())
    )
    result = run(
        """
        import sys
        from trash_env.solo import TrashSoloEnv
        assert "agents" not in sys.modules
        env = TrashSoloEnv(opponents=["greedy", "counting", "search:rollouts=2"])
        env.reset(seed=0)
        assert "agents" in sys.modules
        print(sorted(type(a).__name__ for a in env._agent_cache.values()))
        """,
        str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert "CountingAgent" in result.stdout and "GreedyAgent" in result.stdout


def test_a_source_checkout_imports_the_modules_of_its_entry_point_table() -> None:
    """Installed without the entry points (or never installed): the checkout's ``agents``
    modules of the same table are imported, and ``TrashSoloEnv(opponents=["greedy"])`` still
    resolves."""
    result = run(
        """
        import importlib.metadata, sys
        importlib.metadata.entry_points = lambda **kw: []  # no installed entry points
        from trash_env.solo import TrashSoloEnv
        assert "agents" not in sys.modules
        TrashSoloEnv(opponents=["greedy"]).reset(seed=0)
        print("OK", "agents.bots.heuristics" in sys.modules)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "OK True"


def test_the_checkout_modules_are_the_entry_points_of_pyproject() -> None:
    """trash_env.agent's table for a never-installed checkout names the modules of
    pyproject.toml's ``trash_env.agents`` entry points (which it no longer reads at run time)."""
    from trash_env.agent import CHECKOUT_AGENT_MODULES

    table = entry_points_table()
    declared = {value.partition(":")[0].strip() for value in table.values()}
    assert sorted(declared) == sorted(CHECKOUT_AGENT_MODULES)


def test_nothing_in_trash_env_reads_pyproject_at_run_time() -> None:
    for path in modules("trash_env"):
        assert 'pyproject.toml"' not in path.read_text(encoding="utf-8"), path


def test_without_entry_points_the_error_names_the_spec_and_import_agents() -> None:
    """Neither installed entry points nor a checkout's table (a copied trash_env folder): the
    spec fails with a message naming it and saying that ``import agents`` registers the bots,
    which then works."""
    result = run(
        """
        import importlib.metadata
        importlib.metadata.entry_points = lambda **kw: []  # no trash-env distribution at all
        import trash_env.agent
        trash_env.agent._checkout_entry_points = lambda: []  # and no agents beside it
        from trash_env.solo import TrashSoloEnv
        try:
            TrashSoloEnv(opponents=["greedy"])
        except ValueError as error:
            print("ERROR", error)
        import agents
        TrashSoloEnv(opponents=["greedy"]).reset(seed=0)
        print("OK")
        """
    )
    assert result.returncode == 0, result.stderr
    assert "ERROR unknown agent 'greedy' in spec 'greedy'" in result.stdout
    assert "`import agents` registers the built-in bots" in result.stdout
    assert result.stdout.rstrip().endswith("OK")


def test_loaders_resolve_suffixes_patterns_and_names(monkeypatch) -> None:
    """A model format by file suffix (any case), a family of names by pattern and one name:
    each reaches its loader with the name, seed and raw options; the labels are listed."""
    import agents  # noqa: F401  (the built-ins, for the listing)
    from trash_env import agent as registry

    calls = []

    def loader(name, seed, raw):
        calls.append((name, seed, raw))
        return registry.Agent(seed)

    monkeypatch.setattr(registry, "_SUFFIX_LOADERS", dict(registry._SUFFIX_LOADERS))
    monkeypatch.setattr(registry, "_PATTERN_LOADERS", dict(registry._PATTERN_LOADERS))
    monkeypatch.setattr(registry, "_NAME_LOADERS", dict(registry._NAME_LOADERS))
    registry.register_agent_loader(".probe", loader)
    registry.register_agent_loader("probe_Np", loader, pattern=r"probe_[0-9]p")
    registry.register_agent_loader("probeonly", loader)
    registry.make_agent("dir/M.PROBE:x=1", seed=3)
    registry.make_agent("probe_4p", seed=4)
    registry.make_agent("probeonly")
    assert calls == [("dir/M.PROBE", 3, {"x": "1"}), ("probe_4p", 4, {}), ("probeonly", None, {})]
    with pytest.raises(ValueError, match=r"unknown agent 'probe_10p'.*probe_Np.*PATH\.probe"):
        registry.make_agent("probe_10p")
