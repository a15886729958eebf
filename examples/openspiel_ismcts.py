"""OpenSpiel's information-set MCTS (ISMCTS) playing Trash against the project's bots.

The game is loaded through pyspiel like any OpenSpiel game (``trash_env.spiel`` registers it),
and ISMCTS searches worlds re-dealt by ``TrashState.resample_from_infostate``, so it never sees
the face-down cards or the stock order. The other seats are played by a bot of ``agents``
(``--opponent random``, the default, or ``greedy``, ...), which sees the public view only. The
searching player takes every seat in turn; the result is its win rate and mean return
(zero-sum: 0 is what the opponents' equal averages).

    python examples/openspiel_ismcts.py --games 20 --simulations 100
    python examples/openspiel_ismcts.py --games 20 --simulations 100 --opponent greedy
    python examples/openspiel_ismcts.py --games 20 --wilds kings   # train.py's rules flags

Every random choice is seeded (``--seed``): the same command prints the same result.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from agents.training.pipeline import check_command_line, example_prog  # noqa: E402
from trash_env.cli import Parser, add_rules_arguments, rules_options  # noqa: E402
from trash_env.rules import Rules  # noqa: E402

NAME = "openspiel_ismcts"
# ---- settings (the flags below default to them) ----
GAMES = 20  # --games
SIMULATIONS = 100  # --simulations: ISMCTS simulations a move
START_SIZE = 5  # --start-size: the first layout size (short games for a search)
EPISODE = "round"  # --episode: one round per game
OPPONENT = "random"  # --opponent: the other seats' bot
ROLLOUT = "random"  # --rollout: how ISMCTS values a node
UCT_C = 2.0
# The rules this example plays unless told otherwise (the standard game's otherwise).
EXAMPLE_RULES = {"start_size": START_SIZE, "episode": EPISODE}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = Parser(prog=example_prog(NAME), description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=GAMES)
    parser.add_argument(
        "--simulations", type=int, default=SIMULATIONS, help="ISMCTS simulations a move"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--opponent", default=OPPONENT, help="the other seats' bot: random, greedy, counting, ..."
    )
    parser.add_argument(
        "--rollout",
        default=ROLLOUT,
        help="how ISMCTS values a node: random (OpenSpiel's rollout) or a bot, e.g. greedy",
    )
    add_rules_arguments(
        parser,
        {"start_size": f"(default: {START_SIZE})", "episode": f"(default: {EPISODE})"},
    )
    args = parser.parse_args(argv)
    if args.games < 1 or args.simulations < 1:
        parser.error("--games and --simulations must be at least 1")
    try:
        args.rules = example_rules(args)
    except ValueError as error:
        parser.error(f"rules: {error}")
    return args


def example_rules(args: argparse.Namespace) -> Rules:
    """The game the rules flags describe, on this example's short one-round default."""
    return Rules.from_options(**{**EXAMPLE_RULES, **rules_options(args)})


if __name__ == "__main__":  # --help and bad flags answered before the library loads
    check_command_line(NAME, parse_args, "openspiel", "pyspiel")

import numpy as np  # noqa: E402
import pyspiel  # noqa: E402
from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

import trash_env.spiel  # noqa: E402, F401  (registers "python_trash")
from agents.bots.base import Agent, make_agent  # noqa: E402
from trash_env.engine import Game  # noqa: E402
from trash_env.observation import action_mask, encode_observation  # noqa: E402
from trash_env.view import PublicView  # noqa: E402


def play(
    games: int,
    simulations: int,
    players: int = 2,
    start_size: int = START_SIZE,
    episode: str = EPISODE,
    seed: int = 0,
    uct_c: float = UCT_C,
    opponent: str = OPPONENT,
    rollout: str = ROLLOUT,
    **options: object,
) -> dict:
    """Play ``games`` games, ISMCTS in seat ``g % players`` of game ``g``, the others played
    by the bot ``opponent`` names (an ``agents.make_agent`` spec). ``rollout`` is how ISMCTS
    values a new node: ``"random"`` (OpenSpiel's random rollout) or a bot spec that plays
    every seat to the end of the (re-dealt) game. ``options``: the other rules options.

    Returns the search player's wins, mean return and the time taken."""
    rules = Rules.from_options(
        num_players=players, start_size=start_size, episode=episode, **options
    )
    game = pyspiel.load_game("python_trash", trash_env.spiel.params_from_rules(rules, seed))
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
        "rules": trash_env.spiel.rules_from_params(game.get_parameters()).to_dict(),
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
    args = parse_args(argv)
    options = args.rules.to_dict()
    result = play(
        args.games,
        args.simulations,
        options.pop("num_players"),
        options.pop("start_size"),
        options.pop("episode"),
        args.seed,
        opponent=args.opponent,
        rollout=args.rollout,
        **options,
    )
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
