"""How hard a policy pushes the joint drives: each motor's torque against its force limit.

ML-Agents sets each part's drive limit to ``strength * maxJointForceLimit`` (Unity's slerp
drive ``maximumForce``). PhysX can read such a limit as a force or as an impulse per step
(``PxConstraintFlag::eDRIVE_LIMITS_ARE_FORCES``), and Unity's documentation does not say
which it uses; physbody reads it as a torque, as PyBullet's motors do. The difference only
matters where the limit binds, so this script plays a policy and reads PyBullet's applied
motor torque at every physics step::

    python scripts/drive_load.py CrawlerStatic-v0            # the shipped policy
    python scripts/drive_load.py Walker-v0 --policy runs/WalkerDynamic/WalkerDynamic.onnx

The policy decides every ``frame_skip`` physics steps, as in training (the env is built with
one physics step per ``step`` call so that every step can be read), with its mean action.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import gymnasium as gym
import numpy as np
import pybullet as p
from numpy.typing import NDArray

import envs

#: Physics steps per decision in the environments (ML-Agents' DecisionPeriod).
DECISION_PERIOD = 5


def drive_load(
    env_id: str,
    act: Callable[[NDArray[np.float32]], NDArray[np.float32]],
    decisions: int,
    seed: int = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Plays ``decisions`` decisions of agent 0 and records its drives at every physics step.

    Args:
        env_id: one of ``envs.ENV_IDS``.
        act: the policy, observation -> action in [-1, 1].
        decisions: decisions to play; play stops early at an episode end.
        seed: the reset seed.

    Returns:
        ``(torques, limits)``: (physics steps, joints) absolute applied motor torques and the
        force limits in force at those steps, N*m.
    """
    env = gym.make(
        env_id,
        frame_skip=1,
        max_episode_steps=decisions * DECISION_PERIOD,
        disable_env_checker=True,
    )
    try:
        obs, _ = env.reset(seed=seed)
        agent = env.unwrapped.agents[0]
        drive, client = agent.drive, env.unwrapped.client
        joint_part = drive.joint_part
        torques, limits = [], []
        for step in range(decisions * DECISION_PERIOD):
            if step % DECISION_PERIOD == 0:
                action = act(obs)
            obs, _, terminated, truncated, _ = env.step(action)
            states = p.getJointStates(agent.robot, drive.joint_indices, physicsClientId=client)
            torques.append([abs(state[3]) for state in states])
            strength = drive.commands(np.clip(action, -1.0, 1.0))[1]
            limits.append(strength[joint_part] * drive.max_force)
            if terminated or truncated:
                break
        return np.array(torques), np.array(limits)
    finally:
        env.close()


def summary(torques: NDArray[np.float64], limits: NDArray[np.float64]) -> dict[str, float]:
    """How the torques, N*m, compare with the limits; both (physics steps, joints).

    Returns ``torque / limit`` over the joint-steps with a positive limit (the share at 99% of
    the limit or more, median, 99th percentile, largest) and the median and largest torque.
    """
    live = limits > 0.0
    load = torques[live] / limits[live]
    return {
        "share at the limit": float(np.mean(load >= 0.99)),
        "median load": float(np.median(load)),
        "99th percentile load": float(np.percentile(load, 99)),
        "largest load": float(load.max()),
        "median torque": float(np.median(torques)),
        "largest torque": float(torques.max()),
    }


def main() -> None:
    """Plays the policy and prints how close the motors come to their limits."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env_id", choices=envs.ENV_IDS)
    parser.add_argument("--policy", help="an exported .onnx policy (default: the shipped one)")
    parser.add_argument("--decisions", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from physbody.train.inference import OnnxPolicy
    from physbody.train.play import shipped_policy

    policy = OnnxPolicy(args.policy or shipped_policy(args.env_id))
    torques, limits = drive_load(args.env_id, policy, args.decisions, args.seed)
    print(f"{args.env_id}: {len(torques)} physics steps x {torques.shape[1]} joints")
    for name, value in summary(torques, limits).items():
        print(f"  {name}: {value:.4g}")


if __name__ == "__main__":
    main()
