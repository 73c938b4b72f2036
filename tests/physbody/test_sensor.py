"""PhysicsBodySensor: the C# sensor tests' expected arrays, layout, buffer contract, errors."""

from __future__ import annotations

import attrs
import numpy as np
import pybullet as p
import pytest
from gymnasium import spaces

from physbody import BodyStates, PhysicsBodySensor, PhysicsSensorSettings, PoseExtractor
from physbody.testing import SENTINEL, compare_observation

# The settings of RigidBodySensorTests.TestBodiesWithJoint.
JOINT_TEST_SETTINGS = PhysicsSensorSettings(
    model_space_translations=True,
    local_space_translations=True,
    local_space_linear_velocity=True,
)
# The settings of TestSingleRigidbody / TestSingleBody.
SINGLE_BODY_SETTINGS = PhysicsSensorSettings(
    model_space_linear_velocity=True,
    local_space_translations=True,
    local_space_rotations=True,
)
ALL_FLAGS = PhysicsSensorSettings(**{f.name: True for f in attrs.fields(PhysicsSensorSettings)})

# #4192-era TestBodiesWithJoint: model positions of root, middle, leaf, then per body
# [local position, local linear velocity]; the leaf is 13.37 + 4.2 = 17.57 along x.
SEED_BODIES_WITH_JOINT = [
    0, 0, 0, 13.37, 0, 0, 17.57, 0, 0,
    0, 0, 0, 0, 0, 0,
    13.37, 0, 0, -1, 1, 0,
    4.2, 0, 0, 0, -1, 1,
]  # fmt: skip


class FixedStates(PoseExtractor):
    """A fake extractor holding fixed world states (dm_control's FakePhysics idea)."""

    def __init__(self, parents, states: BodyStates, **kwargs) -> None:
        super().__init__(parents, **kwargs)
        self.states = states

    def read_world_state(self) -> BodyStates:
        return self.states


def three_body_states() -> BodyStates:
    """Root at the origin moving (1,0,0); middle at 13.37 moving (0,1,0); leaf 4.2 further."""
    return BodyStates(
        np.array([[0, 0, 0], [13.37, 0, 0], [17.57, 0, 0]], dtype=float),
        np.tile([0.0, 0.0, 0.0, 1.0], (3, 1)),
        np.eye(3)[[0, 1, 2]],
        np.zeros((3, 3)),
    )


def test_seed_bodies_with_joint_fake_extractor():
    sensor = PhysicsBodySensor(FixedStates([-1, 0, 1], three_body_states()), JOINT_TEST_SETTINGS)
    assert sensor.observation_shape == (27,)
    ok, message = compare_observation(sensor, SEED_BODIES_WITH_JOINT)
    assert ok, message


def test_virtual_root_is_not_observed_and_frames_follow_it():
    # Release 6's TestBodiesWithJoint: a virtual root at the origin; the root's local
    # velocity is now relative to the virtual root (zero velocity), so it reads (1, 0, 0).
    extractor = FixedStates([-1, 0, 1], three_body_states(), virtual_root=((0, 0, 0), (0, 0, 0, 1)))
    sensor = PhysicsBodySensor(extractor, JOINT_TEST_SETTINGS)
    expected = [
        0, 0, 0, 13.37, 0, 0, 17.57, 0, 0,
        0, 0, 0, 1, 0, 0,
        13.37, 0, 0, -1, 1, 0,
        4.2, 0, 0, 0, -1, 1,
    ]  # fmt: skip
    ok, message = compare_observation(sensor, expected)
    assert ok, message
    # Turn the virtual root 90 degrees about z and move it: model space is its frame.
    half = np.sqrt(0.5)
    extractor.set_virtual_root((1.0, 0.0, 0.0), (0.0, 0.0, half, half))
    obs = sensor.observe()
    # Offsets (-1, 0, 0), (12.37, 0, 0), (16.57, 0, 0) seen from a frame turned +90 deg.
    np.testing.assert_allclose(obs[:9], [0, 1, 0, 0, -12.37, 0, 0, -16.57, 0], atol=1e-5)


def test_single_body_seed_layout():
    # #4192-era TestSingleRigidbody: the root is observed: model velocity 0, local identity.
    states = BodyStates(
        np.array([[1.0, 2.0, 3.0]]),
        np.array([[0.0, 0.0, 0.6, 0.8]]),
        np.ones((1, 3)),
        np.ones((1, 3)),
    )
    sensor = PhysicsBodySensor(FixedStates([-1], states), SINGLE_BODY_SETTINGS)
    ok, message = compare_observation(sensor, [0, 0, 0, 0, 0, 0, 0, 0, 0, 1])
    assert ok, message


def test_empty_extractor_gives_empty_observation():
    empty = BodyStates(np.zeros((0, 3)), np.zeros((0, 4)), np.zeros((0, 3)), np.zeros((0, 3)))
    sensor = PhysicsBodySensor(FixedStates([], empty), ALL_FLAGS)
    assert sensor.observation_shape == (0,)
    assert sensor.observe().shape == (0,)
    assert sensor.write(np.zeros(4, dtype=np.float32), 4) == 0


def test_layout_covers_the_box_in_write_order():
    extractor = FixedStates([-1, 0, 1], three_body_states(), body_names=["root", "mid", "leaf"])
    sensor = PhysicsBodySensor(extractor, ALL_FLAGS, name="arm")
    assert sensor.name == "arm"
    per_body = 13
    assert sensor.observation_shape == (ALL_FLAGS.transform_size(3),) == (6 * per_body,)
    layout = sensor.observation_layout
    assert list(layout) == [
        "model_space/root", "model_space/mid", "model_space/leaf",
        "local_space/root", "local_space/mid", "local_space/leaf",
    ]  # fmt: skip
    covered = np.zeros(sensor.observation_shape[0], dtype=int)
    for where in layout.values():
        covered[where] += 1
    assert np.all(covered == 1)
    obs = sensor.observe()
    # model_space/mid: translation, rotation, linear velocity, angular velocity, in that order.
    np.testing.assert_allclose(
        obs[layout["model_space/mid"]], [13.37, 0, 0, 0, 0, 0, 1, -1, 1, 0, 0, 0, 0], atol=1e-5
    )


def test_default_name_space_and_dtype():
    sensor = PhysicsBodySensor(
        FixedStates([-1, 0, 1], three_body_states(), body_names=["Body", "a", "b"])
    )
    assert sensor.name == "PhysicsBodySensor:Body"
    assert sensor.settings == PhysicsSensorSettings.default()
    big = np.finfo(np.float32).max
    bound = np.tile(np.array([big] * 3 + [1.0] * 4, dtype=np.float32), 3)
    assert sensor.observation_space == spaces.Box(-bound, bound, dtype=np.float32)
    obs = sensor.observe()
    assert obs.dtype == np.float32 and sensor.observation_space.contains(obs)


def test_compare_observation_reports_first_mismatch():
    sensor = PhysicsBodySensor(FixedStates([-1, 0, 1], three_body_states()), JOINT_TEST_SETTINGS)
    wrong = list(SEED_BODIES_WITH_JOINT)
    wrong[22] = 5.0
    ok, message = compare_observation(sensor, wrong)
    assert not ok
    assert "index 22" in message and "expected 5.0" in message and "got 0.0" in message
    ok, message = compare_observation(sensor, wrong[:-1])
    assert not ok and "(27,)" in message


def test_compare_observation_catches_stray_writes():
    class Sloppy(PhysicsBodySensor):
        def write(self, buffer, offset=0):
            written = super().write(buffer, offset)
            buffer[offset + written] = 0.0  # one float past its region
            return written

    sensor = Sloppy(FixedStates([-1, 0, 1], three_body_states()), JOINT_TEST_SETTINGS)
    ok, message = compare_observation(sensor, SEED_BODIES_WITH_JOINT)
    assert not ok and "outside its region" in message


def test_write_at_offset_leaves_the_rest_untouched():
    sensor = PhysicsBodySensor(FixedStates([-1, 0, 1], three_body_states()), JOINT_TEST_SETTINGS)
    sensor.update()
    buffer = np.full(40, SENTINEL, dtype=np.float32)
    assert sensor.write(buffer, 10) == 27
    assert np.all(buffer[:10] == SENTINEL) and np.all(buffer[37:] == SENTINEL)
    np.testing.assert_allclose(buffer[10:37], SEED_BODIES_WITH_JOINT, atol=1e-5)


@pytest.mark.parametrize(
    ("buffer", "offset", "error", "match"),
    [
        (np.zeros(26, dtype=np.float32), 0, ValueError, "buffer has 26"),
        (np.zeros(30, dtype=np.float32), 4, ValueError, "offset 4"),
        (np.zeros(30, dtype=np.float32), -1, ValueError, "offset -1"),
        (np.zeros((3, 9), dtype=np.float32), 0, ValueError, r"shape \(3, 9\)"),
        (np.zeros(27, dtype=np.int32), 0, TypeError, "floating-point"),
        ([0.0] * 27, 0, TypeError, "list"),
        (np.zeros(27, dtype=np.float32), 1.5, TypeError, "1.5"),
    ],
)
def test_write_rejects_bad_buffers(buffer, offset, error, match):
    sensor = PhysicsBodySensor(FixedStates([-1, 0, 1], three_body_states()), JOINT_TEST_SETTINGS)
    sensor.update()
    with pytest.raises(error, match=match):
        sensor.write(buffer, offset)


def test_write_rejects_read_only_buffer():
    sensor = PhysicsBodySensor(FixedStates([-1, 0, 1], three_body_states()), JOINT_TEST_SETTINGS)
    buffer = np.zeros(27, dtype=np.float32)
    buffer.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        sensor.write(buffer, 0)


def test_constructor_rejects_wrong_types():
    extractor = FixedStates([-1, 0, 1], three_body_states())
    with pytest.raises(TypeError, match="PoseExtractor"):
        PhysicsBodySensor("not an extractor")
    with pytest.raises(TypeError, match="PhysicsSensorSettings"):
        PhysicsBodySensor(extractor, {"model_space_translations": True})
    with pytest.raises(TypeError, match="name"):
        PhysicsBodySensor(extractor, name=3)


# ----------------------------------------------------------------------------- real bodies
@pytest.fixture
def client():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(physicsClientId=cid)


def _sphere(client: int, position, velocity=(0.0, 0.0, 0.0)) -> int:
    shape = p.createCollisionShape(p.GEOM_SPHERE, radius=0.1, physicsClientId=client)
    body = p.createMultiBody(
        baseMass=1.0,
        baseCollisionShapeIndex=shape,
        basePosition=position,
        physicsClientId=client,
    )
    p.resetBaseVelocity(body, linearVelocity=velocity, physicsClientId=client)
    return body


def _fix(client: int, parent: int, child: int, offset) -> None:
    p.createConstraint(
        parent, -1, child, -1, p.JOINT_FIXED, (0, 0, 0), offset, (0, 0, 0),
        physicsClientId=client,
    )  # fmt: skip


def test_rigid_body_sensor_null_root_is_empty(client):
    sensor = PhysicsBodySensor.from_rigid_bodies(None, client=client, settings=ALL_FLAGS)
    assert sensor.observation_shape == (0,)
    ok, message = compare_observation(sensor, [])
    assert ok, message


def test_rigid_body_sensor_single_body(client):
    body = _sphere(client, (3.0, -2.0, 1.0), velocity=(4.0, 5.0, 6.0))
    sensor = PhysicsBodySensor.from_rigid_bodies(body, client=client, settings=SINGLE_BODY_SETTINGS)
    ok, message = compare_observation(sensor, [0, 0, 0, 0, 0, 0, 0, 0, 0, 1])
    assert ok, message


def test_rigid_body_sensor_bodies_with_joint(client):
    root = _sphere(client, (0.0, 0.0, 0.0), velocity=(1.0, 0.0, 0.0))
    middle = _sphere(client, (13.37, 0.0, 0.0), velocity=(0.0, 1.0, 0.0))
    leaf = _sphere(client, (17.57, 0.0, 0.0), velocity=(0.0, 0.0, 1.0))
    _fix(client, root, middle, (13.37, 0, 0))
    _fix(client, middle, leaf, (4.2, 0, 0))
    sensor = PhysicsBodySensor.from_rigid_bodies(root, client=client, settings=JOINT_TEST_SETTINGS)
    assert sensor.observation_shape == (27,)
    ok, message = compare_observation(sensor, SEED_BODIES_WITH_JOINT)
    assert ok, message


def _arm(client: int) -> int:
    """Base at the origin; link 1 at (13.37,0,0) on a z hinge; link 2 4.2 further on an x slider."""
    shape = p.createCollisionShape(p.GEOM_SPHERE, radius=0.1, physicsClientId=client)
    return p.createMultiBody(
        baseMass=1.0,
        baseCollisionShapeIndex=shape,
        linkMasses=(1.0, 1.0),
        linkCollisionShapeIndices=(shape, shape),
        linkVisualShapeIndices=(-1, -1),
        linkPositions=((13.37, 0, 0), (4.2, 0, 0)),
        linkOrientations=((0, 0, 0, 1), (0, 0, 0, 1)),
        linkInertialFramePositions=((0, 0, 0), (0, 0, 0)),
        linkInertialFrameOrientations=((0, 0, 0, 1), (0, 0, 0, 1)),
        linkParentIndices=(0, 1),
        linkJointTypes=(p.JOINT_REVOLUTE, p.JOINT_PRISMATIC),
        linkJointAxis=((0, 0, 1), (1, 0, 0)),
        physicsClientId=client,
    )


def test_articulation_sensor_single_body(client):
    body = _sphere(client, (3.0, -2.0, 1.0), velocity=(4.0, 5.0, 6.0))
    sensor = PhysicsBodySensor.from_articulation(body, client=client, settings=SINGLE_BODY_SETTINGS)
    assert sensor.name.startswith("ArticulationBodySensor:")
    ok, message = compare_observation(sensor, [0, 0, 0, 0, 0, 0, 0, 0, 0, 1])
    assert ok, message


def test_articulation_sensor_bodies_with_joint(client):
    arm = _arm(client)
    p.resetBaseVelocity(arm, linearVelocity=(1.0, 0.0, 0.0), physicsClientId=client)
    p.resetJointState(arm, 0, 0.0, targetVelocity=0.5, physicsClientId=client)
    p.resetJointState(arm, 1, 0.0, targetVelocity=2.0, physicsClientId=client)
    settings = attrs.evolve(JOINT_TEST_SETTINGS, local_space_angular_velocity=True)
    sensor = PhysicsBodySensor.from_articulation(arm, client=client, settings=settings)
    # By hand: the hinge spins link 1 at 0.5 rad/s about z, so link 2's origin (4.2 m out)
    # moves at 0.5 * 4.2 = 2.1 m/s along y relative to link 1, plus the slider's 2 m/s along x.
    expected = [
        0, 0, 0, 13.37, 0, 0, 17.57, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0,
        13.37, 0, 0, 0, 0, 0, 0, 0, 0.5,
        4.2, 0, 0, 2.0, 2.1, 0, 0, 0, 0,
    ]  # fmt: skip
    ok, message = compare_observation(sensor, expected)
    assert ok, message
