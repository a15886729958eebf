"""What a model was trained for, and how a game differs from it.

The sidecar records the rules (every option) and ``trained_for``: the episode kind (``game``
or ``round``) and the layout sizes training dealt (:func:`trained_for`). A sidecar without
``trained_for`` is read as trained on what its rules say (their ``episode`` and
``start_size``), which is what train.py trained on when it wrote such sidecars. The loaders
(agents.policies.policy, the web table, evaluate.py) use :func:`training_mismatch` and
:func:`other_rules_of_play` to say, in words, where a game differs.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from trash_env.files import safe_text
from trash_env.rules import Rules, option_spec


def trained_for(rules: Rules) -> dict[str, Any]:
    """What training under ``rules`` covers: the episode kind and the layout sizes dealt.
    A whole game passes through every size from ``start_size`` down to ``target_size + 1``;
    a one-round episode deals ``start_size`` only."""
    if rules.episode == "round":
        sizes = [rules.start_size]
    else:
        sizes = list(range(rules.target_size + 1, rules.start_size + 1))
    return {"episode": rules.episode, "layout_sizes": sizes}


# Compared through trained_for (episode kind, layout sizes) or not a rule of play at all.
_NOT_COMPARED = ("episode", "start_size", "max_turns", "num_decks")


def _rules_differences(trained: Rules, game: Rules) -> list[str]:
    """``option=game value (trained: value)`` for every rule of play that differs."""
    out = []
    if trained.decks != game.decks:
        out.append(f"decks={game.decks} (trained: {trained.decks})")
    for name, value in game.to_dict().items():
        if name in _NOT_COMPARED or name == "num_players":
            continue
        if getattr(trained, name) != value:
            out.append(f"{name}={value!r} (trained: {getattr(trained, name)!r})")
    return out


def other_rules_of_play(sidecar: dict[str, Any], game: Rules) -> tuple[list[str], list[str]]:
    """How the rules of play of ``game`` differ from the model's (``option=game value
    (trained: value)``, empty when they agree; the player count and layout sizes are left to
    :func:`training_mismatch`), and the command-line flags that set the model's own values
    where they differ (``--wilds kings``)."""
    trained = Rules.from_options(**sidecar["rules"])
    differences = _rules_differences(trained, game)
    flags = []
    for option in fields(Rules):
        value = getattr(trained, option.name)
        if option.name in (*_NOT_COMPARED, "num_players") or value == getattr(game, option.name):
            continue
        flag = option_spec(option)["flags"][0]
        if isinstance(value, bool):
            flags.append(flag if value else "--no-" + flag[2:])
        elif value is not None:
            flags.append(f"{flag} {value}")
    return differences, flags


def describe_training(sidecar: dict[str, Any]) -> str:
    """The configuration a model was trained for, in words."""
    rules = Rules.from_options(**sidecar["rules"])
    covered = sidecar_trained_for(sidecar)
    sizes = covered["layout_sizes"]
    span = (
        f"{sizes[0]}"
        if len(sizes) == 1
        else f"{sizes[0]}-{sizes[-1]}"
        if sizes == list(range(sizes[0], sizes[-1] + 1))
        else ",".join(map(str, sizes))
    )
    kind = "whole games" if covered["episode"] == "game" else "one-round games"
    standard = Rules(
        num_players=rules.num_players,
        episode=rules.episode,
        start_size=rules.start_size,
        max_turns=rules.max_turns,
    )
    other = _rules_differences(standard, rules)
    options = (
        "standard rules"
        if not other
        else "rules " + ", ".join(o.split(" (trained")[0] for o in other)
    )
    return f"{rules.num_players} players, {kind} at layout sizes {span}, {options}"


def sidecar_trained_for(sidecar: dict[str, Any]) -> dict[str, Any]:
    """The sidecar's ``trained_for``; an older sidecar without it is read as trained on what
    its rules say (train.py then trained on exactly the rules' episode and start size)."""
    recorded = sidecar.get("trained_for")
    if recorded is not None:
        return recorded
    return trained_for(Rules.from_options(**sidecar["rules"]))


def training_mismatch(sidecar: dict[str, Any], rules: Rules) -> list[str]:
    """How a game under ``rules`` differs from what the model was trained for (empty: it was
    trained for it). The player count is not compared: it is checked by the caller."""
    trained = Rules.from_options(**sidecar["rules"])
    problems = _rules_differences(trained, rules)
    covered = sidecar_trained_for(sidecar)
    wanted = trained_for(rules)
    if covered["episode"] == "round" and wanted["episode"] == "game":
        problems.append("a whole game (trained on one-round games only)")
    missing = sorted(set(wanted["layout_sizes"]) - set(covered["layout_sizes"]))
    if missing:
        problems.append(
            "layout size(s) " + ",".join(map(str, missing)) + " (not dealt in training)"
        )
    return problems


def check_trained_for(data: dict[str, Any], where: str) -> None:
    """A sidecar's ``trained_for``, when it has one: the episode kind and distinct layout
    sizes from 1 to 10; ``ValueError`` naming ``where`` otherwise."""
    value = data.get("trained_for")
    if value is None:
        return
    sizes = value.get("layout_sizes") if isinstance(value, dict) else None
    if (
        not isinstance(value, dict)
        or value.get("episode") not in ("game", "round")
        or not isinstance(sizes, list)
        or not 1 <= len(sizes) <= 10
        or any(isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= 10 for s in sizes)
        or len(set(sizes)) != len(sizes)
    ):
        raise ValueError(
            f"{where}: trained_for must be an object with episode (game or round) "
            "and layout_sizes (distinct integers from 1 to 10), got "
            f"{safe_text(repr(value))[:200]}"
        )
