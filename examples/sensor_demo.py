"""Builds a three-body arm in PyBullet and prints what a PhysicsBodySensor observes.

Run: ``python examples/sensor_demo.py``. The arm is a base and two links joined by revolute
joints; the sensor observes model-space translations and rotations and local-space linear
velocities, so the printout shows each body's slice of the observation by name.
"""

from __future__ import annotations

import numpy as np
import pybullet as p

from physbody import PhysicsBodySensor, PhysicsSensorSettings


def build_arm(client: int) -> int:
    """Creates a base box and two capsule links along +x, hinged about z; returns the body id."""
    box = p.createCollisionShape(p.GEOM_BOX, halfExtents=(0.2, 0.2, 0.2), physicsClientId=client)
    capsule = p.createCollisionShape(
        p.GEOM_CAPSULE, radius=0.05, height=0.8, physicsClientId=client
    )
    return p.createMultiBody(
        baseMass=2.0,
        baseCollisionShapeIndex=box,
        basePosition=(0.0, 0.0, 1.0),
        linkMasses=(1.0, 1.0),
        linkCollisionShapeIndices=(capsule, capsule),
        linkVisualShapeIndices=(-1, -1),
        linkPositions=((1.0, 0.0, 0.0), (1.0, 0.0, 0.0)),
        linkOrientations=((0, 0, 0, 1), (0, 0, 0, 1)),
        linkInertialFramePositions=((0, 0, 0), (0, 0, 0)),
        linkInertialFrameOrientations=((0, 0, 0, 1), (0, 0, 0, 1)),
        linkParentIndices=(0, 1),
        linkJointTypes=(p.JOINT_REVOLUTE, p.JOINT_REVOLUTE),
        linkJointAxis=((0, 0, 1), (0, 0, 1)),
        physicsClientId=client,
    )


def main() -> int:
    """Runs the demo and prints the observation block by block."""
    client = p.connect(p.DIRECT)
    try:
        arm = build_arm(client)
        p.resetJointState(arm, 0, 0.5, targetVelocity=1.0, physicsClientId=client)
        p.resetJointState(arm, 1, -0.25, targetVelocity=-2.0, physicsClientId=client)
        settings = PhysicsSensorSettings(
            model_space_translations=True,
            model_space_rotations=True,
            local_space_linear_velocity=True,
        )
        sensor = PhysicsBodySensor.from_articulation(arm, client=client, settings=settings)
        observation = sensor.observe()
        print(f"{sensor.name}: {observation.shape[0]} floats ({observation.dtype})")
        np.set_printoptions(precision=4, suppress=True)
        for block, where in sensor.observation_layout.items():
            print(f"  {block:<24} [{where.start:>2}:{where.stop:>2}] {observation[where]}")
    finally:
        p.disconnect(physicsClientId=client)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
