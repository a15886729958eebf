"""Per-agent transitions out of AEC play, for hand-written training loops.

Why: in a turn-based AEC game an agent's reward does not arrive with its action. Rewards are
paid when the game (or, with ``round_rewards``, a deal) ends, often on another agent's turn;
a Trash turn is several decisions by the same agent in a row (draw, place, place, ...); and at
the end every agent, not only the one that moved, gets its final reward through PettingZoo's
dead steps. A loop that stores ``(obs, action, reward)`` per ``env.step`` credits rewards to
the wrong decision. This module credits them the way PettingZoo defines them: everything an
agent earned between two of its decisions (``env.last()``'s reward, the agent's cumulative
reward since it last acted) belongs to the earlier decision, and the final rewards close every
agent's last decision.

It uses only the AEC API of ``trash_env.env()`` (no engine, no RL library):

    from trash_env import env
    from trash_env.integrations import play_game

    for t in play_game(env(), lambda agent, obs: my_policy(obs), seed=0):
        buffer.add(t.agent, t.observation, t.action, t.reward, t.next_observation, t.done)

or, for a loop that drives the env itself, :class:`TransitionBuilder`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

Observation = dict  # {"observation": float32 array, "action_mask": int8 array}


@dataclass(frozen=True)
class Transition:
    """One decision of one agent and what followed it, up to that agent's next decision.

    Attributes:
        agent: the agent that decided (``"player_0"``, ...).
        observation: what it observed when deciding (``observation`` and ``action_mask``).
        action: the action it took.
        reward: everything it was paid from this decision up to its next one (or the game's
            end): ``env.last()``'s reward at its next turn, or at its dead step.
        next_observation: its observation at its next decision, or its final observation.
        terminated: the game ended after this decision (no next decision for this agent).
        truncated: the game was cut at ``max_turns`` after this decision.
        info: the agent's info at ``next_observation`` (the end-of-game info on the last one).
        extra: whatever the policy returned beside the action (log-prob, value, ...).
    """

    agent: str
    observation: Observation
    action: int
    reward: float
    next_observation: Observation
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)
    extra: Any = None

    @property
    def done(self) -> bool:
        """No next decision for this agent in this game (terminated or truncated)."""
        return self.terminated or self.truncated


class TransitionBuilder:
    """Turns the calls of an AEC loop into per-agent :class:`Transition` objects.

    Drive it from the loop's two points, in this order, for every ``env.agent_iter()`` step::

        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            closed = builder.observe(agent, obs, reward, term, trunc, info)  # None or one
            action = None if term or trunc else policy(obs)
            if action is not None:
                builder.act(agent, obs, action)
            env.step(action)

    ``observe`` closes the agent's previous decision (if any) with the reward it reports;
    ``act`` opens a new one. An agent that never decided before the game ended (possible only
    when a deal is decided before any decision) closes nothing: its reward has no decision to
    go to.
    """

    def __init__(self) -> None:
        self._open: dict[str, tuple[Observation, int, Any]] = {}

    def observe(
        self,
        agent: str,
        observation: Observation,
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any] | None = None,
    ) -> Transition | None:
        """The agent is about to act (or takes its dead step): close its open decision."""
        pending = self._open.pop(agent, None)
        if pending is None:
            return None
        before, action, extra = pending
        return Transition(
            agent=agent,
            observation=before,
            action=action,
            reward=float(reward),
            next_observation=observation,
            terminated=bool(terminated),
            truncated=bool(truncated) and not terminated,
            info=dict(info) if info else {},
            extra=extra,
        )

    def act(self, agent: str, observation: Observation, action: int, extra: Any = None) -> None:
        """The agent decided ``action`` on ``observation``: open its next transition."""
        if agent in self._open:
            raise ValueError(
                f"{agent} acted twice without observe() between: call observe() with "
                "env.last() before every act()"
            )
        self._open[agent] = (observation, int(action), extra)

    @property
    def open_agents(self) -> list[str]:
        """Agents with a decision not yet closed (empty once a game has been played out)."""
        return list(self._open)

    def reset(self) -> None:
        """Forget open decisions (call when abandoning a game midway)."""
        self._open.clear()


Policy = Callable[[str, Observation], Any]


def play_game(aec_env: Any, policy: Policy, seed: int | None = None) -> Iterator[Transition]:
    """Play one game of ``aec_env`` (reset with ``seed``) and yield each agent's transitions.

    ``policy(agent, observation)`` returns the action, or ``(action, extra)`` to keep
    ``extra`` (e.g. the log-probability and value estimate) in the transition. Transitions come
    out as they close: an agent's decision closes at its next decision, so the agent's own
    transitions are in order, interleaved with the others'. Every decision yields exactly one
    transition, the last of each agent with ``done`` True and the final reward."""
    builder = TransitionBuilder()
    aec_env.reset(seed=seed)
    for agent in aec_env.agent_iter():
        observation, reward, terminated, truncated, info = aec_env.last()
        closed = builder.observe(agent, observation, reward, terminated, truncated, info)
        if closed is not None:
            yield closed
        if terminated or truncated:
            aec_env.step(None)
            continue
        chosen = policy(agent, observation)
        action, extra = chosen if isinstance(chosen, tuple) else (chosen, None)
        builder.act(agent, observation, action, extra)
        aec_env.step(action)
