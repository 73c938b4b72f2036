"""The generated Crawler and Walker URDFs, loaded in PyBullet, against the spec's numbers.

The spec values below (spec/mlagents-spec.md sections 1.1 and 2.1, Unity frame, degrees) are
typed in again on purpose, independently of the generator's tables, so a slip in either copy
fails a test. Frame conversion (see scripts/make_urdf.py): ``p_pb = (x_u, z_u, y_u)``,
``q_pb = (-x_u, -z_u, -y_u, w_u)``, revolute axis ``+M a_u`` with the Unity angle and limits,
chained Z, X, Y from the parent. Unity's ``ConfigurableJoint.targetRotation`` is the inverse of
the desired local rotation, so an angle theta turns the child by -theta in Unity's sense; the
anatomy tests at the end pin that (knees fold back, hips flex forward, elbows and Crawler
forelegs fold the right way).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pybullet as p
import pytest
from scipy.spatial.transform import Rotation

URDF_DIR = (Path(__file__).parent / "../../envs/assets/urdf").resolve()
GENERATOR = (Path(__file__).parent / "../../scripts/make_urdf.py").resolve()

M = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])  # Unity <-> PyBullet
AXIS_SIGN = 1.0  # revolute axis = AXIS_SIGN * M a_u (make_urdf.JOINT_AXIS_SIGN)
I4 = (0.0, 0.0, 0.0, 1.0)

# --------------------------------------------------------------------------------------------
# Spec section 1.1 (Crawler). Unity world positions with the prefab root at (0, 2, 0).
# --------------------------------------------------------------------------------------------
CRAWLER_NAMES = [
    "Body",
    "leg0",
    "foreleg0",
    "leg1",
    "foreleg1",
    "leg2",
    "foreleg2",
    "leg3",
    "foreleg3",
]
CRAWLER_MASS = {
    "Body": 20.0,
    **{f"leg{i}": 2.0 for i in range(4)},
    **{f"foreleg{i}": 1.0 for i in range(4)},
}
_LEG_ROT = {
    "leg0": (-0.6533, -0.2706, -0.2706, 0.6533),
    "leg1": (-0.6533, 0.2706, 0.2706, 0.6533),
    "leg2": (-0.2706, 0.6533, 0.6533, 0.2706),
    "leg3": (-0.2706, -0.6533, -0.6533, 0.2706),
}
_LEG_SIGN = {"leg0": (1, -1), "leg1": (-1, -1), "leg2": (-1, 1), "leg3": (1, 1)}  # (x, z)
# name -> (parent, local pos, local rot, printed world pos)
CRAWLER_POSE: dict[str, tuple[str | None, tuple, tuple, tuple]] = {
    "Body": (None, (0, 0.15, 0), I4, (0, 2.15, 0))
}
for _i in range(4):
    _sx, _sz = _LEG_SIGN[f"leg{_i}"]
    CRAWLER_POSE[f"leg{_i}"] = (
        "Body",
        (_sx * 0.6364, -0.15, _sz * 0.6364),
        _LEG_ROT[f"leg{_i}"],
        (_sx * 0.6364, 2.0, _sz * 0.6364),
    )
    CRAWLER_POSE[f"foreleg{_i}"] = (f"leg{_i}", (0, 1.08, 0), I4, (_sx * 1.4001, 2.0, _sz * 1.4001))
# name -> (anchor, axis, secondaryAxis, {dof: (low deg, high deg)} for non-Locked DoFs)
CRAWLER_JOINTS: dict[str, tuple[tuple, tuple, tuple, dict[str, tuple[float, float]]]] = {}
for _i in range(4):
    CRAWLER_JOINTS[f"leg{_i}"] = (
        (0, -0.5, 0),
        (1, 0, 0),
        (0, 0, -1),
        {"y": (-20, 20), "x": (-60, 0)},
    )
    CRAWLER_JOINTS[f"foreleg{_i}"] = ((0, -0.75, 0), (1, 0, 0), (0, 0, -1), {"x": (0, 150)})

# --------------------------------------------------------------------------------------------
# Spec section 2.1 (Walker), hips at (0, 3, 0); every local rotation is identity.
# --------------------------------------------------------------------------------------------
WALKER_NAMES = [
    "hips",
    "thighL",
    "shinL",
    "footL",
    "thighR",
    "shinR",
    "footR",
    "spine",
    "chest",
    "upper_arm_L",
    "lower_arm_L",
    "hand_L",
    "upper_arm_R",
    "lower_arm_R",
    "hand_R",
    "head",
]
WALKER_MASS = {
    "hips": 8.0,
    "thighL": 14.0,
    "shinL": 7.0,
    "footL": 5.0,
    "thighR": 14.0,
    "shinR": 7.0,
    "footR": 5.0,
    "spine": 8.0,
    "chest": 8.0,
    "upper_arm_L": 3.0,
    "lower_arm_L": 2.0,
    "hand_L": 1.0,
    "upper_arm_R": 3.0,
    "lower_arm_R": 2.0,
    "hand_R": 1.0,
    "head": 5.0,
}
WALKER_WORLD = {
    "hips": (0, 3.0, 0),
    "thighL": (-0.4, 2.2, 0),
    "shinL": (-0.4, 1.2, 0),
    "footL": (-0.4, 0.6, 0.1),
    "thighR": (0.4, 2.2, 0),
    "shinR": (0.4, 1.2, 0),
    "footR": (0.4, 0.6, 0.1),
    "spine": (0, 3.683, 0),
    "chest": (0, 4.488, 0),
    "upper_arm_L": (-1.25, 4.488, 0),
    "lower_arm_L": (-2.25, 4.488, 0),
    "hand_L": (-2.95, 4.488, 0),
    "upper_arm_R": (1.25, 4.488, 0),
    "lower_arm_R": (2.25, 4.488, 0),
    "hand_R": (2.95, 4.488, 0),
    "head": (0, 5.85, 0),
}
_FOOT = ((0, 0, -0.1), (1, 0, 0), (0, 1, 0), {"y": (-20, 20), "x": (-20, 20), "z": (-20, 20)})
_TORSO = {"y": (-20, 20), "x": (-20, 20), "z": (-15, 15)}
WALKER_JOINTS: dict[str, tuple[tuple, tuple, tuple, dict[str, tuple[float, float]]]] = {
    "thighL": ((0, 0.5, 0), (-1, 0, 0), (0, 0, -1), {"y": (-40, 40), "x": (-90, 60)}),
    "shinL": ((0, 0.5, 0), (-1, 0, 0), (0, 0, -1), {"x": (0, 120)}),
    "footL": _FOOT,
    "thighR": ((0, 0.5, 0), (-1, 0, 0), (0, 0, -1), {"y": (-40, 40), "x": (-90, 60)}),
    "shinR": ((0, 0.5, 0), (-1, 0, 0), (0, 0, -1), {"x": (0, 120)}),
    "footR": _FOOT,
    "spine": ((0, -0.3, 0), (1, 0, 0), (0, 0, -1), _TORSO),
    "chest": ((0, -0.5, 0), (1, 0, 0), (0, 0, -1), _TORSO),
    "upper_arm_L": ((0.55, 0, 0), (0, -1, 0), (0, 0, 1), {"y": (-100, 100), "x": (-60, 120)}),
    "lower_arm_L": ((0.5, 0, 0), (0, -1, 0), (0, 0, 1), {"x": (0, 160)}),
    "hand_L": ((0, 0, 0), (1, 0, 0), (0, 0, 1), {}),
    "upper_arm_R": ((-0.55, 0, 0), (0, 1, 0), (0, 0, 1), {"y": (-100, 100), "x": (-60, 120)}),
    "lower_arm_R": ((-0.5, 0, 0), (0, 1, 0), (0, 0, 1), {"x": (0, 160)}),
    "hand_R": ((0, 0, 0), (1, 0, 0), (0, 0, 1), {}),
    "head": ((0, -0.85, 0), (1, 0, 0), (0, 0, -1), {"y": (-20, 20), "x": (-30, 10)}),
}

ROBOTS = ["crawler", "walker"]
NAMES = {"crawler": CRAWLER_NAMES, "walker": WALKER_NAMES}
MASSES = {"crawler": CRAWLER_MASS, "walker": WALKER_MASS}
JOINTS = {"crawler": CRAWLER_JOINTS, "walker": WALKER_JOINTS}
TOTAL_MASS = {"crawler": 32.0, "walker": 93.0}
# PyBullet joints (= non-base links): body parts - 1 + one helper link per non-Locked DoF.
NUM_JOINTS = {"crawler": 8 + 12, "walker": 15 + 26}
DOF_ORDER = ("z", "x", "y")  # chain order from the parent: R_Z R_X R_Y = inverse Unity Euler


def _unity_world_poses(robot: str) -> dict[str, tuple[np.ndarray, Rotation]]:
    """Spec world pose (Unity frame) of every part.

    Composed from the local values for the Crawler (its printed world column has 4 decimals);
    the printed world column for the Walker (exact, all rotations identity).
    """
    if robot == "walker":
        return {n: (np.array(pos, float), Rotation.identity()) for n, pos in WALKER_WORLD.items()}
    poses: dict[str, tuple[np.ndarray, Rotation]] = {}
    for name in CRAWLER_NAMES:
        parent, pos, rot, world = CRAWLER_POSE[name]
        if parent is None:
            poses[name] = (np.array(world, float), Rotation.from_quat(rot))
        else:
            p_parent, r_parent = poses[parent]
            poses[name] = (p_parent + r_parent.apply(pos), r_parent * Rotation.from_quat(rot))
    return poses


def _expected_pb_world(robot: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Spec pose of every part converted to PyBullet, relative to the root part.

    Returns:
        name -> (position (3,), quaternion (x, y, z, w)), PyBullet world with the base at the
        origin.
    """
    poses = _unity_world_poses(robot)
    root = poses[NAMES[robot][0]][0]
    out = {}
    for name, (pos, rot) in poses.items():
        x, y, z, w = rot.as_quat()
        out[name] = (M @ (pos - root), np.array([-x, -z, -y, w]))
    return out


@pytest.fixture
def client() -> Iterator[int]:
    """A fresh DIRECT PyBullet client, disconnected after the test."""
    cid = p.connect(p.DIRECT)
    try:
        yield cid
    finally:
        p.disconnect(physicsClientId=cid)


def _load(robot: str, cid: int, base_pos: tuple[float, float, float] = (0, 0, 0)) -> int:
    """Load ``<robot>.urdf`` with the file's inertia."""
    return p.loadURDF(
        str(URDF_DIR / f"{robot}.urdf"),
        basePosition=base_pos,
        flags=p.URDF_USE_INERTIA_FROM_FILE,
        physicsClientId=cid,
    )


def _links(body: int, cid: int) -> dict[str, int]:
    """Link name -> link index (the base is -1)."""
    out = {p.getBodyInfo(body, physicsClientId=cid)[0].decode(): -1}
    for j in range(p.getNumJoints(body, physicsClientId=cid)):
        out[p.getJointInfo(body, j, physicsClientId=cid)[12].decode()] = j
    return out


def _link_frames(body: int, cid: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Link name -> URDF link-frame world (position, quaternion) at the current state."""
    out = {}
    for name, j in _links(body, cid).items():
        if j == -1:
            pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=cid)
        else:
            state = p.getLinkState(body, j, computeForwardKinematics=1, physicsClientId=cid)
            pos, orn = state[4], state[5]
        out[name] = (np.array(pos), np.array(orn))
    return out


def _revolute(body: int, cid: int) -> list[tuple]:
    """The ``getJointInfo`` tuples of the revolute joints, in joint-index order."""
    infos = [
        p.getJointInfo(body, j, physicsClientId=cid)
        for j in range(p.getNumJoints(body, physicsClientId=cid))
    ]
    return [info for info in infos if info[2] == p.JOINT_REVOLUTE]


def _assert_same_rotation(got: np.ndarray, want: np.ndarray, msg: str) -> None:
    """Quaternions ``(x, y, z, w)`` equal up to sign and normalization, to 1e-6."""
    got, want = np.asarray(got) / np.linalg.norm(got), np.asarray(want) / np.linalg.norm(want)
    if np.dot(got, want) < 0:
        want = -want
    np.testing.assert_allclose(got, want, atol=1e-6, err_msg=msg)


def _load_generator() -> ModuleType:
    """Import scripts/make_urdf.py as a module."""
    spec = importlib.util.spec_from_file_location("make_urdf", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while it executes
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


@pytest.mark.parametrize("robot", ROBOTS)
def test_loads_with_expected_links(robot: str, client: int) -> None:
    """Both files load; joint counts match parts + helper chains."""
    body = _load(robot, client)
    infos = [
        p.getJointInfo(body, j, physicsClientId=client)
        for j in range(p.getNumJoints(body, physicsClientId=client))
    ]
    assert len(infos) == NUM_JOINTS[robot]
    n_revolute = sum(len(j[3]) for j in JOINTS[robot].values())
    assert sum(i[2] == p.JOINT_REVOLUTE for i in infos) == n_revolute
    assert sum(i[2] == p.JOINT_FIXED for i in infos) == len(NAMES[robot]) - 1
    assert all(i[2] in (p.JOINT_REVOLUTE, p.JOINT_FIXED) for i in infos)


@pytest.mark.parametrize("robot", ROBOTS)
def test_body_part_names_and_order(robot: str, client: int) -> None:
    """The non-helper links are exactly the spec's parts, root first, in depth-first order."""
    body = _load(robot, client)
    names = sorted(_links(body, client).items(), key=lambda kv: kv[1])
    parts = [n for n, _ in names if "__" not in n]
    assert parts == NAMES[robot]
    assert p.getBodyInfo(body, physicsClientId=client)[0].decode() == NAMES[robot][0]


@pytest.mark.parametrize("robot", ROBOTS)
def test_masses(robot: str, client: int) -> None:
    """Part masses as the spec (R4, torso 8 kg each); helpers weigh under 10 g in total."""
    body = _load(robot, client)
    links = _links(body, client)
    mass = {n: p.getDynamicsInfo(body, j, physicsClientId=client)[0] for n, j in links.items()}
    parts = {n: m for n, m in mass.items() if "__" not in n}
    assert parts == pytest.approx(MASSES[robot], abs=1e-12)
    assert sum(parts.values()) == pytest.approx(TOTAL_MASS[robot], abs=1e-9)
    helpers = [m for n, m in mass.items() if "__" in n]
    assert helpers and sum(helpers) < 1e-2


@pytest.mark.parametrize("robot", ROBOTS)
def test_revolute_names_order_and_limits(robot: str, client: int) -> None:
    """Revolute joints ``<part>_<dof>`` in Z, X, Y order, limits = spec degrees in radians."""
    body = _load(robot, client)
    expected = [
        (f"{part}_{dof}", lims[dof])
        for part in NAMES[robot][1:]
        for lims in [JOINTS[robot][part][3]]
        for dof in DOF_ORDER
        if dof in lims
    ]
    got = [(info[1].decode(), (info[8], info[9])) for info in _revolute(body, client)]
    assert [n for n, _ in got] == [n for n, _ in expected]
    for (name, (lo, hi)), (_, (lo_deg, hi_deg)) in zip(got, expected, strict=True):
        assert lo == pytest.approx(math.radians(lo_deg), abs=1e-9), name
        assert hi == pytest.approx(math.radians(hi_deg), abs=1e-9), name


@pytest.mark.parametrize("robot", ROBOTS)
def test_rest_pose_matches_spec(robot: str, client: int) -> None:
    """Every part's rest link frame = its converted Unity world pose (position to 1e-6)."""
    body = _load(robot, client)
    frames = _link_frames(body, client)
    for name, (pos, quat) in _expected_pb_world(robot).items():
        got_pos, got_quat = frames[name]
        np.testing.assert_allclose(got_pos, pos, atol=1e-6, err_msg=name)
        _assert_same_rotation(got_quat, quat, name)


def test_crawler_spec_world_column_matches_composition() -> None:
    """The composed Crawler poses agree with the spec's printed world column (4 decimals)."""
    for name, (pos, _) in _unity_world_poses("crawler").items():
        np.testing.assert_allclose(pos, CRAWLER_POSE[name][3], atol=5e-5, err_msg=name)


@pytest.mark.parametrize("robot", ROBOTS)
def test_joint_axes_and_anchors_in_world(robot: str, client: int) -> None:
    """Revolute axes in world = converted Unity joint-space axes; pivots sit at the anchors.

    Joint-space X = axis, Y = secondaryAxis, Z = Cross(X, Y) in the child's Unity local frame,
    rotated to Unity world, then mapped with ``AXIS_SIGN * M`` (``+M``).
    """
    body = _load(robot, client)
    frames = _link_frames(body, client)
    unity = _unity_world_poses(robot)
    root = unity[NAMES[robot][0]][0]
    for info in _revolute(body, client):
        joint_name, child = info[1].decode(), info[12].decode()
        part, dof = joint_name.rsplit("_", 1)
        anchor, axis, secondary, _ = JOINTS[robot][part]
        axes = {"x": np.array(axis, float), "y": np.array(secondary, float)}
        axes["z"] = np.cross(axes["x"], axes["y"])
        pos_u, rot_u = unity[part]
        want = AXIS_SIGN * M @ rot_u.apply(axes[dof])
        child_pos, child_quat = frames[child]
        got = Rotation.from_quat(child_quat).apply(np.array(info[13]))
        np.testing.assert_allclose(got, want, atol=1e-6, err_msg=joint_name)
        want_pivot = M @ (pos_u + rot_u.apply(anchor) - root)
        np.testing.assert_allclose(child_pos, want_pivot, atol=1e-6, err_msg=joint_name)
        # The joint frame is the helper link frame: its orientation is the part's rest one.
        _assert_same_rotation(child_quat, frames[part][1], joint_name)


def _capsule_inertia(m: float, r: float, height: float) -> tuple[float, float]:
    """(transverse, axial) inertia of a solid capsule of total length ``height``."""
    h = height - 2 * r
    v_cyl, v_sph = math.pi * r * r * h, 4 / 3 * math.pi * r**3
    mc, ms = m * v_cyl / (v_cyl + v_sph), m * v_sph / (v_cyl + v_sph)
    axial = mc * r * r / 2 + ms * 0.4 * r * r
    transverse = mc * (r * r / 4 + h * h / 12) + ms * (0.4 * r * r + h * h / 4 + 3 * h * r / 8)
    return transverse, axial


@pytest.mark.parametrize(
    ("robot", "part", "diag"),
    [
        ("crawler", "Body", (0.4 * 20 * 0.25,) * 3),
        # capsule along Unity Y -> PyBullet z: (t, t, a)
        ("crawler", "leg0", (lambda t, a: (t, t, a))(*_capsule_inertia(2, 0.15, 0.95))),
        ("walker", "shinR", (lambda t, a: (t, t, a))(*_capsule_inertia(7, 0.2, 1.0))),
        # capsule along Unity X -> PyBullet x: (a, t, t)
        ("walker", "hips", (lambda t, a: (a, t, t))(*_capsule_inertia(8, 0.28, 1.3))),
        ("walker", "chest", (lambda t, a: (a, t, t))(*_capsule_inertia(8, 0.4, 1.4))),
        ("walker", "head", (0.4 * 5 * 0.6507**2,) * 3),
        # box 0.35 x 0.1362 x 0.55 (Unity x, y, z) -> PyBullet edges (0.35, 0.55, 0.1362)
        (
            "walker",
            "footL",
            (
                5 / 12 * (0.55**2 + 0.1362**2),
                5 / 12 * (0.35**2 + 0.1362**2),
                5 / 12 * (0.35**2 + 0.55**2),
            ),
        ),
    ],
)
def test_inertia_of_collider_solid(robot: str, part: str, diag: tuple, client: int) -> None:
    """Inertia = uniform solid of the collider, about the collider centre, link axes."""
    body = _load(robot, client)
    j = _links(body, client)[part]
    info = p.getDynamicsInfo(body, j, physicsClientId=client)
    np.testing.assert_allclose(info[2], diag, rtol=1e-6)
    _assert_same_rotation(info[4], I4, "inertial frame not rotated")
    if part == "footL":  # box centre (0, 0, -0.06) Unity -> (0, -0.06, 0)
        np.testing.assert_allclose(info[3], (0, -0.06, 0), atol=1e-9)


def test_generated_files_are_up_to_date() -> None:
    """The committed URDFs are exactly what scripts/make_urdf.py produces."""
    generator = _load_generator()
    rendered = generator.render_all()
    assert sorted(rendered) == ["crawler.urdf", "walker.urdf"]
    for name, text in rendered.items():
        assert (URDF_DIR / name).read_text(encoding="utf-8") == text, (
            f"{name} is stale: run python scripts/make_urdf.py"
        )


def test_crawler_rests_on_plane_holding_pose(client: int) -> None:
    """Crawler dropped on a plane with the env's physics settings settles, finite, on its belly.

    Gravity 14.715 m/s^2, 1/75 s steps, 12 solver iterations, every revolute joint held at 0 by
    POSITION_CONTROL (force 10000): after 500 steps the Body sphere (r 0.5) lies on the floor
    and nothing moves.
    """
    p.setGravity(0, 0, -14.715, physicsClientId=client)
    p.setPhysicsEngineParameter(
        fixedTimeStep=1 / 75, numSolverIterations=12, physicsClientId=client
    )
    plane = p.createCollisionShape(p.GEOM_PLANE, physicsClientId=client)
    p.createMultiBody(0, plane, physicsClientId=client)
    body = _load("crawler", client, base_pos=(0, 0, 1.65))  # Unity: Body 1.65 above the floor
    joints = [info[0] for info in _revolute(body, client)]
    p.setJointMotorControlArray(
        body,
        joints,
        p.POSITION_CONTROL,
        targetPositions=[0.0] * 12,
        forces=[10000.0] * 12,
        positionGains=[0.5] * 12,
        physicsClientId=client,
    )
    for _ in range(500):
        p.stepSimulation(physicsClientId=client)
    pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=client)
    lin, ang = p.getBaseVelocity(body, physicsClientId=client)
    states = p.getLinkStates(
        body,
        list(range(p.getNumJoints(body, physicsClientId=client))),
        computeLinkVelocity=1,
        physicsClientId=client,
    )
    link_vel = np.array([s[6] for s in states])
    q = np.array([s[0] for s in p.getJointStates(body, joints, physicsClientId=client)])
    assert np.all(np.isfinite(link_vel)) and np.all(np.isfinite(pos + orn))
    assert pos[2] == pytest.approx(0.5, abs=0.02)
    np.testing.assert_allclose(np.abs(orn), I4, atol=1e-3)  # still level, no spin
    assert np.linalg.norm(lin) < 1e-2 and np.linalg.norm(ang) < 1e-2
    assert np.abs(link_vel).max() < 1e-2
    assert np.abs(q).max() < 0.02


def _displacement(
    robot: str,
    cid: int,
    joint: str,
    degrees: float,
    link: str,
    point: tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> tuple[np.ndarray, np.ndarray]:
    """World position of ``point`` (in ``link``'s frame) at rest and with one joint set.

    The body is loaded at the origin with identity orientation; only ``joint`` is moved, with
    ``resetJointState`` (no simulation step).

    Returns:
        (position at rest, position with ``joint`` at ``degrees``), PyBullet world.
    """
    body = _load(robot, cid)
    links = _links(body, cid)
    joints = {
        p.getJointInfo(body, j, physicsClientId=cid)[1].decode(): j
        for j in range(p.getNumJoints(body, physicsClientId=cid))
    }

    def where() -> np.ndarray:
        state = p.getLinkState(body, links[link], computeForwardKinematics=1, physicsClientId=cid)
        pos, _ = p.multiplyTransforms(state[4], state[5], point, I4, physicsClientId=cid)
        return np.array(pos)

    rest = where()
    p.resetJointState(body, joints[joint], math.radians(degrees), physicsClientId=cid)
    return rest, where()


def test_walker_knee_folds_backward(client: int) -> None:
    """Knee X +90 deg (range 0..120): the foot swings backward (-y; the Walker faces +y) and up.

    The shin (length 1 between knee and ankle) turns a quarter turn about the knee, so footL
    ends 1.2 m behind and 1.0 m higher than at rest.
    """
    rest, bent = _displacement("walker", client, "shinL_x", 90.0, "footL")
    np.testing.assert_allclose(rest, (-0.4, 0.1, -2.4), atol=1e-6)
    np.testing.assert_allclose(bent, (-0.4, -1.1, -1.4), atol=1e-6)
    # The far end of the shin capsule (0.5 below its centre) goes backward and up as well.
    rest, bent = _displacement("walker", client, "shinL_x", 90.0, "shinL", (0.0, 0.0, -0.5))
    assert bent[1] - rest[1] == pytest.approx(-1.0, abs=1e-6)
    assert bent[2] - rest[2] == pytest.approx(1.0, abs=1e-6)


def test_walker_hip_flexes_forward(client: int) -> None:
    """Hip X -90 deg (Unity lowX -90 is hip flexion): the foot swings forward (+y) and up."""
    rest, flexed = _displacement("walker", client, "thighL_x", -90.0, "footL")
    np.testing.assert_allclose(flexed, (-0.4, 2.1, -0.2), atol=1e-6)
    assert flexed[1] - rest[1] > 1.5 and flexed[2] > rest[2]


def test_walker_elbow_folds_forward(client: int) -> None:
    """Elbow X +90 deg (range 0..160), arm held out sideways along -x: the forearm folds forward.

    The hand (0.7 m out from the elbow at x = -2.25) ends in front of the elbow (+y), pulled in
    towards the body, at the same height; folding backward would be against anatomy.
    """
    rest, bent = _displacement("walker", client, "lower_arm_L_x", 90.0, "hand_L")
    np.testing.assert_allclose(rest, (-2.95, 0.0, 1.488), atol=1e-6)
    np.testing.assert_allclose(bent, (-1.75, 1.2, 1.488), atol=1e-6)


def test_crawler_foreleg_folds_down(client: int) -> None:
    """Crawler knee X +90 deg (range 0..150): the foreleg's tip moves down (-z).

    The level foreleg (capsule half-length 0.75 beyond its origin, pivot 0.75 inside it) turns
    a quarter turn about the knee and hangs straight down, 1.5 m below its rest height.
    """
    rest, bent = _displacement("crawler", client, "foreleg0_x", 90.0, "foreleg0", (0, 0, 0.75))
    assert bent[2] - rest[2] == pytest.approx(-1.5, abs=1e-4)
