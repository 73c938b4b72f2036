"""The task block against independent computations from raw PyBullet reads."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest
from scipy.spatial.transform import Rotation

import envs  # noqa: F401


def _base_pose(env: gym.Env) -> tuple[np.ndarray, Rotation]:
    unwrapped = env.unwrapped
    position, rotation = p.getBasePositionAndOrientation(
        unwrapped.robot, physicsClientId=unwrapped.client
    )
    return np.array(position), Rotation.from_quat(rotation)


@pytest.mark.parametrize("env_id", ["Crawler-v0", "Walker-v0"])
def test_target_is_straight_ahead_of_the_cube(env_id):
    env = gym.make(env_id)
    layout = env.unwrapped.observation_layout
    for seed in range(5):
        obs, info = env.reset(seed=seed)
        target = obs[layout["target_position"]]
        root = info["root_position"]
        horizontal = np.linalg.norm((info["target_position"] - root)[:2])
        # The cube's forward axis (local +y) points at the target; its frame is yaw-only.
        np.testing.assert_allclose(target[0], 0.0, atol=1e-4)
        np.testing.assert_allclose(target[1], horizontal, rtol=1e-5)
        np.testing.assert_allclose(target[2], info["target_position"][2] - root[2], atol=1e-4)
    env.close()


def test_rotation_delta_turns_body_forward_onto_cube_forward():
    env = gym.make("Crawler-v0")
    layout = env.unwrapped.observation_layout
    obs, info = env.reset(seed=3)
    for _ in range(5):
        obs, *_ = env.step(env.action_space.sample())
    _, body_rotation = _base_pose(env)
    body_forward = body_rotation.apply([0.0, 1.0, 0.0])
    delta = Rotation.from_quat(obs[layout["rotation_delta/Body"]].astype(np.float64))
    turned = delta.apply(body_forward)
    # The cube faces the target horizontally: its forward has no z and unit length.
    assert abs(turned[2]) < 1e-5
    np.testing.assert_allclose(np.linalg.norm(turned[:2]), 1.0, atol=1e-5)
    env.close()


def test_raycast_measures_height_over_the_floor():
    env = gym.make("Crawler-v0")
    layout = env.unwrapped.observation_layout
    env.reset(seed=0)
    for _ in range(30):  # land and settle with the legs held at mid-range
        obs, *_ = env.step(np.zeros(20, dtype=np.float32))
    position, _ = _base_pose(env)
    # The ray leaves the Body straight down; below it is the floor (top at z = 0).
    np.testing.assert_allclose(obs[layout["raycast"]][0], position[2] / 10.0, atol=2e-3)
    env.close()


def test_raycast_reads_one_when_nothing_is_within_ten_metres():
    env = gym.make("Crawler-v0")
    layout = env.unwrapped.observation_layout
    env.reset(seed=0)
    unwrapped = env.unwrapped
    p.resetBasePositionAndOrientation(
        unwrapped.robot, (0, 0, 30.0), (0, 0, 0, 1), physicsClientId=unwrapped.client
    )
    obs, *_ = env.step(np.zeros(20, dtype=np.float32))
    assert obs[layout["raycast"]][0] == 1.0
    env.close()


def test_dynamic_target_respawns_within_its_ball():
    env = gym.make("Crawler-v0")
    start = np.array([5.0, 5.0, 1.0])  # DynamicTarget's prefab position, z over the floor
    positions = np.array([env.reset(seed=seed)[1]["target_position"] for seed in range(200)])
    env.close()
    offsets = positions[:, :2] - start[:2]
    distances = np.linalg.norm(offsets, axis=1)
    assert np.all(distances <= 40.0) and distances.max() > 30.0
    np.testing.assert_allclose(positions[:, 2], start[2])
    # insideUnitSphere projected onto the floor: mean radius 3 pi / 16 of the ball's (a
    # uniform disk would give 2 / 3); 200 draws pin it to about +-1 m.
    assert abs(distances.mean() - 40.0 * 3.0 * np.pi / 16.0) < 1.5


def test_ground_contacts_and_strengths_blocks():
    env = gym.make("Walker-v0")
    layout = env.unwrapped.observation_layout
    obs, _ = env.reset(seed=0)
    np.testing.assert_array_equal(obs[layout["joint_strengths"]], 0.0)
    action = np.zeros(39, dtype=np.float32)
    action[26:] = 0.5
    for _ in range(4):
        obs, *_ = env.step(action)
    np.testing.assert_allclose(obs[layout["joint_strengths"]], 0.75)
    contacts = obs[layout["ground_contacts"]]
    assert set(np.unique(contacts)) <= {0.0, 1.0}
    env.close()
