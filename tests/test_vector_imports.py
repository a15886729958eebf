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


def test_import_vector_skips_scipy_linalg_and_leaves_numba_whole() -> None:
    """numba's BLAS probe (an import of scipy.linalg) is skipped while the engine loads; a
    user's compiled np.dot and np.linalg still work afterwards, scipy then imported."""
    pytest.importorskip("scipy", reason="numba's BLAS functions need scipy")
    code = (
        "import sys\n"
        "import numpy as np\n"
        "from numba import njit\n"
        "from trash_env.rules import Rules\n"
        "from trash_env.vector import VectorGame\n"
        "VectorGame(Rules(), 4).reset(seeds=[1, 2, 3, 4])\n"
        "print('linalg' if 'scipy.linalg' in sys.modules else 'no-linalg')\n"
        "f = njit(lambda a: (np.dot(a, a), np.linalg.norm(a), np.convolve(a, a)))\n"
        "print(f(np.ones(3)))\n"
        "print('linalg' if 'scipy.linalg' in sys.modules else 'no-linalg')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split("\n")
    assert out[0] == "no-linalg", out
    assert out[1] == "(3.0, 1.7320508075688772, array([1., 2., 3., 2., 1.]))", out
    assert out[2] == "linalg", out


def test_a_short_evaluation_loads_neither_numba_nor_torch() -> None:
    """``evaluate.py --deals 1`` plays its 2 games on the reference engine: faster than loading
    numba and the kernels (agents/evaluation/batched.py's SMALL_GAMES); a larger one batched."""
    from agents.evaluation.batched import SMALL_GAMES, engine_for
    from trash_env.rules import Rules

    code = (
        "from agents.evaluation.cli import main\n"
        "main(['--agents', 'greedy', 'random', '--deals', '1', '--quiet', '--no-progress'])"
    )
    loaded = _imported_after(code)
    assert "trueskill" in loaded  # the probe sees what the evaluation loaded
    assert not loaded & {"numba", *HEAVY}, sorted(loaded & {"numba", *HEAVY})
    small = engine_for(["greedy", "random"], Rules(), games=SMALL_GAMES - 1)
    assert small.name == "reference" and f"below {SMALL_GAMES}" in small.why
    assert engine_for(["greedy", "random"], Rules(), games=SMALL_GAMES).name == "batched"
    assert engine_for(["greedy", "random"], Rules(), "batched", games=2).name == "batched"


def test_the_gymnasium_env_loads_neither_torch_nor_sb3() -> None:
    """stable-baselines3's VecEnv (and torch with it) comes with TrashVecEnv alone."""
    pytest.importorskip("stable_baselines3", reason="the check needs it installed to mean much")
    code = "from trash_env.vector import SoloBatch, TrashVectorEnv, supports_opponents"
    loaded = _imported_after(code)
    assert "gymnasium" in loaded  # the probe sees what the import loaded
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
