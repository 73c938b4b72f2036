"""The world around the agents: physics settings, platforms, walls, targets, orientation cubes.

Physics follows the seed scenes' ``ProjectSettingsOverrides``: 1/75 s per physics step,
gravity 14.715 m/s^2 (1.5 g) along -z, 12 solver iterations; Unity's default material on every
collider (friction 0.6, no bounce; see :data:`FRICTION`), the parts' drag 0.05 as PhysX
applies it (see :data:`DRAG`). Frames are PyBullet's (z up; see ``envs.body``). The floor's top
surface is at z = 0. With several agents, agent k's platform is translated by
``platform_offsets(...)[k]`` (on a grid, 10 m between neighbouring platforms); a single env's
platform is at the origin.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence

import attrs
import numpy as np
import pybullet as p
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "DRAG",
    "FRICTION",
    "GRAVITY",
    "SOLVER_ITERATIONS",
    "TIMESTEP",
    "OrientationCubes",
    "SceneDescription",
    "Targets",
    "connect_world",
    "drag_factor",
    "dynamic_platform",
    "platform_offsets",
    "render_view",
    "scene_footprint",
    "static_box",
    "static_course",
    "target_box",
]

TIMESTEP = 1.0 / 75.0  # s, Unity fixedDeltaTime 0.01333
GRAVITY = 9.81 * 1.5  # m/s^2, ProjectSettingsOverrides.gravityMultiplier 1.5
SOLVER_ITERATIONS = 12
#: Unity's default physics material: friction 0.6 (static and dynamic), combined by PhysX as
#: the average of the two colliders' values, so every contact has 0.6. Bullet multiplies the two
#: bodies' coefficients instead, so each body gets sqrt(0.6) and every contact 0.6 again.
UNITY_FRICTION = 0.6
FRICTION = math.sqrt(UNITY_FRICTION)
#: Unity's default bounciness is 0 (combine Average); Bullet multiplies: 0 either way.
RESTITUTION = 0.0
#: Every body part's Rigidbody drag and angularDrag, 1/s. PhysX scales a body's linear and
#: angular velocity by ``max(0, 1 - drag * dt)`` at every step: a drag linear in the speed.
#: Bullet's multibody damping ``k`` is ``k * (1 + |v|)`` on each link instead (a quadratic term
#: PhysX lacks: at 3 m/s it is 4 times Unity's drag, at 30 rad/s 31 times), so the robots get
#: Bullet damping 0 and ``envs.agents`` applies :func:`drag_factor` to their velocities.
DRAG = 0.05
TARGET_FALL_DISTANCE = 5.0  # m below its start before a target respawns
PLATFORM_GAP = 10.0  # m between the outer walls of neighbouring agents' platforms


def connect_world(render_mode: str | None) -> int:
    """A new PyBullet client with the seed scenes' physics: the GUI for ``"human"``.

    Raises:
        RuntimeError: for ``"human"`` on a machine without a display (PyBullet's GUI would
            end the whole process there), naming ``rgb_array`` as the headless mode.
    """
    if render_mode == "human":
        check_display()
    client = p.connect(p.GUI if render_mode == "human" else p.DIRECT)
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setPhysicsEngineParameter(
        fixedTimeStep=TIMESTEP,
        numSolverIterations=SOLVER_ITERATIONS,
        deterministicOverlappingPairs=1,
        physicsClientId=client,
    )
    return client


def check_display() -> None:
    """Raises ``RuntimeError`` when PyBullet's GUI cannot open a window here.

    On Linux (and other X11 systems) the GUI needs ``DISPLAY``; without it PyBullet prints
    "cannot connect to X server" and exits the Python process. macOS and Windows always have
    their window system.
    """
    if sys.platform in ("darwin", "win32"):
        return
    if not os.environ.get("DISPLAY"):
        raise RuntimeError(
            'render_mode="human" opens PyBullet\'s GUI, which needs a display, and DISPLAY is '
            'not set on this machine; use render_mode="rgb_array" to render headless (or run '
            "under a virtual display such as xvfb-run)"
        )


@attrs.frozen
class SceneDescription:
    """The platform, walls and target of one agent (ML-Agents' prefab values, z up).

    Attributes:
        floor_half_extents: half sizes of the floor box, metres; its top is at z = 0.
        floor_center_xy: floor centre relative to the agent's spawn point, metres.
        walls: ``(centre xyz, half extents xyz)`` of each wall box, metres.
        target_start: target spawn point relative to the agent's spawn point (z above floor).
        target_size: edge of the target cube, metres.
        target_mass: kg.
        spawn_radius: the target respawns at ``start + spawn_radius * insideUnitSphere``, at the
            start height, metres; 0 keeps it at its start.
        respawn_if_touched: a dynamic target moves when an agent part touches it.
    """

    floor_half_extents: tuple[float, float, float]
    floor_center_xy: tuple[float, float]
    walls: tuple[tuple[tuple[float, float, float], tuple[float, float, float]], ...]
    target_start: tuple[float, float, float]
    target_size: float
    target_mass: float
    spawn_radius: float
    respawn_if_touched: bool


def dynamic_platform(target_start: tuple[float, float, float]) -> SceneDescription:
    """ML-Agents' DynamicPlatform: a 100 x 100 m floor, 5 m walls, a target that respawns."""
    wall_z = 1.5  # Unity centre y 2 on a floor whose top is at y 0.5
    return SceneDescription(
        floor_half_extents=(50.0, 50.0, 0.5),
        floor_center_xy=(0.0, 0.0),
        walls=(
            ((50.0, 0.0, wall_z), (0.5, 50.5, 2.5)),
            ((-50.0, 0.0, wall_z), (0.5, 50.5, 2.5)),
            ((0.0, 50.0, wall_z), (50.0, 0.5, 2.5)),
            ((0.0, -50.0, wall_z), (50.0, 0.5, 2.5)),
        ),
        target_start=target_start,
        target_size=1.236,
        target_mass=1.0,
        spawn_radius=40.0,
        respawn_if_touched=True,
    )


def static_course(distance: float, target_height: float) -> SceneDescription:
    """A long 50 m wide course with a static target ``distance`` metres ahead along +x.

    The seed's court walls are mesh colliders whose geometry is not in the spec; 5 m side
    walls along the floor's long edges stand in for them.
    """
    length = distance + 100.0
    center_x = distance / 2.0
    return SceneDescription(
        floor_half_extents=(length / 2.0, 25.0, 0.5),
        floor_center_xy=(center_x, 0.0),
        walls=(
            ((center_x, 25.5, 2.5), (length / 2.0, 0.5, 2.5)),
            ((center_x, -25.5, 2.5), (length / 2.0, 0.5, 2.5)),
            ((center_x - length / 2.0 - 0.5, 0.0, 2.5), (0.5, 26.0, 2.5)),
            ((center_x + length / 2.0 + 0.5, 0.0, 2.5), (0.5, 26.0, 2.5)),
        ),
        target_start=(distance, 0.0, target_height),
        target_size=1.236,
        target_mass=5.0,
        spawn_radius=0.0,
        respawn_if_touched=False,
    )


def scene_footprint(scene: SceneDescription) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Horizontal bounding box of a platform: its floor and walls.

    Returns:
        ``(low, high)``: (2,) x, y corners, metres, relative to the agent's spawn point.
    """
    boxes = [((*scene.floor_center_xy, 0.0), scene.floor_half_extents), *scene.walls]
    centers = np.array([center[:2] for center, _ in boxes])
    halves = np.array([half[:2] for _, half in boxes])
    return (centers - halves).min(axis=0), (centers + halves).max(axis=0)


def platform_offsets(
    scene: SceneDescription, count: int, gap: float = PLATFORM_GAP
) -> NDArray[np.float64]:
    """Where ``count`` agents' platforms go: a near-square grid centred on the origin.

    Neighbouring platforms (floor and walls) are ``gap`` metres apart, so no two agents'
    bodies ever meet, as ML-Agents' training scenes lay their platforms side by side. A long
    static course gets one column of courses side by side, a square dynamic platform a
    square grid. A single agent, and the middle one of an odd grid, is at the origin.

    Args:
        scene: the platform every agent gets.
        count: number of agents, >= 1.
        gap: free space between neighbouring platforms, metres.

    Returns:
        (count, 3) translation of each agent's platform, metres, world frame (z = 0).
    """
    low, high = scene_footprint(scene)
    pitch = high - low + gap
    columns = max(1, min(count, round(math.sqrt(count * pitch[1] / pitch[0]))))
    rows = -(-count // columns)
    index = np.arange(count)
    offsets = np.zeros((count, 3))
    offsets[:, 0] = (index % columns - (columns - 1) / 2.0) * pitch[0]
    offsets[:, 1] = (index // columns - (rows - 1) / 2.0) * pitch[1]
    return offsets


def drag_factor(drag: float, timestep: float, steps: int) -> float:
    """The factor PhysX's damping leaves on a body's velocities after ``steps`` physics steps.

    Args:
        drag: Rigidbody drag (or angularDrag), 1/s, >= 0.
        timestep: physics step, s.
        steps: physics steps, >= 0.

    Returns:
        ``max(0, 1 - drag * timestep) ** steps``: each step's factor, compounded.
    """
    return max(0.0, 1.0 - drag * timestep) ** steps


def apply_unity_material(body: int, link: int, client: int) -> None:
    """Gives one collider Unity's default material as Bullet combines it (see ``FRICTION``)."""
    p.changeDynamics(
        body, link, lateralFriction=FRICTION, restitution=RESTITUTION, physicsClientId=client
    )


def static_box(
    client: int, center: Sequence[float], half_extents: Sequence[float], rgba: Sequence[float]
) -> int:
    """A fixed box collider with Unity's default material; returns its body id."""
    box = p.createMultiBody(
        baseMass=0.0,
        baseCollisionShapeIndex=p.createCollisionShape(
            p.GEOM_BOX, halfExtents=half_extents, physicsClientId=client
        ),
        baseVisualShapeIndex=p.createVisualShape(
            p.GEOM_BOX, halfExtents=half_extents, rgbaColor=rgba, physicsClientId=client
        ),
        basePosition=center,
        physicsClientId=client,
    )
    apply_unity_material(box, -1, client)
    return box


def target_box(client: int, start: Sequence[float], size: float, mass: float) -> int:
    """A target: a green cube of edge ``size`` (m) and ``mass`` (kg) at ``start``; its id.

    Unity's target has drag 0; Bullet's default damping (0.04 with its quadratic term, see
    :data:`DRAG`) is set to 0. Its angularDrag (Unity's default 0.05) is left out.
    """
    half = (size / 2.0,) * 3
    body = p.createMultiBody(
        baseMass=mass,
        baseCollisionShapeIndex=p.createCollisionShape(
            p.GEOM_BOX, halfExtents=half, physicsClientId=client
        ),
        baseVisualShapeIndex=p.createVisualShape(
            p.GEOM_BOX, halfExtents=half, rgbaColor=(0.1, 0.8, 0.3, 1.0), physicsClientId=client
        ),
        basePosition=start,
        physicsClientId=client,
    )
    apply_unity_material(body, -1, client)
    p.changeDynamics(body, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    return body


def render_view(
    client: int,
    render_mode: str | None,
    focus: ArrayLike,
    distance: float,
    width: int,
    height: int,
    *,
    yaw: float = 45.0,
    pitch: float = -25.0,
) -> NDArray[np.uint8] | None:
    """A camera looking at ``focus`` (world frame, metres) from ``distance`` metres.

    ``yaw`` (about +z) and ``pitch`` (below the horizon when negative) are in degrees.

    Returns:
        For ``rgb_array`` an (height, width, 3) uint8 TinyRenderer frame; for ``human`` the
        GUI camera moves there and None is returned; None for no render mode.
    """
    target = np.asarray(focus, dtype=np.float64).tolist()
    if render_mode == "human":
        p.resetDebugVisualizerCamera(distance, yaw, pitch, target, physicsClientId=client)
        return None
    if render_mode != "rgb_array":
        return None
    view = p.computeViewMatrixFromYawPitchRoll(
        target, distance, yaw, pitch, 0.0, 2, physicsClientId=client
    )
    projection = p.computeProjectionMatrixFOV(
        60.0, width / height, 0.1, 200.0, physicsClientId=client
    )
    image = p.getCameraImage(
        width, height, view, projection, renderer=p.ER_TINY_RENDERER, physicsClientId=client
    )[2]
    return np.asarray(image, dtype=np.uint8).reshape(height, width, 4)[..., :3]


class OrientationCubes:
    """ML-Agents' OrientationCubeController for N agents: yaw-only frames facing the targets.

    ``update`` points each cube's forward axis (local +y, Unity's +z) horizontally from the
    cube's previous position to its target, then moves the cube to its root's position.

    Attributes:
        position: (N, 3) cube positions, metres, world frame.
        yaw: (N,) rotation about +z, radians.
        forward: (N, 3) unit horizontal forward axes ``(-sin yaw, cos yaw, 0)``, world frame.
    """

    def __init__(self, count: int) -> None:
        self.position = np.zeros((count, 3))
        self.yaw = np.zeros(count)
        self.forward = np.tile((0.0, 1.0, 0.0), (count, 1))

    def reset(self, agent: int, root_position: ArrayLike, target_position: ArrayLike) -> None:
        """Places agent ``agent``'s cube at its root, facing its target."""
        self.position[agent] = root_position
        self.update(np.array([agent]), np.asarray([root_position]), np.asarray([target_position]))

    def update(
        self,
        agents: NDArray[np.intp],
        root_positions: NDArray[np.float64],
        target_positions: NDArray[np.float64],
    ) -> None:
        """Faces each target from the cube's previous position, then moves to the root.

        Args:
            agents: (L,) indices of the cubes to update.
            root_positions: (L, 3) root positions, metres, world frame.
            target_positions: (L, 3) target positions, metres, world frame.
        """
        offsets = target_positions[:, :2] - self.position[agents, :2]
        dx, dy = offsets[:, 0], offsets[:, 1]
        # LookRotation of a zero vector keeps the last yaw.
        yaw = np.where((dx != 0.0) | (dy != 0.0), np.arctan2(-dx, dy), self.yaw[agents])
        self.yaw[agents] = yaw
        self.forward[agents, 0] = -np.sin(yaw)
        self.forward[agents, 1] = np.cos(yaw)
        self.position[agents] = root_positions

    def follow(
        self,
        agents: NDArray[np.intp],
        root_positions: NDArray[np.float64],
        target_positions: NDArray[np.float64],
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """:meth:`update` for each of K physics steps in turn, computed at once.

        Step k faces each target from the cube's position after step k - 1 (its position
        now, for k = 0), then moves the cube to the root.

        Args:
            agents: (L,) indices of the cubes.
            root_positions: (K, L, 3) root positions after each step, metres, world frame.
            target_positions: (K, L, 3) the targets each step faces, metres, world frame.

        Returns:
            ``(forward_before, forward)``: (K, L, 3) each cube's forward axis before and after
            each step's update.
        """
        before = np.concatenate((self.position[None, agents], root_positions[:-1]))
        offsets = target_positions[..., :2] - before[..., :2]
        dx, dy = offsets[..., 0], offsets[..., 1]
        yaw = np.arctan2(-dx, dy)
        still = (dx == 0.0) & (dy == 0.0)
        if still.any():  # LookRotation of a zero vector keeps the last yaw
            last = self.yaw[agents]
            for k in range(yaw.shape[0]):
                yaw[k] = last = np.where(still[k], last, yaw[k])
        forward = np.zeros((*yaw.shape, 3))
        forward[..., 0] = -np.sin(yaw)
        forward[..., 1] = np.cos(yaw)
        forward_before = np.concatenate((self.forward[None, agents], forward[:-1]))
        self.yaw[agents] = yaw[-1]
        self.forward[agents] = forward[-1]
        self.position[agents] = root_positions[-1]
        return forward_before, forward

    def rotations(self, agents: NDArray[np.intp]) -> NDArray[np.float64]:
        """(L, 4) yaw-only world rotations of the cubes ``agents``, quaternions (x, y, z, w)."""
        half = 0.5 * self.yaw[agents]
        rotation = np.zeros((half.size, 4))
        rotation[:, 2] = np.sin(half)
        rotation[:, 3] = np.cos(half)
        return rotation


class Targets:
    """ML-Agents' TargetController for N agents: cubes that respawn at random within a ball.

    Args:
        client: PyBullet client id.
        body_ids: (N,) each agent's target body (see :func:`target_box`).
        starts: (N, 3) world start positions, metres.
        spawn_radius: radius of the respawn ball around each start, metres.
        respawn_if_touched: whether touching a target moves it.

    Attributes:
        body_ids: (N,) PyBullet body id of each target.
        start: (N, 3) start positions, metres, world frame.
        position: (N, 3) positions as last placed or read, metres, world frame.
    """

    def __init__(
        self,
        client: int,
        body_ids: Sequence[int],
        starts: NDArray[np.float64],
        *,
        spawn_radius: float,
        respawn_if_touched: bool,
    ) -> None:
        self._client = client
        self.body_ids = np.array(body_ids, dtype=np.intp)
        self.start = np.array(starts, dtype=np.float64)
        self.spawn_radius = spawn_radius
        self.respawn_if_touched = respawn_if_touched
        self.position = self.start.copy()

    @property
    def respawns(self) -> bool:
        """Whether targets ever move to a random place (touched, or fallen off)."""
        return self.respawn_if_touched or self.spawn_radius > 0.0

    def reset(self, agent: int) -> None:
        """Puts agent ``agent``'s target back at its start, upright and at rest."""
        self._place(agent, self.start[agent].copy())

    def respawn(self, agent: int, rng: np.random.Generator) -> None:
        """Moves the target to ``start + spawn_radius * insideUnitSphere`` at the start height."""
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        offset = direction * self.spawn_radius * rng.random() ** (1.0 / 3.0)
        position = self.start[agent] + offset
        position[2] = self.start[agent, 2]
        self._place(agent, position)

    def _place(self, agent: int, position: NDArray[np.float64]) -> None:
        body, client = int(self.body_ids[agent]), self._client
        p.resetBasePositionAndOrientation(
            body, position, (0.0, 0.0, 0.0, 1.0), physicsClientId=client
        )
        p.resetBaseVelocity(body, (0, 0, 0), (0, 0, 0), physicsClientId=client)
        self.position[agent] = position

    def read_positions(self, agents: NDArray[np.intp]) -> None:
        """Reads the world positions (metres) of the targets ``agents`` into ``position``."""
        client, get_pose = self._client, p.getBasePositionAndOrientation
        rows = [get_pose(body, physicsClientId=client)[0] for body in self.body_ids[agents]]
        self.position[agents] = rows

    def fallen(self, agents: NDArray[np.intp]) -> NDArray[np.bool_]:
        """(L,) whether each target fell more than 5 m below its start (respawn condition)."""
        return self.position[agents, 2] < self.start[agents, 2] - TARGET_FALL_DISTANCE
