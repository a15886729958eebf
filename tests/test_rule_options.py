"""Adding a rule option is as docs/development.md says: every place a new option must reach
knows every option ``Rules`` has, and a test here fails for the one that does not.

- the reference engine and the batched kernels: the option changes the games they play (an
  engine that ignores it plays the default's games, move for move), and the kernels read it at
  its ``CFG_*`` index or through the tables built from it;
- the soak's variants: every combination of the few-valued options the rules allow, read from
  ``Rules``;
- the text and the game log: a logged game of the option passes the log's checks and its
  replay names the option;
- the web page: the form offers the option in a kind play.js draws, and a table built from
  the form's body plays it.

(``tests/test_rules_config.py`` holds the command line, the OpenSpiel parameters, the batched
configuration and the docs' tables; ``tests/test_vector_differential.py`` the kernels against
the reference for variants setting every option.)
"""

from __future__ import annotations

import importlib.util
import io
import itertools
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
from test_rules_config import NOT_DEFAULT

from trash_env.engine import Game
from trash_env.rules import Rules, option_spec

ROOT = Path(__file__).resolve().parent.parent
OPTIONS = sorted(NOT_DEFAULT)
# The options the kernels receive as tables built from the rules, not at a CFG_* index.
AS_TABLES = {"wilds": "wild", "jokers": "wild", "num_decks": "deck"}


# Where NOT_DEFAULT's change shows only in long games: a turn limit random games reach (999 is
# above their length), and a stock small enough to run out.
SEEN = {
    "max_turns": ({"max_turns": 30}, {}),
    "reshuffle": ({"reshuffle": "all"}, {"num_players": 4, "num_decks": 1}),
}


def _rules(name: str) -> tuple[Rules, Rules]:
    """The rules with option ``name`` changed, and the rules it was changed from."""
    changed, needs = {**NOT_DEFAULT, **SEEN}[name]
    return Rules(**needs, **changed), Rules(**needs)


def _reference_games(rules: Rules, games: int = 12) -> list[tuple]:
    out = []
    for seed in range(games):
        game, rng = Game(rules, seed=seed), np.random.default_rng(seed)
        while not game.done:
            legal = game.legal_actions()
            game.step(legal[int(rng.integers(len(legal)))])
        out.append(tuple(game.events))
    return out


def test_every_option_has_a_changed_value_here():
    assert set(OPTIONS) == set(Rules.option_names())


@pytest.mark.parametrize("name", OPTIONS)
def test_the_reference_engine_plays_every_option(name):
    rules, base = _rules(name)
    assert _reference_games(rules) != _reference_games(base), f"the engine ignores {name}"


def _batched_games(rules: Rules, games: int = 12) -> bytes:
    from trash_env.vector import VectorGame

    batch = VectorGame(rules, games, seeds=list(range(games)))
    rng = np.random.default_rng(0)
    for _ in range(20_000):
        if batch.done.all():
            break
        masks = batch.action_masks().astype(bool)
        # A random legal action of each game's mask; CALL decisions are answered here too.
        choice = masks.cumsum(axis=1) <= rng.random((games, 1)) * masks.sum(1, keepdims=True)
        batch.step(choice.sum(axis=1))
    return batch.games.tobytes()


@pytest.mark.parametrize("name", OPTIONS)
def test_the_batched_kernels_play_every_option(name):
    pytest.importorskip("numba", reason="the batched engine needs numba (the vector extra)")
    from trash_env.vector import _kernels as K
    from trash_env.vector.batch import RulesArrays

    rules, base = _rules(name)
    reads = hasattr(K, "CFG_" + name.upper())
    table = AS_TABLES.get(name)
    assert reads or table, (
        f"the kernels import no CFG_{name.upper()} index (trash_env/codes.py) for {name}"
    )
    if table is not None:  # the table built from the rules differs
        assert not np.array_equal(
            getattr(RulesArrays(rules), table), getattr(RulesArrays(base), table)
        )
    assert _batched_games(rules) != _batched_games(base), f"the kernels ignore {name}"


def _soak():
    spec = importlib.util.spec_from_file_location("soak", ROOT / "benchmarks" / "soak.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_soak_plays_every_combination_of_the_few_valued_options():
    soak = _soak()
    few = {f.name: option_spec(f)["choices"] for f in fields(Rules) if option_spec(f)["choices"]}
    few["num_players"] = tuple(range(2, 7))
    allowed = set()
    for combo in itertools.product(*few.values()):
        try:
            Rules(**dict(zip(few, combo, strict=True)))
        except ValueError:
            continue
        allowed.add(combo)
    played = [tuple(getattr(r, name) for name in few) for r in soak.variants(0)]
    assert sorted(played) == sorted(allowed)
    for name in Rules.option_names():  # the integer options vary too
        assert len({getattr(r, name) for r in soak.variants(0)}) > 1, name


@pytest.mark.parametrize("name", OPTIONS)
def test_the_game_log_and_its_replay_know_every_option(name, tmp_path):
    import agents  # noqa: F401  (registers the bots)
    from agents.play.game_log import build_log, read_log, write_game_file
    from agents.play.replay import replay
    from trash_env.agent import make_agent
    from trash_env.match import Match

    rules, _ = _rules(name)
    game = Game(rules, seed=3)
    actions: list[tuple[int, int]] = []
    seats = [make_agent("random", seed=p) for p in range(rules.num_players)]
    Match(game, seats, on_action=lambda p, a: actions.append((p, a))).play()
    names = [f"random {p}" for p in range(rules.num_players)]
    log = build_log(
        game, seed=3, seat=None, specs=["random"] * len(names), names=names, actions=actions
    )
    path = tmp_path / "game.json"
    write_game_file(path, log)
    read = read_log(path)  # the log's checks of every field and event
    assert Rules.from_options(**read["rules"]) == rules
    out = io.StringIO()
    replay(read, out)
    header = out.getvalue().splitlines()[1]
    assert f"{name}={getattr(rules, name)}" in header, header


@pytest.mark.parametrize("name", OPTIONS)
def test_the_web_page_offers_and_plays_every_option(name):
    from agents.web.table import WebTable, rules_form

    changed, needs = NOT_DEFAULT[name]
    rules = Rules(**needs, **changed)
    script = (ROOT / "agents" / "web" / "static" / "play.js").read_text(encoding="utf-8")
    if name == "num_players":  # the page's own "players" field
        body = {"players": rules.num_players, "opponents": ["random"]}
    elif name == "max_turns":  # not on the form: the server's limit; a request may set it
        body = {"opponents": ["random"], "rules": {name: rules.max_turns}}
    else:
        form = {entry["name"]: entry for entry in rules_form()}
        assert name in form, f"the page's form lacks {name}"
        kind = form[name]["kind"]
        assert kind == "int" or f'"{kind}"' in script, f"play.js does not draw a {kind} field"
        body = {"opponents": ["random"], "rules": {**needs, **changed}}
    table = WebTable.from_request({**body, "seed": 1})
    assert table.rules == rules
