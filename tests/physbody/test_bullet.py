"""ArticulationPoseExtractor and RigidBodyPoseExtractor on real PyBullet bodies (p.DIRECT).

ML-Agents' RigidBodyPoseExtractorTests and ArticulationBodyPoseExtractorTests (spec section
3.5) come first, then link frame vs centre of mass, an independent SciPy oracle on random
trees, the call contract (one batched read, the client on every call) and bad input.
"""

from __future__ import annotations

import re

import numpy as np
import pybullet as p
import pytest
from scipy.spatial.transform import Rotation

from physbody import bullet
from physbody.bullet import ArticulationPoseExtractor, RigidBodyPoseExtractor

IDENTITY = (0.0, 0.0, 0.0, 1.0)


@pytest.fixture
def client():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(physicsClientId=cid)


def box(
    client: int,
    position=(0.0, 0.0, 0.0),
    orientation=IDENTITY,
    *,
    mass: float = 1.0,
    inertial_position=(0.0, 0.0, 0.0),
    inertial_orientation=IDENTITY,
) -> int:
    """A single-link body (a multibody without links); ``position`` is its link frame."""
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.1, 0.2, 0.3], physicsClientId=client)
    return p.createMultiBody(
        mass,
        shape,
        basePosition=position,
        baseOrientation=orientation,
        baseInertialFramePosition=inertial_position,
        baseInertialFrameOrientation=inertial_orientation,
        physicsClientId=client,
    )


def join(client: int, parent: int, child: int, joint_type: int = p.JOINT_POINT2POINT) -> int:
    """A constraint from ``parent`` to ``child`` (a Joint whose connectedBody is parent)."""
    return p.createConstraint(
        parent, -1, child, -1, joint_type, [0, 0, 0], [0, 0, 0], [0, 0, 0], physicsClientId=client
    )


def assert_quat_close(actual, expected, atol=1e-6):
    actual = np.asarray(actual, dtype=float).reshape(-1, 4)
    expected = np.asarray(expected, dtype=float).reshape(-1, 4)
    diff = np.minimum(
        np.abs(actual - expected).max(axis=-1), np.abs(actual + expected).max(axis=-1)
    )
    assert np.all(diff <= atol), f"max difference {diff.max()}:\n{actual}\n{expected}"


def yaw(degrees: float) -> np.ndarray:
    """A rotation about the vertical axis (z in PyBullet; Unity's y)."""
    return Rotation.from_rotvec([0.0, 0.0, np.deg2rad(degrees)]).as_quat()


def inertial(xyz="0 0 0", rpy="0 0 0", mass=1.0) -> str:
    return (
        f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
    )


def joint(name, parent, child, kind="revolute", xyz="0 0 0", axis="0 0 1") -> str:
    limit = '<limit lower="-3" upper="3" effort="10" velocity="10"/>' if kind != "fixed" else ""
    return (
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{xyz}"/><axis xyz="{axis}"/>{limit}</joint>'
    )


def load_urdf(client, tmp_path, name, body, **kwargs) -> int:
    path = tmp_path / f"{name}.urdf"
    path.write_text(f'<?xml version="1.0"?><robot name="{name}">{body}</robot>')
    return p.loadURDF(str(path), physicsClientId=client, **kwargs)


def leg_urdf(client, tmp_path) -> int:
    """A leg: base -> hip_x (massless helper) -> hip -> knee -> foot, and base -> arm."""
    links = "".join(
        f'<link name="{name}">{inertial(mass=mass)}</link>'
        for name, mass in [("base", 2.0), ("hip_x", 0.0), ("hip", 1.0), ("knee", 1.0)]
    )
    links += f'<link name="foot">{inertial()}</link><link name="arm">{inertial()}</link>'
    joints = (
        joint("j_hip_x", "base", "hip_x", axis="1 0 0", xyz="0 0 -0.2")
        + joint("j_hip", "hip_x", "hip", axis="0 1 0")
        + joint("j_knee", "hip", "knee", axis="0 1 0", xyz="0 0 -0.4")
        + joint("j_foot", "knee", "foot", kind="fixed", xyz="0 0 -0.4")
        + joint("j_arm", "base", "arm", xyz="0.3 0 0")
    )
    return load_urdf(client, tmp_path, "leg", links + joints)


# ============================================ ML-Agents RigidBodyPoseExtractorTests (R4-R6)
def test_rigid_null_root(client):
    extractor = RigidBodyPoseExtractor(None, client=client)
    assert extractor.num_poses == 0
    extractor.update_model_space_poses()
    extractor.update_local_space_poses()
    assert extractor.body_ids == ()
    assert extractor.read_world_state().position.shape == (0, 3)
    # A virtual root alone does not make a pose (ML-Agents: no bodies -> empty extractor).
    assert (
        RigidBodyPoseExtractor(None, client=client, virtual_root=([0, 0, 0], IDENTITY)).num_poses
        == 0
    )


def test_rigid_single_body(client, tmp_path):
    body = load_urdf(client, tmp_path, "single", f'<link name="torso">{inertial()}</link>')
    extractor = RigidBodyPoseExtractor(body, client=client)
    assert extractor.num_poses == 1
    assert extractor.body_names == ("torso",)
    assert extractor.root_name == "torso"
    np.testing.assert_array_equal(extractor.parent_indices, [-1])


def test_rigid_two_bodies(client):
    rb1, rb2 = box(client), box(client, (0.0, 0.0, 1.0))
    join(client, rb1, rb2, p.JOINT_FIXED)
    extractor = RigidBodyPoseExtractor(rb1, client=client)
    assert extractor.num_poses == 2
    np.testing.assert_array_equal(extractor.parent_indices, [-1, 0])
    assert extractor.body_ids == (rb1, rb2)


def set_rb1_state(client, rb1):
    """TestTwoBodies: rb1 at (1, 0, 0), Euler(0, 13.37, 0) (a yaw), velocity (2, 0, 0)."""
    p.resetBasePositionAndOrientation(rb1, [1.0, 0.0, 0.0], yaw(13.37), physicsClientId=client)
    p.resetBaseVelocity(rb1, [2.0, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)


def test_rigid_two_bodies_pose_and_velocity(client):
    rb1, rb2 = box(client), box(client, (0.0, 0.0, 1.0))
    join(client, rb1, rb2)
    extractor = RigidBodyPoseExtractor(rb1, client=client)
    set_rb1_state(client, rb1)
    extractor.update()
    world = extractor.world_states
    np.testing.assert_allclose(world.position[0], [1.0, 0.0, 0.0], atol=1e-12)
    assert_quat_close(world.rotation[0], yaw(13.37), atol=1e-12)
    np.testing.assert_allclose(world.linear_velocity[0], [2.0, 0.0, 0.0], atol=1e-12)
    # The root is observed (no virtual root) and is the model-space origin.
    np.testing.assert_array_equal(extractor.pose_enabled, [True, True])
    np.testing.assert_allclose(
        extractor.model_positions[1], Rotation.from_quat(yaw(13.37)).inv().apply([-1, 0, 1])
    )


def test_rigid_two_bodies_virtual_root(client):
    rb1, rb2 = box(client), box(client, (0.0, 0.0, 1.0))
    join(client, rb1, rb2)
    root_pose = ([0.0, 0.0, 2.0], yaw(42.0))  # Unity (0, 2, 0), Euler(0, 42, 0): z-up here
    extractor = RigidBodyPoseExtractor(rb1, client=client, virtual_root=root_pose)
    assert extractor.num_poses == 3
    assert extractor.get_parent_index(0) == -1
    assert extractor.get_parent_index(1) == 0
    assert extractor.get_parent_index(2) == 1
    np.testing.assert_array_equal(extractor.pose_enabled, [False, True, True])
    set_rb1_state(client, rb1)
    extractor.update()
    world = extractor.world_states
    np.testing.assert_allclose(world.position[0], [0.0, 0.0, 2.0])
    assert_quat_close(world.rotation[0], yaw(42.0), atol=1e-12)
    np.testing.assert_array_equal(world.linear_velocity[0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(world.position[1], [1.0, 0.0, 0.0], atol=1e-12)
    assert_quat_close(world.rotation[1], yaw(13.37), atol=1e-12)
    np.testing.assert_allclose(world.linear_velocity[1], [2.0, 0.0, 0.0], atol=1e-12)
    inv = Rotation.from_quat(yaw(42.0)).inv()
    np.testing.assert_allclose(extractor.model_positions[1], inv.apply([1.0, 0.0, -2.0]))
    np.testing.assert_allclose(extractor.model_linear_velocities[1], inv.apply([2.0, 0, 0]))
    assert_quat_close(extractor.model_rotations[1], yaw(13.37 - 42.0), atol=1e-12)


# ============================================ ML-Agents ArticulationBodyPoseExtractorTests
def test_articulation_null_root(client):
    extractor = ArticulationPoseExtractor(None, client=client)
    assert extractor.num_poses == 0
    extractor.update()
    assert extractor.body_id is None
    assert extractor.link_indices == ()
    assert extractor.read_world_state().rotation.shape == (0, 4)


def test_articulation_single_body(client, tmp_path):
    body = load_urdf(client, tmp_path, "single", f'<link name="torso">{inertial()}</link>')
    extractor = ArticulationPoseExtractor(body, client=client)
    assert extractor.num_poses == 1
    assert extractor.body_names == ("torso",)
    assert extractor.link_indices == (-1,)
    extractor.update()
    np.testing.assert_allclose(extractor.world_states.position, [[0.0, 0.0, 0.0]])


def test_articulation_two_bodies(client, tmp_path):
    body = load_urdf(
        client,
        tmp_path,
        "two",
        f'<link name="root">{inertial()}</link><link name="child">{inertial()}</link>'
        + joint("j", "root", "child", xyz="13.37 0 0"),
    )
    extractor = ArticulationPoseExtractor(body, client=client)
    assert extractor.num_poses == 2
    np.testing.assert_array_equal(extractor.parent_indices, [-1, 0])
    assert extractor.body_names == ("root", "child")
    assert extractor.root_name == "root"
    extractor.update()
    np.testing.assert_allclose(extractor.model_positions[1], [13.37, 0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(extractor.local_positions[1], [13.37, 0.0, 0.0], atol=1e-6)


def test_articulation_virtual_root(client, tmp_path):
    body = leg_urdf(client, tmp_path)
    p.resetBasePositionAndOrientation(body, [1.0, 0.0, 0.0], yaw(13.37), physicsClientId=client)
    p.resetBaseVelocity(body, [2.0, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)
    extractor = ArticulationPoseExtractor(
        body, client=client, link_names=["base", "knee"], virtual_root=([0, 0, 2], yaw(42.0))
    )
    np.testing.assert_array_equal(extractor.parent_indices, [-1, 0, 1])
    assert extractor.body_names == ("virtual_root", "base", "knee")
    extractor.update()
    np.testing.assert_allclose(extractor.world_states.position[1], [1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(extractor.model_linear_velocities[1], yaw_inv_apply(42.0, [2, 0, 0]))


def yaw_inv_apply(degrees, v):
    return Rotation.from_quat(yaw(degrees)).inv().apply(v)


# ======================================================================== link selection
def test_articulation_names_and_tree(client, tmp_path):
    body = leg_urdf(client, tmp_path)
    extractor = ArticulationPoseExtractor(body, client=client)
    assert extractor.body_names == ("base", "hip_x", "hip", "knee", "foot", "arm")
    np.testing.assert_array_equal(extractor.parent_indices, [-1, 0, 1, 2, 3, 0])
    assert extractor.link_indices == (-1, 0, 1, 2, 3, 4)


@pytest.mark.parametrize(
    ("names", "parents", "links"),
    [
        (["base", "hip", "foot"], [-1, 0, 1], (-1, 1, 3)),  # hip_x and knee skipped
        (["base", "arm", "knee"], [-1, 0, 0], (-1, 4, 2)),
        (["base", "hip_x", "arm", "foot"], [-1, 0, 0, 1], (-1, 0, 4, 3)),
        (["base"], [-1], (-1,)),
    ],
)
def test_link_names_skip_unobserved_links(client, tmp_path, names, parents, links):
    body = leg_urdf(client, tmp_path)
    extractor = ArticulationPoseExtractor(body, client=client, link_names=names)
    np.testing.assert_array_equal(extractor.parent_indices, parents)
    assert extractor.body_names == tuple(names)
    assert extractor.link_indices == links
    extractor.update()
    full = ArticulationPoseExtractor(body, client=client)
    full.update()
    rows = [full.body_names.index(name) for name in names]
    np.testing.assert_allclose(extractor.world_states.position, full.world_states.position[rows])


def test_link_names_errors(client, tmp_path):
    body = leg_urdf(client, tmp_path)
    with pytest.raises(ValueError, match="'toe'") as info:
        ArticulationPoseExtractor(body, client=client, link_names=["base", "hip", "toe"])
    for name in ("base", "hip_x", "hip", "knee", "foot", "arm"):
        assert repr(name) in str(info.value)  # the available names are listed
    with pytest.raises(ValueError, match="'foot'.*'hip'"):
        ArticulationPoseExtractor(body, client=client, link_names=["base", "foot", "hip"])
    with pytest.raises(ValueError, match="start with the base's name 'base'"):
        ArticulationPoseExtractor(body, client=client, link_names=["hip", "base"])
    with pytest.raises(ValueError, match="start with the base's name"):
        ArticulationPoseExtractor(body, client=client, link_names=[])
    with pytest.raises(ValueError, match="repeats"):
        ArticulationPoseExtractor(body, client=client, link_names=["base", "hip", "hip"])
    with pytest.raises(TypeError, match="sequence of link names"):
        ArticulationPoseExtractor(body, client=client, link_names="base")


# ============================================================ rigid-body tree discovery
def test_rigid_tree_is_depth_first_in_constraint_order(client):
    a, b, c, d, e = (box(client, (i, 0.0, 0.0)) for i in range(5))
    join(client, a, c)
    p.createConstraint(
        a, -1, -1, -1, p.JOINT_FIXED, [0, 0, 0], [0, 0, 0], [0, 0, 0], physicsClientId=client
    )
    join(client, c, d)
    join(client, a, b)
    join(client, b, e, p.JOINT_FIXED)
    extractor = RigidBodyPoseExtractor(a, client=client)
    assert extractor.body_ids == (a, c, d, b, e)
    np.testing.assert_array_equal(extractor.parent_indices, [-1, 0, 1, 0, 3])
    # A subtree root sees only its subtree.
    assert RigidBodyPoseExtractor(b, client=client).body_ids == (b, e)
    # body_ids restricts the tree.
    restricted = RigidBodyPoseExtractor(a, client=client, body_ids={a, b, c})
    assert restricted.body_ids == (a, c, b)
    np.testing.assert_array_equal(restricted.parent_indices, [-1, 0, 0])


def test_rigid_loop_is_rejected(client):
    a, b, c = (box(client, (i, 0.0, 0.0)) for i in range(3))
    join(client, a, b)
    join(client, b, c)
    join(client, c, a)
    with pytest.raises(ValueError, match=f"body {a} is reached twice"):
        RigidBodyPoseExtractor(a, client=client)
    # Two constraints between the same pair also reach the child twice.
    d, e = box(client), box(client)
    join(client, d, e)
    join(client, d, e, p.JOINT_FIXED)
    with pytest.raises(ValueError, match=f"body {e} is reached twice"):
        RigidBodyPoseExtractor(d, client=client)


def test_rigid_body_ids_errors(client):
    a, b, c = (box(client, (i, 0.0, 0.0)) for i in range(3))
    join(client, a, b)
    with pytest.raises(ValueError, match=re.escape(f"bodies [{c}] in body_ids are not reached")):
        RigidBodyPoseExtractor(a, client=client, body_ids=[a, b, c])
    with pytest.raises(ValueError, match=f"root body {a} is not in body_ids"):
        RigidBodyPoseExtractor(a, client=client, body_ids=[b])
    with pytest.raises(ValueError, match="no body with id 77"):
        RigidBodyPoseExtractor(a, client=client, body_ids=[a, 77])


def test_rigid_rejects_bodies_with_links(client, tmp_path):
    root = box(client)
    arm = load_urdf(
        client,
        tmp_path,
        "arm",
        f'<link name="a">{inertial()}</link><link name="b">{inertial()}</link>'
        + joint("j", "a", "b"),
    )
    join(client, root, arm)
    with pytest.raises(ValueError, match="has 1 links.*ArticulationPoseExtractor"):
        RigidBodyPoseExtractor(root, client=client)


# ==================================================================== bad ids and clients
@pytest.mark.parametrize("cls", [ArticulationPoseExtractor, RigidBodyPoseExtractor])
def test_unknown_body_id(client, cls):
    box(client)
    with pytest.raises(ValueError, match="no body with id 42 in PyBullet physics client"):
        cls(42, client=client)
    with pytest.raises(TypeError, match="must be an int"):
        cls(0.0, client=client)
    with pytest.raises(TypeError, match="must be an int"):
        cls(True, client=client)


@pytest.mark.parametrize("cls", [ArticulationPoseExtractor, RigidBodyPoseExtractor])
def test_bad_client(client, cls):
    box(client)
    other = p.connect(p.DIRECT)
    p.disconnect(physicsClientId=other)
    with pytest.raises(ValueError, match=f"client {other} is not connected"):
        cls(0, client=other)
    with pytest.raises(TypeError, match="client must be"):
        cls(0, client="0")


@pytest.mark.parametrize("cls", [ArticulationPoseExtractor, RigidBodyPoseExtractor])
def test_removed_body_raises_on_read(client, cls):
    body = box(client)
    extractor = cls(body, client=client)
    p.removeBody(body, physicsClientId=client)
    with pytest.raises(RuntimeError, match=f"could not read .*{body}"):
        extractor.update()


@pytest.mark.parametrize("cls", [ArticulationPoseExtractor, RigidBodyPoseExtractor])
def test_bad_virtual_root(client, cls):
    body = box(client)
    with pytest.raises(ValueError, match="finite"):
        cls(body, client=client, virtual_root=([0.0, np.nan, 0.0], IDENTITY))
    with pytest.raises(ValueError, match=re.escape("(3,)")):
        cls(body, client=client, virtual_root=([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match="pair"):
        cls(body, client=client, virtual_root=np.zeros(7))


# ======================================================================= call contract
def test_articulation_reads_once_per_update(client, tmp_path, monkeypatch):
    body = leg_urdf(client, tmp_path)
    extractor = ArticulationPoseExtractor(body, client=client, link_names=["base", "hip", "arm"])
    base_only = ArticulationPoseExtractor(body, client=client, link_names=["base"])
    calls = []
    original = p.getLinkStates

    def counting(*args, **kwargs):
        calls.append((args, kwargs))
        return original(*args, **kwargs)

    monkeypatch.setattr(p, "getLinkStates", counting)
    extractor.update()
    assert len(calls) == 1
    args, kwargs = calls[0]
    assert list(args[1]) == [1, 4]
    assert kwargs["computeLinkVelocity"] == 1
    assert kwargs["computeForwardKinematics"] == 1
    assert kwargs["physicsClientId"] == client
    base_only.update()
    assert len(calls) == 1  # no links observed: no getLinkStates call


def test_every_pybullet_call_passes_the_client(client, tmp_path, monkeypatch):
    leg = leg_urdf(client, tmp_path)
    a, b = box(client), box(client)
    join(client, a, b)
    seen = []
    for name in dir(p):
        function = getattr(p, name)
        if name[0].islower() and callable(function) and not isinstance(function, type):

            def recorder(*args, _name=name, _function=function, **kwargs):
                seen.append((_name, kwargs.get("physicsClientId")))
                return _function(*args, **kwargs)

            monkeypatch.setattr(p, name, recorder)
    for extractor in (
        ArticulationPoseExtractor(leg, client=client, link_names=["base", "knee"]),
        RigidBodyPoseExtractor(a, client=client, body_ids=[a, b]),
    ):
        extractor.update()
    monkeypatch.undo()
    names = {name for name, _ in seen}
    assert {"getLinkStates", "getBaseVelocity", "getConstraintInfo", "getJointInfo"} <= names
    assert [name for name, cid in seen if cid != client] == []


def test_each_extractor_reads_its_own_client(client):
    other = p.connect(p.DIRECT)
    try:
        here = box(client, (1.0, 2.0, 3.0))
        there = box(other, (4.0, 5.0, 6.0))
        assert here == there == 0  # the same id in two worlds
        for cls in (ArticulationPoseExtractor, RigidBodyPoseExtractor):
            first, second = cls(here, client=client), cls(there, client=other)
            first.update()
            second.update()
            np.testing.assert_allclose(first.world_states.position[0], [1.0, 2.0, 3.0])
            np.testing.assert_allclose(second.world_states.position[0], [4.0, 5.0, 6.0])
            assert first.client == client and second.client == other
    finally:
        p.disconnect(physicsClientId=other)


# =================================================================== link frame vs COM
def link_origin_velocity(v_com, w, p_link, p_com):
    """Rigid-body kinematics: the velocity of the point p_link."""
    return np.asarray(v_com) + np.cross(w, np.asarray(p_link) - np.asarray(p_com))


def no_damping(client, body, links=(-1,)):
    for link in links:
        p.changeDynamics(body, link, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)


@pytest.mark.parametrize("cls", [ArticulationPoseExtractor, RigidBodyPoseExtractor])
def test_base_link_frame_not_com(client, cls):
    """A spinning base whose centre of mass is off its link origin (and rotated)."""
    p.setGravity(0, 0, 0, physicsClientId=client)
    dt = 1e-4
    p.setTimeStep(dt, physicsClientId=client)
    link_position = np.array([0.5, -1.0, 2.0])
    link_rotation = Rotation.from_euler("xyz", [0.3, -0.6, 1.1]).as_quat()
    body = box(
        client,
        link_position,
        link_rotation,
        inertial_position=(0.3, -0.2, 0.15),
        inertial_orientation=Rotation.from_euler("z", 0.7).as_quat(),
    )
    no_damping(client, body)
    v_com, w = np.array([0.4, -0.3, 0.2]), np.array([0.5, 2.0, -1.5])
    p.resetBaseVelocity(body, v_com.tolist(), w.tolist(), physicsClientId=client)
    extractor = cls(body, client=client)
    extractor.update()
    before = extractor.world_states
    p_com = np.array(p.getBasePositionAndOrientation(body, physicsClientId=client)[0])
    assert np.linalg.norm(p_com - link_position) > 0.3  # PyBullet reports the COM ...
    np.testing.assert_allclose(before.position[0], link_position, atol=1e-6)  # ... we, the link
    assert_quat_close(before.rotation[0], link_rotation, atol=1e-6)
    expected_v = link_origin_velocity(v_com, w, link_position, p_com)
    np.testing.assert_allclose(before.linear_velocity[0], expected_v, atol=1e-9)
    np.testing.assert_allclose(before.angular_velocity[0], w, atol=1e-12)
    assert np.linalg.norm(expected_v - v_com) > 0.5  # the test tells the two apart
    # The link origin really moves at that velocity.
    p.stepSimulation(physicsClientId=client)
    extractor.update()
    after = extractor.world_states
    finite_difference = (after.position[0] - before.position[0]) / dt
    mean_velocity = 0.5 * (before.linear_velocity[0] + after.linear_velocity[0])
    np.testing.assert_allclose(finite_difference, mean_velocity, atol=2e-3)


def test_link_frame_not_com_for_links(client):
    """A fixed base with a spinning link; a second link rigidly attached further out.

    Both links' centres of mass are off their link origins. The first link's origin is on
    the joint axis, so it does not move although its centre of mass does.
    """
    p.setGravity(0, 0, 0, physicsClientId=client)
    dt = 1e-4
    p.setTimeStep(dt, physicsClientId=client)
    shape = p.createCollisionShape(p.GEOM_SPHERE, radius=0.05, physicsClientId=client)
    body = p.createMultiBody(
        0.0,
        shape,
        basePosition=[0.2, 0.1, 1.0],
        baseOrientation=Rotation.from_euler("x", 0.4).as_quat(),
        linkMasses=[1.0, 0.5],
        linkCollisionShapeIndices=[shape, shape],
        linkVisualShapeIndices=[-1, -1],
        linkPositions=[[0.0, 0.0, 0.5], [0.4, 0.0, 0.0]],
        linkOrientations=[IDENTITY, Rotation.from_euler("y", 0.5).as_quat()],
        linkInertialFramePositions=[[0.2, 0.1, 0.0], [0.0, 0.15, 0.05]],
        linkInertialFrameOrientations=[IDENTITY, IDENTITY],
        linkParentIndices=[0, 1],
        linkJointTypes=[p.JOINT_REVOLUTE, p.JOINT_FIXED],
        linkJointAxis=[[0, 0, 1], [0, 0, 1]],
        physicsClientId=client,
    )
    no_damping(client, body, (-1, 0, 1))
    p.setJointMotorControl2(body, 0, p.VELOCITY_CONTROL, force=0.0, physicsClientId=client)
    p.resetJointState(body, 0, 0.3, targetVelocity=2.5, physicsClientId=client)
    extractor = ArticulationPoseExtractor(body, client=client)
    extractor.update()
    before = extractor.world_states
    raw = p.getLinkStates(body, [0, 1], 1, 1, physicsClientId=client)
    for row, state in zip((1, 2), raw, strict=True):
        np.testing.assert_allclose(before.position[row], state[4], atol=1e-12)
        assert np.linalg.norm(np.subtract(state[4], state[0])) > 0.1
        expected = link_origin_velocity(state[6], state[7], state[4], state[0])
        np.testing.assert_allclose(before.linear_velocity[row], expected, atol=1e-9)
    # PyBullet keeps link-frame offsets in float32: ~1e-7 m/s of noise on a zero velocity.
    np.testing.assert_allclose(before.linear_velocity[1], [0.0, 0.0, 0.0], atol=1e-6)
    assert np.linalg.norm(raw[0][6]) > 0.4  # the COM of that link does move
    np.testing.assert_allclose(before.linear_velocity[0], [0.0, 0.0, 0.0])  # fixed base
    p.stepSimulation(physicsClientId=client)
    extractor.update()
    after = extractor.world_states
    finite_difference = (after.position - before.position) / dt
    mean_velocity = 0.5 * (before.linear_velocity + after.linear_velocity)
    np.testing.assert_allclose(finite_difference, mean_velocity, atol=2e-3)
    assert np.linalg.norm(mean_velocity[2]) > 0.5


# ================================================================ independent oracle
SPECIAL_ANGLES = [0.0, np.pi / 2, -np.pi / 2, np.pi]


def random_rotation(rng, i):
    """Special angles about x, y and z for the first rows, then random rotations."""
    if i < 3 * len(SPECIAL_ANGLES):
        axis = np.eye(3)[i // len(SPECIAL_ANGLES)]
        return Rotation.from_rotvec(axis * SPECIAL_ANGLES[i % len(SPECIAL_ANGLES)])
    return Rotation.from_quat(rng.normal(size=4))


def expected_spaces(pos, rot, lin, ang, parents):
    """Model and local space by SciPy, one body at a time (no physbody.transforms)."""
    n = len(pos)
    root_inv = rot[0].inv()
    model = (
        np.array([root_inv.apply(pos[i] - pos[0]) for i in range(n)]),
        [root_inv * rot[i] for i in range(n)],
        np.array([root_inv.apply(lin[i] - lin[0]) for i in range(n)]),
        np.array([root_inv.apply(ang[i] - ang[0]) for i in range(n)]),
    )
    local_pos, local_rot, local_lin, local_ang = [], [], [], []
    for i in range(n):
        if parents[i] < 0:
            local_pos.append(np.zeros(3))
            local_rot.append(Rotation.identity())
            local_lin.append(np.zeros(3))
            local_ang.append(np.zeros(3))
            continue
        j = parents[i]
        inv = rot[j].inv()
        local_pos.append(inv.apply(pos[i] - pos[j]))
        local_rot.append(inv * rot[i])
        local_lin.append(inv.apply(lin[i] - lin[j]))
        local_ang.append(inv.apply(ang[i] - ang[j]))
    local = (np.array(local_pos), local_rot, np.array(local_lin), np.array(local_ang))
    return model, local


def assert_spaces(extractor, model, local):
    got_model = (
        extractor.model_positions,
        extractor.model_rotations,
        extractor.model_linear_velocities,
        extractor.model_angular_velocities,
    )
    got_local = (
        extractor.local_positions,
        extractor.local_rotations,
        extractor.local_linear_velocities,
        extractor.local_angular_velocities,
    )
    for got, want in ((got_model, model), (got_local, local)):
        np.testing.assert_allclose(got[0], want[0], atol=1e-6)
        assert_quat_close(got[1], [r.as_quat() for r in want[1]], atol=1e-6)
        np.testing.assert_allclose(got[2], want[2], atol=1e-6)
        np.testing.assert_allclose(got[3], want[3], atol=1e-6)


def base_link_state(client, body):
    """World link frame and link-origin velocity of a base, by SciPy from raw reads."""
    com_pos, com_orn = p.getBasePositionAndOrientation(body, physicsClientId=client)
    v_com, w = p.getBaseVelocity(body, physicsClientId=client)
    info = p.getDynamicsInfo(body, -1, physicsClientId=client)
    inertial_pos, inertial_orn = np.array(info[3]), Rotation.from_quat(info[4])
    # COM frame = link frame * inertial frame.
    link_rot = Rotation.from_quat(com_orn) * inertial_orn.inv()
    link_pos = np.array(com_pos) - link_rot.apply(inertial_pos)
    return link_pos, link_rot, link_origin_velocity(v_com, w, link_pos, com_pos), np.array(w)


@pytest.mark.parametrize("seed", range(6))
def test_rigid_random_trees_match_scipy_oracle(client, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 21))
    bodies = [
        box(
            client,
            inertial_position=rng.normal(size=3) * 0.2 if i % 2 else (0.0, 0.0, 0.0),
            inertial_orientation=random_rotation(rng, 20 + i).as_quat() if i % 3 == 0 else IDENTITY,
        )
        for i in range(n)
    ]
    box(client)  # a body outside the tree
    parent_of = {bodies[i]: bodies[int(rng.integers(0, i))] for i in range(1, n)}
    children: dict[int, list[int]] = {}
    for child in rng.permutation(bodies[1:]).tolist():  # constraint ids in shuffled order
        join(client, parent_of[child], child, [p.JOINT_FIXED, p.JOINT_POINT2POINT][child % 2])
        children.setdefault(parent_of[child], []).append(child)
    for i, body in enumerate(bodies):
        p.resetBasePositionAndOrientation(
            body,
            rng.normal(size=3) * 2.0,
            random_rotation(rng, i).as_quat(),
            physicsClientId=client,
        )
        p.resetBaseVelocity(
            body, rng.normal(size=3), rng.normal(size=3) * 2.0, physicsClientId=client
        )
    extractor = RigidBodyPoseExtractor(bodies[0], client=client)
    extractor.update()

    expected_order = []

    def visit(body):
        expected_order.append(body)
        for child in children.get(body, []):
            visit(child)

    visit(bodies[0])
    assert extractor.body_ids == tuple(expected_order)
    parents = [-1] + [expected_order.index(parent_of[b]) for b in expected_order[1:]]
    np.testing.assert_array_equal(extractor.parent_indices, parents)
    states = [base_link_state(client, body) for body in expected_order]
    pos, rot, lin, ang = (list(x) for x in zip(*states, strict=True))
    assert_spaces(
        extractor, *expected_spaces(np.array(pos), rot, np.array(lin), np.array(ang), parents)
    )


@pytest.mark.parametrize("seed", range(6))
def test_articulation_random_trees_match_scipy_oracle(client, seed):
    rng = np.random.default_rng(100 + seed)
    num_links = int(rng.integers(1, 20))
    shape = p.createCollisionShape(p.GEOM_SPHERE, radius=0.05, physicsClientId=client)
    joint_types = rng.choice([p.JOINT_REVOLUTE, p.JOINT_PRISMATIC, p.JOINT_FIXED], num_links)
    link_parents = [int(rng.integers(0, i + 1)) for i in range(num_links)]  # 0 is the base
    body = p.createMultiBody(
        1.0,
        shape,
        baseInertialFramePosition=rng.normal(size=3) * 0.1,
        baseInertialFrameOrientation=random_rotation(rng, 30).as_quat(),
        linkMasses=rng.uniform(0.1, 2.0, num_links).tolist(),
        linkCollisionShapeIndices=[shape] * num_links,
        linkVisualShapeIndices=[-1] * num_links,
        linkPositions=(rng.normal(size=(num_links, 3)) * 0.5).tolist(),
        linkOrientations=[random_rotation(rng, 13 + i).as_quat() for i in range(num_links)],
        linkInertialFramePositions=(rng.normal(size=(num_links, 3)) * 0.1).tolist(),
        linkInertialFrameOrientations=[random_rotation(rng, 40).as_quat()] * num_links,
        linkParentIndices=link_parents,
        linkJointTypes=joint_types.tolist(),
        linkJointAxis=[rng.normal(size=3) for _ in range(num_links)],
        physicsClientId=client,
    )
    # PyBullet stores the links depth first: creation index k is the link named link{k+1}.
    names = [p.getJointInfo(body, j, physicsClientId=client)[12].decode() for j in range(num_links)]
    pybullet_index = [names.index(f"link{k + 1}") for k in range(num_links)]
    p.resetBasePositionAndOrientation(
        body, rng.normal(size=3), random_rotation(rng, seed).as_quat(), physicsClientId=client
    )
    p.resetBaseVelocity(body, rng.normal(size=3), rng.normal(size=3), physicsClientId=client)
    for k in range(num_links):
        if joint_types[k] != p.JOINT_FIXED:
            angle = SPECIAL_ANGLES[k] if k < len(SPECIAL_ANGLES) else rng.uniform(-3, 3)
            p.resetJointState(
                body,
                pybullet_index[k],
                angle,
                targetVelocity=rng.normal() * 2.0,
                physicsClientId=client,
            )
    # Observed links, as creation indices in pose order: all of them in PyBullet's order
    # (even seeds), or a random subset in creation order (parents first) named explicitly.
    if seed % 2 == 0:
        observed = [int(names[j][4:]) - 1 for j in range(num_links)]
        extractor = ArticulationPoseExtractor(body, client=client)
    else:
        observed = sorted(rng.choice(num_links, size=max(1, num_links // 2), replace=False))
        base_name = p.getBodyInfo(body, physicsClientId=client)[0].decode()
        link_names = [base_name, *(f"link{k + 1}" for k in observed)]
        extractor = ArticulationPoseExtractor(body, client=client, link_names=link_names)
    extractor.update()

    # Parents from the creation tree: nearest observed ancestor (parent k is link k - 1).
    parents = [-1]
    for k in observed:
        ancestor = link_parents[k] - 1
        while ancestor >= 0 and ancestor not in observed:
            ancestor = link_parents[ancestor] - 1
        parents.append(0 if ancestor < 0 else 1 + observed.index(ancestor))
    np.testing.assert_array_equal(extractor.parent_indices, parents)

    base_pos, base_rot, base_lin, base_ang = base_link_state(client, body)
    pos, rot, lin, ang = [base_pos], [base_rot], [base_lin], [base_ang]
    for k in observed:
        state = p.getLinkState(body, pybullet_index[k], 1, 1, physicsClientId=client)
        pos.append(np.array(state[4]))
        rot.append(Rotation.from_quat(state[5]))
        lin.append(link_origin_velocity(state[6], state[7], state[4], state[0]))
        ang.append(np.array(state[7]))
    world = extractor.world_states
    np.testing.assert_allclose(world.position, pos, atol=1e-9)
    np.testing.assert_allclose(world.linear_velocity, lin, atol=1e-9)
    assert_spaces(
        extractor, *expected_spaces(np.array(pos), rot, np.array(lin), np.array(ang), parents)
    )


def test_compose_matches_scipy():
    rng = np.random.default_rng(5)
    for i in range(20):
        ra, rb = random_rotation(rng, i), random_rotation(rng, 19 - i)
        pa, pb = rng.normal(size=3), rng.normal(size=3)
        position, rotation = bullet._compose(
            tuple(pa), tuple(ra.as_quat()), tuple(pb), tuple(rb.as_quat())
        )
        np.testing.assert_allclose(position, ra.apply(pb) + pa, atol=1e-12)
        assert_quat_close(rotation, (ra * rb).as_quat(), atol=1e-12)
