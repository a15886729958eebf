"""The terminal game (``python -m agents.play``) and the human seat, driven through stdin.

Games are short (small layouts, one deal where that is enough) and seeded, so every test
runs in well under a second, except the pseudo-terminal ones, which start a Python process.
"""

from __future__ import annotations

import io
import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import A, J, K, Q, game

from agents import make_agent
from agents.bots.base import RandomAgent
from agents.play.game import Table, main
from agents.play.game_log import read_log
from agents.play.human import HumanAgent, HumanQuit, describe, draw_table, parse_choice, seat_names
from trash_env.engine import (
    ABSENT,
    CALL_TRASH,
    DECLINE,
    DOWN,
    DRAW_STOCK,
    EVENT_KINDS,
    STAY_SILENT,
    TAKE_DISCARD,
    Decision,
    Event,
    Game,
)
from trash_env.rules import Rules
from trash_env.view import PublicView

SHORT = ["--start-size", "2", "--opponents", "random"]


def run(argv: list[str], text: str = "") -> tuple[int, str]:
    out = io.StringIO()
    code = main(argv, stdin=io.StringIO(text), stdout=out)
    return code, out.getvalue()


class Responder(io.TextIOBase):
    """A stdin that reads the last prompt printed and answers it like a careful player: the
    stock at a draw, the first slot offered, a swap when offered, and "trash" at a call.
    ``first`` lists answers typed before that, one per question, bad ones included."""

    def __init__(self, out: io.StringIO, first: tuple[str, ...] = (), call: str = "trash"):
        self.out, self.first, self.call = out, list(first), call
        self.prompts: list[str] = []

    def readline(self, size: int = -1) -> str:
        prompt = self.out.getvalue().rsplit("\n", 1)[-1]
        self.prompts.append(prompt)
        if self.first:
            return self.first.pop(0) + "\n"
        if "[s/d]" in prompt:
            return "s\n"
        if "trash" in prompt:
            return self.call + "\n"
        offered = re.search(r"\[(\d+)", prompt)
        assert offered, f"unexpected question {prompt!r}"
        return offered.group(1) + "\n"


def play_scripted(argv: list[str], first: tuple[str, ...] = (), call: str = "trash"):
    out = io.StringIO()
    stdin = Responder(out, first, call)
    code = main(argv, stdin=stdin, stdout=out)
    return code, out.getvalue(), stdin


def table_for(g: Game, text: str, seat: int = 0) -> tuple[Table, io.StringIO]:
    """A stacked game at the terminal: the person at ``seat``, random bots elsewhere."""
    out = io.StringIO()
    specs = ["random"] * g.num_players
    specs[seat] = "human"
    names = seat_names(g.num_players, seat, specs)
    human = HumanAgent(stdin=io.StringIO(text), stdout=out, names=names)
    bots = {p: RandomAgent(seed=p) for p in range(g.num_players) if p != seat}
    return Table(g, seat, bots, human, names, specs, seed=None), out


# ---------------------------------------------------------------------- the screen


def test_table_shows_face_down_natural_wild_and_absent_slots_and_never_a_hidden_card():
    # Player 0 (layout of 9) draws the 3, lays it in slot 3 and picks up the Jack that lay
    # there: the Jack is now in hand and wild, waiting for a slot.
    g = game([[Q, 8, J, K, K, 10, 10, K, 7], [None] * 9], stock=[3, 5], first_player=0)
    assert g.decision == Decision.WILD and g.held == J
    g.state[1][4], g.layout[1][4] = 2, J  # seat 2 shows a wild Jack in slot 5 (drawing only)
    text = draw_table(PublicView(g, 0), ["You", "random (seat 2)"], deal=1)
    lines = text.splitlines()
    assert lines[0] == "> You: layout of 9, 0 rounds won, 8 face-down"
    assert lines[1].split() == ["1", "2", "3", "4", "5"]
    assert lines[2].split() == ["##", "##", "3", "##", "##"]
    assert lines[3].split() == ["6", "7", "8", "9", "10"]
    assert lines[4].split() == ["##", "##", "##", "##", "--"]  # slot 10 is not in the layout
    assert lines[5].startswith("  random (seat 2): layout of 9")
    assert lines[7].split() == ["##", "##", "##", "##", "(J)"]
    assert "Deal 1: stock" in text and "discard pile empty" in text
    assert "In hand: Jack (wild)" in text
    assert "8" not in lines[2] + lines[4] and "7" not in lines[4]  # face-down cards stay hidden


def test_describe_speaks_to_you_in_the_second_person_for_every_event_kind():
    names = ["You", "greedy (seat 2)"]
    for kind in EVENT_KINDS:
        text = describe(Event(kind, 0, 5, 3), names)
        assert not re.search(r"\bYou (plays|claims|gets|has|now has|is)\b", text), text
    assert describe(Event("claim", 0), names) == "You claim the round"
    assert describe(Event("shrink", 0, -1, 9), names) == "You now have a layout of 9"
    assert describe(Event("deal", 1, -1, 0), names) == "Deal 1: greedy (seat 2) plays first"
    assert describe(Event("draw_stock", 1, 7), names) == "greedy (seat 2) drew 7 from the stock"
    pickup = describe(Event("pickup", 1, 11, 6), names)
    assert pickup == "greedy (seat 2) picked up Jack from slot 7"


# ---------------------------------------------------------------------- answers


def test_parse_choice_names_the_legal_action_or_says_what_is_wrong():
    g = game([[Q, 8, J, K, K, 10, 10, K, 7], [None] * 9], stock=[3, 5], first_player=0)
    view = PublicView(g, 0)  # WILD: face-down slots 1, 2, 4..9
    assert parse_choice("4", view) == 3
    assert parse_choice(" 9 \n", view) == 8
    assert parse_choice("3", view).startswith("Slot 3 is already face-up (3)")
    assert parse_choice("10", view) == "Slot 10 is not in your layout of 9."
    assert parse_choice("11", view).startswith("There is no slot 11")
    assert parse_choice("0", view).startswith("There is no slot 0")
    assert "not a choice here" in parse_choice("n", view)
    assert "not a choice here" in parse_choice("s", view)
    assert parse_choice("", view) == "Please type one of the keys shown."
    assert "only when you are about to fill your last slot" in parse_choice("trash", view)
    assert (parse_choice("q", view), parse_choice("H", view)) == ("quit", "help")

    g.step(3)  # the Jack on slot 4 uncovers a King: the turn ends; seat 2 plays
    while g.current != 0:
        g.step(DRAW_STOCK if g.decision == Decision.DRAW else g.legal_actions()[0])
    view = PublicView(g, 0)
    assert view.decision == Decision.DRAW
    assert (parse_choice("s", view), parse_choice("D", view)) == (DRAW_STOCK, TAKE_DISCARD)
    assert "now you draw" in parse_choice("4", view)


def test_parse_choice_swap_and_call():
    # Seat 1 holds a 4 with its wild Jack face-up in slot 4: swap (4) or decline (n).
    g = game([[Q, Q, Q, K], [None] * 4], stock=[J, K, 4], first_player=0, start_size=4)
    g.step(3)
    g.step(DRAW_STOCK)  # seat 2: King, discarded
    g.step(DRAW_STOCK)  # seat 1: the 4, its slot holds the wild Jack
    assert g.decision == Decision.SWAP and g.current == 0
    view = PublicView(g, 0)
    assert (parse_choice("4", view), parse_choice("n", view)) == (3, DECLINE)
    assert parse_choice("2", view) == "The 4 can only go to slot 4: type 4 or n."

    g = game([[Q, A], [Q, Q]], stock=[2, K, K], first_player=0, call_trash=True)
    assert g.decision == Decision.CALL
    view = PublicView(g, 0)
    assert parse_choice("Trash", view) == CALL_TRASH
    assert parse_choice("trash!", view) == CALL_TRASH
    assert parse_choice("", view) == STAY_SILENT
    assert "is not a call" in parse_choice("trahs", view)


# ---------------------------------------------------------------------- whole games


def test_scripted_game_prints_the_table_events_and_result_and_logs_every_event(tmp_path):
    log_path = tmp_path / "game.json"
    code, text, stdin = play_scripted(["--seed", "5", "--log", str(log_path), *SHORT])
    assert code == 0
    assert text.startswith("Trash: you are seat 1 of 2; seed 5.")
    assert "Draw a card:  s = the top of the stock" in text
    assert "Your choice [s/d]: s\n" in text  # piped answers are echoed
    assert re.search(r"^  You drew \w+ from the stock$", text, re.M)
    assert re.search(r"^  random \(seat 2\) (drew|took) ", text, re.M)
    assert "The table at the end of deal 1:" in text
    assert re.search(r"^(You won the game!|random \(seat 2\) won the game\.)$", text, re.M)
    assert f"Game log written to {log_path}" in text
    assert all(p.endswith(": ") for p in stdin.prompts)

    log = read_log(log_path)
    assert log["seed"] == 5 and log["finished"] and log["seat"] == 0
    assert log["rules"] == Rules(start_size=2).to_dict()
    assert log["agents"] == ["human", "random"]
    # The log is complete: the rules, the seed and the actions replay the very same events.
    g = Game(Rules(**log["rules"]), seed=log["seed"])
    for player, action in log["actions"]:
        assert g.current == player
        g.step(action)
    assert [list(e) for e in g.events] == log["events"]
    assert g.done and list(g.winners) == log["winners"]
    # Every event was shown to the person, in words, in order.
    shown = [line[2:] for line in text.splitlines() if line.startswith("  ")]
    said = [describe(Event(*e), log["names"]) for e in log["events"]]
    positions = [shown.index(s) for s in said[:10]]
    assert positions == sorted(positions)
    assert set(said) <= set(shown)


def test_same_seed_same_game(tmp_path):
    a = play_scripted(["--seed", "11", "--no-log", *SHORT])[1]
    b = play_scripted(["--seed", "11", "--no-log", *SHORT])[1]
    c = play_scripted(["--seed", "12", "--no-log", *SHORT])[1]
    assert a == b and a != c


def test_three_players_rules_flags_reach_the_engine_and_placings_are_shown(tmp_path):
    log_path = tmp_path / "three.json"
    argv = [
        "--seed",
        "3",
        "--players",
        "3",
        "--seat",
        "2",
        "--log",
        str(log_path),
        "--start-size",
        "2",
        "--opponents",
        "random",
        "--wilds",
        "faces",
        "--jokers",
        "--losers-reveal",
        "--first-player",
        "rotate",
        "--reshuffle",
        "all",
        "--decks",
        "2",
        "--target-size",
        "1",
        "--max-turns",
        "5000",
    ]
    code, text, _ = play_scripted(argv)
    assert code == 0
    assert text.startswith("Trash: you are seat 2 of 3")
    assert "random (seat 1)" in text and "random (seat 3)" in text and "> You: layout of 2" in text
    assert re.search(r"^Places: 1\. ", text, re.M)
    log = read_log(log_path)
    assert log["seat"] == 1 and log["agents"] == ["random", "human", "random"]
    assert (
        log["rules"]
        == Rules(
            num_players=3,
            start_size=2,
            wilds="faces",
            jokers=True,
            losers_reveal=True,
            first_player="rotate",
            reshuffle="all",
            num_decks=2,
            target_size=1,
            max_turns=5000,
        ).to_dict()
    )


def test_every_rules_option_has_a_flag():
    from agents.play.game import build_parser

    helps = {action.dest: action.help for action in build_parser()._actions}
    for name in Rules.option_names():
        assert name in helps, f"rules option {name} has no flag"
        assert len(helps[name]) > 30 and "``" not in helps[name], helps[name]


def test_bad_answers_get_a_message_and_the_question_again():
    # Seat 1 draws the 3 (first turn: from the stock at once) and picks up the Jack in slot 3.
    g = game([[Q, 8, J, K], [None] * 4], stock=[3, K, K, K], first_player=0, episode="round")
    answers = ["", "x", "3", "5", "s", "2", "q"]
    table, out = table_for(g, "\n".join(answers) + "\n")
    with pytest.raises(HumanQuit):
        table.play()
    text = out.getvalue()
    asked = "Slot for the Jack [1/2/4]: "
    assert f"{asked}\nPlease type one of the keys shown.\n{asked}x\n" in text
    assert "'x' is not a choice here: type a slot number.\n" in text
    assert f"{asked}3\nSlot 3 is already face-up (3); choose a face-down slot: 1, 2, 4.\n" in text
    assert f"{asked}5\nSlot 5 is not in your layout of 4.\n" in text
    assert f"{asked}s\n's' is not a choice here" in text
    assert f"{asked}2\n" in text and "  You laid the wild Jack on slot 2" in text
    assert "Traceback" not in text


def test_help_and_table_keys_repeat_the_question():
    g = game([[Q, 8, J, K], [None] * 4], stock=[3, K, K, K], first_player=0)
    table, out = table_for(g, "h\nt\nq\n")
    with pytest.raises(HumanQuit):
        table.play()
    text = out.getvalue()
    assert "Keys: s = draw from the stock" in text
    assert text.count("Slot for the Jack [1/2/4]: ") == 3
    assert text.count("> You: layout of 4") == 2


@pytest.mark.parametrize("answer", ["", "nope"])
def test_missed_call_penalty_then_claim(answer):
    # Seat 1 draws the 2, lays it in slot 2 and picks up the Ace: the last face-down slot.
    g = game([[Q, A], [Q, Q]], stock=[2, K, K, K], first_player=0, call_trash=True, episode="round")
    text = "nope\n\n" if answer else "\n"
    table, out = table_for(g, text)
    table.play()
    screen = out.getvalue()
    prompt = 'Type trash to call "Trash!", or press Enter to place it without calling: '
    assert "You are about to fill your last face-down slot with the Ace." in screen
    if answer:
        assert f"{prompt}nope\n'nope' is not a call: type trash (or press Enter" in screen
    lines = [line.strip() for line in screen.splitlines()]
    i = lines.index("You placed Ace in slot 1")
    assert lines[i + 1 : i + 4] == [
        "You picked up Queen from slot 1",
        "You discarded Queen",
        "You forgot to call and drew the penalty card King",
    ]
    assert "You claim the round" in lines and "You won the round" in lines
    assert lines.index("You claim the round") > lines.index("random (seat 2) discarded King")
    assert "You won the deal!" in lines
    assert [a for p, a in table.actions if p == 0] == [STAY_SILENT]


def test_called_trash_wins_the_round_at_once():
    g = game([[Q, A], [Q, Q]], stock=[2, K, K, K], first_player=0, call_trash=True, episode="round")
    table, out = table_for(g, "trash\n")
    table.play()
    lines = [line.strip() for line in out.getvalue().splitlines()]
    i = lines.index('You called "Trash!"')
    assert lines[i + 1 : i + 4] == [
        "You placed Ace in slot 1",
        "You picked up Queen from slot 1",
        "You won the round",
    ]
    assert "penalty" not in out.getvalue()


def test_bots_always_call_trash():
    # Seat 2 plays first: the 2 goes to slot 2 and uncovers the Ace for its last slot.
    g = game([[Q, Q], [Q, A]], stock=[2, K, K], first_player=1, call_trash=True, episode="round")
    table, out = table_for(g, "")
    table.play()
    assert 'random (seat 2) called "Trash!"' in out.getvalue()
    assert (1, CALL_TRASH) in table.actions


# ---------------------------------------------------------------------- leaving


def test_end_of_input_leaves_cleanly_and_logs_the_unfinished_game(tmp_path):
    log_path = tmp_path / "left.json"
    code, text = run(["--seed", "5", "--log", str(log_path), *SHORT], "")
    assert code == 0
    assert "Goodbye: you left the game." in text and "Traceback" not in text
    log = read_log(log_path)
    assert not log["finished"] and log["events"]
    code, again = run(["--replay", str(log_path)])
    assert code == 0 and "The game was left before its end." in again
    # Left mid-deal: the layouts on the table, not a "next layout" there will never be
    # (SHORT deals layouts of 2).
    left = again.split("The table when the game was left:")[1]
    assert "next layout" not in left
    assert "random (seat 2): 0 rounds won, layout of 2" in left, left


def test_a_finished_game_ends_with_the_layouts_on_the_table_not_a_next_deal(tmp_path):
    log_path = tmp_path / "done.json"
    keys = "\n".join(["s", "1", "2", "s", "1", "2"] * 200) + "\n"
    code, text = run(
        ["--seed", "5", "--log", str(log_path), "--wilds", "none", "--episode", "round", *SHORT],
        keys,
    )
    log = read_log(log_path)
    assert log["finished"], text[-2000:]
    code, again = run(["--replay", str(log_path)])
    final = again.split("The table at the end of the game:")[1]
    assert "next layout" not in final and "layout of 2" in final
    assert "next layout" not in text.split("The table at the end of the game:")[1]


def test_quit_key_leaves_with_exit_code_0():
    code, text = run(["--seed", "5", "--no-log", *SHORT], "q\n")
    assert code == 0 and "Goodbye" in text


def test_ctrl_c_leaves_with_exit_code_130(tmp_path):
    class Interrupt(io.StringIO):
        def readline(self, size: int = -1) -> str:
            raise KeyboardInterrupt

    out = io.StringIO()
    log_path = tmp_path / "int.json"
    code = main(["--seed", "5", "--log", str(log_path), *SHORT], stdin=Interrupt(), stdout=out)
    assert code == 130 and "Goodbye: interrupted." in out.getvalue()
    assert log_path.exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--wilds", "queens"], "invalid choice: 'queens'"),
        (["--start-size", "11"], "start_size must be an integer from 1 to 10, got 11"),
        (["--free-draws", "3"], "free_draws=3 needs num_players=2 and losers_reveal=True"),
        (["--opponents", "nobody"], "unknown agent 'nobody'"),
        (["--opponents", "human"], "--opponents takes bots only"),
        (["--players", "4", "--opponents", "random", "random"], "--players 4 needs 3 opponent"),
        (["--seat", "3", "--opponents", "random"], "--seat must be 1 to 2, got 3"),
        (["--players", "7", "--opponents", "random"], "num_players must be an integer"),
        (["--start-size", "x"], "invalid int value: 'x'"),
        (["--seed", "-1"], "argument --seed: must be a whole number 0 or more, got '-1'"),
        (["--players", "1"], "num_players must be an integer from 2 to 6, got 1"),
    ],
)
def test_bad_options_exit_2_with_a_clear_message(argv, message, capsys):
    code, text = run(["--no-log", *argv])
    assert code == 2 and text == ""
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.startswith("usage:")


def test_log_write_failure_is_reported_not_raised(tmp_path, monkeypatch):
    from agents.play import game_log

    def full_disk(path, text):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(game_log, "atomic_write_text", full_disk)  # after the up-front check
    code, text = run(["--seed", "1", "--log", str(tmp_path / "x.json"), *SHORT], "q\n")
    assert code == 0 and "Could not write the game log" in text


def test_a_log_path_that_cannot_be_written_is_refused_before_the_game(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, text = run(["--seed", "1", "--log", str(blocker / "x.json"), *SHORT], "q\n")
    assert code == 2 and text == ""
    assert "--log: cannot create" in capsys.readouterr().err


# ---------------------------------------------------------------------- replay


def test_replay_prints_the_logged_events_deal_by_deal(tmp_path):
    log_path = tmp_path / "game.json"
    _, played, _ = play_scripted(["--seed", "7", "--log", str(log_path), *SHORT])
    code, text = run(["--replay", str(log_path)])
    assert code == 0
    log = json.loads(log_path.read_text())
    deals = sum(e[0] == "deal" for e in log["events"])
    assert deals >= 2  # two players with layouts of 2 need at least two deals
    for number in range(1, deals + 1):
        assert f"=== Deal {number} ===" in text
        if number < deals:
            assert f"The table at the end of deal {number}:" in text
    assert "The table at the end of the game:" in text  # after the last deal
    events = [describe(Event(*e), log["names"]) for e in log["events"]]
    listed = [line[2:] for line in text.splitlines() if re.match(r"  \S", line)]
    assert listed == events
    result = played.strip().splitlines()[-3]
    assert result in text.splitlines()
    assert "Rules: start_size=2" in text


def test_replay_pauses_between_deals_when_asked(tmp_path):
    from agents.play.replay import replay

    log_path = tmp_path / "game.json"
    play_scripted(["--seed", "7", "--log", str(log_path), *SHORT])
    out = io.StringIO()
    replay(read_log(log_path), out, pause=True, stdin=io.StringIO("q\n"))
    text = out.getvalue()
    assert "=== Deal 1 ===" in text and "=== Deal 2 ===" not in text
    assert "Press Enter for the next deal (q to stop): " in text


@pytest.mark.parametrize(
    "content", [None, "not json", '{"format": "other"}', '{"format": "trash_env.play/1"}']
)
def test_replay_of_a_bad_file_exits_2(tmp_path, content, capsys):
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    code, _ = run(["--replay", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "error:" in err and "Traceback" not in err


def _edited(tmp_path: Path, edit, seed: int = 7) -> tuple[int, str, str, dict]:
    """A scripted game's log, edited by ``edit(log)``, replayed: (code, stdout, stderr, log)."""
    path = tmp_path / "game.json"
    if not path.exists():
        play_scripted(["--seed", str(seed), "--log", str(path), *SHORT])
    log = json.loads(path.read_text())
    edit(log)
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(log))
    out, err = io.StringIO(), io.StringIO()
    real = sys.stderr
    sys.stderr = err
    try:
        code = main(["--replay", str(edited), "--no-pause"], stdin=io.StringIO(), stdout=out)
    finally:
        sys.stderr = real
    return code, out.getvalue(), err.getvalue(), log


def test_a_true_log_replays_without_a_warning(tmp_path):
    code, text, err, log = _edited(tmp_path, lambda log: None)
    assert code == 0 and err == ""
    assert "WARNING" not in text
    assert f"Replayed on the engine: {len(log['actions'])} actions" in text


def _set(field, value):
    def edit(log):
        log[field] = value(log) if callable(value) else value

    return edit


@pytest.mark.parametrize(
    "edit, said",
    [
        (_set("winners", lambda log: [1 - log["winners"][0]]), "winners: the log says"),
        (_set("rounds_won", [10, 6]), "rounds won: the log says You 10, random (seat 2) 6"),
        (_set("finished", False), "finished: the log says no; the replay yes"),
        (_set("placings", [1, 1]), "places: the log says You 1, random (seat 2) 1"),
        (_set("events", lambda log: log["events"][:-3]), "events: the log holds"),
        # Other rules under which the logged actions (draws only) are still legal: the deals
        # differ, and the replay shows the engine's, saying from which event on.
        (
            _set("rules", lambda log: {**log["rules"], "start_size": 3}),
            "events: event 2: the log says",  # rules: another game
        ),
    ],
    ids=["winner", "rounds_won", "finished", "placings", "events_cut", "other_rules"],
)
def test_a_replay_shows_the_engine_game_and_says_where_the_log_disagrees(tmp_path, edit, said):
    # The case: "b won the game" beside "Rounds won: a 10, b 6" for an edited winner.
    # What is shown is the engine's game; each claim the log makes otherwise is named, before
    # the deals and again after the result.
    code, true_text, _, log = _edited(tmp_path, lambda log: None)
    code, text, err, _ = _edited(tmp_path, edit)
    assert code == 0 and err == ""
    assert text.count("WARNING: the log's own record disagrees with the replay") == 2
    assert said in text
    if "event 2:" not in said:  # the same game: its true result, not the log's claim
        result = true_text.split("The table at the end of the game:")[1]
        shown = text.split("The table at the end of the game:")[1]
        assert shown.startswith(result.split("WARN")[0])


def test_an_edited_event_is_shown_as_the_engine_played_it(tmp_path):
    def edit_event(log):
        i = next(i for i, e in enumerate(log["events"]) if e[0] == "draw_stock")
        log["events"][i][2] = 1 if log["events"][i][2] != 1 else 2

    code, text, err, log = _edited(tmp_path, edit_event)
    assert code == 0
    i = next(i for i, e in enumerate(log["events"]) if e[0] == "draw_stock")
    real = read_log(tmp_path / "game.json")["events"][i]
    assert (
        f'events: event {i + 1}: the log says "{describe(Event(*log["events"][i]), log["names"])}"'
        in text
    )
    # The events listed are the engine's, the edited one included.
    true = [describe(Event(*e), log["names"]) for e in read_log(tmp_path / "game.json")["events"]]
    deals = text.split("=== Deal 1 ===")[1].split("WARNING")[0]
    listed = [line[2:] for line in deals.splitlines() if re.match(r"  [^\s-]", line)]
    assert listed == true and true[i] == describe(Event(*real), log["names"])


@pytest.mark.parametrize(
    "edit, reason",
    [
        (_set("seed", 8), "is (not legal there|out of turn)"),
        (
            _set("rules", lambda log: {**log["rules"], "start_size": 5}),
            "is (not legal there|out of turn)",
        ),
        (lambda log: log["actions"].__setitem__(0, [1 - log["actions"][0][0], 10]), "out of turn"),
        # slot 1 at a draw (this game's actions are all draws)
        (
            lambda log: log["actions"].__setitem__(0, [log["actions"][0][0], 0]),
            "is not legal there",
        ),
        (_set("actions", lambda log: log["actions"] * 800), "comes after the end of the game"),
        (_set("seed", None), "has no seed"),
    ],
    ids=["other_seed", "other_rules", "wrong_player", "illegal_action", "repeated_800x", "no_seed"],
)
def test_a_log_whose_actions_do_not_replay_is_refused_in_one_line(tmp_path, edit, reason):
    code, text, err, _ = _edited(tmp_path, edit)
    assert code == 2 and text == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(
        f"python -m agents.play: error: cannot replay {tmp_path / 'edited.json'}: "
    )
    assert re.search(reason, err), err


def test_more_actions_than_the_turn_cap_allows_are_refused_before_any_is_played(tmp_path):
    from agents.play.replay import MAX_DECISIONS_PER_TURN, max_actions

    rules = Rules(start_size=2, max_turns=3)
    bound = max_actions(rules)
    assert bound == MAX_DECISIONS_PER_TURN * (3 + 2 * 2)
    # The bound holds: no game of these rules, played by random bots, takes more actions.
    longest = 0
    for seed in range(200):
        g, rng, steps = Game(rules, seed=seed), np.random.default_rng(seed), 0
        while not g.done:
            legal = g.legal_actions()
            g.step(legal[rng.integers(len(legal))])
            steps += 1
        longest = max(longest, steps)
    assert 0 < longest <= bound

    def edit(log):
        log["rules"] = rules.to_dict()
        log["actions"] = [[0, DRAW_STOCK]] * (bound + 1)

    code, text, err, _ = _edited(tmp_path, edit)
    assert code == 2 and f"holds {bound + 1} actions, more than the {bound}" in err
    assert "max_turns=3" in err


def test_the_replay_bound_is_openspiels_max_game_length():
    # One bound on a game's length, written twice (trash_env.spiel cannot import agents/):
    # held equal here.
    pyspiel = pytest.importorskip(
        "pyspiel", reason="OpenSpiel is not installed (the 'openspiel' extra)"
    )
    from agents.play.replay import max_actions
    from trash_env.spiel import SHORT_NAME, params_from_rules

    for rules in (Rules(), Rules(num_players=6, start_size=3, max_turns=77)):
        game = pyspiel.load_game(SHORT_NAME, params_from_rules(rules))
        assert game.max_game_length() == max_actions(rules)


def test_an_evaluation_game_with_its_first_seat_set_replays(tmp_path):
    # evaluate.py's saved games set the first seat (not drawn from the seed): still replayed.
    from agents.evaluation.tournament import play_game
    from agents.play.game_log import build_log, write_game_file

    rules = Rules(start_size=3, num_players=3)
    for first in range(3):
        actions: list[tuple[int, int]] = []
        bots = [RandomAgent(seed=p) for p in range(3)]
        g = play_game(
            rules, bots, 99, first, [1, 2, 3], lambda p, a, log=actions: log.append((p, a))
        )
        log = build_log(
            g, seed=99, seat=None, specs=["random"] * 3, names=["a", "b", "c"], actions=actions
        )
        write_game_file(tmp_path / "g.json", log)
        code, text = run(["--replay", str(tmp_path / "g.json"), "--no-pause"])
        assert code == 0 and "WARNING" not in text and "Deal 1: " in text


# ---------------------------------------------------------------------- other bots


def test_plays_against_greedy_and_counting_when_they_exist():
    try:
        make_agent("greedy")
        make_agent("counting")
    except ValueError as error:
        if "unknown agent" not in str(error):
            raise
        pytest.skip("agents/bots/heuristics.py (greedy, counting) not written yet")
    argv = ["--seed", "2", "--no-log", "--start-size", "3", "--opponents", "greedy", "counting"]
    code, text, _ = play_scripted(argv)
    assert code == 0
    assert "greedy (seat 2)" in text and "counting (seat 3)" in text
    assert re.search(r" won the game[.!]$", text, re.M)


def test_human_agent_is_registered_and_plays_through_the_env_interface():
    from trash_env.observation import action_mask, encode_observation

    out = io.StringIO()
    human = make_agent("human")
    assert isinstance(human, HumanAgent)
    human.stdin, human.stdout = io.StringIO("7\n2\n"), out
    g = game([[Q, 8, J, K], [None] * 4], stock=[3, K], first_player=0)
    action = human.act(encode_observation(g, 0), action_mask(g, 0), PublicView(g, 0))
    assert action == 1
    assert "Slot 7 is not in your layout of 4." in out.getvalue()
    assert "> You: layout of 4" in out.getvalue()  # default names from the view's seat


# ---------------------------------------------------------------------- a real terminal


# Margins for a loaded machine: these bound a hang, they are not the time a step takes.
TERMINAL_TIMEOUT = 60.0


def _read_until(fd: int, pattern: str, timeout: float = TERMINAL_TIMEOUT) -> str:
    """Read the pseudo-terminal until ``pattern`` appears (or fail after ``timeout``)."""
    seen = b""
    deadline = time.monotonic() + timeout
    while pattern.encode() not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"no {pattern!r} on the terminal; got {seen.decode(errors='replace')!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child has closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    return seen.decode(errors="replace")


# The child's first moments: the pseudo-terminal becomes its controlling terminal, SIGINT
# gets the disposition asked for (argv[1]: a signal module name, or "keep"), then the game.
_TERMINAL_LAUNCHER = (
    "import fcntl, os, signal, sys, termios\n"
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    "if sys.argv[1] != 'keep':\n"
    "    signal.signal(signal.SIGINT, getattr(signal, sys.argv[1]))\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'agents.play', *sys.argv[2:]])\n"
)
_CHILDREN: list[subprocess.Popen] = []  # reaped by _exit_code's waitpid


def _spawn(args: list[str], sigint: object = None) -> tuple[int, int]:
    """The game in a new pseudo-terminal; ``sigint``: the SIGINT disposition it inherits
    (None: this process's). Started as a new process, not a fork of this one: a fork of a
    process that has started JAX's threads is unsafe (JAX warns "os.fork() was called")."""
    import signal

    names = {None: "keep", signal.SIG_IGN: "SIG_IGN", signal.SIG_DFL: "SIG_DFL"}
    main, terminal = os.openpty()
    child = subprocess.Popen(
        [sys.executable, "-c", _TERMINAL_LAUNCHER, names[sigint], *args],  # type: ignore[index]
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        start_new_session=True,  # a session of its own, whose controlling terminal it takes
    )
    os.close(terminal)
    _CHILDREN.append(child)
    return child.pid, main


def _wait_until_reading(pid: int, timeout: float = TERMINAL_TIMEOUT) -> None:
    """Wait until the child's main thread sleeps in its read of the terminal.

    Why: ``input()`` writes the prompt, then calls ``read()``. A Ctrl-C that lands between the
    two runs Python's signal handler (which only sets a flag) and does not interrupt the read,
    which then blocks until the next key: the game ignores that Ctrl-C. On a loaded machine the
    child can wait longer than any sleep for the CPU right after writing the prompt (the write
    wakes this process), so the test watches the child's state instead of sleeping. Linux
    only: elsewhere a sleep, with the old odds."""
    stat, wchan = Path(f"/proc/{pid}/stat"), Path(f"/proc/{pid}/wchan")
    if not stat.exists():
        time.sleep(0.5)
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
        try:
            where = wchan.read_text().strip()
        except OSError:
            where = "0"
        # S: asleep; after the prompt the only sleep is the terminal read (wait_woken is
        # n_tty_read's; "0" where the kernel hides it).
        if state == "S" and where in ("wait_woken", "n_tty_read", "0", ""):
            return
        time.sleep(0.005)
    raise AssertionError(f"the game never blocked reading the terminal (state {state}, {where})")


def _exit_code(pid: int) -> int:
    deadline = time.monotonic() + TERMINAL_TIMEOUT
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, 9)
    raise AssertionError("the game did not end")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize("inherited", ["default", "ignored"])
@pytest.mark.parametrize(
    "key, code, goodbye",
    [(b"\x04", 0, "Goodbye: you left the game."), (b"\x03", 130, "Goodbye: interrupted.")],
)
def test_in_a_pseudo_terminal_bad_key_then_ctrl_d_or_ctrl_c(key, code, goodbye, inherited):
    # "ignored": started with SIGINT ignored, as a script's background job (pytest ... &) is;
    # Ctrl-C at the game's own terminal still ends it.
    import signal

    sigint = signal.SIG_DFL if inherited == "default" else signal.SIG_IGN
    # No wild cards: every question is a draw, whatever the deal.
    pid, fd = _spawn(["--seed", "5", "--no-log", "--wilds", "none", *SHORT], sigint)
    try:
        _read_until(fd, "Your choice [s/d]: ")
        os.write(fd, b"x\r")  # Enter on a terminal sends a carriage return
        screen = _read_until(fd, "Your choice [s/d]: ")
        assert "'x': now you draw; type s (stock) or d (discard pile)." in screen
        _wait_until_reading(pid)  # a Ctrl-C before the read starts is missed (see there)
        os.write(fd, key)
        screen = _read_until(fd, goodbye)
        assert "Traceback" not in screen
        assert _exit_code(pid) == code
    finally:
        os.close(fd)


def test_human_agent_seated_in_the_pettingzoo_env_as_the_docs_show():
    import trash_env

    out = io.StringIO()
    env = trash_env.env(num_players=2, start_size=2)
    env.reset(seed=1)
    human = make_agent("human")
    human.stdin, human.stdout = Responder(out), out
    seats = {"player_0": human, "player_1": make_agent("random", seed=1)}
    steps = 0
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        view = PublicView(env.unwrapped.game, env.possible_agents.index(agent))
        env.step(seats[agent].act(obs["observation"], obs["action_mask"], view))
        steps += 1
    assert steps > 0 and "> You: layout of 2" in out.getvalue()
    assert human.stdin.prompts  # the person was asked


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"losers_reveal": True, "free_draws": 3},
        {"num_players": 3, "call_trash": True},
        {"num_players": 4, "wilds": "faces", "jokers": True, "start_size": 4},
    ],
)
def test_deal_pictures_rebuilt_from_events_match_the_engine(options):
    import numpy as np

    from agents.play.replay import DealTracker

    rng = np.random.default_rng(0)
    for seed in range(3):
        g = Game(Rules(**options), seed=seed)
        tracker, fed = DealTracker(g.rules), 0
        while not g.done:
            legal = g.legal_actions()
            g.step(legal[int(rng.integers(len(legal)))])
            for event in g.events[fed:]:
                tracker.feed(event)
            fed = len(g.events)
            assert tracker.states == g.state and tracker.deals == g.deal_number + int(not g.done)
            for p in range(g.num_players):
                for s in range(10):
                    if g.state[p][s] not in (DOWN, ABSENT):  # face-up cards are the engine's
                        assert tracker.cards[p][s] == g.layout[p][s]
            assert tracker.sizes == g.sizes and tracker.rounds_won == g.rounds_won


@pytest.mark.parametrize(
    "flags",
    [
        ["--call-trash"],
        ["--losers-reveal", "--free-draws", "3"],
        ["--wilds", "kings"],
        ["--wilds", "none", "--reshuffle", "all"],
        ["--wilds", "faces", "--jokers"],
        ["--max-deals", "2", "--players", "3"],
        ["--start-size", "4", "--target-size", "2"],
        ["--episode", "round", "--first-player", "rotate"],
        ["--max-turns", "3"],
    ],
)
def test_every_variant_plays_to_its_end_through_the_terminal(flags):
    argv = ["--no-log", "--seed", "1", "--opponents", "random", "--start-size", "3", *flags]
    code, text, _ = play_scripted(argv, call="")  # never calls: the penalty path when it comes
    assert code == 0 and "Traceback" not in text
    last = text.rstrip().splitlines()
    assert any(
        re.search(r"won the (game|deal)[.!]$|share the win\.$|cut off", line) for line in last[-4:]
    ), last[-4:]


# ---------------------------------------------------------------------- every event, every range

# Every event kind with the extremes its fields take (EVENT_KINDS documents them): a card field
# is a rank 0..13 (numbers 1..10 for place/swap), a reshuffle's card field a count of cards up
# to a whole shoe of 12 decks with jokers (648), game_over's the number of winners, a deal's
# slot the deal number and a shrink's slot the new layout size.
EVENT_RANGES = {
    "deal": [(0, -1, 0), (5, -1, 9_999)],
    "draw_stock": [(0, c, -1) for c in (0, 1, 10, 11, 12, 13)],
    "take_discard": [(5, c, -1) for c in (0, 13)],
    "place": [(0, 1, 0), (5, 10, 9)],
    "wild": [(0, 0, 0), (5, 13, 9), (1, 11, 4)],
    "swap": [(0, 1, 0), (5, 10, 9)],
    "pickup": [(0, 0, 0), (5, 13, 9)],
    "decline": [(0, 1, -1), (5, 10, -1)],
    "discard": [(0, 0, -1), (5, 13, -1)],
    "reshuffle": [(-1, 1, -1), (-1, 13, -1), (-1, 14, -1), (-1, 64, -1), (-1, 648, -1)],
    "call": [(0, -1, -1), (5, -1, -1)],
    "penalty": [(0, 0, -1), (5, 13, -1)],
    "claim": [(0, -1, -1), (5, -1, -1)],
    "round_won": [(0, -1, -1), (5, -1, -1)],
    "free_draws": [(0, -1, -1), (1, -1, -1)],
    "reveal": [(0, 0, 0), (5, 13, 9)],
    "shrink": [(0, -1, 0), (5, -1, 9)],
    "game_over": [(-1, 0, -1), (-1, 1, -1), (-1, 6, -1)],
    "truncated": [(-1, -1, -1)],
}


def test_event_ranges_cover_every_event_kind():
    assert set(EVENT_RANGES) == set(EVENT_KINDS)


@pytest.mark.parametrize("kind", EVENT_KINDS)
def test_every_event_kind_is_described_at_every_value_of_its_fields(kind):
    from trash_env.text import describe_event

    names = [f"p{p}" for p in range(6)]
    for player, card, slot in EVENT_RANGES[kind]:
        event = Event(kind, player, card, slot)
        for text in (
            describe_event(event),
            describe_event(event, names),
            describe(event, ["You", *names[1:]]),
        ):
            assert text and "\n" not in text
    # Counts are counts, never cards: a reshuffle of 14+ cards used to raise IndexError.
    from trash_env.text import describe_event as said

    assert said(Event("reshuffle", -1, 64, -1)) == (
        "the stock ran out: 64 cards shuffled into a new stock"
    )
    assert said(Event("reshuffle", -1, 1, -1)) == (
        "the stock ran out: 1 card shuffled into a new stock"
    )


def test_big_reshuffles_render_and_replay(tmp_path):
    # The game: 4 players without wilds, reshuffling the whole pile (64 cards).
    code, text, _ = play_scripted(
        [
            "--opponents",
            "random",
            "--players",
            "4",
            "--wilds",
            "none",
            "--reshuffle",
            "all",
            "--seed",
            "13",
            "--log",
            str(tmp_path / "g.json"),
        ]
    )
    assert code == 0 and "cards shuffled into a new stock" in text
    assert "Game log written to" in text
    log = read_log(tmp_path / "g.json")
    assert max(e[2] for e in log["events"] if e[0] == "reshuffle") >= 14
    code, replayed = run(["--replay", str(tmp_path / "g.json"), "--no-pause"])
    assert code == 0 and "cards shuffled into a new stock" in replayed

    # render() of both env kinds right after a reshuffle of 14+ cards. The players draw from
    # the stock whenever they may, which empties it within a few hundred decisions (random
    # play takes tens of thousands to reshuffle that many cards).
    import trash_env
    from trash_env.solo import TrashSoloEnv

    def stock_first(bot: RandomAgent, mask: np.ndarray, view: PublicView | None) -> int:
        return DRAW_STOCK if mask[DRAW_STOCK] else bot.act(None, mask, view)

    for mode in ("ansi", "human", "rgb_array"):
        env = trash_env.raw_env(num_players=4, wilds="none", reshuffle="all", render_mode=mode)
        env.reset(seed=6)
        bot = RandomAgent(seed=1)
        while not any(
            e.kind == "reshuffle" and e.card >= 14 for e in env.game.events[env._last_events :]
        ):
            if env.game.done:
                env.reset()
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(stock_first(bot, mask, PublicView(env.game, env.game.current)))
        shown = env.render()
        if mode == "ansi":
            assert "cards shuffled into a new stock" in shown
        solo = TrashSoloEnv(
            num_players=4, wilds="none", reshuffle="all", render_mode=mode, opponents="random"
        )
        solo.reset(seed=6)
        found = False
        while not found:
            _, _, end, cut, _ = solo.step(stock_first(bot, solo.action_masks(), None))
            found = any(
                e.kind == "reshuffle" and e.card >= 14
                for e in solo.game.events[solo._last_events :]
            )
            if end or cut and not found:
                solo.reset()
        assert solo.render() is not None or mode == "human"


def test_replay_shows_every_event_kind_at_every_value():
    # Events of every kind at their extremes (six players, 12 decks with jokers: a reshuffle of
    # up to 648 cards) print deal by deal, each in words. No game plays these events (a replay
    # re-derives its events from the actions, see the replay tests), so they are printed as
    # the replay prints a game's events.
    from agents.play.replay import write_deals

    rules = Rules(num_players=6, num_decks=12, jokers=True, losers_reveal=True)
    events = [Event("deal", 0, -1, 0)]
    for kind in EVENT_KINDS:
        for player, card, slot in EVENT_RANGES[kind]:
            if kind == "deal":
                continue
            if kind == "game_over":
                card = min(card, 6)
            events.append(Event(kind, player, card, slot))
    events.append(Event("deal", 5, -1, 1))
    names = [f"p{p}" for p in range(6)]
    out = io.StringIO()
    assert write_deals(events, names, rules, out, finished=True)
    text = out.getvalue()
    for event in events:
        assert describe(event, names) in text
    assert "648 cards shuffled" in text and "=== Deal 2 ===" in text
    assert "The table at the end of the game:" in text


def test_control_characters_in_names_and_specs_never_reach_the_terminal_raw(tmp_path, capsys):
    # A replay file's names, and a bot spec typed on the command line, are printed escaped.
    log_path = tmp_path / "game.json"
    play_scripted(["--seed", "7", "--log", str(log_path), *SHORT])
    log = json.loads(log_path.read_text())
    log["names"] = ["\x1b[2J\x1b[31mEvil\u202e", "bot\x07\n"]
    log["written"] = "\x1b]0;title\x07"
    log_path.write_text(json.dumps(log))
    code, text = run(["--replay", str(log_path), "--no-pause"])
    assert code == 0
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\x1b[2J\\x1b[31mEvil\\u202e" in text and "bot\\x07\\n" in text
    # An unknown spec with an escape sequence: the usage error shows it escaped.
    code, text = run(["--no-log", "--opponents", "\x1b[2Jevil"])
    err = capsys.readouterr().err
    assert code == 2 and "\x1b" not in err + text and "\\x1b[2Jevil" in err
    # Names given to the human seat (e.g. from a spec's label) are escaped on the screen.
    assert seat_names(2, 0, ["human", "bot\x1b[0m"])[1] == "bot\\x1b[0m (seat 2)"


def test_a_crash_during_the_game_still_writes_the_log(tmp_path, monkeypatch):
    """Should anything fail mid-game (as describe_event once did on big reshuffles), the log
    of the game so far is written before the error propagates, for the bug report."""
    import agents.play.game as play

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(play, "narrate", broken)
    log_path = tmp_path / "crash.json"
    with pytest.raises(RuntimeError, match="boom"):
        play_scripted(["--seed", "5", "--log", str(log_path), *SHORT])
    assert read_log(log_path)["finished"] is False


def test_bot_label_names_a_model_by_its_stem_and_escapes_control_characters():
    from agents.play.human import bot_label as _bot_label

    assert _bot_label("runs/x/model.safetensors") == "model"
    assert _bot_label("runs/x/ev\x1b[2Jil.safetensors") == "ev\\x1b[2Jil"
    assert _bot_label("greedy") == "greedy"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_replay_of_a_named_pipe_nobody_writes_is_refused_at_once(tmp_path):
    import subprocess

    fifo = tmp_path / "log.json"
    os.mkfifo(fifo)
    try:  # a subprocess: a read that blocks must fail this test, not hang the run
        result = subprocess.run(
            [sys.executable, "-m", "agents.play", "--replay", str(fifo)],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("--replay blocked on a named pipe")
    assert result.returncode == 2
    assert f"cannot read {fifo}: not a regular file" in result.stderr
    assert "Traceback" not in result.stderr
