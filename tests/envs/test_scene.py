"""The world's material and display checks: Unity's friction per contact, no GUI crash."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest

import envs
from envs.scene import (
    FRICTION,
    GRAVITY,
    TIMESTEP,
    UNITY_FRICTION,
    apply_unity_material,
    connect_world,
    static_box,
)


def _slide(tan_slope: float, seconds: float = 1.0) -> float:
    """Distance (m) a resting box with Unity's material slides down a floor of that slope.

    The slope is made by tilting gravity; the box starts at rest on the floor.
    """
    client = connect_world(None)
    try:
        slope = math.atan(tan_slope)
        p.setGravity(
            GRAVITY * math.sin(slope), 0.0, -GRAVITY * math.cos(slope), physicsClientId=client
        )
        static_box(client, (0.0, 0.0, -0.5), (20.0, 20.0, 0.5), (1, 1, 1, 1))
        half = 0.2
        box = p.createMultiBody(
            baseMass=2.0,
            baseCollisionShapeIndex=p.createCollisionShape(
                p.GEOM_BOX, halfExtents=(half,) * 3, physicsClientId=client
            ),
            basePosition=(0.0, 0.0, half),
            physicsClientId=client,
        )
        apply_unity_material(box, -1, client)
        for _ in range(round(seconds / TIMESTEP)):
            p.stepSimulation(physicsClientId=client)
        return p.getBasePositionAndOrientation(box, physicsClientId=client)[0][0]
    finally:
        p.disconnect(physicsClientId=client)


def test_every_contact_has_unity_friction_0_6():
    assert FRICTION * FRICTION == pytest.approx(UNITY_FRICTION)
    # Below the friction angle (tan 0.5 < 0.6) the box stays; above it (tan 0.8), it slides
    # with a = g (sin - mu cos): solving the measured slide for mu gives PhysX's 0.6.
    assert abs(_slide(0.5)) < 1e-3
    tan_slope, seconds = 0.8, 1.0
    distance = _slide(tan_slope, seconds)
    acceleration = 2.0 * distance / seconds**2
    slope = math.atan(tan_slope)
    mu = tan_slope - acceleration / (GRAVITY * math.cos(slope))
    assert mu == pytest.approx(UNITY_FRICTION, abs=0.02)


@pytest.mark.parametrize("env_id", ["Crawler-v0", "WalkerStatic-v0"])
def test_every_collider_of_an_env_has_the_material(env_id):
    env = gym.make(env_id)
    unwrapped = env.unwrapped
    client, agent = unwrapped.client, unwrapped.agents[0]
    colliders = [(agent.floor, -1), (agent.target, -1), *((wall, -1) for wall in agent.walls)]
    colliders += [(agent.robot, link) for link in unwrapped._links.part_links]
    for body, link in colliders:
        info = p.getDynamicsInfo(body, link, physicsClientId=client)
        assert info[1] == pytest.approx(FRICTION)  # lateral friction
        assert info[5] == 0.0  # restitution: Unity's default bounciness
    env.close()


_HEADLESS = """
import gymnasium as gym, envs
from gymnasium.utils.env_checker import check_env
for env_id in envs.ENV_IDS:
    try:
        gym.make(env_id, render_mode="human")
    except RuntimeError as error:
        print("human:", error)
    env = gym.make(env_id, render_mode="rgb_array")
    try:
        check_env(env.unwrapped)  # with its render check, which makes every render mode
    except RuntimeError as error:
        print("check_env:", error)
    env.close()
print("alive")
"""


def test_human_mode_without_a_display_raises_and_the_process_survives():
    environ = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    result = subprocess.run(
        [sys.executable, "-c", _HEADLESS],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1] == "alive"
    human = [line for line in lines if line.startswith("human:")]
    checked = [line for line in lines if line.startswith("check_env:")]
    assert len(human) == len(checked) == len(envs.ENV_IDS)
    assert all("DISPLAY" in line and 'render_mode="rgb_array"' in line for line in human)
    assert np.all([line.endswith(human[0][len("human:") :]) for line in checked])
