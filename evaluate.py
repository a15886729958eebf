"""Duplicate-deal tournaments between agents: ``python evaluate.py --agents greedy random``.

The command line lives in :mod:`agents.evaluation.cli` (``python evaluate.py --help``); the
library in :mod:`agents.evaluation`. Installed, the same command is ``trash-evaluate``.
"""

import sys

from agents.evaluation.cli import main

if __name__ == "__main__":
    sys.exit(main())
