"""The ``optimal`` and ``greedy-endgame`` agents: spec strings, both envs, the table's move on
public information alone, and games they cannot cover refused in one sentence."""

from __future__ import annotations

import numpy as np
import pytest

import agents.bots.optimal  # noqa: F401 - registers the agents (an installed checkout: entry points)
from agents.bots.base import check_fits, make_agent
from agents.bots.heuristics import GreedyAgent
from trash_env.engine import Game
from trash_env.env import env as trash_aec_env
from trash_env.exact.model import from_game
from trash_env.exact.tables import tables_for
from trash_env.rules import Rules
from trash_env.solo import TrashSoloEnv
from trash_env.view import PublicView


def test_optimal_plays_the_tables_move_on_public_information_alone():
    """At positions of real games the move is the table's, and re-dealing the hidden cards
    (every face-down card and the stock's order) never changes it."""
    agent = make_agent("optimal")
    tables = tables_for(Rules(), 2)
    rng = np.random.default_rng(3)
    seen = 0
    for seed in range(60):
        game = Game(Rules(start_size=2, episode="round"), seed=seed)
        while not game.done:
            seat = game.current
            mask = np.zeros(13, dtype=bool)
            mask[game.legal_actions()] = True
            action = agent.act(None, mask, PublicView(game, seat))
            assert action == tables.lookup((2, 2), from_game(game))[1]
            other = PublicView(game, seat).determinize(rng)
            assert agent.act(None, mask, PublicView(other, seat)) == action
            game.step(action)
            seen += 1
    assert seen > 150


def test_optimal_in_the_solo_env_and_the_aec_env():
    env = TrashSoloEnv(opponents=["optimal"], start_size=2)
    for seed in range(5):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            mask = env.action_masks()
            obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(mask)[0]))
            done = terminated or truncated
    aec = trash_aec_env(start_size=2)
    aec.reset(seed=1)
    bots = [make_agent("optimal"), make_agent("greedy-endgame")]
    for name in aec.agent_iter():
        _, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            aec.step(None)
            continue
        seat = aec.possible_agents.index(name)
        mask = aec.observe(name)["action_mask"]
        aec.step(bots[seat].act(None, mask, PublicView(aec.unwrapped.game, seat)))
    assert aec.unwrapped.game.done


def test_greedy_endgame_plays_greedy_until_both_layouts_fit():
    endgame, greedy = make_agent("greedy-endgame"), GreedyAgent()
    tables = tables_for(Rules(), 2)
    check_fits(endgame, Rules())  # the standard 10-slot game
    branches = set()
    for seed in range(20):
        game = Game(Rules(start_size=3), seed=seed)  # rounds at 3 slots, then at 2 and 1
        while not game.done:
            view = PublicView(game, game.current)
            mask = np.zeros(13, dtype=bool)
            mask[game.legal_actions()] = True
            action = endgame.act(None, mask, view)
            branches.add(max(game.sizes) > 2)
            if max(game.sizes) > 2:
                assert action == greedy.act(None, mask, view)
            else:
                assert action == tables.lookup(tuple(game.sizes), from_game(game))[1]
            game.step(action)
    assert branches == {True, False}


@pytest.mark.parametrize(
    "spec, rules, words",
    [
        ("optimal", Rules(), "layouts are all at most 2 slots"),
        ("optimal", Rules(num_players=3, start_size=2), "2-player"),
        ("optimal", Rules(wilds="faces", start_size=2), "wilds='faces'"),
        ("greedy-endgame", Rules(num_players=4), "2-player"),
    ],
)
def test_games_the_tables_cannot_cover_are_refused_in_one_sentence(spec, rules, words):
    with pytest.raises(ValueError, match=words) as error:
        check_fits(make_agent(spec), rules)
    assert "\n" not in str(error.value)


def test_optimal_refuses_a_round_beyond_its_tables_and_a_bad_size():
    game = Game(Rules(start_size=3, episode="round"), seed=0)
    mask = np.zeros(13, dtype=bool)
    mask[game.legal_actions()] = True
    with pytest.raises(ValueError, match="covers layouts of at most 2 slots; this round has"):
        make_agent("optimal").act(None, mask, PublicView(game, game.current))
    with pytest.raises(ValueError, match="max_size must be an integer from 1 to 10"):
        make_agent("optimal:max_size=11")


def test_the_browser_table_refuses_optimal_whose_tables_are_not_built(tmp_path, monkeypatch):
    """A page may not start an hour-long build: an unbuilt table is refused in one sentence
    naming the command that builds it; the shipped one plays."""
    from agents.web.table import build_bot

    monkeypatch.setenv("TRASH_ENV_CACHE", str(tmp_path))
    rules = Rules(num_players=2, start_size=2)
    agent, _ = build_bot("optimal", "optimal", 0, rules)
    assert agent.name == "optimal"
    with pytest.raises(
        ValueError, match=r"not built yet.*python -m trash_env\.exact build --max-size 3$"
    ):
        build_bot("optimal:max_size=3", "optimal:max_size=3", 0, rules)
    assert not any(tmp_path.rglob("*.bin"))
