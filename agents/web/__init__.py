"""The table in a browser: ``python -m agents.web`` serves a local page to play, watch and rank.

* **Play** (:mod:`agents.web.table`): a person takes a seat against bots or models; the game runs
  on the server and the page receives only what that seat may know (:mod:`agents.web.state`).
* **Watch** (:mod:`agents.web.replay`): a game log plays back step by step.
* **Rank** (:mod:`agents.web.leaderboard`): an evaluate.py report as a leaderboard.

The server (:mod:`agents.web.server`) is the standard library's ``http.server``; the page is
plain HTML, CSS and JavaScript shipped in ``agents/web/static`` (nothing from the internet).
"""
