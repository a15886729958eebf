"""The page in a real browser: headless Chromium (the system's, driven by Selenium) plays a
whole game by clicks and keys, replays a log and opens a leaderboard.

They need ``/usr/bin/chromium`` and ``/usr/bin/chromedriver`` (Debian's ``chromium`` and
``chromium-driver``; .ci/run installs them) and the test extra's ``selenium``. Where those
cannot be had the tests skip and say why; on CI (``CI`` set) a missing browser fails instead.
``TRASH_WEB_SCREENSHOTS=docs/web`` writes the screenshots docs/web.md shows.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from test_web_rank import SPECS, report_with_games
from web_support import play_out, serving

import agents.evaluation.cli as evaluate
from agents.play.game_log import read_log
from trash_env.engine import Game
from trash_env.rules import Rules

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1200,900",
]
WAIT = 60  # seconds for anything the page must show (the machine may be loaded)


pytestmark = pytest.mark.slow  # the second tier: `pytest -m slow`


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for path in (CHROMIUM, DRIVER):
        if not path.exists():
            return f"no {path} (apt-get install chromium chromium-driver, as .ci/run does)"
    return None


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests: {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(str(DRIVER)))
    driver.set_page_load_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()


def errors(driver) -> list[str]:
    """The page's JavaScript errors and failed loads since the last call."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def wait(driver, condition, message: str):
    """Wait for ``condition``; elements the page draws again meanwhile are looked up again."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(
        driver, WAIT, poll_frequency=0.02, ignored_exceptions=[StaleElementReferenceException]
    ).until(condition, message)


def shown(driver, css: str) -> list:
    return [e for e in driver.find_elements("css selector", css) if e.is_displayed()]


def screenshot(driver, tmp_path: Path, name: str) -> Path:
    """A small PNG (64 colours) of the window, under TRASH_WEB_SCREENSHOTS if set."""
    from PIL import Image

    folder = Path(os.environ.get("TRASH_WEB_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    image = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB")
    path = folder / name
    image.quantize(colors=64).save(path, optimize=True)
    return path


def test_a_whole_game_by_clicks_ends_as_the_engine_says(browser, tmp_path):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select

    with serving(tmp_path / "logs") as (client, config):
        browser.get(client.base + "/#play")
        wait(browser, lambda d: d.find_elements("css selector", "#players option"), "no form")
        errors(browser)
        Select(browser.find_element("id", "pace")).select_by_value("0")
        browser.find_element("id", "seed").send_keys("11")
        browser.find_element("id", "opponent-1").clear()
        browser.find_element("id", "opponent-1").send_keys("counting")
        browser.find_element("css selector", "#setup summary").click()
        browser.find_element("id", "rule-start_size").send_keys("4")
        browser.find_element("id", "rule-call_trash").click()
        browser.find_element("id", "start").click()
        body = browser.find_element("tag name", "body")
        counts = {"click": 0, "key": 0, "call": 0, "deal": 0}
        for move in range(3000):
            try:
                found = wait(
                    browser,
                    lambda d: shown(d, "#new-game, #next-deal, #call, .clickable, #decline"),
                    "nothing to do",
                )
                ids = {e.get_attribute("id") for e in found}
                if "new-game" in ids:
                    break
                if "next-deal" in ids:
                    target = shown(browser, "#next-deal")[0]
                    if counts["deal"] == 0:
                        screenshot(browser, tmp_path, "deal-end.png")
                    counts["deal"] += 1
                elif "call" in ids:
                    target = shown(browser, "#call")[0]
                    counts["call"] += 1
                else:
                    target = shown(browser, ".clickable, #decline")[0]
                name = target.get_attribute("id")
                if name == "stock" and move % 3 == 0:
                    body.send_keys("s")  # the keyboard shortcut, now and then
                    counts["key"] += 1
                else:
                    target.click()
                    counts["click"] += 1
                gone = ec.invisibility_of_element if name == "next-deal" else ec.staleness_of
                wait(browser, gone(target), "the page did not answer the move")
            except StaleElementReferenceException:
                continue  # drawn again between looking and clicking: look again
        else:
            pytest.fail("the game did not end within 3000 moves")
        screenshot(browser, tmp_path, "game-over.png")
        text = browser.find_element("id", "overlay-text").text
        assert counts["click"] > 10 and counts["key"] > 0 and counts["deal"] > 0, counts
        log_name = re.search(r"Logged as (\S+)\.json", text).group(1) + ".json"
        log = read_log(config.logs / log_name)
        # The engine, given the seed and the person's clicks, ends the same way.
        game = Game(Rules.from_options(**log["rules"]), seed=11)
        for player, action in log["actions"]:
            assert game.current == player
            game.step(action)
        assert game.done and list(game.winners) == log["winners"]
        winner = log["names"][game.winners[0]]
        assert text.startswith(f"{winner} won the game") or "share the win" in text
        assert log["rules"]["start_size"] == 4 and log["rules"]["call_trash"]
        assert log["agents"] == ["human", "counting"]
        events = browser.find_elements("css selector", "#play-log li")
        assert len(events) == min(len(game.events), 400)
        assert errors(browser) == []
        browser.find_element("id", "watch-this").click()
        wait(browser, lambda d: "step 0 of" in d.find_element("id", "w-step").text, "no replay")
        assert str(len(log["actions"])) in browser.find_element("id", "w-step").text


ACTION_IDS = {10: "stock", 11: "discard", 12: "decline", 13: "call", 14: "silent"}


def test_only_the_legal_actions_are_clickable(browser, tmp_path):
    """In a standard 3-player game, at each of the person's decisions the page offers exactly
    the seat's legal actions (the server's), nothing more."""
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select

    with serving(tmp_path / "logs") as (client, _):
        browser.get(client.base + "/#play")
        wait(browser, lambda d: d.find_elements("css selector", "#players option"), "no form")
        errors(browser)
        Select(browser.find_element("id", "players")).select_by_value("3")
        Select(browser.find_element("id", "pace")).select_by_value("0")
        browser.find_element("id", "seed").send_keys("2")
        browser.find_element("id", "opponent-2").clear()
        browser.find_element("id", "opponent-2").send_keys("counting")
        browser.find_element("id", "start").click()

        def your_turn(driver):
            """The page's state once it waits for the person; a deal's summary is closed."""
            for button in shown(driver, "#next-deal"):
                button.click()
                return None
            return driver.execute_script(
                "const s = T.views.play.state; return s && s.legal.length && "
                "!T.views.play.busy && document.getElementById('overlay').hidden ? s : null"
            )

        decisions = set()
        for turn in range(16):
            state = wait(browser, your_turn, "the person's turn does not come")
            wanted = {f"slot-{a + 1}" if a < 10 else ACTION_IDS[a] for a in state["legal"]}
            offered = {
                e.get_attribute("id")
                for e in shown(browser, ".clickable, #decline, #call, #silent")
            }
            assert offered == wanted, (state["decision"], state["legal"])
            decisions.add(state["decision"])
            if turn == 5:
                screenshot(browser, tmp_path, "play.png")
            target = browser.find_element("id", sorted(wanted)[turn % len(wanted)])
            target.click()
            wait(browser, ec.staleness_of(target), "the move is not answered")
        assert "draw" in decisions and len(decisions) >= 2, decisions
        assert state["agents"] == ["human", "greedy", "counting"]
        assert errors(browser) == []


def test_a_log_plays_back_forward_back_and_open(browser, tmp_path):
    from selenium.webdriver.support.ui import Select

    with serving(tmp_path / "logs") as (client, config):
        rng = np.random.default_rng(1)
        state = client.post("/api/games", {"opponents": ["greedy"], "seed": 4})
        final = play_out(client, state, lambda s: int(rng.choice(s["legal"])))
        steps = len(read_log(config.logs / final["log"])["actions"])
        browser.get(client.base + "/#watch/log/" + final["log"])

        def at(k):
            return wait(
                browser,
                lambda d: d.find_element("id", "w-step").text == f"step {k} of {steps}",
                f"not at step {k}",
            )

        at(0)
        errors(browser)
        hidden = len(shown(browser, "#watch-table .seat .card.back"))
        assert hidden >= 10  # the deal's face-down cards, as backs
        for _ in range(3):
            browser.find_element("id", "w-fwd").click()
        at(3)
        browser.find_element("id", "w-back").click()
        at(2)
        view = Select(browser.find_element("id", "w-view"))
        view.select_by_value("all")
        assert len(shown(browser, "#watch-table .seat .card.peek")) > 0  # ranks shown
        assert len(shown(browser, "#watch-table .seat .card.back")) == len(
            shown(browser, "#watch-table .seat .card.peek")
        )
        view.select_by_value("0")
        assert shown(browser, "#watch-table .card.peek") == []
        Select(browser.find_element("id", "w-speed")).select_by_value("60")
        browser.find_element("id", "w-play").click()
        wait(
            browser,
            lambda d: int(d.find_element("id", "w-step").text.split()[1]) > 8,
            "play does not move",
        )
        browser.find_element("id", "w-play").click()
        paused = browser.find_element("id", "w-step").text
        assert browser.find_element("id", "w-play").text == "Play"
        assert browser.find_element("id", "w-step").text == paused
        view.select_by_value("all")
        browser.find_element("id", "w-last").click()
        at(steps)
        winner = final["names"][final["winners"][0]]
        assert winner in browser.find_element("id", "watch-result").text
        lines = browser.find_elements("css selector", "#watch-log li")
        assert len(lines) == min(len(final["events"]), 400)
        screenshot(browser, tmp_path, "watch.png")
        assert errors(browser) == []

        # A log that claims the other seat won: the page shows the replay's winner and
        # names the claim, as the terminal's --replay does.
        log = read_log(config.logs / final["log"])
        loser = 1 - final["winners"][0]
        (config.logs / "forged.json").write_text(json.dumps(log | {"winners": [loser]}))
        browser.get(client.base + "/#watch/log/forged.json")
        at(0)
        browser.find_element("id", "w-last").click()
        at(steps)
        result = browser.find_element("id", "watch-result").text
        assert f"{winner} won" in result and f"{final['names'][loser]} won" not in result
        note = browser.find_element("id", "watch-note").text
        assert "disagrees with the replay" in note and "winners: the log says" in note
        assert errors(browser) == []


def test_a_report_opens_as_a_leaderboard_with_links_to_games(browser, tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    report = report_with_games(folder, "report.json", [*SPECS, "counting"], 12)
    (folder / "report.json").write_text(json.dumps(report))
    with serving(tmp_path / "logs", folder) as (client, _):
        browser.get(client.base + "/#rank/report.json")
        wait(browser, lambda d: len(shown(d, ".agent-row")) == 3, "no leaderboard")
        errors(browser)
        rows = [r.find_element("css selector", ".spec").text for r in shown(browser, ".agent-row")]
        best = max(report["agents"], key=lambda s: report["agents"][s]["win_rate"])
        assert rows[0] == best and sorted(rows) == sorted([*SPECS, "counting"])
        # The interval bars and the matrix's colours are drawn (styles set through the CSSOM,
        # which the page's Content-Security-Policy allows; style attributes it would refuse).
        dot = shown(browser, ".agent-row .ci-dot")[0]
        assert dot.value_of_css_property("left") not in ("0px", "auto")
        cell = shown(browser, "#matrix td.cell")[0]
        assert cell.value_of_css_property("background-color") != "rgba(0, 0, 0, 0)"
        screenshot(browser, tmp_path, "rank.png")
        linked = shown(browser, "#matrix td.linked")
        assert len(linked) == 2  # greedy-random both ways: the saved games' pairing
        linked[0].click()
        links = wait(browser, lambda d: shown(d, "#pair-list a"), "no games listed")
        assert len(links) == 4
        links[0].click()
        wait(
            browser,
            lambda d: d.find_element("id", "w-step").text.startswith("step 0 of"),
            "the saved game does not open",
        )
        assert errors(browser) == []


def test_screenshots_are_small(tmp_path):
    """The committed screenshots stay small (docs/web.md shows them)."""
    folder = Path(__file__).resolve().parent.parent / "docs" / "web"
    pictures = sorted(folder.glob("*.png"))
    assert pictures, "docs/web holds the screenshots"
    for picture in pictures:
        assert picture.stat().st_size < 200_000, picture


PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}
FITS = "return [document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth]"
MARKER_FITS = """
const list = document.getElementById(arguments[0]);
const probe = document.createElement('span');
probe.textContent = `${list.start + list.children.length - 1}.`;  // the largest number
probe.style.font = getComputedStyle(list).font;
probe.style.position = 'absolute';
document.body.append(probe);
const width = probe.getBoundingClientRect().width;
probe.remove();
return [width, parseFloat(getComputedStyle(list).paddingLeft)];
"""


def no_sideways_scroll(driver, where: str) -> None:
    page, body, inner = driver.execute_script(FITS)
    assert inner == PHONE["width"], inner
    assert page <= inner and body <= inner, (where, page, body, inner)


def test_play_watch_and_rank_fit_a_390_px_phone(browser, tmp_path):
    """At 390x844 (a phone) no view scrolls sideways: the live table with the rules form, a
    replay, and a leaderboard whose rank, win rate and interval bar stay on screen. The event
    log's numbers are not clipped, ties rank ``1=`` as in the CLI, the person is "your"."""
    from selenium.webdriver.support.ui import Select

    folder = tmp_path / "reports"
    folder.mkdir()
    assert (
        evaluate.main(
            ["--agents", *SPECS, "counting", "--games", "12", "--json"]
            + [str(folder / "report.json"), "--quiet", "--no-progress"]
        )
        == 0
    )
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        with serving(tmp_path / "logs", folder) as (client, config):
            browser.get(client.base + "/#play")
            wait(browser, lambda d: d.find_elements("css selector", "#players option"), "no form")
            errors(browser)
            browser.find_element("css selector", "#setup summary").click()
            Select(browser.find_element("id", "players")).select_by_value("6")
            no_sideways_scroll(browser, "the new-game form")
            Select(browser.find_element("id", "pace")).select_by_value("0")
            browser.find_element("id", "seed").send_keys("3")
            browser.find_element("id", "start").click()
            wait(browser, lambda d: shown(d, ".clickable"), "the person's turn does not come")
            no_sideways_scroll(browser, "a 6-player table")
            assert "in your hand" in browser.find_element("id", "play-table").text or (
                "no card in hand" in browser.find_element("id", "play-table").text
            )
            assert "You's" not in browser.find_element("tag name", "body").text

            rng = np.random.default_rng(2)
            state = client.post("/api/games", {"opponents": ["greedy"], "seed": 5})
            final = play_out(client, state, lambda s: int(rng.choice(s["legal"])))
            assert len(final["events"]) > 100  # three-digit event numbers
            # A log's name as long as the server writes them (a 19-digit seed, a -99 suffix):
            # the picker must not push the page sideways.
            longest = f"web-20261206-120000-seed{2**63 - 1}-99.json"
            (config.logs / longest).write_bytes((config.logs / final["log"]).read_bytes())
            browser.get(client.base + "/#watch/log/" + longest)
            wait(browser, lambda d: d.find_element("id", "w-step").text.startswith("step 0"), "")
            no_sideways_scroll(browser, "the game-log picker with a long name")
            picker = browser.find_element("id", "log-list").rect
            assert picker["x"] >= 0 and picker["x"] + picker["width"] <= PHONE["width"], picker
            browser.get(client.base + "/#watch/log/" + final["log"])
            wait(browser, lambda d: d.find_element("id", "w-step").text.startswith("step 0"), "")
            browser.find_element("id", "w-last").click()
            no_sideways_scroll(browser, "a replay")
            views = [o.text for o in Select(browser.find_element("id", "w-view")).options]
            assert "Your view" in views and not any("You's" in v for v in views), views
            width, padding = browser.execute_script(MARKER_FITS, "watch-log")
            assert padding >= width, (width, padding)  # "1234." fits left of the text

            browser.get(client.base + "/#rank/report.json")
            wait(browser, lambda d: len(shown(d, ".agent-row")) == 3, "no leaderboard")
            no_sideways_scroll(browser, "a leaderboard")
            for row in shown(browser, ".agent-row"):
                for css in (".rank", ".spec", ".rate", ".ci"):
                    box = row.find_element("css selector", css).rect
                    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], css
            parsed = client.get("/api/reports/report.json")["agents"]
            shown_ranks = {
                r.find_element("css selector", ".spec").text: r.find_element(
                    "css selector", ".rank"
                ).text
                for r in shown(browser, ".agent-row")
            }
            assert shown_ranks == {
                a["spec"]: f"{a['rank']}{'=' if a['tied'] else ''}" for a in parsed
            }
            # The head-to-head's row labels are readable: a column wide enough for a word,
            # not one letter per line (before: 36 px, a model's label 504 px tall).
            labels = shown(browser, "#matrix tr th.spec")
            assert len(labels) == 6, len(labels)  # three column heads, three row heads
            for label in labels:
                box, size = label.rect, float(label.value_of_css_property("font-size")[:-2])
                assert box["width"] >= 100 and box["height"] <= 6 * size + 12, (label.text, box)
            screenshot(browser, tmp_path, "rank-phone.png")
            assert errors(browser) == []
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
