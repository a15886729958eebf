"""OpenSpiel's information-set MCTS (ISMCTS) playing Trash against the project's bots.

The game is loaded through pyspiel like any OpenSpiel game (``trash_env.spiel`` registers it),
and ISMCTS searches worlds re-dealt by ``TrashState.resample_from_infostate``, so it never sees
the face-down cards or the stock order. The other seats are played by a bot of ``agents``
(``--opponent random``, the default, or ``greedy``, ...), which sees the public view only. The
searching player takes every seat in turn; the result is its win rate and mean return
(zero-sum: 0 is what the opponents' equal averages).

    python examples/openspiel_ismcts.py --games 20 --simulations 100
    python examples/openspiel_ismcts.py --games 20 --simulations 100 --opponent greedy

Every random choice is seeded (``--seed``): the same command prints the same result.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

import trash_env.spiel  # registers "python_trash"
from agents.bots.base import Agent, make_agent
from trash_env.engine import Game
from trash_env.observation import action_mask, encode_observation
from trash_env.view import PublicView


def play(
    games: int,
    simulations: int,
    players: int = 2,
    start_size: int = 5,
    episode: str = "round",
    seed: int = 0,
    uct_c: float = 2.0,
    opponent: str = "random",
    rollout: str = "random",
) -> dict:
    """Play ``games`` games, ISMCTS in seat ``g % players`` of game ``g``, the others played
    by the bot ``opponent`` names (an ``agents.make_agent`` spec). ``rollout`` is how ISMCTS
    values a new node: ``"random"`` (OpenSpiel's random rollout) or a bot spec that plays
    every seat to the end of the (re-dealt) game.

    Returns the search player's wins, mean return and the time taken."""
    game = pyspiel.load_game(
        "python_trash",
        {"players": players, "start_size": start_size, "episode": episode, "rng_seed": seed},
    )
    search_rng = np.random.RandomState(seed)  # ISMCTS's own choices and rollouts
    world_rng = np.random.default_rng(seed)  # the re-deals of hidden cards
    bot_players = make_agent(opponent, seed=seed + 1)
    if rollout == "random":
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=search_rng)
    else:
        evaluator = BotRolloutEvaluator(make_agent(rollout, seed=seed + 2))
    bot = ismcts.ISMCTSBot(
        game,
        evaluator,
        uct_c=uct_c,
        max_simulations=simulations,
        random_state=search_rng,
        final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
    )
    # OpenSpiel's default re-deal sampler is seeded from the clock; this one is seeded.
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, world_rng.random))
    wins = 0
    total = 0.0
    decisions = 0
    start = time.perf_counter()
    for g in range(games):
        seat = g % players
        bot_players.reset()
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(trash_env.spiel.DEAL_ACTION)
            elif state.current_player() == seat:
                state.apply_action(int(bot.step(state)))
                decisions += 1
            else:
                state.apply_action(_bot_action(bot_players, state))
        result = state.returns()[seat]
        total += result
        wins += result > 0
    return {
        "games": games,
        "players": players,
        "simulations": simulations,
        "start_size": start_size,
        "episode": episode,
        "seed": seed,
        "opponent": opponent,
        "rollout": rollout,
        "ismcts_wins": int(wins),
        "ismcts_win_rate": wins / games if games else 0.0,
        "ismcts_mean_return": total / games if games else 0.0,
        "ismcts_decisions": decisions,
        "seconds": round(time.perf_counter() - start, 1),
    }


def _bot_action(agent: Agent, state: trash_env.spiel.TrashState) -> int:
    """The project bot's move in ``state``, from what its seat may see (the public view)."""
    return _engine_bot_action(agent, state.engine)


def _engine_bot_action(agent: Agent, engine: Game) -> int:
    seat = engine.current
    observation = encode_observation(engine, seat) if agent.uses_observation else None
    return int(agent.act(observation, action_mask(engine, seat), PublicView(engine, seat)))


class BotRolloutEvaluator(mcts.Evaluator):
    """Values a state by one rollout in which ``agent`` plays every seat to the end. ISMCTS
    evaluates re-dealt worlds only, and the bot reads its seat's public view, so no true
    hidden card is used. The rollout steps a copy of the engine directly."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent

    def evaluate(self, state: trash_env.spiel.TrashState) -> np.ndarray:
        if state.engine is None:  # before the deal: deal a copy first
            state = state.clone()
            state.apply_action(trash_env.spiel.DEAL_ACTION)
        engine = state.engine.clone(events=False)
        while not engine.done:
            engine.step(_engine_bot_action(self._agent, engine))
        return np.array(engine.returns())

    def prior(self, state: trash_env.spiel.TrashState) -> list[tuple[int, float]]:
        legal = state.legal_actions()
        return [(action, 1.0 / len(legal)) for action in legal]


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--simulations", type=int, default=100, help="ISMCTS simulations a move")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--start-size", type=int, default=5, help="the first layout size")
    parser.add_argument("--episode", choices=("round", "game"), default="round")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--opponent", default="random", help="the other seats' bot: random, greedy, counting, ..."
    )
    parser.add_argument(
        "--rollout",
        default="random",
        help="how ISMCTS values a node: random (OpenSpiel's rollout) or a bot, e.g. greedy",
    )
    args = parser.parse_args(argv)
    if args.games < 1 or args.simulations < 1:
        parser.error("--games and --simulations must be at least 1")
    result = play(
        args.games,
        args.simulations,
        args.players,
        args.start_size,
        args.episode,
        args.seed,
        opponent=args.opponent,
        rollout=args.rollout,
    )
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
