"""The edges of the envs: a step after the game, an agent name the env does not have, seeds
and numpy values, the legend under every wild rule, and the table drawn at the game's end."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import trash_env
from agents.bots.base import RandomAgent, make_agent
from agents.play.human import draw_table
from trash_env.engine import ABSENT, Game
from trash_env.env import GameOverError
from trash_env.render import render_image, render_text
from trash_env.solo import TrashSoloEnv
from trash_env.view import PublicView

MAKERS = [trash_env.env, trash_env.raw_env]


def play_to_the_end(e, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


# ---------------------------------------------------------------------- step after the game


@pytest.mark.parametrize("maker", MAKERS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("action", [0, None])
def test_a_step_after_every_agent_is_done_raises(maker, action):
    e = maker(episode="round", start_size=2)
    e.reset(seed=0)
    play_to_the_end(e, 0)
    assert e.agents == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not PettingZoo's warning: an error
        with pytest.raises(GameOverError, match=r"step\(\) after the game ended: .* call reset"):
            e.step(action)
    assert isinstance(GameOverError(), RuntimeError)
    e.reset(seed=1)  # and the env plays on after a reset
    play_to_the_end(e, 1)


# ---------------------------------------------------------------------- agent names


@pytest.mark.parametrize("maker", MAKERS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("name", ["player_9", "player_2", "", 0, None])
def test_an_unknown_agent_is_named_with_the_agents_of_the_env(maker, name):
    e = maker()
    e.reset(seed=0)
    message = re.escape(f"unknown agent {name!r}: this env's agents are player_0, player_1")
    for call in (e.observe, e.observation_space, e.action_space):
        with pytest.raises(ValueError, match=message):
            call(name)
    by_numpy_name = e.observe(np.str_("player_1"))["observation"]
    assert np.array_equal(by_numpy_name, e.observe("player_1")["observation"])


# ---------------------------------------------------------------------- seeds


BAD_SEEDS = [-1, 1.5, True, np.bool_(False), "3", np.int64(-2), [1, 2]]


def seed_message(seed: object) -> str:
    return re.escape(f"seed must be None or an integer 0 or more, got {seed!r}")


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_a_bad_seed_is_named_everywhere_it_is_taken(seed):
    for maker in MAKERS:
        with pytest.raises(ValueError, match=seed_message(seed)):
            maker().reset(seed=seed)
    with pytest.raises(ValueError, match=seed_message(seed)):
        TrashSoloEnv().reset(seed=seed)
    with pytest.raises(ValueError, match=seed_message(seed)):
        make_agent("greedy", seed=seed)
    with pytest.raises(ValueError, match=seed_message(seed)):
        RandomAgent(0).reset(seed)


def test_numpy_seeds_play_as_python_ones():
    for maker in MAKERS:
        a, b = maker(), maker()
        a.reset(seed=7)
        b.reset(seed=np.uint64(7))
        assert a.unwrapped.game.events == b.unwrapped.game.events
    solo_a, solo_b = TrashSoloEnv(), TrashSoloEnv()
    assert np.array_equal(solo_a.reset(seed=7)[0], solo_b.reset(seed=np.int32(7))[0])
    assert solo_a.deal_seed == solo_b.deal_seed
    assert make_agent("random", seed=np.int64(3)).rng.integers(100) == (
        make_agent("random", seed=3).rng.integers(100)
    )


# ---------------------------------------------------------------------- numpy values


def test_numpy_seats_and_flags_are_taken_as_pythons():
    env = TrashSoloEnv(seat=np.int64(1), round_rewards=np.bool_(True))
    assert env.seat_option == 1 and type(env.seat_option) is int
    assert env.round_rewards is True
    env.reset(seed=0)
    assert env.seat == 1
    env.reset(seed=0, options={"seat": np.int8(0)})
    assert env.seat == 0
    raw = trash_env.raw_env(round_rewards=np.bool_(True))
    assert raw.round_rewards is True
    with pytest.raises(ValueError, match=r"seat must be None or an integer from 0 to 1"):
        TrashSoloEnv(seat=np.int64(2))
    with pytest.raises(ValueError, match=r"seat must be None or an integer from 0 to 1"):
        TrashSoloEnv(seat=np.bool_(True))


# ---------------------------------------------------------------------- the legend


@pytest.mark.parametrize(
    ("options", "key"),
    [
        ({}, "(J) wild card face-up"),
        ({"wilds": "kings"}, "(K) wild card face-up"),
        ({"wilds": "faces"}, "(J) (Q) (K) wild cards face-up"),
        ({"wilds": "jacks", "jokers": True}, "(J) (*) wild cards face-up"),
        ({"wilds": "none", "jokers": True}, "(*) wild card face-up"),
        ({"wilds": "none"}, None),
    ],
)
def test_the_legend_names_the_wild_cards_of_the_rules(options, key):
    e = trash_env.raw_env(render_mode="ansi", **options)
    e.reset(seed=0)
    game = e.game
    terminal = draw_table(PublicView(game, 0), ["You", "bot"])
    for text in (e.render(), render_text(game), terminal):
        legend = text.splitlines()[-1]
        assert legend.startswith("## face-down")
        if key is None:
            assert "wild" not in legend
        else:
            assert key in legend
            assert legend.count("(") == key.count("(")


# ---------------------------------------------------------------------- the final table


def drawn_layouts(text: str, num_players: int) -> list[tuple[int, int]]:
    """Per player of an ansi render: (the size its header says, the slots its rows draw)."""
    lines = text.splitlines()
    out = []
    for p in range(num_players):
        i = next(i for i, line in enumerate(lines) if line[2:].startswith(f"player_{p}:"))
        size = int(re.search(r"layout of (\d+)", lines[i]).group(1))
        cells = [row[4 + 4 * k : 8 + 4 * k] for row in lines[i + 1 : i + 3] for k in range(5)]
        out.append((size, sum(c.strip() != "--" for c in cells)))
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("options", [{"start_size": 2}, {"start_size": 3, "max_deals": 2}])
def test_the_table_counts_what_it_draws_to_the_games_end(seed, options):
    """The header's layout size is the number of slots the rows draw at every step, the last
    one included: the winner of the standard game has size 0 in the engine, but the table
    shows the one-card layout they completed, as a layout of 1."""
    e = trash_env.raw_env(render_mode="ansi", num_players=3, **options)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not e.game.done:
        for size, drawn in drawn_layouts(e.render(), 3):
            assert size == drawn
        obs = e.observe(e.agent_selection)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    final = drawn_layouts(e.render(), 3)
    assert all(size == drawn for size, drawn in final)
    game = e.game
    assert final == [(sum(s != ABSENT for s in game.state[p]),) * 2 for p in range(3)]
    if "max_deals" not in options:
        winner = game.winners[0]
        assert game.sizes[winner] == 0 and final[winner] == (1, 1)
    render_image(game)  # the picture of the final table draws as well


def test_a_finished_game_shows_its_last_layouts():
    game = Game(seed=3)
    rng = np.random.default_rng(3)
    while not game.done:
        game.step(int(rng.choice(game.legal_actions())))
    text = render_text(game)
    winner = game.winners[0]
    assert f"player_{winner}: layout of 1," in text
