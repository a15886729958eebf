"""The bots: the agent protocol and registry (:mod:`~agents.bots.base`), the heuristic bots
(:mod:`~agents.bots.heuristics`) and the determinized search bot (:mod:`~agents.bots.search`)."""
