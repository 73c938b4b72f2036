"""The Walker: ML-Agents' humanoid WalkerDynamic / WalkerStatic on PyBullet."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from gymnasium.utils import EzPickle
from gymnasium.vector import VectorEnv
from numpy.typing import NDArray

from envs import rewards
from envs.agents import LocomotionAgents
from envs.body import ActuatedPart, BodyDescription
from envs.locomotion import LocomotionEnv
from envs.scene import DRAG, dynamic_platform, static_course
from envs.vector import LocomotionVectorEnv, make_vector_env
from physbody import PhysicsSensorSettings, transforms

__all__ = ["WALKER", "WalkerAgents", "WalkerEnv", "WalkerVectorEnv", "make_walker_vector_env"]

WALKER = BodyDescription(
    urdf="walker.urdf",
    part_names=(
        "hips",
        "thighL",
        "shinL",
        "footL",
        "thighR",
        "shinR",
        "footR",
        "spine",
        "chest",
        "upper_arm_L",
        "lower_arm_L",
        "hand_L",
        "upper_arm_R",
        "lower_arm_R",
        "hand_R",
        "head",
    ),  # fmt: skip
    # JointDriveController order of WalkerAgent (the strength observations' order).
    actuated=(
        ActuatedPart("chest", (("x", 0), ("y", 1), ("z", 2)), 26),
        ActuatedPart("spine", (("x", 3), ("y", 4), ("z", 5)), 27),
        ActuatedPart("head", (("x", 24), ("y", 25)), 28),
        ActuatedPart("thighL", (("x", 6), ("y", 7)), 29),
        ActuatedPart("shinL", (("x", 10),), 30),
        ActuatedPart("footL", (("x", 15), ("y", 16), ("z", 17)), 31),
        ActuatedPart("thighR", (("x", 8), ("y", 9)), 32),
        ActuatedPart("shinR", (("x", 11),), 33),
        ActuatedPart("footR", (("x", 12), ("y", 13), ("z", 14)), 34),
        ActuatedPart("upper_arm_L", (("x", 18), ("y", 19)), 35),
        ActuatedPart("lower_arm_L", (("x", 22),), 36),
        ActuatedPart("upper_arm_R", (("x", 20), ("y", 21)), 37),
        ActuatedPart("lower_arm_R", (("x", 23),), 38),
    ),
    ground_terminates=frozenset(
        {"hips", "thighL", "thighR", "spine", "chest", "head"}
        | {"upper_arm_L", "lower_arm_L", "hand_L", "upper_arm_R", "lower_arm_R", "hand_R"}
    ),
    spawn_height=2.72,  # hips at Unity y 3.22 over a floor whose top is at y 0.5
    forward_parts=("hips", "head"),
    camera_distance=9.0,
    watched_parts=("head", "footL", "footR"),
)


class WalkerAgents(LocomotionAgents):
    """The Walker's task for any number of agents: body, reward terms and their records.

    Shared by :class:`WalkerEnv` (one agent) and :class:`WalkerVectorEnv` (N agents).
    """

    BODY: ClassVar[BodyDescription] = WALKER
    REWARD_TERMS: ClassVar[tuple[str, ...]] = (
        "move_towards_target",
        "look_at_target",
        "head_height",
        "target_touch",
        "ground_contact",
    )

    def _configure_task(
        self,
        *,
        dynamic_target: bool = True,
        move_towards_target_weight: float = 0.02,
        look_at_target_weight: float = 0.02,
        head_height_weight: float = 0.005,
        **common: Any,
    ) -> dict[str, Any]:
        """Stores the reward weights; returns the world arguments (scene, prefab drive, rest)."""
        self._move_weight = float(move_towards_target_weight)
        self._look_weight = float(look_at_target_weight)
        self._height_weight = float(head_height_weight)
        scene = (
            dynamic_platform(target_start=(6.2, 3.824, 0.65))
            if dynamic_target
            else static_course(distance=1800.0, target_height=1.29)
        )
        # WalkerRagdoll prefab's slerp drive.
        return {"scene": scene, "prefab_drive": (10000.0, 100.0, 25000.0), **common}

    def _reward_terms(
        self, records: dict[str, NDArray[np.float64]], steps: int
    ) -> dict[str, NDArray[np.float64]]:
        # WalkerAgent reads the cube's forward before updating the cube.
        cube_forward = records["cube_forward_before"]
        head_forward = transforms.quat_rotate(records["head_orientation"], (0.0, 1.0, 0.0))
        return {
            "move_towards_target": rewards.moving_towards_target(
                cube_forward,
                records["root_velocity"],
                self._move_weight,
                term="moveTowardsTargetReward",
                velocity_name="hips.velocity",
            ),
            "look_at_target": rewards.facing_target(
                cube_forward,
                head_forward,
                self._look_weight,
                term="lookAtTargetReward",
                forward_name="head.forward",
            ),
            "head_height": rewards.head_height_over_feet(
                records["head_position"],
                records["footL_position"],
                records["footR_position"],
                self._height_weight,
            ),
        }


class WalkerEnv(WalkerAgents, LocomotionEnv, EzPickle):
    """ML-Agents' Walker (seed version: release 4 with #4205's NaN checks) on PyBullet.

    A 93 kg, 16-part humanoid learns to walk to a target. ``Walker-v0`` is WalkerDynamic (a
    target that respawns within 40 m when touched, on a walled 100 x 100 m platform);
    ``WalkerStatic-v0`` is WalkerStatic (a target 1800 m ahead).

    **Actions** (39, float32 in [-1, 1]; finite values outside are clipped): 0-2 chest
    (x, y, z), 3-5 spine (x, y, z), 6-7 thighL (x, y), 8-9 thighR (x, y), 10 shinL, 11 shinR,
    12-14 footR, 15-17 footL, 18-19 upper_arm_L, 20-21 upper_arm_R, 22 lower_arm_L,
    23 lower_arm_R, 24-25 head (x, y) target angles; strengths 26 chest, 27 spine, 28 head,
    29 thighL, 30 shinL, 31 footL, 32 thighR, 33 shinR, 34 footR, 35 upper_arm_L,
    36 lower_arm_L, 37 upper_arm_R, 38 lower_arm_R. Targets map into each joint's limits as
    ``lerp(lower, upper, (a + 1) / 2)``; strengths to ``(s + 1) / 2 * joint_max_force``.

    **Observation** (248 float32 with the default sensor settings; ``observation_layout``
    names every block). First the PhysicsBodySensor over the 16 parts (hips, thighL, shinL,
    footL, thighR, shinR, footR, spine, chest, upper_arm_L, lower_arm_L, hand_L, upper_arm_R,
    lower_arm_R, hand_R, head) with the orientation cube as virtual root: per part position
    relative to the hips (3), velocity (3) and angular velocity (3) in the cube's frame, then
    per part its rotation relative to its parent (4; the hips' relative to the cube). Then
    FromToRotation(hips forward, cube forward) (4), FromToRotation(head forward, cube
    forward) (4), target position in the cube's frame (3), ground contact per part (16) and
    joint strength / joint_max_force per driven part (13). ML-Agents observes 236: the same
    quantities less the local rotations of hips, hand_L and hand_R (12).

    **Reward**, summed over the ``frame_skip`` physics steps, with the cube's forward as it
    was before each step's update (as WalkerAgent reads it):
    ``move_towards_target_weight * dot(cube_forward, v_hips)`` +
    ``look_at_target_weight * dot(cube_forward, head_forward)`` +
    ``head_height_weight * ((head_z - footL_z) + (head_z - footR_z) / 10)`` (the seed's
    formula as written), +1 per target touch; a part other than shins and feet touching the
    floor replaces the decision's reward with -1 and terminates. ``info`` holds each term as
    ``reward_<name>``; a NaN term raises ``envs.rewards.RewardNaNError``.

    **Episode**: random yaw at reset; ends on forbidden ground contact or after 1000
    decisions (``TimeLimit``).

    Args:
        dynamic_target: True for WalkerDynamic, False for WalkerStatic.
        move_towards_target_weight: reward per m/s of hip velocity towards the target (0.02).
        look_at_target_weight: reward for the head facing the target (0.02).
        head_height_weight: reward per metre of head height over the feet (0.005).
        frame_skip: physics steps per decision (5).
        sensor_settings: PhysicsSensorSettings of the body-part block.
        urdf: path of a replacement body URDF with the same link and joint names.
        joint_spring, joint_damper, joint_max_force: JointDriveController values
            (40000, 3000, 10000).
        drag: every part's Rigidbody drag and angularDrag, 1/s (0.05; 0 turns it off).
        render_mode: None, "rgb_array" or "human".
        width, height: rgb_array frame size in pixels.

    ``gym.make_vec("Walker-v0", num_envs=N)`` gives :class:`WalkerVectorEnv`: N agents in one
    world with the same per-agent behaviour.

    Version history: v0, the seed version (ML-Agents release 4 bodies and rewards, #4205).
    """

    def __init__(
        self,
        *,
        dynamic_target: bool = True,
        move_towards_target_weight: float = 0.02,
        look_at_target_weight: float = 0.02,
        head_height_weight: float = 0.005,
        frame_skip: int = 5,
        sensor_settings: PhysicsSensorSettings | None = None,
        urdf: str | Path | None = None,
        joint_spring: float = 40000.0,
        joint_damper: float = 3000.0,
        joint_max_force: float = 10000.0,
        drag: float = DRAG,
        render_mode: str | None = None,
        width: int = 480,
        height: int = 480,
    ) -> None:
        kwargs = {
            "dynamic_target": dynamic_target,
            "move_towards_target_weight": move_towards_target_weight,
            "look_at_target_weight": look_at_target_weight,
            "head_height_weight": head_height_weight,
            "frame_skip": frame_skip,
            "sensor_settings": sensor_settings,
            "urdf": urdf,
            "joint_spring": joint_spring,
            "joint_damper": joint_damper,
            "joint_max_force": joint_max_force,
            "drag": drag,
            "render_mode": render_mode,
            "width": width,
            "height": height,
        }
        EzPickle.__init__(self, **kwargs)
        super().__init__(**self._configure_task(**kwargs))


class WalkerVectorEnv(WalkerAgents, LocomotionVectorEnv):
    """``num_envs`` Walkers in one PyBullet world: the native vector form of the Walker ids.

    Each agent behaves as one :class:`WalkerEnv` (same actions, observations, rewards and
    episode ends) on its own platform; see ``envs.vector.LocomotionVectorEnv`` for the
    batch API (autoreset, infos, seeding).

    Takes :class:`WalkerEnv`'s arguments plus ``num_envs``, ``max_episode_steps`` and
    ``copy`` (see ``envs.vector.LocomotionVectorEnv``).
    """


def make_walker_vector_env(num_envs: int = 1, *, num_workers: int = 1, **kwargs: Any) -> VectorEnv:
    """The ``vector_entry_point`` of the Walker ids: :class:`WalkerVectorEnv` in 1 process.

    With ``num_workers`` > 1 the agents are split over that many processes (see
    ``envs.vector.make_vector_env``).
    """
    return make_vector_env(WalkerVectorEnv, num_envs, num_workers=num_workers, **kwargs)
