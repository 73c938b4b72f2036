"""Generate the Crawler and Walker URDF bodies from the ML-Agents spec tables.

Run ``python scripts/make_urdf.py`` from anywhere: it rewrites
``envs/assets/urdf/crawler.urdf`` and ``envs/assets/urdf/walker.urdf`` byte-identically.
The tables below copy every number from ``spec/mlagents-spec.md`` ("Common physics",
section 1.1 Crawler, section 2.1 Walker) in Unity's own units and frames; everything else is
derived here, so each value in the URDF files can be traced back to a table row.

Units: metres, kilograms, radians (the tables hold Unity's degrees; they are converted once).

Frame conversion, Unity (y-up, left-handed) to PyBullet (z-up, right-handed). Let ``M`` be the
reflection that swaps y and z:

* position: ``p_pb = M p_u = (x_u, z_u, y_u)``;
* rotation: ``R_pb = M R_u M``; as a quaternion ``(x, y, z, w)``:
  ``q_pb = (-x_u, -z_u, -y_u, w_u)``;
* a Unity rotation by ``theta`` about axis ``a_u`` is, in PyBullet, a rotation by the same
  ``theta`` about ``-M a_u = (-a_x, -a_z, -a_y)`` (a reflection reverses the sense of rotation),
  i.e. by ``-theta`` about ``+M a_u``.
  Every revolute joint has the SAME angle and the SAME limits as the Unity DoF and the axis
  ``+M a_u = (a_x, a_z, a_y)``, so a revolute angle ``theta`` turns the child by ``-theta`` in
  Unity's sense: Unity's ``ConfigurableJoint.targetRotation`` is the INVERSE of the local
  rotation it drives the child to (see "Joint sign" below).

Link frames. Every body-part link frame is the Unity transform frame of that GameObject
(origin at the transform position, orientation = transform rotation, both converted). Link
names are the Unity GameObject names. The root part (Crawler ``Body``, Walker ``hips``) is
the URDF base, at the origin with identity orientation; the environment places it. Colliders
and inertials are placed relative to the link frame.

Joints. A Unity ConfigurableJoint (linear motion locked, angular DoFs Limited or Locked) whose
joint space is X = ``axis``, Y = ``secondaryAxis``, Z = Cross(X, Y) (computed in Unity's own
coordinates, all three in the child part's local frame) becomes a chain::

    parent -(revolute <part>_z)-> <part>__z -(revolute <part>_x)-> <part>__x
           -(revolute <part>_y)-> <part>__y -(fixed <part>__mount)-> part

with only the non-Locked DoFs present, always in the order Z, X, Y from the parent. A Unity
Euler target ``(x, y, z)`` is ``targetRotation = Quaternion.Euler(x, y, z) = qY qX qZ`` and the
child turns by its inverse ``qZ(-z) qX(-x) qY(-y)``; the chain composes ``R_Z R_X R_Y`` from
parent to child with each revolute turning by minus its angle in Unity's sense, which is
exactly that, so each revolute angle equals the Unity Euler target of that DoF. The helper
links ``<part>__<dof>`` are near-massless (``HELPER_MASS``, ``HELPER_INERTIA``; no collision,
no visual), sit at the joint anchor (a URDF revolute axis passes through the joint origin, so
the pivot must be a frame at the anchor) and have the child part's rest orientation; the
fixed ``<part>__mount`` joint puts the part frame back at its Unity transform origin (offset
``-anchor`` in the part frame). Limits: X ``lowX..highX``, Y ``-Y..+Y``, Z ``-Z..+Z``. A
joint with every DoF Locked (Walker hands) is a single fixed ``<part>__mount`` joint. PyBullet
does not enforce limits on spherical joints, hence the chains.

Colliders and inertia. A Unity CapsuleCollider ``height`` is the total length including both
caps; the URDF ``<capsule>`` (PyBullet extension) lies along its frame's z axis with
``length = height - 2 radius``, so the collision origin is rotated onto the Unity capsule
direction. Inertia is that of a uniform-density solid of the collider with the part's mass,
about the collider centre, expressed in the link frame. The Crawler ``Sweatband`` collider is
disabled in Unity and omitted here. Walker torso masses are the runtime values that
``WalkerAgent.SetTorsoMass`` sets (8 kg each); arm, hand and head masses are the R4 values.
Capsule and sphere centres are at the transform origin (the spec gives a centre only for the
Walker foot box).

Spec rounding. The spec prints the Crawler upper-leg rotations and positions to 4 decimals; the
tables keep those printed numbers and the quaternions are normalized, so the legs are 45 degrees
and level to about 2e-5. The spec's printed world positions and connected anchors are only used
as checks, to ``SPEC_ROUNDING_TOL``. The Walker faces Unity +Z, i.e. PyBullet +y.

Joint sign. ``JOINT_AXIS_SIGN`` (+1) picks the axis ``+M a_u`` described above, because Unity's
``ConfigurableJoint.targetRotation`` is the inverse of the desired local rotation, so a target
``theta`` turns the child by ``-theta`` about the joint-space axis. This was checked
anatomically: a positive Walker knee or elbow angle (ranges 0..120 and 0..160 deg) folds the
shin backward and the forearm forward, a negative hip X angle (lowX -90) flexes the thigh
forward, and a positive Crawler foreleg angle (0..150 deg) folds the foreleg down
(tests/envs/test_urdf.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]

#: Mass of each helper link of a joint chain (kg).
HELPER_MASS = 1e-4
#: Diagonal inertia of each helper link (kg m^2).
HELPER_INERTIA = 1e-6
#: Revolute joint ``<limit effort>`` (N m) and ``<limit velocity>`` (rad/s).
REVOLUTE_EFFORT = 10000.0
REVOLUTE_VELOCITY = 50.0
#: Sign of the PyBullet revolute axis relative to the converted Unity axis ``M a_u``: +1 gives
#: ``+M a_u``, so a Unity Euler target theta turns the child by -theta about the joint-space
#: axis, as Unity does (``targetRotation`` is the inverse of the desired local rotation); with
#: it the Walker's knees, elbows and hips and the Crawler's forelegs bend the anatomical way.
JOINT_AXIS_SIGN = 1.0
#: Tolerance when checking derived values against values the spec prints rounded to 4 decimals.
SPEC_ROUNDING_TOL = 1e-4

#: Reflection swapping y and z: Unity (y-up, left-handed) <-> PyBullet (z-up, right-handed).
UNITY_TO_PB = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])

REPO_ROOT = Path(__file__).resolve().parents[1]
OUTPUT_DIR = REPO_ROOT / "envs" / "assets" / "urdf"

#: Chain order from the parent: ``R_Z R_X R_Y`` is the inverse of Unity's Euler ``qY qX qZ``
#: with negated angles (targetRotation is the inverse of the desired rotation).
DOF_ORDER: tuple[str, ...] = ("z", "x", "y")


@dataclass(frozen=True)
class Collider:
    """A Unity collider in the part's local frame (Unity units and axes).

    Attributes:
        kind: ``"sphere"``, ``"capsule"`` or ``"box"``.
        radius: sphere or capsule radius (m).
        height: capsule total length including both caps (m), Unity's ``height``.
        direction: capsule axis, Unity ``direction`` 0 = X, 1 = Y, 2 = Z.
        size: box edge lengths along Unity local x, y, z (m).
        center: collider centre in Unity local coordinates (m).
    """

    kind: Literal["sphere", "capsule", "box"]
    radius: float = 0.0
    height: float = 0.0
    direction: int = 1
    size: Vec3 = (0.0, 0.0, 0.0)
    center: Vec3 = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class JointSpec:
    """A Unity ConfigurableJoint connecting a part to its parent (Unity units, degrees).

    Attributes:
        anchor: anchor in the child part's local frame (m).
        connected_anchor: anchor in the parent's local frame (m); Unity auto-configures it, so
            it is only used to check the table.
        axis: joint-space X in the child's local frame.
        secondary_axis: joint-space Y in the child's local frame.
        motion: angular X, Y, Z motion, each ``"limited"`` or ``"locked"``.
        low_x: lowAngularXLimit (deg).
        high_x: highAngularXLimit (deg).
        y_limit: angularYLimit (deg); the Y range is ``-y_limit..+y_limit``.
        z_limit: angularZLimit (deg); the Z range is ``-z_limit..+z_limit``.
    """

    anchor: Vec3
    connected_anchor: Vec3
    axis: Vec3
    secondary_axis: Vec3
    motion: tuple[str, str, str]
    low_x: float = 0.0
    high_x: float = 0.0
    y_limit: float = 0.0
    z_limit: float = 0.0


@dataclass(frozen=True)
class Part:
    """One body part (a Unity GameObject with a Rigidbody).

    Attributes:
        name: GameObject name, used as the URDF link name.
        parent: parent part name, ``None`` for the root.
        collider: the part's (enabled) collider.
        mass: Rigidbody mass (kg).
        local_pos: Unity localPosition in the parent transform (m).
        local_rot: Unity localRotation ``(x, y, z, w)``, as printed in the spec.
        world_pos: Unity world position at rest from the spec (m), used as a check.
        joint: joint to the parent, ``None`` for the root.
        accent: use the accent colour (feet, hands, head).
    """

    name: str
    parent: str | None
    collider: Collider
    mass: float
    local_pos: Vec3
    local_rot: Quat
    world_pos: Vec3
    joint: JointSpec | None = None
    accent: bool = False


IDENTITY: Quat = (0.0, 0.0, 0.0, 1.0)

# ---------------------------------------------------------------------------------------------
# Crawler (spec section 1.1). Prefab root at (0, 2, 0); Body at world (0, 2.15, 0).
# ---------------------------------------------------------------------------------------------
_CRAWLER_LEG = Collider("capsule", radius=0.15, height=0.95, direction=1)
_CRAWLER_FORELEG = Collider("capsule", radius=0.15, height=1.5, direction=1)


def _crawler_hip(connected_anchor: Vec3) -> JointSpec:
    """Upper leg -> Body joint of the spec table (only the connected anchor differs)."""
    return JointSpec(
        anchor=(0.0, -0.5, 0.0),
        connected_anchor=connected_anchor,
        axis=(1.0, 0.0, 0.0),
        secondary_axis=(0.0, 0.0, -1.0),
        motion=("limited", "limited", "locked"),
        low_x=-60.0,
        high_x=0.0,
        y_limit=20.0,
        z_limit=0.0,
    )


_CRAWLER_KNEE = JointSpec(
    anchor=(0.0, -0.75, 0.0),
    connected_anchor=(0.0, 0.33, 0.0),
    axis=(1.0, 0.0, 0.0),
    secondary_axis=(0.0, 0.0, -1.0),
    motion=("limited", "locked", "locked"),
    low_x=0.0,
    high_x=150.0,
)

# One spec table row per part: name, parent, collider, mass, local pos, local rot, world pos,
# joint.
# fmt: off
CRAWLER_PARTS: tuple[Part, ...] = (
    Part("Body", None, Collider("sphere", radius=0.5), 20.0,
         (0.0, 0.15, 0.0), IDENTITY, (0.0, 2.15, 0.0)),
    Part("leg0", "Body", _CRAWLER_LEG, 2.0,
         (0.6364, -0.15, -0.6364), (-0.6533, -0.2706, -0.2706, 0.6533), (0.6364, 2.0, -0.6364),
         _crawler_hip((0.2828, -0.15, -0.2828))),
    Part("foreleg0", "leg0", _CRAWLER_FORELEG, 1.0,
         (0.0, 1.08, 0.0), IDENTITY, (1.4001, 2.0, -1.4001), _CRAWLER_KNEE),
    Part("leg1", "Body", _CRAWLER_LEG, 2.0,
         (-0.6364, -0.15, -0.6364), (-0.6533, 0.2706, 0.2706, 0.6533), (-0.6364, 2.0, -0.6364),
         _crawler_hip((-0.2828, -0.15, -0.2828))),
    Part("foreleg1", "leg1", _CRAWLER_FORELEG, 1.0,
         (0.0, 1.08, 0.0), IDENTITY, (-1.4001, 2.0, -1.4001), _CRAWLER_KNEE),
    Part("leg2", "Body", _CRAWLER_LEG, 2.0,
         (-0.6364, -0.15, 0.6364), (-0.2706, 0.6533, 0.6533, 0.2706), (-0.6364, 2.0, 0.6364),
         _crawler_hip((-0.2828, -0.15, 0.2828))),
    Part("foreleg2", "leg2", _CRAWLER_FORELEG, 1.0,
         (0.0, 1.08, 0.0), IDENTITY, (-1.4001, 2.0, 1.4001), _CRAWLER_KNEE),
    Part("leg3", "Body", _CRAWLER_LEG, 2.0,
         (0.6364, -0.15, 0.6364), (-0.2706, -0.6533, -0.6533, 0.2706), (0.6364, 2.0, 0.6364),
         _crawler_hip((0.2828, -0.15, 0.2828))),
    Part("foreleg3", "leg3", _CRAWLER_FORELEG, 1.0,
         (0.0, 1.08, 0.0), IDENTITY, (1.4001, 2.0, 1.4001), _CRAWLER_KNEE),
)
# fmt: on

# ---------------------------------------------------------------------------------------------
# Walker (spec section 2.1, R4 masses with SetTorsoMass defaults). Hips at world (0, 3, 0).
# All local rotations are identity (T-pose).
# ---------------------------------------------------------------------------------------------
_ARM = Collider("capsule", radius=0.25, height=1.0, direction=0)
_HAND = Collider("sphere", radius=0.25)
_THIGH = Collider("capsule", radius=0.25, height=0.9, direction=1)
_SHIN = Collider("capsule", radius=0.2, height=1.0, direction=1)
_FOOT = Collider("box", size=(0.35, 0.1362, 0.55), center=(0.0, 0.0, -0.06))


def _thigh_joint(connected_anchor: Vec3) -> JointSpec:
    """Thigh -> hips joint (left and right differ only in the connected anchor)."""
    return JointSpec(
        (0.0, 0.5, 0.0),
        connected_anchor,
        (-1.0, 0.0, 0.0),
        (0.0, 0.0, -1.0),
        ("limited", "limited", "locked"),
        -90.0,
        60.0,
        40.0,
        0.0,
    )


# One spec table row per joint: anchor, connected anchor, axis, secondaryAxis, X/Y/Z motion,
# low X, high X, Y limit, Z limit (degrees).
# fmt: off
_SHIN_JOINT = JointSpec((0.0, 0.5, 0.0), (0.0, -0.5, 0.0), (-1.0, 0.0, 0.0), (0.0, 0.0, -1.0),
                        ("limited", "locked", "locked"), 0.0, 120.0, 0.0, 0.0)
_FOOT_JOINT = JointSpec((0.0, 0.0, -0.1), (0.0, -0.6, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0),
                        ("limited", "limited", "limited"), -20.0, 20.0, 20.0, 20.0)
_SPINE_JOINT = JointSpec((0.0, -0.3, 0.0), (0.0, 0.383, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, -1.0),
                         ("limited", "limited", "limited"), -20.0, 20.0, 20.0, 15.0)
_CHEST_JOINT = JointSpec((0.0, -0.5, 0.0), (0.0, 0.305, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, -1.0),
                         ("limited", "limited", "limited"), -20.0, 20.0, 20.0, 15.0)
_HEAD_JOINT = JointSpec((0.0, -0.85, 0.0), (0.0, 0.512, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, -1.0),
                        ("limited", "limited", "locked"), -30.0, 10.0, 20.0, 0.0)
_UPPER_ARM_L_JOINT = JointSpec((0.55, 0.0, 0.0), (-0.7, 0.0, 0.0), (0.0, -1.0, 0.0),
                               (0.0, 0.0, 1.0), ("limited", "limited", "locked"),
                               -60.0, 120.0, 100.0, 0.0)
_LOWER_ARM_L_JOINT = JointSpec((0.5, 0.0, 0.0), (-0.5, 0.0, 0.0), (0.0, -1.0, 0.0),
                               (0.0, 0.0, 1.0), ("limited", "locked", "locked"), 0.0, 160.0)
_HAND_L_JOINT = JointSpec((0.0, 0.0, 0.0), (-0.7, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0),
                          ("locked", "locked", "locked"))
_UPPER_ARM_R_JOINT = JointSpec((-0.55, 0.0, 0.0), (0.7, 0.0, 0.0), (0.0, 1.0, 0.0),
                               (0.0, 0.0, 1.0), ("limited", "limited", "locked"),
                               -60.0, 120.0, 100.0, 0.0)
_LOWER_ARM_R_JOINT = JointSpec((-0.5, 0.0, 0.0), (0.5, 0.0, 0.0), (0.0, 1.0, 0.0),
                               (0.0, 0.0, 1.0), ("limited", "locked", "locked"), 0.0, 160.0)
_HAND_R_JOINT = JointSpec((0.0, 0.0, 0.0), (0.7, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0),
                          ("locked", "locked", "locked"))

WALKER_PARTS: tuple[Part, ...] = (
    Part("hips", None, Collider("capsule", radius=0.28, height=1.3, direction=0), 8.0,
         (0.0, 0.0, 0.0), IDENTITY, (0.0, 3.0, 0.0)),
    Part("thighL", "hips", _THIGH, 14.0, (-0.4, -0.8, 0.0), IDENTITY, (-0.4, 2.2, 0.0),
         _thigh_joint((-0.4, -0.3, 0.0))),
    Part("shinL", "thighL", _SHIN, 7.0, (0.0, -1.0, 0.0), IDENTITY, (-0.4, 1.2, 0.0),
         _SHIN_JOINT),
    Part("footL", "shinL", _FOOT, 5.0, (0.0, -0.6, 0.1), IDENTITY, (-0.4, 0.6, 0.1),
         _FOOT_JOINT, accent=True),
    Part("thighR", "hips", _THIGH, 14.0, (0.4, -0.8, 0.0), IDENTITY, (0.4, 2.2, 0.0),
         _thigh_joint((0.4, -0.3, 0.0))),
    Part("shinR", "thighR", _SHIN, 7.0, (0.0, -1.0, 0.0), IDENTITY, (0.4, 1.2, 0.0),
         _SHIN_JOINT),
    Part("footR", "shinR", _FOOT, 5.0, (0.0, -0.6, 0.1), IDENTITY, (0.4, 0.6, 0.1),
         _FOOT_JOINT, accent=True),
    Part("spine", "hips", Collider("capsule", radius=0.25, height=1.0, direction=0), 8.0,
         (0.0, 0.683, 0.0), IDENTITY, (0.0, 3.683, 0.0), _SPINE_JOINT),
    Part("chest", "spine", Collider("capsule", radius=0.4, height=1.4, direction=0), 8.0,
         (0.0, 0.805, 0.0), IDENTITY, (0.0, 4.488, 0.0), _CHEST_JOINT),
    Part("upper_arm_L", "chest", _ARM, 3.0, (-1.25, 0.0, 0.0), IDENTITY, (-1.25, 4.488, 0.0),
         _UPPER_ARM_L_JOINT),
    Part("lower_arm_L", "upper_arm_L", _ARM, 2.0, (-1.0, 0.0, 0.0), IDENTITY,
         (-2.25, 4.488, 0.0), _LOWER_ARM_L_JOINT),
    Part("hand_L", "lower_arm_L", _HAND, 1.0, (-0.7, 0.0, 0.0), IDENTITY, (-2.95, 4.488, 0.0),
         _HAND_L_JOINT, accent=True),
    Part("upper_arm_R", "chest", _ARM, 3.0, (1.25, 0.0, 0.0), IDENTITY, (1.25, 4.488, 0.0),
         _UPPER_ARM_R_JOINT),
    Part("lower_arm_R", "upper_arm_R", _ARM, 2.0, (1.0, 0.0, 0.0), IDENTITY,
         (2.25, 4.488, 0.0), _LOWER_ARM_R_JOINT),
    Part("hand_R", "lower_arm_R", _HAND, 1.0, (0.7, 0.0, 0.0), IDENTITY, (2.95, 4.488, 0.0),
         _HAND_R_JOINT, accent=True),
    Part("head", "chest", Collider("sphere", radius=0.6507), 5.0, (0.0, 1.362, 0.0), IDENTITY,
         (0.0, 5.85, 0.0), _HEAD_JOINT, accent=True),
)
# fmt: on

#: RGBA colours per robot: ``body`` for every part, ``accent`` for parts with ``accent=True``
#: (Walker feet, hands, head); a material is only written when some part uses it.
COLOURS: dict[str, dict[str, tuple[float, float, float, float]]] = {
    "crawler": {"body": (0.90, 0.55, 0.20, 1.0), "accent": (0.55, 0.30, 0.10, 1.0)},
    "walker": {"body": (0.25, 0.45, 0.80, 1.0), "accent": (0.95, 0.80, 0.25, 1.0)},
}


# ---------------------------------------------------------------------------------------------
# Math (numpy only).
# ---------------------------------------------------------------------------------------------
def unity_to_pb_vec(v_unity: Sequence[float]) -> NDArray[np.float64]:
    """Convert a Unity position or direction to PyBullet: ``(x, y, z) -> (x, z, y)``.

    Args:
        v_unity: (3,) vector in a Unity frame.

    Returns:
        (3,) the same vector in the corresponding PyBullet frame.
    """
    return UNITY_TO_PB @ np.asarray(v_unity, dtype=np.float64)


def unity_to_pb_quat(q_unity: Sequence[float]) -> NDArray[np.float64]:
    """Convert a Unity quaternion ``(x, y, z, w)`` to PyBullet: ``(-x, -z, -y, w)``, normalized.

    Args:
        q_unity: (4,) Unity rotation ``(x, y, z, w)``; need not be exactly unit length (the
            spec prints 4 decimals).

    Returns:
        (4,) unit quaternion ``(x, y, z, w)`` of ``M R_u M``.
    """
    x, y, z, w = np.asarray(q_unity, dtype=np.float64)
    q = np.array([-x, -z, -y, w])
    return q / np.linalg.norm(q)


def quat_to_matrix(q: Sequence[float]) -> NDArray[np.float64]:
    """Rotation matrix of a quaternion ``(x, y, z, w)`` (normalized first).

    Args:
        q: (4,) quaternion ``(x, y, z, w)``.

    Returns:
        (3, 3) rotation matrix ``R`` with ``v_parent = R v_child``.
    """
    x, y, z, w = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_rpy(rot: NDArray[np.float64]) -> NDArray[np.float64]:
    """URDF roll-pitch-yaw of a rotation matrix, ``R = Rz(yaw) Ry(pitch) Rx(roll)``.

    Args:
        rot: (3, 3) rotation matrix.

    Returns:
        (3,) ``(roll, pitch, yaw)`` in radians.
    """
    pitch = math.asin(max(-1.0, min(1.0, -rot[2, 0])))
    if abs(rot[2, 0]) < 1.0 - 1e-12:
        roll = math.atan2(rot[2, 1], rot[2, 2])
        yaw = math.atan2(rot[1, 0], rot[0, 0])
    else:  # gimbal lock: put everything in yaw
        roll = 0.0
        yaw = math.atan2(-rot[0, 1], rot[1, 1])
    return np.array([roll, pitch, yaw])


def capsule_inertia(mass: float, radius: float, length: float) -> NDArray[np.float64]:
    """Principal inertia of a solid uniform capsule about its centre, axis along z.

    Args:
        mass: total mass (kg).
        radius: cap and cylinder radius (m).
        length: cylinder length between the cap centres (m), ``height - 2 radius``.

    Returns:
        (3,) ``(Ixx, Iyy, Izz)`` in kg m^2.
    """
    r, h = radius, length
    v_cyl = math.pi * r * r * h
    v_sph = 4.0 / 3.0 * math.pi * r**3
    m_cyl = mass * v_cyl / (v_cyl + v_sph)
    m_sph = mass - m_cyl  # both hemispheres together
    axial = m_cyl * r * r / 2.0 + m_sph * 2.0 / 5.0 * r * r
    # Each hemisphere: 2/5 m r^2 about its flat face, then parallel axis to the capsule centre.
    transverse = m_cyl * (r * r / 4.0 + h * h / 12.0) + m_sph * (
        2.0 / 5.0 * r * r + h * h / 4.0 + 3.0 * h * r / 8.0
    )
    return np.array([transverse, transverse, axial])


def _fmt(value: float) -> str:
    """Format a float deterministically (10 significant digits, no ``-0``)."""
    if abs(value) < 1e-12:
        return "0"
    return f"{value:.10g}"


def _fmt_vec(values: Sequence[float]) -> str:
    """Space-separated :func:`_fmt` of each value."""
    return " ".join(_fmt(float(v)) for v in values)


def _fmt_unity(values: Sequence[float]) -> str:
    """Unity-table tuple for comments, e.g. ``(0.6364, -0.15, 0)``."""
    return "(" + ", ".join(_fmt(float(v)) for v in values) + ")"


def _origin(xyz: Sequence[float], rpy: Sequence[float]) -> str:
    """A URDF ``<origin>`` element."""
    return f'<origin xyz="{_fmt_vec(xyz)}" rpy="{_fmt_vec(rpy)}"/>'


# ---------------------------------------------------------------------------------------------
# Derived geometry.
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Dof:
    """One revolute joint of a chain, in PyBullet terms.

    Attributes:
        name: Unity joint-space DoF name, ``"x"``, ``"y"`` or ``"z"``.
        axis_pb: (3,) unit axis in the helper/child frame (PyBullet), ``+M a_u``.
        lower: lower limit (rad).
        upper: upper limit (rad).
        axis_unity: the Unity joint-space axis in the child's local frame.
        limits_deg: the Unity limits (deg), for comments.
    """

    name: str
    axis_pb: NDArray[np.float64]
    lower: float
    upper: float
    axis_unity: NDArray[np.float64]
    limits_deg: tuple[float, float]


def joint_dofs(joint: JointSpec) -> list[Dof]:
    """The non-Locked DoFs of a joint in chain order (Z, X, Y).

    Args:
        joint: the Unity joint.

    Returns:
        One :class:`Dof` per Limited DoF, ordered Z, X, Y.

    Raises:
        ValueError: if the axes are not orthonormal or a motion is not limited/locked.
    """
    x_u = np.asarray(joint.axis, dtype=np.float64)
    y_u = np.asarray(joint.secondary_axis, dtype=np.float64)
    if abs(np.linalg.norm(x_u) - 1) > 1e-12 or abs(np.linalg.norm(y_u) - 1) > 1e-12:
        raise ValueError(
            f"joint axes must be unit vectors, got {joint.axis}, {joint.secondary_axis}"
        )
    if abs(float(x_u @ y_u)) > 1e-12:
        raise ValueError(f"axis {joint.axis} and secondaryAxis {joint.secondary_axis} overlap")
    # Unity's Vector3.Cross uses the usual component formula; computed in Unity coordinates.
    axes_u = {"x": x_u, "y": y_u, "z": np.cross(x_u, y_u)}
    limits = {
        "x": (joint.low_x, joint.high_x),
        "y": (-joint.y_limit, joint.y_limit),
        "z": (-joint.z_limit, joint.z_limit),
    }
    motion = dict(zip(("x", "y", "z"), joint.motion, strict=True))
    dofs = []
    for name in DOF_ORDER:
        if motion[name] == "locked":
            continue
        if motion[name] != "limited":
            raise ValueError(f"unsupported angular motion {motion[name]!r} for DoF {name}")
        lo, hi = limits[name]
        dofs.append(
            Dof(
                name=name,
                axis_pb=JOINT_AXIS_SIGN * unity_to_pb_vec(axes_u[name]),
                lower=math.radians(lo),
                upper=math.radians(hi),
                axis_unity=axes_u[name],
                limits_deg=(lo, hi),
            )
        )
    return dofs


def unity_world_poses(
    parts: Sequence[Part],
) -> dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """Unity world pose of every part by composing local transforms from the root.

    The root is placed at its spec world position with identity rotation.

    Args:
        parts: body parts, parent before child.

    Returns:
        name -> (position (3,) m, rotation matrix (3, 3)), Unity world frame.
    """
    poses: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
    for part in parts:
        if part.parent is None:
            poses[part.name] = (np.asarray(part.world_pos, dtype=np.float64), np.eye(3))
            continue
        p_parent, r_parent = poses[part.parent]
        r_local = quat_to_matrix(part.local_rot)
        poses[part.name] = (p_parent + r_parent @ np.asarray(part.local_pos), r_parent @ r_local)
    return poses


def check_tables(parts: Sequence[Part]) -> None:
    """Check the table against itself: structure, world positions and connected anchors.

    Args:
        parts: body parts, parent before child.

    Raises:
        ValueError: if the order, world positions or connected anchors disagree with the
            spec beyond its printed precision.
    """
    seen: set[str] = set()
    for i, part in enumerate(parts):
        misplaced = part.parent is not None and part.parent not in seen
        if (part.parent is None) != (i == 0) or misplaced:
            raise ValueError(f"part {part.name!r}: parent {part.parent!r} must come earlier")
        if (part.joint is None) != (part.parent is None):
            raise ValueError(f"part {part.name!r}: only the root has no joint")
        seen.add(part.name)
    poses = unity_world_poses(parts)
    by_name = {p.name: p for p in parts}
    for part in parts:
        pos, rot = poses[part.name]
        if np.max(np.abs(pos - part.world_pos)) > SPEC_ROUNDING_TOL:
            raise ValueError(f"{part.name}: composed world position {pos} != spec {part.world_pos}")
        if part.joint is None or part.parent is None:
            continue
        p_parent, r_parent = poses[part.parent]
        anchor_world = pos + rot @ np.asarray(part.joint.anchor)
        anchor_in_parent = r_parent.T @ (anchor_world - p_parent)
        if np.max(np.abs(anchor_in_parent - part.joint.connected_anchor)) > SPEC_ROUNDING_TOL:
            raise ValueError(
                f"{part.name}: anchor maps to {anchor_in_parent} in {by_name[part.parent].name}, "
                f"spec connected anchor {part.joint.connected_anchor}"
            )


# ---------------------------------------------------------------------------------------------
# URDF writing.
# ---------------------------------------------------------------------------------------------
def _collider_frame(col: Collider) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Collider origin and rotation in the PyBullet link frame.

    Returns:
        (centre (3,), rotation (3, 3)) mapping collider-frame vectors to the link frame; for a
        capsule the collider z axis is the converted Unity capsule direction.
    """
    centre = unity_to_pb_vec(col.center)
    if col.kind != "capsule":
        return centre, np.eye(3)
    direction = unity_to_pb_vec(np.eye(3)[col.direction])
    rotations = {  # collider z -> link direction, right-handed
        (1.0, 0.0, 0.0): np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]),
        (0.0, 1.0, 0.0): np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]]),
        (0.0, 0.0, 1.0): np.eye(3),
    }
    return centre, rotations[tuple(float(v) for v in direction)]


def _geometry(col: Collider) -> str:
    """URDF ``<geometry>`` for a collider (PyBullet units and axes)."""
    if col.kind == "sphere":
        shape = f'<sphere radius="{_fmt(col.radius)}"/>'
    elif col.kind == "capsule":
        length = col.height - 2 * col.radius
        shape = f'<capsule radius="{_fmt(col.radius)}" length="{_fmt(length)}"/>'
    else:
        size = np.abs(unity_to_pb_vec(col.size))
        shape = f'<box size="{_fmt_vec(size)}"/>'
    return f"<geometry>{shape}</geometry>"


def collider_inertia(col: Collider, mass: float) -> NDArray[np.float64]:
    """Inertia tensor of a uniform solid collider about its centre, in the PyBullet link frame.

    Args:
        col: the collider.
        mass: the part's mass (kg).

    Returns:
        (3, 3) inertia tensor (kg m^2), axes of the link frame.
    """
    if col.kind == "sphere":
        principal = np.full(3, 2.0 / 5.0 * mass * col.radius**2)
    elif col.kind == "capsule":
        principal = capsule_inertia(mass, col.radius, col.height - 2 * col.radius)
    else:
        a, b, c = np.abs(unity_to_pb_vec(col.size))
        principal = mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    _, rot = _collider_frame(col)
    return rot @ np.diag(principal) @ rot.T


def _inertial_xml(xyz: Sequence[float], mass: float, inertia: NDArray[np.float64]) -> list[str]:
    """Lines of an ``<inertial>`` element (inertial frame axes = link axes)."""
    i = inertia
    return [
        "    <inertial>",
        f"      {_origin(xyz, (0.0, 0.0, 0.0))}",
        f'      <mass value="{_fmt(mass)}"/>',
        f'      <inertia ixx="{_fmt(i[0, 0])}" ixy="{_fmt(i[0, 1])}" ixz="{_fmt(i[0, 2])}" '
        f'iyy="{_fmt(i[1, 1])}" iyz="{_fmt(i[1, 2])}" izz="{_fmt(i[2, 2])}"/>',
        "    </inertial>",
    ]


def _part_link_xml(part: Part) -> list[str]:
    """Lines of the ``<link>`` element of a body part."""
    col = part.collider
    centre, rot = _collider_frame(col)
    origin = _origin(centre, matrix_to_rpy(rot))
    material = "accent" if part.accent else "body"
    desc = f"{col.kind}"
    if col.kind == "capsule":
        axis = "XYZ"[col.direction]
        desc += f" r {_fmt(col.radius)} height {_fmt(col.height)} along Unity {axis}"
    elif col.kind == "sphere":
        desc += f" r {_fmt(col.radius)}"
    else:
        desc += f" {_fmt_unity(col.size)} centre {_fmt_unity(col.center)}"
    return [
        f'  <link name="{part.name}">',
        f"    <!-- Unity collider: {desc}; mass {_fmt(part.mass)} kg -->",
        *_inertial_xml(centre, part.mass, collider_inertia(col, part.mass)),
        "    <visual>",
        f"      {origin}",
        f"      {_geometry(col)}",
        f'      <material name="{material}"/>',
        "    </visual>",
        "    <collision>",
        f"      {origin}",
        f"      {_geometry(col)}",
        "    </collision>",
        "  </link>",
    ]


def _helper_link_xml(name: str) -> list[str]:
    """Lines of a massless helper ``<link>`` (no collision, no visual)."""
    return [
        f'  <link name="{name}">',
        *_inertial_xml((0.0, 0.0, 0.0), HELPER_MASS, np.eye(3) * HELPER_INERTIA),
        "  </link>",
    ]


def _joint_xml(
    name: str,
    kind: str,
    parent: str,
    child: str,
    xyz: Sequence[float],
    rpy: Sequence[float],
    dof: Dof | None = None,
) -> list[str]:
    """Lines of a ``<joint>`` element (revolute when ``dof`` is given, else fixed)."""
    lines = [
        f'  <joint name="{name}" type="{kind}">',
        f'    <parent link="{parent}"/>',
        f'    <child link="{child}"/>',
        f"    {_origin(xyz, rpy)}",
    ]
    if dof is not None:
        lines += [
            f'    <axis xyz="{_fmt_vec(dof.axis_pb)}"/>',
            f'    <limit lower="{_fmt(dof.lower)}" upper="{_fmt(dof.upper)}" '
            f'effort="{_fmt(REVOLUTE_EFFORT)}" velocity="{_fmt(REVOLUTE_VELOCITY)}"/>',
            '    <dynamics damping="0" friction="0"/>',
        ]
    lines.append("  </joint>")
    return lines


def _header(robot: str, section: str) -> list[str]:
    """The generated-file comment at the top of a URDF."""
    return [
        '<?xml version="1.0"?>',
        "<!--",
        f"  {robot}.urdf: GENERATED by scripts/make_urdf.py from spec/mlagents-spec.md {section}.",
        "  Do not edit by hand; change the tables in the generator and run",
        "  python scripts/make_urdf.py",
        "",
        "  Units: metres, kilograms, radians.",
        "  Frame conversion Unity (y-up, left-handed) to PyBullet (z-up, right-handed), with M the",
        "  reflection that swaps y and z:",
        "    position      p_pb = (x_u, z_u, y_u)",
        "    quaternion    q_pb = (-x_u, -z_u, -y_u, w_u)   (x, y, z, w)",
        "    joint axis    a_pb = +M a_u = (a_x, a_z, a_y), same angle, same limits: angle theta",
        "                  turns the child by -theta in Unity's sense, because Unity's",
        "                  ConfigurableJoint.targetRotation is the inverse of the desired local",
        "                  rotation (checked anatomically: knees, hips, elbows, Crawler forelegs).",
        "  Body-part link frames are the Unity transform frames (converted); the root part is the",
        "  base, at the origin with identity orientation. A ConfigurableJoint is a chain of",
        "  revolute joints <part>_z, <part>_x, <part>_y (non-Locked DoFs only, in that order from",
        "  the parent; R_Z R_X R_Y is the inverse of Unity's Euler qY qX qZ) through massless",
        "  helper links <part>__<dof> placed at the joint anchor with the part's rest orientation,",
        "  then a fixed joint <part>__mount to the part. Joint-space axes: X = axis,",
        "  Y = secondaryAxis, Z = Cross(X, Y) in Unity coordinates; limits X lowX..highX,",
        "  Y -Y..+Y, Z -Z..+Z. Capsule length = Unity height - 2 radius.",
        "-->",
    ]


def build_urdf(robot: str, parts: Sequence[Part], section: str) -> str:
    """Render one robot's URDF text.

    Args:
        robot: robot name, ``"crawler"`` or ``"walker"``.
        parts: body parts, root first, parent before child (written in this order).
        section: spec section the table comes from, for the header.

    Returns:
        The URDF document, ending in a newline.
    """
    check_tables(parts)
    lines = _header(robot, section)
    lines.append(f'<robot name="{robot}">')
    used = {"accent" if part.accent else "body" for part in parts}
    for material, rgba in COLOURS[robot].items():
        if material in used:
            colour = f'<color rgba="{_fmt_vec(rgba)}"/>'
            lines.append(f'  <material name="{material}">{colour}</material>')
    by_name = {p.name: p for p in parts}
    for part in parts:
        lines.append("")
        if part.joint is None or part.parent is None:
            lines.append(f"  <!-- {part.name}: root (base) -->")
            lines += _part_link_xml(part)
            continue
        joint = part.joint
        lines.append(
            f"  <!-- {part.name} (parent {part.parent}): Unity local pos "
            f"{_fmt_unity(part.local_pos)}, local rot {_fmt_unity(part.local_rot)}, "
            f"anchor {_fmt_unity(joint.anchor)}, axis {_fmt_unity(joint.axis)}, "
            f"secondaryAxis {_fmt_unity(joint.secondary_axis)} -->"
        )
        pos_rel = unity_to_pb_vec(part.local_pos)
        rot_rel = quat_to_matrix(unity_to_pb_quat(part.local_rot))
        rpy_rel = matrix_to_rpy(rot_rel)
        dofs = joint_dofs(joint)
        if not dofs:
            lines += _joint_xml(
                f"{part.name}__mount",
                "fixed",
                by_name[part.parent].name,
                part.name,
                pos_rel,
                rpy_rel,
            )
            lines += _part_link_xml(part)
            continue
        anchor_child = unity_to_pb_vec(joint.anchor)
        anchor_in_parent = pos_rel + rot_rel @ anchor_child
        parent = part.parent
        for i, dof in enumerate(dofs):
            helper = f"{part.name}__{dof.name}"
            xyz, rpy = (anchor_in_parent, rpy_rel) if i == 0 else ((0.0,) * 3, (0.0,) * 3)
            lo, hi = dof.limits_deg
            lines.append(
                f"  <!-- Unity DoF {dof.name.upper()}: axis {_fmt_unity(dof.axis_unity)} "
                f"(child local), limits {_fmt(lo)} .. {_fmt(hi)} deg -->"
            )
            lines += _joint_xml(
                f"{part.name}_{dof.name}", "revolute", parent, helper, xyz, rpy, dof
            )
            lines += _helper_link_xml(helper)
            parent = helper
        lines += _joint_xml(
            f"{part.name}__mount", "fixed", parent, part.name, -anchor_child, (0.0, 0.0, 0.0)
        )
        lines += _part_link_xml(part)
    lines.append("</robot>")
    return "\n".join(lines) + "\n"


def render_all() -> dict[str, str]:
    """Render both URDF documents.

    Returns:
        file name -> URDF text, for ``crawler.urdf`` and ``walker.urdf``.
    """
    return {
        "crawler.urdf": build_urdf("crawler", CRAWLER_PARTS, "section 1.1"),
        "walker.urdf": build_urdf("walker", WALKER_PARTS, "section 2.1"),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Write both URDF files into ``envs/assets/urdf/``.

    Args:
        argv: unused; present so tests and entry points can call ``main([])``.

    Returns:
        Process exit status (0).
    """
    del argv
    OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
    for name, text in render_all().items():
        (OUTPUT_DIR / name).write_text(text, encoding="utf-8", newline="\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
