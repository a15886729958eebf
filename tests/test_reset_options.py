"""reset(options=...): the AEC env takes no option, the solo env only ``seat``; anything else is
refused naming the allowed ones (PettingZoo and Gymnasium pass any dict through, so a misspelt
option used to be ignored without a word)."""

from __future__ import annotations

import pytest

import trash_env
from trash_env.solo import TrashSoloEnv


@pytest.mark.parametrize("make", [trash_env.env, trash_env.raw_env], ids=["env", "raw_env"])
def test_the_aec_env_refuses_every_reset_option(make) -> None:
    env = make()
    with pytest.raises(
        ValueError,
        match=r"^reset options: unknown nope; allowed: none \(the rules are fixed when the env",
    ):
        env.reset(seed=0, options={"nope": 1})
    with pytest.raises(ValueError, match=r"reset options: unknown num_players, seat;"):
        env.reset(options={"seat": 0, "num_players": 3})
    with pytest.raises(ValueError, match="reset options must be a dict or None, got list"):
        env.reset(options=["seat"])
    with pytest.raises(ValueError, match="reset options: unknown options;"):
        env.reset(options={"options": 2})
    env.reset(seed=0, options={})  # empty and None are no options
    env.reset(seed=0, options=None)
    env.reset(seed=0, options={"options": 1})  # PettingZoo's api_test probe (tests/test_env_api)
    assert env.agents == env.possible_agents


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"nope": 1}, "reset options: unknown nope; allowed: seat"),
        ({"seat": 0, 7: 1}, "reset options: unknown 7; allowed: seat"),
        ("seat", "reset options must be a dict or None, got str"),
    ],
)
def test_the_solo_env_takes_only_the_seat(options, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TrashSoloEnv().reset(seed=0, options=options)
    assert TrashSoloEnv().reset(seed=0, options={"seat": 1})[1]["seat"] == 1
