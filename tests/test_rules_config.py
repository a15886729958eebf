"""Rules validation: every invalid value and impossible combination fails at construction with a
ValueError naming the option and what is allowed; stacked deals must hold the decks' cards."""

import re

import pytest

from trash_env.engine import Game
from trash_env.rules import Rules


def test_defaults_are_the_standard_game():
    r = Rules()
    assert (r.num_players, r.decks, r.start_size, r.wilds, r.jokers) == (2, 1, 10, "jacks", False)
    assert (r.target_size, r.max_deals) == (0, None)
    assert (r.first_player, r.reshuffle) == ("winner", "keep_top")
    assert (r.losers_reveal, r.free_draws, r.call_trash, r.episode) == (False, 0, False, "game")


@pytest.mark.parametrize(
    "options,patterns",
    [
        ({"num_players": 1}, ["num_players", "2 to 6"]),
        ({"num_players": 7}, ["num_players", "2 to 6", "7"]),
        ({"num_players": "2"}, ["num_players", "integer"]),
        ({"num_players": 2.0}, ["num_players", "integer"]),
        ({"num_players": True}, ["num_players"]),
        ({"num_decks": 0}, ["num_decks", "1 to 12"]),
        ({"num_decks": 13}, ["num_decks", "1 to 12"]),
        ({"num_decks": 1.5}, ["num_decks"]),
        ({"start_size": 0}, ["start_size", "1 to 10"]),
        ({"start_size": 11}, ["start_size", "1 to 10", "11"]),
        ({"wilds": "queens"}, ["wilds", "'jacks'", "'kings'", "'faces'", "'none'", "queens"]),
        ({"wilds": None}, ["wilds"]),
        ({"jokers": 1}, ["jokers", "False", "True"]),
        ({"jokers": "yes"}, ["jokers"]),
        ({"target_size": -1}, ["target_size"]),
        ({"target_size": 10}, ["target_size", "start_size", "0 to 9"]),
        ({"start_size": 5, "target_size": 5}, ["target_size", "start_size", "0 to 4"]),
        ({"start_size": 5, "target_size": 7}, ["target_size", "0 to 4"]),
        ({"max_deals": 0}, ["max_deals", "1 to"]),
        ({"max_deals": "3"}, ["max_deals"]),
        ({"first_player": "loser"}, ["first_player", "'winner'", "'rotate'"]),
        ({"reshuffle": "none"}, ["reshuffle", "'keep_top'", "'all'"]),
        ({"losers_reveal": 1}, ["losers_reveal", "False", "True"]),
        ({"free_draws": 2}, ["free_draws", "0", "3"]),
        ({"free_draws": True}, ["free_draws"]),
        ({"free_draws": 3}, ["free_draws", "num_players=2", "losers_reveal=True"]),
        (
            {"free_draws": 3, "losers_reveal": True, "num_players": 3},
            ["free_draws", "num_players=2", "num_players=3"],
        ),
        ({"call_trash": "no"}, ["call_trash", "False", "True"]),
        ({"episode": "deal"}, ["episode", "'game'", "'round'"]),
        ({"max_turns": 0}, ["max_turns", "1 to"]),
        ({"num_players": 6, "num_decks": 1}, ["num_decks=1", "52 cards", "62", "num_decks >= 2"]),
        ({"num_players": 3, "num_decks": 1, "start_size": 10}, []),  # 32 <= 52: fine
        ({"num_players": 6, "num_decks": 2, "start_size": 10}, []),  # 62 <= 104: fine
    ],
)
def test_invalid_options_name_the_option_and_the_allowed_values(options, patterns):
    if not patterns:
        Rules(**options)  # a valid combination, listed for contrast
        return
    with pytest.raises(ValueError) as info:
        Rules(**options)
    message = str(info.value)
    for pattern in patterns:
        assert pattern in message, (pattern, message)


@pytest.mark.parametrize(
    "players,size,decks,jokers,ok",
    [
        (5, 10, 1, False, True),  # 50 + 2 = 52: exactly fits
        (6, 10, 1, False, False),  # 62 > 52
        (6, 8, 1, False, True),  # 50 <= 52
        (6, 9, 1, False, False),  # 56 > 52
        (6, 9, 1, True, False),  # 56 > 54
        (6, 10, 2, True, True),  # 62 <= 108
        (4, 10, 1, True, True),  # 42 <= 54
    ],
)
def test_too_few_cards_for_the_layouts(players, size, decks, jokers, ok):
    options = dict(num_players=players, start_size=size, num_decks=decks, jokers=jokers)
    needed = players * size + 2
    if ok:
        assert Rules(**options).total_cards >= needed
    else:
        with pytest.raises(ValueError, match=f"num_decks={decks}.*need {needed}"):
            Rules(**options)


def test_suggested_deck_count_is_enough():
    for players, size, jokers in [(6, 10, False), (6, 9, True), (5, 10, True)]:
        for decks in range(1, 4):
            options = dict(num_players=players, start_size=size, jokers=jokers)
            try:
                Rules(num_decks=decks, **options)
            except ValueError as error:
                suggested = int(re.search(r"num_decks >= (\d+)", str(error)).group(1))
                assert suggested > decks
                Rules(num_decks=suggested, **options)  # the suggestion is enough...
                with pytest.raises(ValueError):
                    Rules(num_decks=suggested - 1, **options)  # ... and the least that is


def test_rules_are_frozen():
    r = Rules()
    with pytest.raises(AttributeError):
        r.num_players = 3  # type: ignore[misc]


def test_from_options_rejects_unknown_names():
    with pytest.raises(ValueError) as info:
        Rules.from_options(players=3, wild="kings")
    message = str(info.value)
    assert "players" in message and "wild" in message
    for name in Rules.option_names():
        assert name in message  # the allowed names are listed


def test_from_options_round_trips_to_dict():
    r = Rules(num_players=4, wilds="faces", jokers=True, max_deals=5, call_trash=True)
    assert Rules.from_options(**r.to_dict()) == r
    assert set(r.to_dict()) == set(Rules.option_names())


def test_stacked_deal_with_a_wrong_multiset_raises():
    deck = sorted(range(1, 14)) * 4
    Game(Rules(), deals=[deck], first_player=0)  # the right cards: fine
    with pytest.raises(ValueError, match="deals"):
        Game(Rules(), deals=[deck[:-1]], first_player=0)  # a card short
    with pytest.raises(ValueError, match="deals"):
        Game(Rules(), deals=[deck + [5]], first_player=0)  # a card too many
    with pytest.raises(ValueError, match="deals"):
        Game(Rules(), deals=[deck[:-1] + [0]], first_player=0)  # a joker without jokers
    wrong = deck[:]
    wrong[wrong.index(13)] = 12  # five Queens, three Kings
    with pytest.raises(ValueError, match="missing.*13.*extra.*12"):
        Game(Rules(), deals=[wrong], first_player=0)


def test_first_player_out_of_range_raises():
    with pytest.raises(ValueError, match="first_player must be an integer from 0 to 1"):
        Game(Rules(), seed=0, first_player=2)


def test_numpy_integers_are_accepted_and_stored_as_plain_ints():
    import numpy as np

    rules = Rules(num_players=np.int64(3), start_size=np.int32(7), max_deals=np.int64(4))
    assert (rules.num_players, rules.start_size, rules.max_deals) == (3, 7, 4)
    assert all(type(v) is int for v in (rules.num_players, rules.start_size, rules.max_deals))
    assert rules == Rules(num_players=3, start_size=7, max_deals=4)


@pytest.mark.parametrize(
    "options", [{"free_draws": 3.0}, {"num_players": 2.0}, {"wilds": b"jacks"}]
)
def test_non_integer_numbers_and_wrong_types_are_refused(options):
    with pytest.raises(ValueError, match=next(iter(options))):
        Rules(losers_reveal=True, **options)


# ---------------------------------------------------------------------- every table

# Per option, a value other than the default (with the options it needs): a new Rules option
# must be listed here, and then reaches the command line, OpenSpiel and the batched engine.
NOT_DEFAULT = {
    "num_players": ({"num_players": 4}, {}),
    "num_decks": ({"num_decks": 3}, {}),
    "start_size": ({"start_size": 6}, {}),
    "wilds": ({"wilds": "faces"}, {}),
    "jokers": ({"jokers": True}, {}),
    "target_size": ({"target_size": 2}, {}),
    "max_deals": ({"max_deals": 7}, {}),
    "first_player": ({"first_player": "rotate"}, {}),
    "reshuffle": ({"reshuffle": "all"}, {}),
    "losers_reveal": ({"losers_reveal": True}, {}),
    "free_draws": ({"free_draws": 3}, {"losers_reveal": True}),
    "call_trash": ({"call_trash": True}, {}),
    "episode": ({"episode": "round"}, {}),
    "max_turns": ({"max_turns": 999}, {}),
}


def test_every_option_has_a_non_default_value_listed():
    assert set(NOT_DEFAULT) == set(Rules.option_names())


def _argv(options: dict) -> list[str]:
    from dataclasses import fields

    from trash_env.rules import option_spec

    argv = []
    for f in fields(Rules):
        if f.name in options:
            flag, value = option_spec(f)["flags"][0], options[f.name]
            if isinstance(value, bool):
                argv.append(flag if value else "--no-" + flag[2:])
            else:
                argv += [flag, str(value)]
    return argv


@pytest.mark.parametrize("name", sorted(NOT_DEFAULT))
def test_every_option_reaches_the_command_line(name):
    import argparse

    from trash_env.cli import add_rules_arguments, rules_options

    changed, needs = NOT_DEFAULT[name]
    options = {**needs, **changed}
    parser = argparse.ArgumentParser()
    add_rules_arguments(parser)
    parsed = rules_options(parser.parse_args(_argv(options)))
    assert parsed == options
    assert Rules(**parsed) == Rules(**options) != Rules(**needs)
    assert name in parser.format_help().replace("-", "_")


@pytest.mark.parametrize("name", sorted(NOT_DEFAULT))
def test_every_option_reaches_the_openspiel_parameters(name):
    spiel = pytest.importorskip(
        "trash_env.spiel", reason="OpenSpiel is not installed (the 'openspiel' extra)"
    )
    changed, needs = NOT_DEFAULT[name]
    rules = Rules(**needs, **changed)
    params = spiel.params_from_rules(rules)
    assert set(params) == set(spiel.PARAMETERS)
    assert spiel.rules_from_params(params) == rules
    assert params != spiel.params_from_rules(Rules(**needs))


@pytest.mark.parametrize("name", sorted(NOT_DEFAULT))
def test_every_option_reaches_the_batched_engine_config(name):
    pytest.importorskip("numba", reason="numba is not installed (the 'vector' extra)")
    from trash_env.rules import option_index
    from trash_env.vector.batch import RulesArrays

    changed, needs = NOT_DEFAULT[name]
    rules, base = Rules(**needs, **changed), Rules(**needs)
    cfg, base_cfg = RulesArrays(rules).cfg, RulesArrays(base).cfg
    assert cfg[option_index(name)] != base_cfg[option_index(name)]
    assert cfg[: len(Rules.option_names())].tolist() == list(rules.codes())


def test_codes_tell_every_value_apart():
    from dataclasses import fields

    from trash_env.rules import option_spec

    for f in fields(Rules):
        choices = option_spec(f)["choices"]
        if choices is not None:
            codes = {
                Rules(**_valid(f.name, c)).codes()[Rules.option_names().index(f.name)]
                for c in choices
            }
            assert len(codes) == len(choices), f.name


def _valid(name: str, value: object) -> dict:
    needs = NOT_DEFAULT[name][1] if value != getattr(Rules(), name) else {}
    return {**needs, name: value}


def test_the_docs_tables_list_every_option():
    """docs/development.md lists these pages among the files a new option touches."""
    from dataclasses import fields
    from pathlib import Path

    from trash_env.rules import option_spec

    docs = Path(__file__).resolve().parent.parent / "docs"
    rule_book = (docs / "rules.md").read_text(encoding="utf-8")
    environment = (docs / "environment.md").read_text(encoding="utf-8")
    openspiel = (docs / "openspiel.md").read_text(encoding="utf-8")
    for f in fields(Rules):
        assert f"`{f.name}" in rule_book, f.name
        assert f"| `{f.name}` |" in environment, f.name
        assert f"| `{option_spec(f)['param']}` |" in openspiel, f.name
