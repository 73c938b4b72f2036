"""Unity's drag: every part loses velocity at PhysX's rate, linear in the speed.

PhysX scales a body's linear and angular velocity by ``1 - drag * dt`` at every physics step
(Rigidbody drag and angularDrag 0.05 on every part: the spec's "Common physics"). Bullet's
multibody damping would add a term growing with the speed. The bodies here fly in empty space
without gravity and without motor force, so that the drag is the only force on them.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest

import envs  # noqa: F401  (registers the ids)
from envs.scene import DRAG, TIMESTEP, drag_factor
from envs.world import scale_robot_velocities

#: Decisions flown per check; 5 physics steps each.
DECISIONS = 30


def test_drag_factor_compounds_physx_step_factor():
    assert drag_factor(0.05, 1.0 / 75.0, 1) == pytest.approx(1.0 - 0.05 / 75.0, rel=1e-15)
    assert drag_factor(0.05, 1.0 / 75.0, 5) == pytest.approx((1.0 - 0.05 / 75.0) ** 5, rel=1e-15)
    assert drag_factor(0.05, 1.0 / 75.0, 0) == 1.0
    assert drag_factor(0.0, 1.0 / 75.0, 100) == 1.0
    # PhysX clamps a step's factor at 0: a drag over 1/dt stops the body in one step.
    assert drag_factor(100.0, 1.0 / 75.0, 1) == 0.0


def _free_flight(env_id: str, **kwargs: float) -> tuple[gym.Env, int]:
    """The env reset, gravity off and its body lifted 30 m above the floor; (env, robot)."""
    env = gym.make(env_id, **kwargs)
    env.reset(seed=0)
    world = env.unwrapped
    robot = world.agents[0].robot
    p.setGravity(0.0, 0.0, 0.0, physicsClientId=world.client)
    position, orientation = p.getBasePositionAndOrientation(robot, physicsClientId=world.client)
    p.resetBasePositionAndOrientation(
        robot, (position[0], position[1], 30.0), orientation, physicsClientId=world.client
    )
    return env, robot


def _limp(env: gym.Env) -> np.ndarray:
    """An action with every strength at 0 (-1 maps to no motor force)."""
    return -np.ones(env.action_space.shape, dtype=np.float32)


def _part_velocities(client: int, robot: int) -> np.ndarray:
    """(links + 1, 6) world linear and angular velocity of the base and of every link's COM."""
    base = np.concatenate(p.getBaseVelocity(robot, physicsClientId=client))
    links = p.getLinkStates(
        robot,
        range(p.getNumJoints(robot, physicsClientId=client)),
        computeLinkVelocity=1,
        computeForwardKinematics=1,
        physicsClientId=client,
    )
    return np.array([base, *(np.concatenate(state[6:8]) for state in links)])


@pytest.mark.parametrize("env_id", ["Crawler-v0", "Walker-v0"])
@pytest.mark.parametrize("speed", [1.0, 10.0])
@pytest.mark.parametrize("drag", [DRAG, 0.0, 2.0])
def test_a_flying_body_slows_by_physx_factor_whatever_its_speed(env_id, speed, drag):
    env, robot = _free_flight(env_id, drag=drag)
    client = env.unwrapped.client
    try:
        p.resetBaseVelocity(robot, (speed, 0.0, 0.0), (0.0, 0.0, 0.0), physicsClientId=client)
        before = p.getBaseVelocity(robot, physicsClientId=client)[0]
        for _ in range(DECISIONS):
            env.step(_limp(env))
        after = p.getBaseVelocity(robot, physicsClientId=client)[0]
    finally:
        env.close()
    expected = (1.0 - drag * TIMESTEP) ** (5 * DECISIONS)
    # Every part moves with the root: the root's velocity is the body's, scaled by the drag.
    np.testing.assert_allclose(np.array(after) / before[0], (expected, 0.0, 0.0), atol=1e-9)


@pytest.mark.parametrize("drag", [DRAG, 0.0])
def test_the_vector_env_slows_every_flying_body_by_its_drag(drag):
    vector = gym.make_vec("Walker-v0", num_envs=2, drag=drag)
    vector.reset(seed=0)
    world = vector.unwrapped
    client = world.client
    try:
        p.setGravity(0.0, 0.0, 0.0, physicsClientId=client)
        robots = [agent.robot for agent in world.agents]
        for i, robot in enumerate(robots):
            position, orientation = p.getBasePositionAndOrientation(robot, physicsClientId=client)
            p.resetBasePositionAndOrientation(
                robot, (position[0], position[1], 30.0 + 5 * i), orientation,
                physicsClientId=client,
            )  # fmt: skip
            p.resetBaseVelocity(robot, (0.0, 1.0, 0.0), (0.0, 0.0, 0.0), physicsClientId=client)
        for _ in range(DECISIONS):
            vector.step(-np.ones(vector.action_space.shape, dtype=np.float32))
        after = [p.getBaseVelocity(robot, physicsClientId=client)[0] for robot in robots]
    finally:
        vector.close()
    expected = (1.0 - drag * TIMESTEP) ** (5 * DECISIONS)
    np.testing.assert_allclose(after, [(0.0, expected, 0.0)] * 2, atol=1e-9)


@pytest.mark.parametrize("env_id", ["Crawler-v0", "Walker-v0"])
def test_a_decision_scales_every_part_velocity_by_physx_factor(env_id):
    """Mid-episode, limbs swinging, body tumbling: one decision's drag on every part at once.

    (Bullet's integrator keeps a free multibody's momenta only to about 1% per step, so the
    drag is checked where it acts, on the velocities, before the physics steps move them:
    ``scale_robot_velocities``, which the step loop applies to every robot.)
    """
    env = gym.make(env_id)
    env.reset(seed=0)
    world = env.unwrapped
    client, robot = world.client, world.agents[0].robot
    try:
        rng = np.random.default_rng(0)
        for _ in range(10):
            env.step(rng.uniform(-1.0, 1.0, env.action_space.shape).astype(np.float32))
        p.resetBaseVelocity(robot, (2.0, -1.0, 0.5), (3.0, -2.0, 4.0), physicsClientId=client)
        before = _part_velocities(client, robot)
        joints = range(p.getNumJoints(robot, physicsClientId=client))
        scale_robot_velocities(client, robot, joints, drag_factor(DRAG, TIMESTEP, 5))
        after = _part_velocities(client, robot)
    finally:
        env.close()
    assert np.abs(before).max(axis=0).min() > 0.1  # every component moves
    np.testing.assert_allclose(after, drag_factor(DRAG, TIMESTEP, 5) * before, rtol=0, atol=1e-12)


@pytest.mark.parametrize("speed", [1.0, 3.0, 10.0])
def test_bullet_damping_is_not_unity_drag_it_grows_with_speed(speed):
    """Why the env applies the drag itself: Bullet's multibody damping k is k * (1 + |v|).

    The same free flight with Bullet's damping 0.05 and no drag step follows
    dv/dt = -k v (1 + v), so v(t) = v0 e^-kt / (1 + v0 (1 - e^-kt)): it keeps 0.91 of 1 m/s
    after 1 s, 0.83 of 3 m/s and 0.64 of 10 m/s, where PhysX keeps 0.95 at every speed.
    """
    env, robot = _free_flight("Crawler-v0", drag=0.0)
    client = env.unwrapped.client
    try:
        p.changeDynamics(robot, -1, linearDamping=DRAG, angularDamping=DRAG, physicsClientId=client)
        p.resetBaseVelocity(robot, (speed, 0.0, 0.0), (0.0, 0.0, 0.0), physicsClientId=client)
        for _ in range(15):  # 75 physics steps: 1 s
            env.step(_limp(env))
        kept = p.getBaseVelocity(robot, physicsClientId=client)[0][0] / speed
    finally:
        env.close()
    decay = np.exp(-DRAG * 1.0)
    # Within 0.5%: Bullet integrates it in 75 discrete steps.
    assert kept == pytest.approx(decay / (1.0 + speed * (1.0 - decay)), rel=5e-3)
    assert kept < drag_factor(DRAG, TIMESTEP, 75) - 0.04


def test_the_target_keeps_its_velocity_as_unity_drag_0():
    env = gym.make("Crawler-v0")
    env.reset(seed=0)
    world = env.unwrapped
    client, target = world.client, world.agents[0].target
    try:
        p.setGravity(0.0, 0.0, 0.0, physicsClientId=client)
        p.resetBasePositionAndOrientation(
            target, (0.0, 0.0, 40.0), (0, 0, 0, 1), physicsClientId=client
        )
        p.resetBaseVelocity(target, (3.0, 0.0, 0.0), (0.0, 0.0, 0.0), physicsClientId=client)
        for _ in range(75):
            p.stepSimulation(physicsClientId=client)
        velocity = p.getBaseVelocity(target, physicsClientId=client)[0]
    finally:
        env.close()
    np.testing.assert_allclose(velocity, (3.0, 0.0, 0.0), atol=1e-12)
