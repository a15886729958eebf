"""Trash as pure JAX functions with Pgx's API (docs/jax.md); the ``jax`` extra.

``make(**rules_options)`` gives the environment (``init``, ``step``, ``observe``); batches are
``jax.vmap(env.init)`` and ``jax.vmap(env.step)``. Nothing here imports torch, numba or
stable-baselines3.
"""

from trash_env.jax_env.env import ENV_ID, VERSION, State, TrashEnv, auto_reset, make

__all__ = ["ENV_ID", "VERSION", "State", "TrashEnv", "auto_reset", "make"]
