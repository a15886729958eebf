"""Train a Trash agent with MaskablePPO against bots and frozen snapshots of itself.

    python train.py                       # the default run: from scratch, ~5 min on 2 cores
    python train.py --episode round --timesteps 3000000 --out runs/long/model.safetensors
    python train.py --imitate greedy --lr 1e-4 --ent-coef 0.001   # warm start

``python train.py --help`` lists the flags; docs/training.md explains the run, its files and
its figures. The work is done by the :mod:`agents.training` package (also ``trash-train``).
"""

import sys

from agents.training.cli import main

if __name__ == "__main__":
    sys.exit(main())
