"""A batch sensor over N copies of one multibody against N separate sensors: exactly equal."""

from __future__ import annotations

import attrs
import numpy as np
import pybullet as p
import pytest

from physbody import ArticulationBatchPoseExtractor, PhysicsBodySensor, PhysicsSensorSettings

EVERY_FLAG = PhysicsSensorSettings(
    **{field.name: True for field in attrs.fields(PhysicsSensorSettings)}
)


def _tree(client: int, x: float, seed: int) -> int:
    """A moving 6-body multibody (base + 5 hinged links), its joints and base set from seed."""
    capsule = p.createCollisionShape(
        p.GEOM_CAPSULE, radius=0.05, height=0.3, physicsClientId=client
    )
    links = 5
    body = p.createMultiBody(
        baseMass=2.0,
        baseCollisionShapeIndex=capsule,
        basePosition=(x, 0.0, 2.0),
        baseInertialFramePosition=(0.05, 0.0, 0.02),  # a COM off the link frame
        linkMasses=[0.5] * links,
        linkCollisionShapeIndices=[capsule] * links,
        linkVisualShapeIndices=[-1] * links,
        linkPositions=[(0.2, 0.1 * (i % 3 - 1), 0.05) for i in range(links)],
        linkOrientations=[(0, 0, 0, 1)] * links,
        linkInertialFramePositions=[(0, 0, 0.03)] * links,
        linkInertialFrameOrientations=[(0, 0, 0, 1)] * links,
        linkParentIndices=[0, 1, 1, 2, 3],
        linkJointTypes=[p.JOINT_REVOLUTE] * links,
        linkJointAxis=[(0, 0, 1) if i % 2 else (0, 1, 0) for i in range(links)],
        physicsClientId=client,
    )
    rng = np.random.default_rng(seed)
    for joint in range(links):
        p.resetJointState(
            body, joint, rng.uniform(-1, 1), rng.uniform(-2, 2), physicsClientId=client
        )
    p.resetBaseVelocity(body, rng.normal(size=3), rng.normal(size=3), physicsClientId=client)
    return body


@pytest.fixture
def world():
    client = p.connect(p.DIRECT)
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    bodies = [_tree(client, 3.0 * k, seed=k) for k in range(4)]
    yield client, bodies
    p.disconnect(physicsClientId=client)


@pytest.mark.parametrize(
    "settings",
    [EVERY_FLAG, PhysicsSensorSettings(model_space_translations=True, local_space_rotations=True)],
)
def test_batch_rows_equal_separate_sensors(world, settings):
    client, bodies = world
    # An observed subset (base, links 1 and 3): the skipped links are bridged to ancestors.
    names = [p.getBodyInfo(bodies[0], physicsClientId=client)[0].decode()]
    names += [p.getJointInfo(bodies[0], j, physicsClientId=client)[12].decode() for j in (1, 3)]
    roots = np.random.default_rng(0).normal(size=(4, 3))
    yaws = np.linspace(0.0, 2.0, 4)
    rotations = np.stack([np.zeros(4), np.zeros(4), np.sin(yaws / 2), np.cos(yaws / 2)], axis=1)
    batch = PhysicsBodySensor.from_articulations(
        bodies, client=client, settings=settings, link_names=names, virtual_root=(roots, rotations)
    )
    singles = [
        PhysicsBodySensor.from_articulation(
            body,
            client=client,
            settings=settings,
            link_names=names,
            virtual_root=(roots[k], rotations[k]),
        )  # fmt: skip
        for k, body in enumerate(bodies)
    ]
    assert batch.observation_space == singles[0].observation_space
    assert batch.observation_layout == singles[0].observation_layout
    for _ in range(3):
        for _ in range(10):
            p.stepSimulation(physicsClientId=client)
        rows = batch.observe()
        assert rows.shape == (4, singles[0].observation_shape[0])
        for k, single in enumerate(singles):
            np.testing.assert_array_equal(rows[k], single.observe())


def test_subset_updates_touch_only_their_rows(world):
    client, bodies = world
    batch = PhysicsBodySensor.from_articulations(bodies, client=client, settings=EVERY_FLAG)
    batch.update()
    before = np.zeros((4, batch.observation_shape[0]), dtype=np.float32)
    batch.write(before, 0)
    for _ in range(20):
        p.stepSimulation(physicsClientId=client)
    trees = np.array([1, 3])
    batch.update(trees)
    after = before.copy()
    assert batch.write_rows(after, trees, 0) == batch.observation_shape[0]
    np.testing.assert_array_equal(after[[0, 2]], before[[0, 2]])
    single = PhysicsBodySensor.from_articulation(bodies[3], client=client, settings=EVERY_FLAG)
    np.testing.assert_array_equal(after[3], single.observe())
    assert not np.array_equal(after[1], before[1])


def test_batch_errors_name_what_is_wrong(world):
    client, bodies = world
    other = p.createMultiBody(baseMass=1.0, physicsClientId=client)
    with pytest.raises(ValueError, match="copies of one multibody"):
        ArticulationBatchPoseExtractor([bodies[0], other], client=client)
    with pytest.raises(ValueError, match="at least one"):
        ArticulationBatchPoseExtractor([], client=client)
    with pytest.raises(ValueError, match="one per body"):
        ArticulationBatchPoseExtractor(bodies, client=[client, client])
    batch = PhysicsBodySensor.from_articulations(bodies, client=client)
    with pytest.raises(ValueError, match=r"\(4, m\) buffer"):
        batch.write(np.zeros(100, dtype=np.float32), 0)
    with pytest.raises(RuntimeError, match="without a virtual root"):
        batch.extractor.set_virtual_root((0, 0, 0), (0, 0, 0, 1))
    single = ArticulationBatchPoseExtractor(
        bodies, client=client, virtual_root=((0, 0, 0), (0, 0, 0, 1))
    )
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(2, 4\)"):
        single.set_virtual_root(np.zeros((3, 3)), np.zeros((3, 4)), trees=np.array([0, 1]))
