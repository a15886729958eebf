"""``optimal`` plays the exact endgame tables (docs/skill.md); ``greedy-endgame`` plays greedy
until both layouts fit the tables, then the tables.

Both act on public information alone: the public state of the model (face-up cards, the
discard pile, the stock's contents once a reshuffle made them public, the held card) is read
from the seat's :class:`~trash_env.view.PublicView`, and the tables give the move. They play
2-player games of the rules the model covers (one deck, Jacks or Kings wild, jokers or not);
``optimal`` needs every layout of the game within the tables (``start_size <= max_size``).
"""

from __future__ import annotations

from agents.bots.base import Agent, register_agent
from agents.bots.heuristics import GreedyAgent
from trash_env.exact.model import check_rules as check_model_rules
from trash_env.exact.model import from_view
from trash_env.exact.tables import MAX_K, Tables, built_table, tables_for
from trash_env.rules import Rules
from trash_env.view import PublicView

DEFAULT_MAX_SIZE = 2  # the tables shipped with the package (larger ones are built on first use)


def _check_max_size(name: str, max_size: int) -> int:
    if isinstance(max_size, bool) or not isinstance(max_size, int) or not 1 <= max_size <= MAX_K:
        raise ValueError(f"{name}: max_size must be an integer from 1 to {MAX_K}, got {max_size!r}")
    return max_size


class OptimalAgent(Agent):
    """Plays the move of the exact tables (the env's return maximised; ties go to greedy's
    move). ``max_size``: the largest layout the tables cover."""

    name = "optimal"
    uses_observation = False

    def __init__(self, seed: int | None = None, max_size: int = DEFAULT_MAX_SIZE) -> None:
        super().__init__(seed)
        self.max_size = _check_max_size(self.name, max_size)
        self._tables: Tables | None = None

    def check_rules(self, rules: Rules) -> None:
        """Refuse, before the first move, a game the tables cannot play to its end."""
        self._check_model(rules)
        if rules.start_size > self.max_size:
            raise ValueError(
                f"{self.name} plays 2-player games whose layouts are all at most "
                f"{self.max_size} slots (max_size={self.max_size}); this game starts at "
                f"{rules.start_size}: use start_size <= {self.max_size} or greedy-endgame"
            )

    def _check_model(self, rules: Rules) -> None:
        try:
            check_model_rules(rules)
        except ValueError as error:
            raise ValueError(f"{self.name}: {error}") from None

    def tables_built(self, rules: Rules) -> bool:
        """Whether this game's tables are already built (shipped or cached): the first move
        otherwise builds them, which takes minutes to hours (docs/skill.md)."""
        return built_table(self._table_rules(rules), self.max_size) is not None

    def _table_rules(self, rules: Rules) -> Rules:
        self._check_model(rules)
        return Rules(wilds=rules.wilds, jokers=rules.jokers)

    def tables(self, rules: Rules) -> Tables:
        if self._tables is None or self._tables.rules != rules:
            self._tables = tables_for(self._table_rules(rules), self.max_size)
        return self._tables

    def covered(self, view: PublicView) -> bool:
        return max(view.sizes) <= self.max_size

    def act(self, observation: object, action_mask: object, view: PublicView) -> int:
        if not self.covered(view):
            raise ValueError(
                f"{self.name} covers layouts of at most {self.max_size} slots; this round has "
                f"layouts of {view.sizes[0]} and {view.sizes[1]}"
            )
        tables = self.tables(Rules(wilds=view.rules.wilds, jokers=view.rules.jokers))
        _, action = tables.lookup((view.sizes[0], view.sizes[1]), from_view(view))
        return action


class GreedyEndgameAgent(OptimalAgent):
    """Greedy until both layouts are at most ``max_size`` slots, then the exact tables."""

    name = "greedy-endgame"

    def __init__(self, seed: int | None = None, max_size: int = DEFAULT_MAX_SIZE) -> None:
        super().__init__(seed, max_size)
        self._greedy = GreedyAgent(seed)

    def check_rules(self, rules: Rules) -> None:
        self._check_model(rules)

    def act(self, observation: object, action_mask: object, view: PublicView) -> int:
        if self.covered(view):
            return super().act(observation, action_mask, view)
        return self._greedy.act(observation, action_mask, view)


register_agent("optimal", OptimalAgent, max_size=int)
register_agent("greedy-endgame", GreedyEndgameAgent, max_size=int)
