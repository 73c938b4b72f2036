"""Cost of a PhysicsBodySensor update + write against the batched PyBullet read it rests on.

Run: ``python benchmarks/sensor.py``. A 16-body articulation (a base and 15 capsule links in a
branching tree, revolute joints, moving) is observed with all eight flags on. Printed, all
measured in this one run (best of several repeats, microseconds per call):

* the batched state read alone: ``getBasePositionAndOrientation`` + ``getBaseVelocity`` +
  one ``getLinkStates(..., computeLinkVelocity=1, computeForwardKinematics=1)``, exactly the
  calls the extractor makes;
* a per-body loop of single ``getLinkState`` reads, for reference;
* ``sensor.update(); sensor.write(buffer, 0)``;
* and the ratios to the batched read.
"""

from __future__ import annotations

import argparse
import timeit

import attrs
import numpy as np
import pybullet as p

from physbody import PhysicsBodySensor, PhysicsSensorSettings

NUM_BODIES = 16


def build_tree(client: int, num_bodies: int) -> int:
    """A moving multibody: base + (num_bodies - 1) links, each hinged to an earlier one."""
    capsule = p.createCollisionShape(
        p.GEOM_CAPSULE, radius=0.05, height=0.3, physicsClientId=client
    )
    links = num_bodies - 1
    parents = [0] + [1 + (i - 1) // 2 for i in range(1, links)]  # a binary tree
    body = p.createMultiBody(
        baseMass=2.0,
        baseCollisionShapeIndex=capsule,
        basePosition=(0.0, 0.0, 2.0),
        linkMasses=[0.5] * links,
        linkCollisionShapeIndices=[capsule] * links,
        linkVisualShapeIndices=[-1] * links,
        linkPositions=[(0.2, 0.1 * (i % 3 - 1), 0.05) for i in range(links)],
        linkOrientations=[(0, 0, 0, 1)] * links,
        linkInertialFramePositions=[(0, 0, 0)] * links,
        linkInertialFrameOrientations=[(0, 0, 0, 1)] * links,
        linkParentIndices=parents,
        linkJointTypes=[p.JOINT_REVOLUTE] * links,
        linkJointAxis=[(0, 0, 1) if i % 2 else (0, 1, 0) for i in range(links)],
        physicsClientId=client,
    )
    rng = np.random.default_rng(0)
    for joint in range(links):
        p.resetJointState(
            body, joint, rng.uniform(-1, 1), rng.uniform(-2, 2), physicsClientId=client
        )
    p.resetBaseVelocity(body, (0.3, -0.2, 0.1), (0.5, 0.1, -0.4), physicsClientId=client)
    return body


def best_microseconds(function, number: int, repeat: int) -> float:
    """Best mean time per call over ``repeat`` runs of ``number`` calls, in microseconds."""
    return min(timeit.repeat(function, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    """Measures and prints the sensor's cost and its ratio to the raw batched read."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000, help="calls per repeat")
    parser.add_argument("--repeat", type=int, default=7, help="repeats (the best is kept)")
    args = parser.parse_args()

    client = p.connect(p.DIRECT)
    body = build_tree(client, NUM_BODIES)
    links = list(range(p.getNumJoints(body, physicsClientId=client)))
    every_flag = {field.name: True for field in attrs.fields(PhysicsSensorSettings)}
    settings = PhysicsSensorSettings(**every_flag)
    sensor = PhysicsBodySensor.from_articulation(body, client=client, settings=settings)
    buffer = np.empty(sensor.observation_shape, dtype=np.float32)

    def batched_read() -> None:
        p.getBasePositionAndOrientation(body, physicsClientId=client)
        p.getBaseVelocity(body, physicsClientId=client)
        p.getLinkStates(
            body, links, computeLinkVelocity=1, computeForwardKinematics=1, physicsClientId=client
        )

    def per_body_reads() -> None:
        p.getBasePositionAndOrientation(body, physicsClientId=client)
        p.getBaseVelocity(body, physicsClientId=client)
        for link in links:
            p.getLinkState(
                body,
                link,
                computeLinkVelocity=1,
                computeForwardKinematics=1,
                physicsClientId=client,
            )

    def sensor_step() -> None:
        sensor.update()
        sensor.write(buffer, 0)

    number, repeat = args.number, args.repeat
    read = best_microseconds(batched_read, number, repeat)
    loop = best_microseconds(per_body_reads, number, repeat)
    observe = best_microseconds(sensor_step, number, repeat)
    update_only = best_microseconds(sensor.update, number, repeat)
    p.disconnect(physicsClientId=client)

    print(f"bodies: {NUM_BODIES}, flags: all 8, floats written: {buffer.size}")
    print(f"batched state read (getLinkStates + base):   {read:8.1f} us")
    print(f"per-body single reads (reference):           {loop:8.1f} us  ({loop / read:.2f}x read)")
    print(f"sensor.update() alone:                       {update_only:8.1f} us")
    print(f"sensor.update() + sensor.write():            {observe:8.1f} us")
    print(f"ratio update+write / batched read:           {observe / read:8.2f}x  (goal <= 2.0)")


if __name__ == "__main__":
    main()
