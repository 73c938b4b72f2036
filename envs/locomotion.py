"""The Gymnasium env that Crawler and Walker share: one agent in its own PyBullet world.

:class:`LocomotionEnv`, behind ``gym.make``, is the N = 1 case of ``envs.agents``'s
:class:`~envs.agents.LocomotionAgents` in its own client, with the agent's platform at the
origin. The bodies are described in ``envs.body``, the world in ``envs.scene``, the joint drive
in ``envs.joint_drive``; ``envs.vector`` gives the same agents N at a time.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from envs.agents import LocomotionAgents
from envs.joint_drive import JointDriveController, validate_actions

__all__ = ["LocomotionEnv"]

#: The one agent of a single env, as the batch code indexes agents.
_FIRST = np.zeros(1, dtype=np.intp)
_FIRST.flags.writeable = False


class LocomotionEnv(LocomotionAgents, gym.Env[NDArray[np.float32], NDArray[np.float32]]):
    """Shared Gymnasium machinery of the Crawler and Walker environments: one agent.

    Subclasses give the body (``BODY``), the scene and the reward terms. One env step is
    ``frame_skip`` physics steps of 1/75 s with the action held (ML-Agents' DecisionPeriod 5
    with TakeActionsBetweenDecisions off). Each env owns its PyBullet client, with the
    agent's platform at the origin.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "rgb_array"], "render_fps": 15}

    def __init__(self, **world_kwargs: Any) -> None:
        """Builds the world with one agent.

        Args:
            **world_kwargs: ``_build_agents``'s arguments (``scene``, ``frame_skip``,
                ``sensor_settings``, ``urdf``, the joint drive, ``prefab_drive``,
                ``render_mode``, ``width``, ``height``), as the task's ``_configure_task``
                returns them.
        """
        self._build_agents(num_agents=1, **world_kwargs)
        self.observation_space = self._agent_observation_space
        self.action_space = self._agent_action_space

    # ------------------------------------------------------------------------ gymnasium
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Restores the agent at rest with a random yaw, and a target position.

        All randomness comes from ``self.np_random``. Joint targets go back to zero with the
        prefab's drive and the strength observations to 0, so that an episode does not depend
        on the one before (ML-Agents keeps both across episodes).
        """
        super().reset(seed=seed)
        self._check_open()
        self._reset_agents(_FIRST)
        return self._obs[0].copy(), self._agent_info(0)

    def step(
        self, action: NDArray[np.float32]
    ) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """Holds ``action`` for ``frame_skip`` physics steps and returns the decision's outcome.

        Finite actions outside [-1, 1] are clipped to it, as ML-Agents clips its continuous
        actions; a wrong shape or a non-finite value raises ``ValueError``.

        Returns:
            ``(observation, reward, terminated, truncated, info)``; ``truncated`` is always
            False (``TimeLimit`` ends episodes after 1000 steps) and ``info`` holds every
            reward term as ``reward_<name>``.

        Raises:
            RuntimeError: before ``reset()``, after ``close()``, or when called from inside a
                step (ML-Agents' Academy guard against re-entrant stepping).
            RewardNaNError: when a reward term comes out NaN.
        """
        if self._in_step:
            raise RuntimeError("env.step() was called from inside env.step(); that is not allowed")
        self._check_open()
        if self._needs_reset[0]:
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        clipped = validate_actions(action, self.action_space.shape)
        self._in_step = True
        try:
            rewards, terminated, terms = self._step_agents(clipped[None])
        finally:
            self._in_step = False
        info = self._agent_info(0)
        info.update({f"reward_{name}": float(terms[name][0]) for name in self.REWARD_TERMS})
        return self._obs[0].copy(), float(rewards[0]), bool(terminated[0]), False, info

    def _rng(self, agent: int) -> np.random.Generator:
        return self.np_random

    def _observe(self) -> NDArray[np.float32]:
        """Observes the current state again; a new array."""
        self._observe_agents(_FIRST)
        return self._obs[0].copy()

    def render(self) -> NDArray[np.uint8] | None:
        """An RGB frame (H, W, 3) uint8 for ``rgb_array``; None otherwise (``human`` shows GUI)."""
        self._check_open()
        return self._render_agent(0)

    def close(self) -> None:
        """Disconnects this env's PyBullet client; safe to call more than once."""
        self._disconnect()

    @property
    def robot(self) -> int:
        """The agent's PyBullet body id."""
        return self._agents[0].robot

    @property
    def _drive(self) -> JointDriveController:
        return self._agents[0].drive
