"""Training Trash agents: the package behind ``train.py`` / ``trash-train``, one job per module.

- :mod:`~agents.training.config`: :class:`TrainConfig`, every setting, checked when built;
- :mod:`~agents.training.cli`: the command line (``main``);
- :mod:`~agents.training.run`: ``train(config) -> sidecar`` (MaskablePPO);
- :mod:`~agents.training.envs`: the training envs and the opponent pool;
- :mod:`~agents.training.schedules`: shaping annealing, evaluation points;
- :mod:`~agents.training.imitation`: the optional warm start from a bot's moves;
- :mod:`~agents.training.callbacks`: the stable-baselines3 callbacks;
- :mod:`~agents.training.checkpoint`: the checkpoint file;
- :mod:`~agents.training.log` and :mod:`~agents.training.curve`: the CSV log and its PNG;
- :mod:`~agents.training.export` and :mod:`~agents.training.eval_curve`: for any pipeline,
  a torch MLP written as a model file, and the evaluation curve against greedy and random.

Importing the package imports nothing heavy: stable-baselines3 only where it is used (run,
callbacks, checkpoint), never in ``export`` and ``eval_curve``.
"""
