"""N agents' platforms and bodies built in one PyBullet world.

:func:`build_platforms` lays every agent's floor, walls, robot and target on its platform
(``envs.scene.platform_offsets``), agent by agent, and gives each robot's parts Unity's
material and the joint tree's collision filter, with Bullet's damping off (the step loop,
``envs.agents``, applies the parts' drag). What it returns is plain data: the ids and
positions the step loop works with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from pathlib import Path

import attrs
import numpy as np
import pybullet as p
from numpy.typing import NDArray

from envs.body import BodyDescription, BodyLinks
from envs.scene import (
    SceneDescription,
    apply_unity_material,
    platform_offsets,
    static_box,
    target_box,
)

__all__ = [
    "Platforms",
    "build_platforms",
    "check_counts",
    "check_rates",
    "prepare_robot",
    "scale_robot_velocities",
]

_FLOOR_RGBA = (0.75, 0.75, 0.8, 1)
_WALL_RGBA = (0.55, 0.6, 0.7, 1)


@attrs.frozen
class Platforms:
    """Every agent's bodies in one world, agent k at index k.

    Attributes:
        offsets: (N, 3) translation of each platform, metres, world frame.
        spawns: (N, 3) each root's spawn position, metres, world frame.
        target_starts: (N, 3) each target's start position, metres, world frame.
        floors: floor body ids.
        walls: wall body ids of each agent.
        robots: robot (multibody) ids.
        targets: target body ids.
        links: where the body description's parts are in every robot.
    """

    offsets: NDArray[np.float64]
    spawns: NDArray[np.float64]
    target_starts: NDArray[np.float64]
    floors: tuple[int, ...]
    walls: tuple[tuple[int, ...], ...]
    robots: tuple[int, ...]
    targets: tuple[int, ...]
    links: BodyLinks


def build_platforms(
    client: int, scene: SceneDescription, body: BodyDescription, urdf: Path, num_agents: int
) -> Platforms:
    """Builds ``num_agents`` platforms with their walls, robots (from ``urdf``) and targets.

    Agent by agent, so that each agent's bodies get the ids they have in a single env's world
    plus a constant: PyBullet orders contact pairs by body id, and a batch agent then solves
    its island in the same order as a single env (bit-identical where the platform offset
    adds no rounding).

    Raises:
        ValueError: if the URDF lacks a part of ``body``.
    """
    offsets = platform_offsets(scene, num_agents)
    spawns = offsets + (0.0, 0.0, body.spawn_height)
    target_starts = offsets + scene.target_start
    fx, fy = scene.floor_center_xy
    floor_center = (fx, fy, -scene.floor_half_extents[2])
    flags = p.URDF_USE_INERTIA_FROM_FILE | p.URDF_USE_SELF_COLLISION
    floors, walls, robots, targets = [], [], [], []
    links: BodyLinks | None = None
    for offset, spawn, target_start in zip(offsets, spawns, target_starts, strict=True):
        floors.append(
            static_box(client, offset + floor_center, scene.floor_half_extents, _FLOOR_RGBA)
        )
        walls.append(
            tuple(
                static_box(client, offset + center, half, _WALL_RGBA)
                for center, half in scene.walls
            )
        )
        robot = p.loadURDF(
            str(urdf), spawn, flags=flags, useFixedBase=False, physicsClientId=client
        )
        if links is None:
            links = BodyLinks.read(robot, client, body, urdf)
        prepare_robot(client, robot, links)
        robots.append(robot)
        targets.append(target_box(client, target_start, scene.target_size, scene.target_mass))
    assert links is not None  # num_agents >= 1
    return Platforms(
        offsets=offsets,
        spawns=spawns,
        target_starts=target_starts,
        floors=tuple(floors),
        walls=tuple(walls),
        robots=tuple(robots),
        targets=tuple(targets),
        links=links,
    )


def check_counts(**counts: int) -> None:
    """Raises ``ValueError`` naming the first count that is not a positive int.

    ``num_agents`` is named ``num_envs`` in the message, as users pass it.
    """
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            shown = "num_envs" if name == "num_agents" else name
            raise ValueError(f"{shown} must be a positive int, got {value!r}")


def check_rates(**rates: float) -> None:
    """Raises ``ValueError`` naming the first rate that is not a finite real number >= 0.

    For the physical constants a user may pass (drag in 1/s, drive stiffness, damping and
    force limit); a bool is refused, though Python counts it as a number.
    """
    for name, value in rates.items():
        if isinstance(value, bool) or not isinstance(value, Real) or not 0 <= value < math.inf:
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


def prepare_robot(client: int, robot: int, links: BodyLinks) -> None:
    """Unity's material, no Bullet damping and the joint tree's collision filter on one robot.

    Bullet's damping (a multibody's, set through any of its links) is 0: it is not Unity's drag
    (see ``envs.scene.DRAG``), which the step loop applies instead.
    """
    for link in links.part_links:
        apply_unity_material(robot, link, client)
    p.changeDynamics(robot, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    # Jointed parts do not collide (Unity's enableCollision 0); other pairs do. PyBullet's
    # parent exclusion sees the massless helper links between two parts, so the part pairs
    # joined through a revolute chain are excluded here explicitly.
    for child, parent in enumerate(links.part_parents):
        if parent >= 0:
            p.setCollisionFilterPair(
                robot,
                robot,
                links.part_links[parent],
                links.part_links[child],
                enableCollision=0,
                physicsClientId=client,
            )


def scale_robot_velocities(client: int, robot: int, joints: Sequence[int], factor: float) -> None:
    """Scales every part's linear and angular velocity of one robot by ``factor``.

    Every part's world velocity is linear in the robot's generalised velocities (the base's
    linear and angular velocity, m/s and rad/s in the world frame, and the joint rates,
    rad/s), so scaling those scales all of them: two reads and two writes. Positions are kept.
    This is how a drag shared by every part (``envs.scene.DRAG``) acts over a decision.

    Args:
        client: PyBullet client id.
        robot: the multibody.
        joints: every joint of the multibody (``BodyLinks.joint_indices``).
        factor: the velocities' scale, for example ``envs.scene.drag_factor(...)``.
    """
    linear, angular = p.getBaseVelocity(robot, physicsClientId=client)
    states = p.getJointStates(robot, joints, physicsClientId=client)
    p.resetBaseVelocity(
        robot,
        [factor * v for v in linear],
        [factor * w for w in angular],
        physicsClientId=client,
    )
    p.resetJointStatesMultiDof(
        robot,
        joints,
        [[state[0]] for state in states],
        targetVelocities=[[factor * state[1]] for state in states],
        physicsClientId=client,
    )
