"""Trained policies: the model-file format (:mod:`~agents.policies.model_file`), its input
features (:mod:`~agents.policies.features`), the agent that plays one
(:mod:`~agents.policies.policy`),
the conversion of stable-baselines3 policies (:mod:`~agents.policies.convert`) and the shipped
models (``models/``)."""
