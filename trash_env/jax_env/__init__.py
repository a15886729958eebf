"""Trash as pure JAX functions with Pgx's API (docs/jax.md); the ``jax`` extra.

``make(**rules_options)`` gives the environment (``init``, ``step``, ``observe``); batches are
``jax.vmap(env.init)`` and ``jax.vmap(env.step)``. ``checked(env)`` is the checked mode, which
refuses actions and player ids outside the action space and the table before the compiled
step sees them. Nothing here imports torch, numba or stable-baselines3.
"""

try:
    import jax  # noqa: F401
except ModuleNotFoundError as error:
    raise ModuleNotFoundError(
        "trash_env.jax_env needs JAX: pip install 'trash-env[jax]'", name=error.name
    ) from None

from trash_env.jax_env.checked import CheckedEnv, checked
from trash_env.jax_env.env import ENV_ID, VERSION, State, TrashEnv, auto_reset, make

__all__ = ["ENV_ID", "VERSION", "CheckedEnv", "State", "TrashEnv", "auto_reset", "checked", "make"]
