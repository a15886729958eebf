"""``import trash_env.vector`` stays light: the engine without torch or stable-baselines3."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("numba", reason="the batched engine needs numba (the vector extra)")

HEAVY = ("torch", "stable_baselines3", "sb3_contrib")


def _imported_after(code: str) -> set[str]:
    """The top-level modules a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return set(out.stdout.split())


def test_import_vector_loads_neither_torch_nor_sb3() -> None:
    loaded = _imported_after("import trash_env.vector\nfrom trash_env.vector import VectorGame")
    assert "numba" in loaded  # the probe sees what the import loaded
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_env_names_are_imported_on_first_use() -> None:
    pytest.importorskip(
        "stable_baselines3", reason="TrashVecEnv needs stable-baselines3 (the train extra)"
    )
    loaded = _imported_after("from trash_env.vector import TrashVecEnv")
    assert "stable_baselines3" in loaded  # the VecEnv base class comes with its first use
    import trash_env.vector as vector
    from trash_env.vector import env

    assert vector.TrashVecEnv is env.TrashVecEnv
    assert vector.supports_opponents is env.supports_opponents
    assert "make_vec_env" in dir(vector)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        vector.nothing  # noqa: B018
