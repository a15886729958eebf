"""Duplicate-deal tournaments between agents: ``python evaluate.py --agents greedy random``.

The command line lives in :mod:`agents.evaluate_cli` (``python evaluate.py --help``); the
library in :mod:`agents.evaluation`. Installed, the same command is ``trash-evaluate``.
"""

import sys

from agents.evaluate_cli import main

if __name__ == "__main__":
    sys.exit(main())
