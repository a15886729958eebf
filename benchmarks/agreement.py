"""Where an agent's moves differ from a bot's: agreement per decision, and the commonest misses.

    python benchmarks/agreement.py --agent runs/default/model.safetensors [--bot greedy]
                                   [--games 400] [--seed 0] [--players 2]

Plays ``--games`` whole games of the agent against copies of ``--bot`` (the agent's seat
rotating with the game's number, deals from ``--seed``) and, at each of the agent's decisions
with more than one legal move, asks the bot what it would do in the agent's place (the bot
sees the same public view). Prints the agent's win rate, the share of decisions where the two
agree per decision kind (draw source, wild target, swap) and the commonest disagreements as
``(decision, bot's move, agent's move, discard top)``. Used to see what a trained model has
not learned yet (docs/training.md, issue 27).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

import agents  # noqa: E402,F401  (registers the bots and model files)
from trash_env.agent import Agent, make_agent  # noqa: E402
from trash_env.engine import Decision, Game  # noqa: E402
from trash_env.match import Match  # noqa: E402
from trash_env.rules import Rules  # noqa: E402
from trash_env.view import PublicView  # noqa: E402


class Tally:
    """Decisions and agreements per decision kind, and the disagreements."""

    def __init__(self) -> None:
        self.decisions: Counter[str] = Counter()
        self.agreed: Counter[str] = Counter()
        self.misses: Counter[tuple[str, int, int, int | None]] = Counter()


class Watched(Agent):
    """The agent, with the bot asked the same question at every decision."""

    name = "watched"

    def __init__(self, agent: Agent, bot: Agent, tally: Tally) -> None:
        super().__init__()
        self.agent, self.bot, self.tally = agent, bot, tally
        self.uses_observation = agent.uses_observation or bot.uses_observation

    def act(self, observation: object, action_mask: np.ndarray, view: PublicView) -> int:
        action = int(self.agent.act(observation, action_mask, view))
        if int(np.count_nonzero(action_mask)) > 1:
            wanted = int(self.bot.act(observation, action_mask, view))
            kind = view.decision.name
            self.tally.decisions[kind] += 1
            self.tally.agreed[kind] += action == wanted
            if action != wanted:
                top = view.discard_top if view.decision is Decision.DRAW else None
                self.tally.misses[(kind, wanted, action, top)] += 1
        return action


def measure(agent_spec: str, bot_spec: str, games: int, seed: int, players: int) -> dict:
    """Play the games; return the win rate, agreement per decision kind and the misses."""
    rules = Rules.from_options(num_players=players)
    tally = Tally()
    watched = Watched(make_agent(agent_spec, seed=seed), make_agent(bot_spec, seed=seed), tally)
    wins = 0
    for number in range(games):
        seat = number % players
        seats: list[Agent] = [make_agent(bot_spec, seed=seed + number) for _ in range(players)]
        seats[seat] = watched
        game = Match(Game(rules, seed=seed + number // players), seats).play()
        wins += seat in game.winners
    return {
        "win_rate": wins / games,
        "agreement": {k: tally.agreed[k] / n for k, n in tally.decisions.items()},
        "decisions": dict(tally.decisions),
        "misses": tally.misses.most_common(12),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agent", required=True, help="an agent spec or a model file")
    parser.add_argument("--bot", default="greedy", help="the bot to compare with and play")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=int, default=2)
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    try:
        figures = measure(args.agent, args.bot, args.games, args.seed, args.players)
    except ValueError as error:
        parser.error(str(error))
    print(f"{args.agent} against {args.bot}: win rate {figures['win_rate']:.3f}")
    for kind, share in figures["agreement"].items():
        print(f"  {kind}: agrees with {args.bot} on {share:.3f} of {figures['decisions'][kind]:,}")
    print(f"  commonest disagreements (decision, {args.bot}'s move, the agent's, discard top):")
    for miss, count in figures["misses"]:
        print(f"    {miss}: {count:,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
