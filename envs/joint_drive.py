"""ML-Agents' JointDriveController on PyBullet: actions -> joint targets and strengths.

:func:`validate_actions` checks and clips the actions first, as ML-Agents clips its continuous
actions.

Unity's ConfigurableJoint with a slerp drive becomes, in the URDFs, a chain of limited revolute
joints (``<part>_x``, ``_y``, ``_z``) through massless helper links; the drive is PyBullet's
implicit position motor on each of them (see :class:`JointDriveController`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pybullet as p
from numpy.typing import NDArray

from envs.body import ActuatedPart

__all__ = ["JointDriveController", "validate_actions"]


def validate_actions(actions: Any, shape: tuple[int, ...]) -> NDArray[np.float64]:
    """Checks the shape and finiteness of an action or a batch of actions; clips to [-1, 1].

    Finite values outside [-1, 1] are clipped, as ML-Agents clips its continuous actions.

    Args:
        actions: ``(action_size,)`` for one agent or ``(num_agents, action_size)`` for a batch.
        shape: the expected shape.

    Returns:
        The actions as float64 clipped to [-1, 1], in ``shape``.

    Raises:
        ValueError: for a non-numeric value, a wrong shape (naming both shapes) or a
            non-finite value (naming every bad index, and for a batch the agent).
    """
    name = "action" if len(shape) == 1 else "actions"
    try:
        array = np.asarray(actions, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a numeric array, got {actions!r}") from error
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got shape {array.shape}")
    bad = ~np.isfinite(array)
    if bad.any():
        if array.ndim == 1:
            where = np.flatnonzero(bad)
            raise ValueError(
                f"action must be finite; non-finite at indices {where.tolist()}: {array[where]}"
            )
        parts = [
            f"agent {agent} at indices {np.flatnonzero(row).tolist()}: {array[agent][row]}"
            for agent, row in enumerate(bad)
            if row.any()
        ]
        raise ValueError("actions must be finite; non-finite in " + "; ".join(parts))
    return np.clip(array, -1.0, 1.0)


class JointDriveController:
    """ML-Agents' JointDriveController on PyBullet revolute-joint chains.

    Actions in [-1, 1] map to target angles ``lerp(lower, upper, (a + 1) / 2)`` within each
    joint's limits (Unity's ``SetJointTargetRotation``), and to a strength
    ``(s + 1) / 2 * max_force`` per part (``SetJointStrength``). Unity's slerp drive is an
    implicit spring-damper; over one step of ``dt`` with stiffness ``k`` and damping ``d`` it
    drives the joint at ``k e / (d + k dt)`` for an angle error ``e`` (the stiff limit). PyBullet's
    ``POSITION_CONTROL`` motor solves the same velocity target implicitly, force-limited, with
    ``positionGain = k dt / (d + k dt)`` and ``velocityGain = 1``: stable at any stiffness.

    Args:
        body_id: the agent's multibody.
        client: PyBullet client id.
        actuated: the driven parts.
        spring: ``maxJointSpring``, N*m/rad.
        damper: ``jointDampen``, N*m*s/rad.
        max_force: ``maxJointForceLimit``, N*m.
        timestep: physics step, s.

    Raises:
        ValueError: if a joint named by ``actuated`` is not in the body.
    """

    def __init__(
        self,
        body_id: int,
        client: int,
        actuated: Sequence[ActuatedPart],
        *,
        spring: float,
        damper: float,
        max_force: float,
        timestep: float,
    ) -> None:
        self._body = body_id
        self._client = client
        self.spring, self.damper, self.max_force = spring, damper, max_force
        self._timestep = timestep
        joints = {
            p.getJointInfo(body_id, j, physicsClientId=client)[1].decode(): j
            for j in range(p.getNumJoints(body_id, physicsClientId=client))
        }
        indices, action_index, joint_part, lower, upper = [], [], [], [], []
        for part_index, part in enumerate(actuated):
            for dof, action in part.rotation_actions:
                name = f"{part.name}_{dof}"
                if name not in joints:
                    raise ValueError(f"joint {name!r} not in the body; joints: {sorted(joints)}")
                info = p.getJointInfo(body_id, joints[name], physicsClientId=client)
                indices.append(joints[name])
                action_index.append(action)
                joint_part.append(part_index)
                lower.append(info[8])
                upper.append(info[9])
        self.joint_indices = tuple(indices)
        self._action_index = np.array(action_index)
        self._joint_part = np.array(joint_part)
        self._lower = np.array(lower)
        self._range = np.array(upper) - self._lower
        self._strength_action = np.array([part.strength_action for part in actuated])
        self.strength_ratio = np.zeros(len(actuated))
        self.all_joint_indices = tuple(joints.values())

    @property
    def joint_part(self) -> NDArray[np.intp]:
        """(joints,) index into the actuated parts of each joint in ``joint_indices``."""
        return self._joint_part.copy()

    def position_gain(self, spring: float, damper: float) -> float:
        """PyBullet position gain equivalent to an implicit spring-damper over one step."""
        kdt = spring * self._timestep
        return kdt / (damper + kdt) if kdt > 0.0 else 0.0

    def commands(
        self, actions: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Joint targets and strength ratios of clipped actions in [-1, 1].

        Args:
            actions: (..., action_size) actions; any leading batch axes.

        Returns:
            ``(targets, strength_ratio)``: (..., joints) target angles in radians, in
            ``joint_indices`` order, and (..., parts) strengths as fractions of ``max_force``.
        """
        targets = self._lower + 0.5 * (actions[..., self._action_index] + 1.0) * self._range
        return targets, 0.5 * (actions[..., self._strength_action] + 1.0)

    def apply(self, action: NDArray[np.float64]) -> None:
        """Sets every joint's target and strength from a clipped action in [-1, 1]."""
        targets, self.strength_ratio = self.commands(action)
        forces = (self.strength_ratio * self.max_force)[self._joint_part]
        self._drive(targets, forces, self.spring, self.damper)

    @staticmethod
    def apply_all(drives: Sequence[JointDriveController], actions: NDArray[np.float64]) -> None:
        """``drives[i].apply(actions[i])`` for drives of one body description, batched.

        Args:
            drives: drives built with the same ``actuated`` parts on the same URDF.
            actions: (len(drives), action_size) clipped actions.
        """
        first = drives[0]
        targets, ratios = first.commands(actions)
        max_forces = np.array([drive.max_force for drive in drives])
        forces = ratios[:, first._joint_part] * max_forces[:, None]
        for drive, target, ratio, force in zip(drives, targets, ratios, forces, strict=True):
            drive.strength_ratio = ratio
            drive._drive(target, force, drive.spring, drive.damper)

    def reset(self, spring: float, damper: float, max_force: float) -> None:
        """Zero targets with the prefab's drive; strengths read 0 until the first action."""
        self.strength_ratio = np.zeros_like(self.strength_ratio)
        count = len(self._joint_part)
        self._drive(np.zeros(count), np.full(count, max_force), spring, damper)

    def _drive(
        self,
        targets: NDArray[np.float64],
        forces: NDArray[np.float64],
        spring: float,
        damper: float,
    ) -> None:
        """One motor call for every driven joint: target angles and force limits per joint."""
        count = len(self.joint_indices)
        p.setJointMotorControlArray(
            self._body,
            self.joint_indices,
            p.POSITION_CONTROL,
            targetPositions=targets.tolist(),
            targetVelocities=[0.0] * count,
            forces=forces.tolist(),
            positionGains=[self.position_gain(spring, damper)] * count,
            velocityGains=[1.0] * count,
            physicsClientId=self._client,
        )
