"""Whether a policy reaches the two physics limits that Unity applies and physbody does not copy.

- **Drive force limits.** ML-Agents sets each part's drive limit to ``strength *
  maxJointForceLimit`` (Unity's slerp drive ``maximumForce``). PhysX can read such a limit as a
  force or as an impulse per step (``PxConstraintFlag::eDRIVE_LIMITS_ARE_FORCES``), and Unity's
  documentation does not say which it uses; physbody reads it as a torque, as PyBullet's motors
  do. The two differ only where the limit binds.
- **Angular speed cap.** ML-Agents sets every body part's ``Rigidbody.maxAngularVelocity`` to
  50 rad/s; PyBullet's multibodies have no such cap. It matters only if a part spins faster.

The script plays a policy and reads, at every physics step, each motor's applied torque and
each part's angular speed in the world::

    python scripts/physics_limits.py CrawlerStatic-v0            # the shipped policy
    python scripts/physics_limits.py Walker-v0 --policy runs/WalkerDynamic/WalkerDynamic.onnx

The policy decides every ``DECISION_PERIOD`` physics steps, as in training (the env is built
with one physics step per ``step`` call so that every step can be read); ``--noise`` adds
Gaussian noise of that standard deviation to its actions, in ML-Agents' +-3 units (training's
sampling; the default 0 plays the mean action).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import attrs
import gymnasium as gym
import numpy as np
import pybullet as p
from numpy.typing import NDArray

import envs

#: Physics steps per decision in the environments (ML-Agents' DecisionPeriod).
DECISION_PERIOD = 5
#: ML-Agents' ``Rigidbody.maxAngularVelocity`` of every body part, rad/s.
UNITY_MAX_ANGULAR_SPEED = 50.0
#: Links lighter than this are the URDFs' massless helpers between a part's joint axes, kg.
_PART_MIN_MASS = 1e-3


@attrs.frozen
class Record:
    """What agent 0's drives and parts did at every physics step.

    Attributes:
        torques: (steps, joints) the motors' absolute applied torques, N*m.
        limits: (steps, joints) their force limits, N*m.
        spins: (steps, parts) each part's angular speed in the world frame, rad/s.
    """

    torques: NDArray[np.float64]
    limits: NDArray[np.float64]
    spins: NDArray[np.float64]


def record(
    env_id: str,
    act: Callable[[NDArray[np.float32]], NDArray[np.float32]],
    decisions: int,
    seed: int = 0,
) -> Record:
    """Plays ``decisions`` decisions of agent 0 (fewer if the episode ends) and records it.

    Args:
        env_id: one of ``envs.ENV_IDS``.
        act: the policy, observation -> action in [-1, 1].
        decisions: decisions to play.
        seed: the reset seed.
    """
    env = gym.make(
        env_id,
        frame_skip=1,
        max_episode_steps=decisions * DECISION_PERIOD,
        disable_env_checker=True,
    )
    try:
        obs, _ = env.reset(seed=seed)
        agent, client = env.unwrapped.agents[0], env.unwrapped.client
        drive, robot = agent.drive, agent.robot
        joint_part = drive.joint_part
        parts = [
            link
            for link in range(p.getNumJoints(robot, physicsClientId=client))
            if p.getDynamicsInfo(robot, link, physicsClientId=client)[0] > _PART_MIN_MASS
        ]
        torques, limits, spins = [], [], []
        for step in range(decisions * DECISION_PERIOD):
            if step % DECISION_PERIOD == 0:
                action = act(obs)
            obs, _, terminated, truncated, _ = env.step(action)
            states = p.getJointStates(robot, drive.joint_indices, physicsClientId=client)
            torques.append([abs(state[3]) for state in states])
            strength = drive.commands(np.clip(action, -1.0, 1.0))[1]
            limits.append(strength[joint_part] * drive.max_force)
            links = p.getLinkStates(robot, parts, computeLinkVelocity=1, physicsClientId=client)
            root = p.getBaseVelocity(robot, physicsClientId=client)[1]
            spins.append(np.linalg.norm([root, *(link[7] for link in links)], axis=1))
            if terminated or truncated:
                break
        return Record(np.array(torques), np.array(limits), np.array(spins))
    finally:
        env.close()


def summary(played: Record) -> dict[str, float]:
    """How close a record comes to the drives' limits and to Unity's angular speed cap.

    The drives' load is ``torque / limit`` over the joint-steps with a positive limit: its
    share at 99% of the limit or more, median, 99th percentile and largest value; then the
    median and largest torque, N*m; the share of part-steps above 50 rad/s and the largest
    angular speed, rad/s.
    """
    live = played.limits > 0.0
    load = played.torques[live] / played.limits[live]
    return {
        "drive load, share at the limit": float(np.mean(load >= 0.99)),
        "drive load, median": float(np.median(load)),
        "drive load, 99th percentile": float(np.percentile(load, 99)),
        "drive load, largest": float(load.max()),
        "torque, median (N*m)": float(np.median(played.torques)),
        "torque, largest (N*m)": float(played.torques.max()),
        "angular speed, share above 50 rad/s": float(
            np.mean(played.spins > UNITY_MAX_ANGULAR_SPEED)
        ),
        "angular speed, largest (rad/s)": float(played.spins.max()),
    }


def main() -> None:
    """Plays the policy and prints how close it comes to both limits."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env_id", choices=envs.ENV_IDS)
    parser.add_argument("--policy", help="an exported .onnx policy (default: the shipped one)")
    parser.add_argument("--decisions", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=0.0, help="action noise, +-3 units")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from physbody.train.inference import OnnxPolicy
    from physbody.train.play import shipped_policy

    policy = OnnxPolicy(args.policy or shipped_policy(args.env_id))
    rng = np.random.default_rng(args.seed)

    def act(obs: NDArray[np.float32]) -> NDArray[np.float32]:
        action = policy(obs)
        return action + rng.normal(0.0, args.noise / 3.0, action.shape).astype(np.float32)

    played = record(args.env_id, act, args.decisions, args.seed)
    steps, joints = played.torques.shape
    print(f"{args.env_id}: {steps} physics steps, {joints} joints, {played.spins.shape[1]} parts")
    for name, value in summary(played).items():
        print(f"  {name}: {value:.4g}")


if __name__ == "__main__":
    main()
