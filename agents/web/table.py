"""A live game in the browser: the engine and the bots run here, one move per request.

The page asks for the bots' moves one at a time (``step``) so that it can pace them; the person's
moves arrive as actions and are checked against the seat's legal actions. Bots always call
"Trash!" (as at every table of the project); the person answers their own call. The game is
logged in the terminal game's schema (agents.play) when it ends or is left.
"""

from __future__ import annotations

import ctypes
import secrets
import threading
import warnings
from dataclasses import fields
from pathlib import Path

import numpy as np

from agents.bots.base import MODEL_SUFFIX, Agent, check_fits, make_agent, parse_spec
from agents.bots.optimal import OptimalAgent
from agents.bots.search import SearchAgent
from agents.play.game_log import table_log
from agents.play.human import bot_label, seat_names, seat_seeds
from agents.play.replay import DealTracker
from agents.policies.model_file import describe_training, training_mismatch
from agents.policies.policy import TrainingMismatchWarning
from agents.web.folders import model_file
from agents.web.state import public_state
from trash_env.cli import option_docs
from trash_env.engine import Event, Game
from trash_env.match import Match
from trash_env.rules import MAX_PLAYERS, MIN_PLAYERS, Rules, RulesWarning, option_spec
from trash_env.text import printable
from trash_env.view import PublicView

MAX_SPEC = 200  # characters of one agent spec
MAX_ROLLOUTS = 2000  # search:rollouts at the table: each of its moves keeps the person waiting
SEED_LIMIT = 2**63
BOT_SECONDS = 30.0  # the longest one bot move may take before the game is stopped


class BotTooSlow(RuntimeError):
    """A bot move ran past its time bound; the game cannot go on."""


class _Stop(BaseException):
    """Raised inside a bot's thread that ran out of time, to end it."""


def _stop_thread(thread: threading.Thread) -> None:
    """Raise :class:`_Stop` in ``thread`` at its next Python instruction (a bot that runs
    past its bound must not keep burning a core after the page has its answer)."""
    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(thread.ident), ctypes.py_object(_Stop)
        )


class Bounded(Agent):
    """An agent whose every move runs in its own thread, stopped after ``seconds``."""

    def __init__(self, agent: Agent, label: str, seconds: float) -> None:
        super().__init__()
        self.agent, self.label, self.seconds = agent, label, seconds
        self.uses_observation = agent.uses_observation
        self.name = self.spec = label

    def act(self, observation: np.ndarray | None, action_mask: np.ndarray, view: PublicView) -> int:
        box: dict[str, object] = {}

        def move() -> None:
            try:
                box["action"] = self.agent.act(observation, action_mask, view)
            except _Stop:
                pass
            except BaseException as error:  # noqa: BLE001 (handed to the request's thread)
                box["error"] = error

        thread = threading.Thread(target=move, name="trash-web-bot", daemon=True)
        thread.start()
        thread.join(self.seconds)
        if thread.is_alive():
            _stop_thread(thread)
            thread.join(1.0)
            raise BotTooSlow(
                f"{self.label} took more than {self.seconds:g} s for one move; the game is "
                "stopped and logged (choose a faster bot, e.g. fewer search rollouts)"
            )
        if "error" in box:
            raise box["error"]  # type: ignore[misc]
        return int(box["action"])  # type: ignore[call-overload]


def resolve_spec(spec: object, models: Path | None) -> tuple[str, str]:
    """``(spec as logged, spec to build)``: a bot or registered model by name, or a model file
    of the ``models`` folder by its name there; any other path is refused."""
    if not isinstance(spec, str) or not 0 < len(spec) <= MAX_SPEC:
        raise ValueError(f"opponents: each spec must be a text of 1 to {MAX_SPEC} characters")
    name, _ = parse_spec(spec)
    if name == "human":
        raise ValueError("opponents: take bots only; your own seat is 'seat'")
    if any(c in name for c in "/\\") or name.startswith("."):
        raise ValueError(
            f"opponents: {printable(name)!r} is a path; model files are chosen by "
            "file name from the server's --models folder"
        )
    if not name.lower().endswith(MODEL_SUFFIX):
        return spec, spec
    if models is None:
        raise ValueError("opponents: model files need the server started with --models DIR")
    path = model_file(models, name, MODEL_SUFFIX)
    return spec, str(path) + spec[len(spec.partition(":")[0]) :]


def build_bot(spec: str, build: str, seed: int, rules: Rules) -> tuple[Agent, list[str]]:
    """The bot of one seat, checked for this game before it starts (as evaluate.py checks its
    agents): a model for another player count or ``pretrained`` at a count without a model is
    refused (ValueError), the search budget is capped on the parsed number. Returns the bot
    and the notes its check gave (a model trained for other rules still plays)."""
    try:
        agent = make_agent(build, seed=seed)
    except ValueError as error:
        raise ValueError(f"opponents: {error}") from None
    if isinstance(agent, SearchAgent) and agent.rollouts > MAX_ROLLOUTS:
        raise ValueError(
            f"opponents: search:rollouts may be at most {MAX_ROLLOUTS} here (the person "
            f"waits for every move of the bot), got {agent.rollouts}"
        )
    with warnings.catch_warnings():  # the page gets the note instead of the terminal
        warnings.simplefilter("ignore", TrainingMismatchWarning)
        try:
            check_fits(agent, rules)
        except ValueError as error:
            raise ValueError(f"opponents: {printable(spec)}: {error}"[:500]) from None
    if isinstance(agent, OptimalAgent) and not agent.tables_built(rules):
        raise ValueError(
            f"opponents: {printable(spec)}: its exact tables are not built yet (building them "
            f"takes minutes to hours); build them first with: python -m trash_env.exact build "
            f"--max-size {agent.max_size}" + (" --jokers" if rules.jokers else "")
        )
    agent.reset(seed=seed)
    sidecar = getattr(agent, "sidecar", None)
    if not isinstance(sidecar, dict):
        return agent, []
    problems = training_mismatch(sidecar, rules)
    if not problems:
        return agent, []
    note = (
        f"{bot_label(spec)} was trained for {describe_training(sidecar)}; this game differs: "
        f"{'; '.join(problems)}. It plays, but its strength here was not measured."
    )
    return agent, [note[:500]]


def _integer(field: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{field} must be an integer from {low} to {high}, got {value!r}"[:300])
    return value


class WebTable:
    """One game: the person at ``seat``, a bot at every other seat, played by one
    :class:`~trash_env.match.Match` (the loop every table shares)."""

    def __init__(
        self,
        rules: Rules,
        seat: int,
        specs: list[str],
        build: list[str],
        seed: int,
        bot_seconds: float = BOT_SECONDS,
    ) -> None:
        n = rules.num_players
        self.id = secrets.token_urlsafe(12)
        self.lock = threading.Lock()
        self.rules, self.seat, self.specs, self.seed = rules, seat, specs, seed
        self.names = seat_names(n, seat, [bot_label(s) for s in specs])
        seeds = seat_seeds(seed, n)
        seated: list[Agent | None] = [None] * n
        stuck = rules.stuck_round_reason()  # the page shows it; the rules still play
        self.notes: list[str] = [] if stuck is None else [stuck]
        for p in range(n):
            if p != seat:
                bot, notes = build_bot(specs[p], build[p], seeds[p], rules)
                seated[p] = Bounded(bot, self.names[p], bot_seconds)
                self.notes += [note for note in notes if note not in self.notes]
        self.game = Game(rules, seed=seed)
        self.actions: list[tuple[int, int]] = []
        self.match = Match(self.game, seated, own_calls=(seat,), on_action=self._record)
        self.tracker = DealTracker(rules)
        self.deal_ends: list[dict] = []  # each finished deal's table, from the events
        self._fed = 0
        self.logged: Path | None = None
        self.stopped: str | None = None  # why the game cannot go on (a bot ran out of time)
        self.touched = 0.0  # when a request last used it (the server's clock)
        self._feed()

    @classmethod
    def from_request(
        cls, body: object, models: Path | None = None, bot_seconds: float = BOT_SECONDS
    ) -> WebTable:
        """A table from the page's form: ``opponents`` (specs), ``players``, ``seat`` (from 1),
        ``seed`` (or null) and ``rules`` (Rules options); ValueError naming a bad field."""
        if not isinstance(body, dict):
            raise ValueError("the new game must be a JSON object")
        unknown = sorted(set(body) - {"opponents", "players", "seat", "seed", "rules"})
        if unknown:
            raise ValueError(
                f"unknown field(s) {', '.join(unknown)[:200]}; allowed: opponents, "
                "players, seat, seed, rules"
            )
        opponents = body.get("opponents", ["greedy"])
        if not isinstance(opponents, list) or not 1 <= len(opponents) <= MAX_PLAYERS - 1:
            raise ValueError(f"opponents must be a list of 1 to {MAX_PLAYERS - 1} agent specs")
        players = body.get("players")
        n = (
            len(opponents) + 1
            if players is None
            else _integer("players", players, MIN_PLAYERS, MAX_PLAYERS)
        )
        if len(opponents) == 1:
            opponents = opponents * (n - 1)
        elif len(opponents) != n - 1:
            raise ValueError(
                f"players {n} needs {n - 1} opponent spec(s), or one for every "
                f"seat; got {len(opponents)}"
            )
        seat = _integer("seat", body.get("seat", 1), 1, n) - 1
        seed = body.get("seed")
        seed = (
            secrets.randbelow(2**32) if seed is None else _integer("seed", seed, 0, SEED_LIMIT - 1)
        )
        options = body.get("rules", {})
        if not isinstance(options, dict):
            raise ValueError("rules must be an object of rules options")
        if "num_players" in options:
            raise ValueError("rules: give the player count as 'players'")
        try:
            with warnings.catch_warnings():  # a round that can get stuck: a note on the page
                warnings.simplefilter("ignore", RulesWarning)
                rules = Rules.from_options(**options, num_players=n)
        except TypeError as error:
            raise ValueError(f"rules: {error}") from None
        resolved = [resolve_spec(s, models) for s in opponents]
        specs = [r[0] for r in resolved]
        build = [r[1] for r in resolved]
        specs.insert(seat, "human")
        build.insert(seat, "human")
        return cls(rules, seat, specs, build, seed, bot_seconds)

    # ---------------------------------------------------------------- moves

    @property
    def person_to_act(self) -> bool:
        return not self.game.done and self.game.current == self.seat

    def step(self) -> bool:
        """Play one bot move (with the "Trash!" call that may follow it); False if it is not
        a bot's turn. :class:`BotTooSlow` stops the game for good."""
        if self.stopped is not None:
            raise BotTooSlow(self.stopped)
        if self.game.done or self.game.current == self.seat:
            return False
        try:
            self.match.advance(moves=1)
        except BotTooSlow as error:
            self.stopped = str(error)
            raise
        finally:
            self._feed()
        return True

    def act(self, action: object) -> None:
        """The person's move; ValueError if it is not one of the seat's legal actions."""
        if self.stopped is not None:
            raise BotTooSlow(self.stopped)
        if not self.person_to_act:
            raise ValueError("it is not your turn" if not self.game.done else "the game is over")
        legal = self.game.legal_actions()
        if isinstance(action, bool) or not isinstance(action, int) or action not in legal:
            raise ValueError(
                f"action must be one of your legal actions {legal}, got {action!r}"[:200]
            )
        self._record(self.seat, action)
        self.game.step(action)
        self._feed()

    def _record(self, player: int, action: int) -> None:
        self.actions.append((player, int(action)))

    def _feed(self) -> None:
        """Follow the new events; keep a picture of every deal that ended."""
        for event in self.game.events[self._fed :]:
            if event.kind == "deal" and self.tracker.deals > 0:
                self.deal_ends.append(self._picture())
            self.tracker.feed(Event(*event))
        self._fed = len(self.game.events)

    def _picture(self) -> dict:
        t = self.tracker
        return {
            "deal": t.deals,
            "sizes": t.sizes[:],
            "rounds_won": t.rounds_won[:],
            "states": [row[:] for row in t.states],
            "cards": [row[:] for row in t.cards],
            "revealed": [sorted(r) for r in t.revealed],
        }

    # ---------------------------------------------------------------- what the page sees

    def state(self, since: int = 0) -> dict:
        """The person's seat's picture (public information only) and the table's settings."""
        state = public_state(self.game, self.seat, self.names, since)
        state["id"] = self.id
        state["rules"] = self.rules.to_dict()
        state["agents"] = self.specs
        state["deal_ends"] = self.deal_ends
        state["final"] = self._picture() if self.game.done else None
        state["log"] = self.logged.name if self.logged is not None else None
        state["notes"] = self.notes + ([self.stopped] if self.stopped else [])
        return state

    def log(self) -> dict:
        return table_log(self)


def rules_form() -> list[dict]:
    """Every rules option for the page's form: name, default, kind, choices and its sentence."""
    docs, defaults = option_docs(), Rules()
    out = []
    for f in fields(Rules):
        if f.name in ("num_players", "max_turns"):
            continue
        default, choices = getattr(defaults, f.name), option_spec(f)["choices"] or ()
        if isinstance(default, bool) or not isinstance(default, str):
            choices = ()  # a checkbox, or a number field the server checks (free_draws: 0 or 3)
        kind = "bool" if isinstance(default, bool) else "choice" if choices else "int"
        out.append(
            {
                "name": f.name,
                "default": default,
                "kind": kind,
                "choices": list(choices),
                "help": docs.get(f.name, "").replace("%%", "%"),
            }
        )
    return out
