"""``python -m agents.play``: the terminal game (:func:`agents.play.game.console`)."""

import sys

from agents.play.game import console

sys.exit(console())
