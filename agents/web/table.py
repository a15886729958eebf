"""A live game in the browser: the engine and the bots run here, one move per request.

The page asks for the bots' moves one at a time (``step``) so that it can pace them; the person's
moves arrive as actions and are checked against the seat's legal actions. Bots always call
"Trash!" (as at every table of the project); the person answers their own call. The game is
logged in the terminal game's schema (agents.play) when it ends or is left.
"""

from __future__ import annotations

import secrets
import threading
from pathlib import Path

import numpy as np

from agents.bots.base import MODEL_SUFFIX, Agent, make_agent, parse_spec
from agents.play.game_log import build_log
from agents.play.human import seat_names
from agents.play.replay import DealTracker
from agents.web.folders import confined
from agents.web.state import public_state
from trash_env.engine import CALL_TRASH, NUM_ACTIONS, Decision, Event, Game
from trash_env.observation import action_mask, encode_observation
from trash_env.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from trash_env.text import printable
from trash_env.view import PublicView

MAX_SPEC = 200  # characters of one agent spec
MAX_ROLLOUTS = 2000  # search:rollouts at the table: each of its moves keeps the person waiting
SEED_LIMIT = 2**63


def _agent_seeds(seed: int, n: int) -> list[int]:
    """One seed per seat from the game's seed (the terminal game's scheme)."""
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(n)]


def _label(spec: str) -> str:
    name = parse_spec(spec)[0]
    return Path(name).stem if name.lower().endswith(MODEL_SUFFIX) else name


def resolve_spec(spec: object, models: Path | None) -> tuple[str, str]:
    """``(spec as logged, spec to build)``: a bot or registered model by name, or a model file
    of the ``models`` folder by file name; any other path is refused."""
    if not isinstance(spec, str) or not 0 < len(spec) <= MAX_SPEC:
        raise ValueError(f"opponents: each spec must be a text of 1 to {MAX_SPEC} characters")
    name, options = parse_spec(spec)
    rollouts = options.get("rollouts", "")
    if name == "search" and rollouts.isdigit() and int(rollouts) > MAX_ROLLOUTS:
        raise ValueError(
            f"opponents: search:rollouts may be at most {MAX_ROLLOUTS} here (the "
            "person waits for every move of the bot)"
        )
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
    path = confined(models, name, MODEL_SUFFIX)
    return spec, str(path) + spec[len(name) :]


def _integer(field: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{field} must be an integer from {low} to {high}, got {value!r}"[:300])
    return value


class WebTable:
    """One game: the person at ``seat``, a bot at every other seat."""

    def __init__(
        self, rules: Rules, seat: int, specs: list[str], build: list[str], seed: int
    ) -> None:
        n = rules.num_players
        self.id = secrets.token_urlsafe(12)
        self.lock = threading.Lock()
        self.rules, self.seat, self.specs, self.seed = rules, seat, specs, seed
        seeds = _agent_seeds(seed, n)
        self.bots: dict[int, Agent] = {}
        for p in range(n):
            if p != seat:
                self.bots[p] = make_agent(build[p], seed=seeds[p])
                self.bots[p].reset(seed=seeds[p])
        self.names = seat_names(n, seat, [_label(s) for s in specs])
        self.game = Game(rules, seed=seed)
        self.views = [PublicView(self.game, p) for p in range(n)]
        self.actions: list[tuple[int, int]] = []
        self.tracker = DealTracker(rules)
        self.deal_ends: list[dict] = []  # each finished deal's table, from the events
        self._fed = 0
        self.logged: Path | None = None
        self._feed()

    @classmethod
    def from_request(cls, body: object, models: Path | None = None) -> WebTable:
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
            rules = Rules.from_options(**options, num_players=n)
        except TypeError as error:
            raise ValueError(f"rules: {error}") from None
        resolved = [resolve_spec(s, models) for s in opponents]
        specs = [r[0] for r in resolved]
        build = [r[1] for r in resolved]
        specs.insert(seat, "human")
        build.insert(seat, "human")
        return cls(rules, seat, specs, build, seed)

    # ---------------------------------------------------------------- moves

    @property
    def person_to_act(self) -> bool:
        return not self.game.done and self.game.current == self.seat

    def step(self) -> bool:
        """Play one bot move (a "Trash!" call counts as one); False if it is not a bot's turn."""
        game = self.game
        if game.done or game.current == self.seat:
            return False
        p = game.current
        if game.decision is Decision.CALL:
            action = CALL_TRASH
        else:
            agent = self.bots[p]
            mask = action_mask(game, p)
            observation = encode_observation(game, p) if agent.uses_observation else None
            action = int(agent.act(observation, mask, self.views[p]))
            if not (0 <= action < NUM_ACTIONS and mask[action]):
                raise RuntimeError(
                    f"agent {self.specs[p]!r} at seat {p + 1} chose illegal action {action}"
                )
        self._play(p, action)
        return True

    def act(self, action: object) -> None:
        """The person's move; ValueError if it is not one of the seat's legal actions."""
        if not self.person_to_act:
            raise ValueError("it is not your turn" if not self.game.done else "the game is over")
        legal = self.game.legal_actions()
        if isinstance(action, bool) or not isinstance(action, int) or action not in legal:
            raise ValueError(
                f"action must be one of your legal actions {legal}, got {action!r}"[:200]
            )
        self._play(self.seat, action)

    def _play(self, player: int, action: int) -> None:
        self.actions.append((player, action))
        self.game.step(action)
        self._feed()

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
        return state

    def log(self) -> dict:
        return build_log(
            self.game,
            seed=self.seed,
            seat=self.seat,
            specs=self.specs,
            names=self.names,
            actions=self.actions,
        )
