"""Exact play of 2-player Trash rounds: the public-state model (:mod:`trash_env.exact.model`),
in which every card that turns up is a chance event over the unseen cards, its solver and the
endgame tables (docs/skill.md)."""
