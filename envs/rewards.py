"""Reward terms of the seed's Crawler and Walker agents, as pure functions of arrays.

Every term takes its inputs stacked over the physics steps of one env step (leading axis
``k``, one row per physics step) and returns the term's total over those steps, as ML-Agents
adds a reward in every ``FixedUpdate`` and reports the sum at the next decision. Before it adds
anything, a term checks its per-step values for NaN and raises ``RewardNaNError`` naming the
term and printing every input, as the C# agents do since ML-Agents #4205.

Batches: inputs of shape (k, L, 3), L agents side by side, give (L,) totals in one pass; a NaN
raises for the first agent that has one, with that agent's inputs only, and the error's
``agent`` says which column it was.

Frames: vectors are in PyBullet's world frame (z up). ``cube_forward`` is the orientation
cube's horizontal unit forward axis; ``*_forward`` of a body is its Unity forward axis
(local +y of the link frame here, see ``envs/assets/urdf``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "RewardNaNError",
    "facing_target",
    "head_height_over_feet",
    "moving_towards_target",
]

#: ML-Agents' ``maximumWalkingSpeed`` for both agents (999 m/s: ClampMagnitude is effectively off).
MAXIMUM_WALKING_SPEED = 999.0


class RewardNaNError(ValueError):
    """A reward term came out NaN; the message names the term and prints its inputs.

    Attributes:
        agent: for a batch of agents, the column (agent) whose term was NaN; None otherwise.
    """

    def __init__(self, message: str, agent: int | None = None) -> None:
        super().__init__(message)
        self.agent = agent


def _check(term: str, values: NDArray[np.float64], **inputs: ArrayLike) -> None:
    """Raises ``RewardNaNError`` if any per-step value of ``term`` is NaN.

    ``values`` is (k,) or (k, L); for a batch the message prints the first bad agent's inputs.
    """
    bad = np.isnan(values)
    if not bad.any():
        return
    agent = None
    if values.ndim == 2:
        agent = int(np.flatnonzero(bad.any(axis=0))[0])
        inputs = {
            name: value[:, agent] if np.ndim(value) == 3 else value
            for name, value in inputs.items()
        }
    lines = [f"NaN in {term}."]
    lines += [f" {name}: {np.asarray(value).tolist()}" for name, value in inputs.items()]
    raise RewardNaNError("\n".join(lines), agent)


def _rows(value: ArrayLike, name: str) -> NDArray[np.float64]:
    """(k, 3) or (k, L, 3) float64 view of per-step vectors; a (3,) vector becomes one row."""
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim not in (2, 3) or array.shape[-1] != 3:
        raise ValueError(f"{name} must have shape (k, 3), (k, L, 3) or (3,), got {np.shape(value)}")
    return array


def _total(weight: float, values: NDArray[np.float64]) -> float | NDArray[np.float64]:
    """``weight`` times the sum over steps: a float for (k,), an (L,) array for (k, L)."""
    total = weight * values.sum(axis=0)
    return float(total) if values.ndim == 1 else total


def clamp_magnitude(vectors: ArrayLike, max_length: float) -> NDArray[np.float64]:
    """Unity's ``Vector3.ClampMagnitude`` row by row: rescale rows longer than ``max_length``.

    Args:
        vectors: (k, 3) or (k, L, 3) vectors.
        max_length: largest allowed length, >= 0.

    Returns:
        The vectors, each no longer than ``max_length``.
    """
    rows = _rows(vectors, "vectors")
    length = np.sqrt(np.einsum("...i,...i->...", rows, rows))[..., None]
    scale = np.where(length > max_length, max_length / np.where(length > 0, length, 1.0), 1.0)
    return rows * scale


def moving_towards_target(
    cube_forward: ArrayLike,
    velocity: ArrayLike,
    weight: float,
    *,
    term: str = "moveTowardsTargetReward",
    cube_name: str = "cubeForward",
    velocity_name: str = "velocity",
    maximum_walking_speed: float = MAXIMUM_WALKING_SPEED,
) -> float | NDArray[np.float64]:
    """``weight * dot(cube_forward, ClampMagnitude(velocity, maximum_walking_speed))`` summed.

    Args:
        cube_forward: (k, 3) unit horizontal forward of the orientation cube, per step.
        velocity: (k, 3) root-body velocity, m/s, world frame, per step.
        weight: reward per (m/s) of speed towards the target (Crawler 0.03, Walker 0.02).
        term: name used in the NaN message (the C# agent's variable name).
        cube_name: name of ``cube_forward`` in the NaN message.
        velocity_name: name of ``velocity`` in the NaN message (``body.velocity``...).
        maximum_walking_speed: ClampMagnitude limit, m/s.

    Returns:
        The term summed over the ``k`` steps (per agent for (k, L, 3) inputs).

    Raises:
        RewardNaNError: if any step's dot product is NaN.
    """
    forward = _rows(cube_forward, "cube_forward")
    clamped = clamp_magnitude(velocity, maximum_walking_speed)
    dots = np.einsum("...i,...i->...", forward, clamped)
    _check(
        term,
        dots,
        **{cube_name: forward, velocity_name: _rows(velocity, "velocity")},
        maximumWalkingSpeed=maximum_walking_speed,
    )
    return _total(weight, dots)


def facing_target(
    cube_forward: ArrayLike,
    body_forward: ArrayLike,
    weight: float,
    *,
    term: str = "lookAtTargetReward",
    cube_name: str = "cubeForward",
    forward_name: str = "body.forward",
) -> float | NDArray[np.float64]:
    """``weight * dot(cube_forward, body_forward)`` summed over steps.

    Args:
        cube_forward: (k, 3) unit horizontal forward of the orientation cube, per step.
        body_forward: (k, 3) unit forward axis of the watched body (Crawler Body, Walker head).
        weight: reward for facing the target exactly (Crawler 0.01, Walker 0.02).
        term: name used in the NaN message.
        cube_name: name of ``cube_forward`` in the NaN message.
        forward_name: name of ``body_forward`` in the NaN message.

    Returns:
        The term summed over the ``k`` steps (per agent for (k, L, 3) inputs).

    Raises:
        RewardNaNError: if any step's dot product is NaN.
    """
    forward = _rows(cube_forward, "cube_forward")
    body = _rows(body_forward, "body_forward")
    dots = np.einsum("...i,...i->...", forward, body)
    _check(term, dots, **{cube_name: forward, forward_name: body})
    return _total(weight, dots)


def head_height_over_feet(
    head_position: ArrayLike,
    foot_left_position: ArrayLike,
    foot_right_position: ArrayLike,
    weight: float,
) -> float | NDArray[np.float64]:
    """Walker's ``weight * ((head.z - footL.z) + (head.z - footR.z) / 10)`` summed over steps.

    As written in the seed's WalkerAgent: only the right foot's difference is divided by 10.

    Args:
        head_position: (k, 3) head position, metres, world frame (z up).
        foot_left_position: (k, 3) left foot position.
        foot_right_position: (k, 3) right foot position.
        weight: reward per metre (0.005).

    Returns:
        The term summed over the ``k`` steps (per agent for (k, L, 3) inputs).

    Raises:
        RewardNaNError: if any step's height is NaN.
    """
    head = _rows(head_position, "head_position")
    left = _rows(foot_left_position, "foot_left_position")
    right = _rows(foot_right_position, "foot_right_position")
    heights = (head[..., 2] - left[..., 2]) + (head[..., 2] - right[..., 2]) / 10.0
    _check(
        "headHeightOverFeetReward",
        heights,
        **{"head.position": head, "footL.position": left, "footR.position": right},
    )
    return _total(weight, heights)
