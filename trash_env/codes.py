"""Where the batched engines read each rules option: ``cfg`` is ``Rules.codes()`` (one integer
per option, in field order) then the number of cards. The numba kernels and the JAX engine
read the same indices and code values from here."""

from trash_env.rules import EPISODE, FIRST_PLAYER, RESHUFFLE, Rules, option_index

CFG_NUM_PLAYERS = option_index("num_players")
CFG_START_SIZE = option_index("start_size")
CFG_TARGET_SIZE = option_index("target_size")
CFG_MAX_DEALS = option_index("max_deals")
CFG_FIRST_PLAYER = option_index("first_player")
CFG_RESHUFFLE = option_index("reshuffle")
CFG_LOSERS_REVEAL = option_index("losers_reveal")
CFG_FREE_DRAWS = option_index("free_draws")
CFG_CALL_TRASH = option_index("call_trash")
CFG_EPISODE = option_index("episode")
CFG_MAX_TURNS = option_index("max_turns")
CFG_CARDS = len(Rules.option_names())
CFG_LEN = CFG_CARDS + 1
RESHUFFLE_ALL = RESHUFFLE.index("all")
ROTATE = FIRST_PLAYER.index("rotate")
EPISODE_ROUND = EPISODE.index("round")
