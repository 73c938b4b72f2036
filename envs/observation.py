"""An agent's observation: its layout and bounds, and the Crawler's downward raycast.

The observation is the body-part sensor's block, then the task block: FromToRotation deltas of
``BODY.forward_parts``, the target in the orientation cube's frame, the raycast (Crawler),
ground contacts per part and joint strengths. :func:`observation_spaces` names every block's
slice and bounds; the values are written by ``envs.agents``.
"""

from __future__ import annotations

import numpy as np
import pybullet as p
from gymnasium import spaces
from numpy.typing import NDArray

from envs.body import BodyDescription
from physbody import PhysicsBodySensor

__all__ = ["RAYCAST_LENGTH", "observation_spaces", "raycast_fractions"]

RAYCAST_LENGTH = 10.0  # m, the Crawler's downward ray


def observation_spaces(
    sensor: PhysicsBodySensor, body: BodyDescription
) -> tuple[dict[str, slice], spaces.Box, spaces.Box]:
    """One agent's ``observation_layout``, observation space and action space.

    Returns:
        ``(layout, observation_space, action_space)``: ``{"sensor/<block>" | task block name:
        slice}`` over the flat float32 observation; quaternion and flag blocks in [-1, 1] or
        [0, 1], positions and velocities any finite float32; actions in [-1, 1].
    """
    sensor_space = sensor.observation_space
    layout = {f"sensor/{name}": where for name, where in sensor.observation_layout.items()}
    big = float(np.finfo(np.float32).max)
    low = [sensor_space.low]
    high = [sensor_space.high]
    start = sensor_space.shape[0]

    def block(name: str, size: int, lo: float, hi: float) -> None:
        nonlocal start
        layout[name] = slice(start, start + size)
        low.append(np.full(size, lo, dtype=np.float32))
        high.append(np.full(size, hi, dtype=np.float32))
        start += size

    for part in body.forward_parts:
        block(f"rotation_delta/{part}", 4, -1.0, 1.0)
    block("target_position", 3, -big, big)
    if body.raycast:
        block("raycast", 1, 0.0, 1.0)
    block("ground_contacts", len(body.part_names), 0.0, 1.0)
    block("joint_strengths", len(body.actuated), 0.0, 1.0)
    observation = spaces.Box(np.concatenate(low), np.concatenate(high), dtype=np.float32)
    action = spaces.Box(-1.0, 1.0, shape=(body.action_size,), dtype=np.float32)
    return layout, observation, action


def raycast_fractions(
    client: int, root_positions: NDArray[np.float64], radius: float
) -> NDArray[np.float64]:
    """Downward rays from the roots, 10 m: hit distance / 10, or 1 when nothing is hit.

    Unity's ray starts inside the root's sphere and ignores it; these start where the ray
    leaves the sphere (``radius`` metres below the centre) and add that radius back. One
    ``rayTestBatch`` for all roots.

    Args:
        client: PyBullet client id.
        root_positions: (L, 3) root link positions, metres, world frame.
        radius: the root sphere's radius, metres.

    Returns:
        (L,) fractions in [0, 1].
    """
    starts = root_positions - (0.0, 0.0, radius)
    ends = root_positions - (0.0, 0.0, RAYCAST_LENGTH)
    hits = p.rayTestBatch(starts.tolist(), ends.tolist(), physicsClientId=client)
    return np.array(
        [
            1.0 if hit[0] < 0 else (radius + hit[2] * (RAYCAST_LENGTH - radius)) / RAYCAST_LENGTH
            for hit in hits
        ]
    )
