"""N agents of one locomotion task in one PyBullet world: the step loop, written once.

:class:`LocomotionAgents` serves both forms of every environment: ``envs.locomotion``'s
Gymnasium env is the case N = 1, ``envs.vector``'s native vector env N >= 1. A physics step
does only what cannot wait: one ``stepSimulation``, the roots' reads into an (N, ...) table,
one world-wide contact query sorted per agent by body id (``envs.contacts``), target touches
and episode ends. A decision then does its numpy work once for all agents and all its physics
steps: the orientation cubes, the reward records and terms, and the observations, the body
parts from one batch sensor over the N robots (still one ``getLinkStates`` per robot: PyBullet
has nothing wider). An agent whose forbidden part touches its floor ends its decision at that
physics step, as the single env breaks out of its loop; the others go on. The world itself is
built by ``envs.world``.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any, ClassVar

import attrs
import numpy as np
import pybullet as p
from numpy.typing import NDArray

from envs.body import FORWARD_LOCAL, BodyDescription, default_sensor_settings, urdf_path
from envs.contacts import ContactSorter, part_flags
from envs.joint_drive import JointDriveController
from envs.observation import observation_spaces, raycast_fractions
from envs.rewards import RewardNaNError
from envs.scene import (
    DRAG,
    TIMESTEP,
    OrientationCubes,
    SceneDescription,
    Targets,
    connect_world,
    drag_factor,
    render_view,
)
from envs.world import build_platforms, check_counts, check_rates, scale_robot_velocities
from physbody import PhysicsBodySensor, PhysicsSensorSettings, transforms

__all__ = ["Agent", "LocomotionAgents"]

_POSITION = transforms.STATE_POSITION
_ROTATION = transforms.STATE_ROTATION
_flatten = chain.from_iterable


#: (link frame position, link frame orientation) of a getLinkStates entry.
_LINK_FRAME = itemgetter(4, 5)


@attrs.define(kw_only=True)
class _Decision:
    """What one decision gathers over its physics steps, for every agent.

    Attributes:
        touches: target touches per agent.
        terminated: (N,) forbidden floor contacts.
        rewards: (N,) rewards, written as groups finish.
        terms: each reward term as (N,), written as groups finish.
        roots: (frame_skip, N, 10) root COM position, orientation and velocity per step.
        watched: (frame_skip, N, 7 * watched parts) link frames of the watched parts.
        targets: (frame_skip, N, 3) target positions the cubes face at each step.
        floor_links: per agent, the robot links on its floor at its last step.
    """

    touches: list[int]
    terminated: NDArray[np.bool_]
    rewards: NDArray[np.float64]
    terms: dict[str, NDArray[np.float64]]
    roots: NDArray[np.float64]
    watched: NDArray[np.float64]
    targets: NDArray[np.float64]
    floor_links: list[set[int]]


@attrs.frozen
class Agent:
    """One agent's PyBullet bodies and drive in the shared world (built by LocomotionAgents).

    Attributes:
        index: the agent's position in the batch.
        offset: (3,) translation of its platform, metres, world frame.
        spawn: (3,) its root's spawn position, metres, world frame.
        floor: body id of its floor.
        walls: body ids of its walls.
        robot: body id of its multibody.
        target: body id of its target.
        drive: its joint drive.
    """

    index: int
    offset: NDArray[np.float64] = attrs.field(eq=False)
    spawn: NDArray[np.float64] = attrs.field(eq=False)
    floor: int
    walls: tuple[int, ...]
    robot: int
    target: int
    drive: JointDriveController = attrs.field(eq=False)


class LocomotionAgents(abc.ABC):
    """N agents of one task in one PyBullet world: the per-agent logic, written once.

    Each agent has its own platform, walls and target (``platform_offsets`` keeps them
    apart), orientation cube, joint drive, contacts and episode state. One decision holds
    each agent's action for ``frame_skip`` physics steps (ML-Agents' DecisionPeriod 5 with
    TakeActionsBetweenDecisions off); every physics step is one ``stepSimulation`` for all
    agents. When an agent's forbidden part touches its floor, its reward, observation and
    episode end are taken at that physics step, as the single env breaks out of its loop;
    the other agents go on (its body moves on with them until it is reset).

    Subclasses give the body (``BODY``), the reward terms (``REWARD_TERMS``) and
    :meth:`_reward_terms`, which scores a group of agents from what every physics step left
    (the records). The Gymnasium classes on top choose N and the API:
    ``envs.locomotion.LocomotionEnv`` (N = 1) and ``envs.vector.LocomotionVectorEnv``.

    Attributes:
        sensor: the batch PhysicsBodySensor over every agent's body parts (one tree per
            agent), the agent's orientation cube as virtual root.
        targets: every agent's target.
        touching_target: (N,) whether a part touched the agent's target at the last physics
            step.
        ground_contacts: (N, num_parts) which parts touched the agent's floor at the last
            physics step.
        target_touches: (N,) target touches in each agent's current episode.
    """

    BODY: ClassVar[BodyDescription]
    #: Names of the reward terms, in ``info`` as ``reward_<name>``.
    REWARD_TERMS: ClassVar[tuple[str, ...]]
    metadata: dict[str, Any]

    # ------------------------------------------------------------------------- building
    def _build_agents(
        self,
        *,
        num_agents: int,
        scene: SceneDescription,
        frame_skip: int = 5,
        sensor_settings: PhysicsSensorSettings | None = None,
        urdf: str | Path | None = None,
        joint_spring: float = 40000.0,
        joint_damper: float = 3000.0,
        joint_max_force: float = 10000.0,
        prefab_drive: tuple[float, float, float] = (0.0, 0.0, 0.0),
        drag: float = DRAG,
        render_mode: str | None = None,
        width: int = 480,
        height: int = 480,
    ) -> None:
        """Checks the arguments, connects a client and builds the world with every agent.

        Args:
            num_agents: agents in the world, >= 1.
            scene: each agent's platform, walls and target.
            frame_skip: physics steps per decision.
            sensor_settings: body-part observations; ``default_sensor_settings()`` if None.
            urdf: a replacement body URDF with the same link and joint names.
            joint_spring: JointDriveController ``maxJointSpring``, N*m/rad, finite and >= 0.
            joint_damper: JointDriveController ``jointDampen``, N*m*s/rad, finite and >= 0.
            joint_max_force: JointDriveController ``maxJointForceLimit``, N*m, finite and >= 0.
            prefab_drive: ``(spring, damper, max_force)`` of the drive at reset.
            drag: every part's Rigidbody drag and angularDrag, 1/s, finite and >= 0
                (``envs.scene.DRAG``; 0 turns it off).
            render_mode: None, or one of ``metadata["render_modes"]``.
            width: rgb_array frame width in pixels.
            height: rgb_array frame height in pixels.

        Raises:
            ValueError, TypeError, FileNotFoundError: for bad arguments, naming them.
            RuntimeError: for ``render_mode="human"`` without a display.
        """
        check_counts(num_agents=num_agents, frame_skip=frame_skip, width=width, height=height)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}"
            )
        check_rates(
            drag=drag,
            joint_spring=joint_spring,
            joint_damper=joint_damper,
            joint_max_force=joint_max_force,
        )
        if sensor_settings is None:
            sensor_settings = default_sensor_settings()
        if not isinstance(sensor_settings, PhysicsSensorSettings):
            raise TypeError(
                f"sensor_settings must be a PhysicsSensorSettings, got {sensor_settings!r}"
            )
        path = Path(urdf) if urdf is not None else urdf_path(self.BODY.urdf)
        if not path.is_file():
            raise FileNotFoundError(f"URDF not found at {path.resolve()}")
        self._frame_skip = frame_skip
        self._scene = scene
        self._prefab_drive = prefab_drive
        self.render_mode = render_mode
        self._width, self._height = width, height
        self.dt = TIMESTEP * frame_skip
        self._drag_factor = drag_factor(float(drag), TIMESTEP, frame_skip)
        self.metadata = {**type(self).metadata, "render_fps": round(1.0 / self.dt)}

        self._closed = True
        self._client = connect_world(render_mode)
        self._closed = False
        self._build_world(num_agents, path, sensor_settings, joint_spring, joint_damper,
                          joint_max_force)  # fmt: skip
        layout, observation, action = observation_spaces(self.sensor, self.BODY)
        self.observation_layout: dict[str, slice] = layout
        self._agent_observation_space, self._agent_action_space = observation, action
        # Every agent's observation is written into its row of this one array.
        self._obs = np.zeros((num_agents, observation.shape[0]), dtype=np.float32)
        self._needs_reset = np.ones(num_agents, dtype=bool)
        self._in_step = False
        self._after_build()

    def _build_world(
        self,
        num_agents: int,
        path: Path,
        sensor_settings: PhysicsSensorSettings,
        spring: float,
        damper: float,
        max_force: float,
    ) -> None:
        """Platforms, walls, robots, targets, drives, the batch sensor and the contact roles."""
        client, scene, body = self._client, self._scene, self.BODY
        world = build_platforms(client, scene, body, path, num_agents)
        self._links = world.links
        robots = list(world.robots)
        self.targets = Targets(
            client,
            world.targets,
            world.target_starts,
            spawn_radius=scene.spawn_radius,
            respawn_if_touched=scene.respawn_if_touched,
        )
        self.sensor = PhysicsBodySensor.from_articulations(
            robots,
            client=client,
            settings=sensor_settings,
            link_names=body.part_names,
            virtual_root=((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)),
            name=f"PhysicsBodySensor:{body.part_names[0]}",
        )
        drive = {"spring": spring, "damper": damper, "max_force": max_force}
        self._agents = [
            Agent(
                index,
                world.offsets[index],
                world.spawns[index],
                world.floors[index],
                world.walls[index],
                robot,
                world.targets[index],
                JointDriveController(robot, client, body.actuated, timestep=TIMESTEP, **drive),
            )
            for index, robot in enumerate(robots)
        ]
        self._robots = robots
        self._contacts = ContactSorter(robots, world.floors, world.targets)
        self._cubes = OrientationCubes(num_agents)
        inertial = p.getDynamicsInfo(robots[0], -1, physicsClientId=client)
        # Root forward axis in the base's inertial (COM) frame, which PyBullet reports.
        self._root_forward_in_com = transforms.quat_rotate_inverse(inertial[4], FORWARD_LOCAL)
        self._forward_rows = [body.part_names.index(n) + 1 for n in body.forward_parts]
        self.touching_target = np.zeros(num_agents, dtype=bool)
        self.ground_contacts = np.zeros((num_agents, len(body.part_names)), dtype=bool)
        self.target_touches = np.zeros(num_agents, dtype=np.int64)

    # -------------------------------------------------------------------------- episodes
    def _rng(self, agent: int) -> np.random.Generator:
        """The random generator of agent ``agent``: every random draw of its episodes."""
        return self._rngs[agent]

    def _reset_agents(self, agents: Sequence[int]) -> None:
        """Starts a new episode for each of ``agents``; the others are not touched.

        Puts the body back at rest at its spawn point with a random yaw, its joints at zero,
        the target at its start (a dynamic target then respawns at random), the joint drive
        back to the prefab's with the strength observations at 0 (so that an episode does
        not depend on the one before; ML-Agents keeps both), and observes.
        """
        client, targets = self._client, self.targets
        joints = self._links.joint_indices
        count = len(joints)
        for i in agents:
            agent, rng = self._agents[i], self._rng(i)
            p.resetBaseVelocity(agent.robot, (0, 0, 0), (0, 0, 0), physicsClientId=client)
            p.resetJointStatesMultiDof(
                agent.robot,
                joints,
                [[0.0]] * count,
                targetVelocities=[[0.0]] * count,
                physicsClientId=client,
            )
            targets.reset(i)
            yaw = rng.uniform(0.0, 2.0 * math.pi)
            p.resetBasePositionAndOrientation(
                agent.robot,
                agent.spawn,
                p.getQuaternionFromEuler((0.0, 0.0, yaw)),
                physicsClientId=client,
            )
            if self._scene.spawn_radius > 0.0:
                targets.respawn(i, rng)
            agent.drive.reset(*self._prefab_drive)
            root = p.getBasePositionAndOrientation(agent.robot, physicsClientId=client)[0]
            self._cubes.reset(i, root, targets.position[i])
        index = np.asarray(agents, dtype=np.intp)
        self.touching_target[index] = False
        self.ground_contacts[index] = False
        self.target_touches[index] = 0
        self._needs_reset[index] = False
        self._observe_agents(index)

    def _step_agents(
        self, actions: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.bool_], dict[str, NDArray[np.float64]]]:
        """Holds each agent's action for ``frame_skip`` physics steps and scores the decision.

        Each physics step does only what cannot wait: one ``stepSimulation``, the roots'
        reads (and the watched parts'), one world-wide contact query sorted per agent, the
        target touches (a touched dynamic target respawns at once) and the episode ends. The
        orientation cubes, the reward records and the reward terms of every step are then
        computed at once per group of agents that ended together. Each agent's observation is
        written into its row of ``_obs``.

        Args:
            actions: (num_agents, action_size) actions, already clipped to [-1, 1].

        Returns:
            ``(rewards, terminated, terms)``: (num_agents,) rewards, (num_agents,) flags of a
            forbidden ground contact, and each reward term by name as a (num_agents,) array.

        Raises:
            RewardNaNError: when a reward term comes out NaN (naming the agent in a batch).
        """
        client, targets = self._client, self.targets
        self._apply_drag()
        JointDriveController.apply_all([agent.drive for agent in self._agents], actions)
        count = len(self._agents)
        steps = self._frame_skip
        decision = _Decision(
            touches=[0] * count,
            terminated=np.zeros(count, dtype=bool),
            rewards=np.zeros(count),
            terms={name: np.zeros(count) for name in self.REWARD_TERMS},
            roots=np.empty((steps, count, 10)),
            watched=np.empty((steps, count, 7 * len(self._links.watched_links))),
            targets=np.repeat(targets.position[None], steps, axis=0),
            floor_links=[set() for _ in range(count)],
        )
        touching = self.touching_target.tolist()
        respawn = targets.respawn_if_touched
        terminating = self._links.terminating_links
        live = list(range(count))
        for k in range(steps):
            p.stepSimulation(physicsClientId=client)
            self._read_step(k, live, decision)
            contacts = self._contacts.read(client)
            ended = []
            for i in live:
                links = contacts.floor_links[i]
                decision.floor_links[i] = links
                now = i in contacts.touching_target
                if now and not touching[i]:
                    decision.touches[i] += 1
                    if respawn:
                        targets.respawn(i, self._rng(i))
                        decision.targets[k:, i] = targets.position[i]
                        now = False
                touching[i] = now
                if not terminating.isdisjoint(links):
                    ended.append(i)
            if ended:
                group = np.array(ended, dtype=np.intp)
                decision.terminated[group] = True
                self._finish(group, k + 1, decision)
                live = [i for i in live if not decision.terminated[i]]
                if not live:
                    break
        self.touching_target[:] = touching
        if live:
            self._finish(np.array(live, dtype=np.intp), steps, decision)
        return decision.rewards, decision.terminated, decision.terms

    def _apply_drag(self) -> None:
        """The parts' drag over one decision on every robot, applied before its first step.

        PhysX scales each part's linear and angular velocity by ``1 - drag * dt`` at every
        physics step (``envs.scene.DRAG``). All parts having the same drag, the decision's
        ``frame_skip`` factors are applied at once (``scale_robot_velocities``); with drag 0,
        not at all.
        """
        factor, joints = self._drag_factor, self._links.joint_indices
        if factor == 1.0:
            return
        for robot in self._robots:
            scale_robot_velocities(self._client, robot, joints, factor)

    def _read_step(self, k: int, live: list[int], decision: _Decision) -> None:
        """Physics step ``k``'s reads of the running agents into ``decision``'s tables.

        The roots' COM position (3), orientation (4) and velocity (3): two base reads per
        robot (PyBullet has no wider one); the watched parts' link frames (position 3,
        orientation 4 each): one ``getLinkStates`` per robot. One conversion each.
        """
        client, robots = self._client, self._robots
        get_pose, get_velocity = p.getBasePositionAndOrientation, p.getBaseVelocity
        rows = [
            (*get_pose(robots[i], physicsClientId=client),
             get_velocity(robots[i], physicsClientId=client)[0])
            for i in live
        ]  # fmt: skip
        decision.roots[k, live] = np.fromiter(
            _flatten(_flatten(rows)), dtype=np.float64, count=10 * len(rows)
        ).reshape(len(rows), 10)
        watched = self._links.watched_links
        if watched:
            states = [
                p.getLinkStates(
                    robots[i], watched, computeForwardKinematics=1, physicsClientId=client
                )
                for i in live
            ]
            width = 7 * len(watched)
            decision.watched[k, live] = np.fromiter(
                _flatten(_flatten(_flatten(map(_LINK_FRAME, state)) for state in states)),
                dtype=np.float64,
                count=width * len(states),
            ).reshape(len(states), width)

    def _finish(self, agents: NDArray[np.intp], steps: int, decision: _Decision) -> None:
        """Ends the decision of ``agents`` after ``steps`` physics steps: cubes, rewards, obs.

        Writes into ``decision.rewards[agents]`` and ``decision.terms[name][agents]``.
        """
        targets, cubes = self.targets, self._cubes
        roots = decision.roots[:steps, agents]
        forward_before, forward = cubes.follow(
            agents, roots[..., 0:3], decision.targets[:steps, agents]
        )
        self.ground_contacts[agents] = part_flags(
            [decision.floor_links[i] for i in agents.tolist()],
            self._links.link_to_part,
            len(self.BODY.part_names),
        )
        targets.read_positions(agents)
        if targets.respawns:
            for i in agents[targets.fallen(agents)].tolist():
                targets.respawn(i, self._rng(i))
        touches = np.array([decision.touches[i] for i in agents.tolist()], dtype=np.int64)
        self.target_touches[agents] += touches
        records = {
            "root_position": roots[..., 0:3],
            "root_orientation": roots[..., 3:7],
            "root_velocity": roots[..., 7:10],
            "cube_forward": forward,
            "cube_forward_before": forward_before,
        }
        watched = decision.watched[:steps, agents]
        for j, part in enumerate(self.BODY.watched_parts):
            records[f"{part}_position"] = watched[..., 7 * j : 7 * j + 3]
            records[f"{part}_orientation"] = watched[..., 7 * j + 3 : 7 * j + 7]
        try:
            values = self._reward_terms(records, steps)
        except RewardNaNError as error:
            agent = int(agents[error.agent or 0])
            prefix = self._error_prefix(agent)
            if not prefix:
                raise
            raise RewardNaNError(f"{prefix}{error}", agent) from error
        values["target_touch"] = touches.astype(np.float64)
        values["ground_contact"] = np.zeros(len(agents))
        # GroundContact.SetReward(-1) replaces what the decision had accumulated.
        ended = decision.terminated[agents]
        if ended.any():
            for name in values:
                values[name] = np.where(ended, 0.0, values[name])
            values["ground_contact"] = np.where(ended, -1.0, 0.0)
            self._needs_reset[agents[ended]] = True
        total = np.zeros(len(agents))
        for name in self.REWARD_TERMS:
            total += values[name]
            decision.terms[name][agents] = values[name]
        decision.rewards[agents] = total
        self._observe_agents(agents)

    # ----------------------------------------------------------------------- observation
    def _observe_agents(self, agents: NDArray[np.intp]) -> None:
        """Writes the observation of each of ``agents`` into its row of ``_obs``.

        The sensor block (the cubes as virtual roots) comes from the batch sensor, the task
        block is computed for all of ``agents`` at once.
        """
        obs, cubes, body, sensor = self._obs, self._cubes, self.BODY, self.sensor
        cube_rotations = cubes.rotations(agents)
        sensor.extractor.set_virtual_root(cubes.position[agents], cube_rotations, trees=agents)
        sensor.update(agents)
        offset = sensor.write_rows(obs, agents, 0)
        world = sensor.extractor.packed_world[agents]  # (L, num_poses, 13), the cube first
        if self._forward_rows:
            count = len(self._forward_rows)
            rotations = world[:, self._forward_rows, _ROTATION]
            forwards = transforms.quat_rotate(rotations, FORWARD_LOCAL)
            deltas = transforms.from_to_rotation(forwards, cubes.forward[agents][:, None, :])
            obs[agents, offset : offset + 4 * count] = deltas.reshape(len(agents), 4 * count)
            offset += 4 * count
        obs[agents, offset : offset + 3] = transforms.quat_rotate_inverse(
            cube_rotations, self.targets.position[agents] - cubes.position[agents]
        )
        offset += 3
        if body.raycast:
            obs[agents, offset] = raycast_fractions(
                self._client, world[:, 1, _POSITION], body.root_radius
            )
            offset += 1
        count = len(body.part_names)
        obs[agents, offset : offset + count] = self.ground_contacts[agents]
        offset += count
        obs[agents, offset:] = [self._agents[i].drive.strength_ratio for i in agents.tolist()]

    def _error_prefix(self, agent: int) -> str:
        """What an error about agent ``agent`` starts with: "" for a single env."""
        return ""

    def _agent_info(self, agent: int) -> dict[str, Any]:
        """Non-reward info of one agent, the same keys from ``reset`` and ``step``.

        Positions are metres in the agent's platform frame (world minus its platform offset;
        the world frame for a single env).
        """
        offset = self._agents[agent].offset
        root = self._cubes.position[agent] - offset
        target = self.targets.position[agent] - offset
        return {
            "root_position": root,
            "target_position": target,
            "distance_to_target": float(np.linalg.norm((target - root)[:2])),
            "target_touches": int(self.target_touches[agent]),
        }

    # ------------------------------------------------------------------ subclass hooks
    def _after_build(self) -> None:  # noqa: B027  (an optional hook, empty by default)
        """Called once the world is built; a task can look up what its hooks need."""

    @abc.abstractmethod
    def _configure_task(self, **task_kwargs: Any) -> dict[str, Any]:
        """Stores the task's own arguments (reward weights...) and returns the world's.

        The returned dict holds ``_build_agents``'s arguments (``scene``, ``prefab_drive`` and
        the common ones passed through), so the single and the vector env take the same
        keywords.
        """

    @abc.abstractmethod
    def _reward_terms(
        self, records: dict[str, NDArray[np.float64]], steps: int
    ) -> dict[str, NDArray[np.float64]]:
        """The shaping terms of a group of agents, summed over their first ``steps`` steps.

        Args:
            records: what every physics step left, (steps, L, ...) each, world frame:
                ``root_position`` (3, m) and ``root_orientation`` (4, x y z w) of the root's
                centre-of-mass frame, ``root_velocity`` (3, m/s), the cube's unit forward
                after the step's update (``cube_forward``) and before it
                (``cube_forward_before``), and for each of ``BODY.watched_parts`` its link
                frame's ``<part>_position`` and ``<part>_orientation``.
            steps: physics steps the group took this decision.

        Returns:
            Each shaping term as an (L,) array.

        Raises:
            RewardNaNError: with ``agent`` set to the column of the first NaN.
        """

    # ------------------------------------------------------------------------- render
    def _render_agent(self, agent: int) -> NDArray[np.uint8] | None:
        """A camera frame following one agent: (H, W, 3) uint8 for ``rgb_array``.

        In ``human`` mode the GUI camera moves to the agent and None is returned.
        """
        return render_view(
            self._client,
            self.render_mode,
            self._cubes.position[agent],
            self.BODY.camera_distance,
            self._width,
            self._height,
        )

    def _disconnect(self) -> None:
        """Disconnects the world's client; safe to call more than once."""
        if not getattr(self, "_closed", True):
            p.disconnect(physicsClientId=self._client)
            self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this env is closed")

    @property
    def client(self) -> int:
        """The world's PyBullet physics client id."""
        return self._client

    @property
    def agents(self) -> tuple[Agent, ...]:
        """Every agent of the world, in batch order."""
        return tuple(self._agents)
