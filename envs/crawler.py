"""The Crawler: ML-Agents' four-legged CrawlerDynamic / CrawlerStatic on PyBullet."""

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

__all__ = ["CRAWLER", "CrawlerAgents", "CrawlerEnv", "CrawlerVectorEnv", "make_crawler_vector_env"]

_LEGS = ("leg0", "leg1", "leg2", "leg3")

CRAWLER = BodyDescription(
    urdf="crawler.urdf",
    part_names=(
        "Body",
        "leg0",
        "foreleg0",
        "leg1",
        "foreleg1",
        "leg2",
        "foreleg2",
        "leg3",
        "foreleg3",
    ),  # fmt: skip
    actuated=tuple(
        part
        for i, leg in enumerate(_LEGS)
        for part in (
            ActuatedPart(leg, (("x", 2 * i), ("y", 2 * i + 1)), 12 + i),
            ActuatedPart(f"fore{leg}", (("x", 8 + i),), 16 + i),
        )
    ),
    ground_terminates=frozenset({"Body", *_LEGS}),
    spawn_height=1.65,  # Body at Unity y 2.15 over a floor whose top is at y 0.5
    forward_parts=("Body",),
    raycast=True,
    root_radius=0.5,
    camera_distance=7.0,
)


class CrawlerAgents(LocomotionAgents):
    """The Crawler's task for any number of agents: body, reward terms and their records.

    Shared by :class:`CrawlerEnv` (one agent) and :class:`CrawlerVectorEnv` (N agents).
    """

    BODY: ClassVar[BodyDescription] = CRAWLER
    REWARD_TERMS: ClassVar[tuple[str, ...]] = (
        "move_towards_target",
        "facing_target",
        "target_touch",
        "ground_contact",
    )

    def _configure_task(
        self,
        *,
        dynamic_target: bool = True,
        move_towards_target_weight: float = 0.03,
        facing_target_weight: float = 0.01,
        **common: Any,
    ) -> dict[str, Any]:
        """Stores the reward weights; returns the world arguments (scene, prefab drive, rest)."""
        self._move_weight = float(move_towards_target_weight)
        self._facing_weight = float(facing_target_weight)
        scene = (
            dynamic_platform(target_start=(5.0, 5.0, 1.0))
            if dynamic_target
            else static_course(distance=1375.0, target_height=3.5)
        )
        # The prefab's drive is limp until the first action.
        return {"scene": scene, "prefab_drive": (0.0, 0.0, 0.0), **common}

    def _reward_terms(
        self, records: dict[str, NDArray[np.float64]], steps: int
    ) -> dict[str, NDArray[np.float64]]:
        # CrawlerAgent updates the cube first, then rewards against the new forward.
        cube_forward = records["cube_forward"]
        body_forward = transforms.quat_rotate(
            records["root_orientation"], self._root_forward_in_com
        )
        return {
            "move_towards_target": rewards.moving_towards_target(
                cube_forward,
                records["root_velocity"],
                self._move_weight,
                term="movingTowardsDot",
                cube_name="orientationCube.transform.forward",
                velocity_name="body.velocity",
            ),
            "facing_target": rewards.facing_target(
                cube_forward,
                body_forward,
                self._facing_weight,
                term="facingDot",
                cube_name="orientationCube.transform.forward",
                forward_name="body.forward",
            ),
        }


class CrawlerEnv(CrawlerAgents, LocomotionEnv, EzPickle):
    """ML-Agents' Crawler (seed version: release 4 with #4205's NaN checks) on PyBullet.

    A 32 kg body (a 0.5 m sphere) with four two-segment legs learns to walk to a target.
    ``Crawler-v0`` is CrawlerDynamic (a target that respawns within 40 m when touched, on a
    walled 100 x 100 m platform); ``CrawlerStatic-v0`` is CrawlerStatic (a target 1375 m ahead).

    **Actions** (20, float32 in [-1, 1]; finite values outside are clipped, as ML-Agents
    clips): 0-7 upper legs leg0..leg3 (x, y) target angles, 8-11 forelegs (x); 12-15 upper-leg
    and 16-19 foreleg strengths. A target ``a`` maps to ``lerp(lower, upper, (a + 1) / 2)``
    within the joint's limits (upper leg x -60..0 deg, y -20..20 deg; foreleg x 0..150 deg);
    a strength ``s`` to a force limit ``(s + 1) / 2 * joint_max_force``.

    **Observation** (142 float32 with the default sensor settings; ``observation_layout``
    names every block). First the PhysicsBodySensor over the 9 parts in the order Body,
    leg0, foreleg0, leg1, foreleg1, leg2, foreleg2, leg3, foreleg3, with the orientation cube
    (a yaw-only frame at the Body facing the target) as virtual root: per part, position
    relative to the Body (3), velocity (3) and angular velocity (3) in the cube's frame,
    then per part its rotation relative to its parent (4; the Body's relative to the cube).
    Then the task block: FromToRotation(Body forward, cube forward) (4), target position in
    the cube's frame (3), downward raycast distance / 10 m (1, 1 when nothing within 10 m),
    ground contact per part (9) and joint strength / joint_max_force per driven part (8).
    ML-Agents observes 138: the same quantities less the Body's own local rotation (4).

    **Reward**, summed over the ``frame_skip`` physics steps of one decision:
    ``move_towards_target_weight * dot(cube_forward, v_body)`` +
    ``facing_target_weight * dot(cube_forward, body_forward)``, +1 each time a part touches
    the target; when the Body or an upper leg touches the floor the decision's reward is
    replaced by -1 and the episode terminates. ``info`` holds each term as ``reward_<name>``
    and they sum to the reward exactly. A NaN term raises ``envs.rewards.RewardNaNError``.

    **Episode**: random yaw at reset; ends on forbidden ground contact (terminated) or after
    1000 decisions (``TimeLimit``, truncated) = ML-Agents' MaxStep 5000 physics steps.

    Args:
        dynamic_target: True for CrawlerDynamic, False for CrawlerStatic.
        move_towards_target_weight: reward per m/s towards the target (0.03).
        facing_target_weight: reward for facing the target (0.01).
        frame_skip: physics steps per decision (5).
        sensor_settings: PhysicsSensorSettings of the body-part block.
        urdf: path of a replacement body URDF with the same link and joint names.
        joint_spring, joint_damper, joint_max_force: JointDriveController values
            (40000, 3000, 10000).
        drag: every part's Rigidbody drag and angularDrag, 1/s (0.05; 0 turns it off).
        render_mode: None, "rgb_array" (TinyRenderer frames) or "human" (PyBullet GUI).
        width, height: rgb_array frame size in pixels.

    ``gym.make_vec("Crawler-v0", num_envs=N)`` gives :class:`CrawlerVectorEnv`: N agents in one
    world with the same per-agent behaviour.

    Version history: v0, the seed version (ML-Agents release 4 bodies and rewards, #4205).
    """

    def __init__(
        self,
        *,
        dynamic_target: bool = True,
        move_towards_target_weight: float = 0.03,
        facing_target_weight: float = 0.01,
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
            "facing_target_weight": facing_target_weight,
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


class CrawlerVectorEnv(CrawlerAgents, LocomotionVectorEnv):
    """``num_envs`` Crawlers in one PyBullet world: the native vector form of the Crawler ids.

    Each agent behaves as one :class:`CrawlerEnv` (same actions, observations, rewards and
    episode ends) on its own platform; see ``envs.vector.LocomotionVectorEnv`` for the
    batch API (autoreset, infos, seeding).

    Takes :class:`CrawlerEnv`'s arguments plus ``num_envs``, ``max_episode_steps`` and
    ``copy`` (see ``envs.vector.LocomotionVectorEnv``).
    """


def make_crawler_vector_env(num_envs: int = 1, *, num_workers: int = 1, **kwargs: Any) -> VectorEnv:
    """The ``vector_entry_point`` of the Crawler ids: :class:`CrawlerVectorEnv` in 1 process.

    With ``num_workers`` > 1 the agents are split over that many processes (see
    ``envs.vector.make_vector_env``).
    """
    return make_vector_env(CrawlerVectorEnv, num_envs, num_workers=num_workers, **kwargs)
