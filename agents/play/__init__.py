"""The terminal table: the game (:mod:`~agents.play.game`, ``python -m agents.play``), the human
seat (:mod:`~agents.play.human`), the game log (:mod:`~agents.play.game_log`) and its replay
(:mod:`~agents.play.replay`)."""
