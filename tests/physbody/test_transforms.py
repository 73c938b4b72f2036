"""physbody.transforms against SciPy's Rotation and PyBullet's own transform functions.

SciPy uses the same (x, y, z, w) order, so it is an oracle with no reordering. PyBullet's
multiplyTransforms / invertTransform / getMatrixFromQuaternion compute in float32, hence the
1e-6 tolerance against them. Quaternions are compared up to sign (q and -q are one rotation).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pybullet as p
import pytest
from scipy.spatial.transform import Rotation

from physbody import transforms as tf

AXES = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 1.0, 1.0)]
SPECIAL_ANGLES = [0.0, np.pi / 2, -np.pi / 2, np.pi, -np.pi]


def special_quats() -> np.ndarray:
    """(20, 4) rotations by 0, +-pi/2 and +-pi about x, y, z and (1, 1, 1)."""
    rotvecs = [np.asarray(axis) / np.linalg.norm(axis) * a for axis in AXES for a in SPECIAL_ANGLES]
    return Rotation.from_rotvec(rotvecs).as_quat()


def random_quats(n: int, seed: int) -> np.ndarray:
    return Rotation.random(n, random_state=seed).as_quat()


def all_quats(seed: int = 0) -> np.ndarray:
    """Special angles followed by random rotations, 40 rows."""
    return np.concatenate((special_quats(), random_quats(20, seed)))


def assert_quat_close(actual, expected, atol=1e-12):
    """Rows equal up to sign."""
    actual = np.asarray(actual, dtype=float).reshape(-1, 4)
    expected = np.asarray(expected, dtype=float).reshape(-1, 4)
    diff = np.minimum(
        np.abs(actual - expected).max(axis=-1), np.abs(actual + expected).max(axis=-1)
    )
    assert np.all(diff <= atol), f"max difference {diff.max()}:\n{actual}\n{expected}"


@pytest.fixture(scope="module")
def client():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(physicsClientId=cid)


# ------------------------------------------------------------------------- quaternions
def test_quat_multiply_matches_scipy_and_pybullet(client):
    a, b = all_quats(1), all_quats(2)[::-1]
    result = tf.quat_multiply(a, b)
    assert_quat_close(result, (Rotation.from_quat(a) * Rotation.from_quat(b)).as_quat())
    for qa, qb, q in zip(a, b, result, strict=True):
        _, expected = p.multiplyTransforms(
            [0, 0, 0], qa.tolist(), [0, 0, 0], qb.tolist(), physicsClientId=client
        )
        assert_quat_close(q, expected, atol=1e-6)


def test_quat_multiply_special_values():
    qx90 = Rotation.from_euler("x", 90, degrees=True).as_quat()
    # Two quarter turns make a half turn; a half turn twice is the identity (w = -1 is fine).
    assert_quat_close(tf.quat_multiply(qx90, qx90), [1.0, 0.0, 0.0, 0.0], atol=1e-15)
    assert_quat_close(tf.quat_multiply([1, 0, 0, 0], [1, 0, 0, 0]), [0, 0, 0, 1])
    # Order matters: x then z differs from z then x.
    qz90 = Rotation.from_euler("z", 90, degrees=True).as_quat()
    xz = tf.quat_multiply(qx90, qz90)
    assert_quat_close(xz, (Rotation.from_quat(qx90) * Rotation.from_quat(qz90)).as_quat())
    assert np.abs(xz - tf.quat_multiply(qz90, qx90)).max() > 0.5


def test_quat_conjugate_and_inverse():
    q = all_quats(3)
    expected = Rotation.from_quat(q).inv().as_quat()
    assert_quat_close(tf.quat_conjugate(q), expected)
    np.testing.assert_array_equal(tf.quat_conjugate(q)[:, 3], q[:, 3])
    assert_quat_close(tf.quat_inverse(q), expected)
    # Not unit length: q * inverse(q) is still the identity.
    scaled = q * np.linspace(0.1, 7.0, len(q))[:, None]
    identity = np.tile([0.0, 0.0, 0.0, 1.0], (len(q), 1))
    np.testing.assert_allclose(
        tf.quat_multiply(scaled, tf.quat_inverse(scaled)), identity, atol=1e-12
    )
    # The input is not modified.
    before = q.copy()
    tf.quat_conjugate(q)
    np.testing.assert_array_equal(q, before)


def test_quat_inverse_rejects_zero():
    with pytest.raises(ValueError, match="zero quaternion"):
        tf.quat_inverse([[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]])


def test_quat_rotate_matches_scipy_and_pybullet_matrix(client):
    q = all_quats(4)
    v = np.random.default_rng(4).normal(size=(len(q), 3)) * 3.0
    rotation = Rotation.from_quat(q)
    np.testing.assert_allclose(tf.quat_rotate(q, v), rotation.apply(v), atol=1e-12)
    np.testing.assert_allclose(
        tf.quat_rotate_inverse(q, v), rotation.apply(v, inverse=True), atol=1e-12
    )
    for qi, vi, out in zip(q, v, tf.quat_rotate(q, v), strict=True):
        matrix = np.reshape(p.getMatrixFromQuaternion(qi.tolist(), physicsClientId=client), (3, 3))
        np.testing.assert_allclose(out, matrix @ vi, atol=1e-5)


def test_quat_rotate_special_angles_exact():
    qz90 = [0.0, 0.0, np.sqrt(0.5), np.sqrt(0.5)]
    np.testing.assert_allclose(tf.quat_rotate(qz90, [1.0, 0.0, 0.0]), [0.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(tf.quat_rotate([0, 0, 1, 0], [1.0, 2.0, 3.0]), [-1.0, -2.0, 3.0])
    np.testing.assert_allclose(tf.quat_rotate([0, 0, 0, 1], [1.0, 2.0, 3.0]), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(
        tf.quat_rotate_inverse(qz90, [1.0, 0.0, 0.0]), [0.0, -1.0, 0.0], atol=1e-15
    )


def test_quat_to_matrix_matches_scipy_and_pybullet(client):
    q = all_quats(5)
    matrices = tf.quat_to_matrix(q)
    assert matrices.shape == (len(q), 3, 3)
    np.testing.assert_allclose(matrices, Rotation.from_quat(q).as_matrix(), atol=1e-12)
    for qi, m in zip(q, matrices, strict=True):
        expected = np.reshape(
            p.getMatrixFromQuaternion(qi.tolist(), physicsClientId=client), (3, 3)
        )
        np.testing.assert_allclose(m, expected, atol=1e-6)
    v = np.array([0.3, -2.0, 1.5])
    np.testing.assert_allclose(matrices @ v, tf.quat_rotate(q, v), atol=1e-12)


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("angle", SPECIAL_ANGLES + [0.3, -2.5])
def test_quat_from_axis_angle_matches_scipy(axis, angle):
    unit = np.asarray(axis) / np.linalg.norm(axis)
    q = tf.quat_from_axis_angle(np.asarray(axis) * 2.5, angle)  # axis length is irrelevant
    assert_quat_close(q, Rotation.from_rotvec(unit * angle).as_quat())
    assert np.isclose(np.linalg.norm(q), 1.0)


def test_quat_from_axis_angle_broadcasts_scalar_angle_over_axes():
    axes = np.random.default_rng(6).normal(size=(2, 5, 3))
    angles = np.linspace(-np.pi, np.pi, 5)
    for angle in (0.7, angles):
        q = tf.quat_from_axis_angle(axes, angle)
        assert q.shape == (2, 5, 4)
        unit = axes / np.linalg.norm(axes, axis=-1, keepdims=True)
        rotvec = unit * np.broadcast_to(angle, (2, 5))[..., None]
        assert_quat_close(q, Rotation.from_rotvec(rotvec.reshape(-1, 3)).as_quat())
    # One axis, several angles.
    q = tf.quat_from_axis_angle([0.0, 0.0, 1.0], angles)
    assert q.shape == (5, 4)
    assert_quat_close(q, Rotation.from_rotvec(np.outer(angles, [0.0, 0.0, 1.0])).as_quat())


def test_quat_from_axis_angle_rejects_zero_axis():
    with pytest.raises(ValueError, match="axis must be non-zero"):
        tf.quat_from_axis_angle([0.0, 0.0, 0.0], 1.0)


# ------------------------------------------------------------------------------- poses
def test_pose_inverse_matches_pybullet_and_scipy(client):
    q = all_quats(7)
    pos = np.random.default_rng(7).normal(size=(len(q), 3)) * 4.0
    inv_pos, inv_rot = tf.pose_inverse(pos, q)
    rotation = Rotation.from_quat(q)
    assert_quat_close(inv_rot, rotation.inv().as_quat())
    np.testing.assert_allclose(inv_pos, -rotation.apply(pos, inverse=True), atol=1e-12)
    for pi, qi, out_p, out_q in zip(pos, q, inv_pos, inv_rot, strict=True):
        exp_p, exp_q = p.invertTransform(pi.tolist(), qi.tolist(), physicsClientId=client)
        np.testing.assert_allclose(out_p, exp_p, atol=1e-5)
        assert_quat_close(out_q, exp_q, atol=1e-6)


def test_pose_multiply_matches_pybullet_and_scipy(client):
    qa, qb = all_quats(8), all_quats(9)
    rng = np.random.default_rng(8)
    pa, pb = rng.normal(size=(len(qa), 3)), rng.normal(size=(len(qa), 3))
    pos, rot = tf.pose_multiply(pa, qa, pb, qb)
    ra = Rotation.from_quat(qa)
    np.testing.assert_allclose(pos, ra.apply(pb) + pa, atol=1e-12)
    assert_quat_close(rot, (ra * Rotation.from_quat(qb)).as_quat())
    for row in zip(pa, qa, pb, qb, pos, rot, strict=True):
        exp_p, exp_q = p.multiplyTransforms(*(x.tolist() for x in row[:4]), physicsClientId=client)
        np.testing.assert_allclose(row[4], exp_p, atol=1e-5)
        assert_quat_close(row[5], exp_q, atol=1e-6)


def test_inverse_times_pose_is_identity():
    """PoseExtensionTests.TestInverse: 23 degrees about normalize(1, 1, 1) at (-1, 2, 3)."""
    rot = tf.quat_from_axis_angle(np.ones(3) / np.sqrt(3.0), np.deg2rad(23.0))
    pos = np.array([-1.0, 2.0, 3.0])
    for product in (
        tf.pose_multiply(*tf.pose_inverse(pos, rot), pos, rot),
        tf.pose_multiply(pos, rot, *tf.pose_inverse(pos, rot)),
    ):
        np.testing.assert_allclose(product[0], [0.0, 0.0, 0.0], atol=1e-12)
        assert_quat_close(product[1], [0.0, 0.0, 0.0, 1.0], atol=1e-12)


# --------------------------------------------------------------------- from_to_rotation
def test_from_to_rotation_random_directions():
    rng = np.random.default_rng(10)
    a = rng.normal(size=(200, 3)) * rng.uniform(0.01, 10.0, size=(200, 1))
    b = rng.normal(size=(200, 3)) * rng.uniform(0.01, 10.0, size=(200, 1))
    q = tf.from_to_rotation(a, b)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-12)
    rotated = Rotation.from_quat(q).apply(a / np.linalg.norm(a, axis=-1, keepdims=True))
    np.testing.assert_allclose(rotated, b / np.linalg.norm(b, axis=-1, keepdims=True), atol=1e-12)
    # Shortest arc: the rotation angle is the angle between the directions.
    cos = np.sum(a * b, axis=-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    np.testing.assert_allclose(Rotation.from_quat(q).magnitude(), np.arccos(cos), atol=1e-9)


@pytest.mark.parametrize("direction", [*AXES, (0.3, -2.0, 0.7)])
def test_from_to_rotation_parallel_and_antiparallel(direction):
    d = np.asarray(direction)
    assert_quat_close(tf.from_to_rotation(d, 3.0 * d), [0.0, 0.0, 0.0, 1.0])
    q = tf.from_to_rotation(d, -0.5 * d)
    assert abs(q[3]) < 1e-12  # a half turn
    assert abs(np.dot(q[:3], d)) < 1e-12  # about an axis perpendicular to the direction
    unit = d / np.linalg.norm(d)
    np.testing.assert_allclose(Rotation.from_quat(q).apply(unit), -unit, atol=1e-12)


def test_from_to_rotation_near_antiparallel_is_accurate():
    a = np.array([1.0, 0.0, 0.0])
    for delta in (1e-4, 1e-5, 1e-6):
        b = np.array([-np.cos(delta), np.sin(delta), 0.0])
        q = tf.from_to_rotation(a, b)
        np.testing.assert_allclose(Rotation.from_quat(q).apply(a), b, atol=1e-9)


def test_from_to_rotation_zero_length_gives_identity():
    q = tf.from_to_rotation([[0, 0, 0], [1, 2, 3], [0, 0, 0]], [[1, 0, 0], [0, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(q, np.tile([0.0, 0.0, 0.0, 1.0], (3, 1)))


def test_from_to_rotation_mixed_batch_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = tf.from_to_rotation([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], [[1.0, 0.0, 0.0], [-1, 0, 0]])
    np.testing.assert_array_equal(q[0], [0.0, 0.0, 0.0, 1.0])
    np.testing.assert_allclose(Rotation.from_quat(q[1]).apply([1, 0, 0]), [-1, 0, 0], atol=1e-12)


# ------------------------------------------------------------------ model / local space
def random_states(n: int, seed: int):
    rng = np.random.default_rng(seed)
    rot = np.concatenate((special_quats(), random_quats(n, seed)))[rng.permutation(20 + n)[:n]]
    return (
        rng.normal(size=(n, 3)) * 3.0,
        rot,
        rng.normal(size=(n, 3)),
        rng.normal(size=(n, 3)),
    )


def test_to_model_space_matches_scipy_loop():
    pos, rot, lin, ang = random_states(12, 11)
    out = tf.to_model_space(pos, rot, lin, ang)
    root_inv = Rotation.from_quat(rot[0]).inv()
    for i in range(12):
        np.testing.assert_allclose(out[0][i], root_inv.apply(pos[i] - pos[0]), atol=1e-12)
        assert_quat_close(out[1][i], (root_inv * Rotation.from_quat(rot[i])).as_quat())
        np.testing.assert_allclose(out[2][i], root_inv.apply(lin[i] - lin[0]), atol=1e-12)
        np.testing.assert_allclose(out[3][i], root_inv.apply(ang[i] - ang[0]), atol=1e-12)
    np.testing.assert_allclose(out[0][0], 0.0, atol=0)
    assert_quat_close(out[1][0], [0, 0, 0, 1])


def test_to_local_space_matches_scipy_loop():
    pos, rot, lin, ang = random_states(15, 12)
    parents = np.array([-1] + [int(np.random.default_rng(i).integers(0, i)) for i in range(1, 15)])
    out = tf.to_local_space(pos, rot, lin, ang, parents)
    np.testing.assert_array_equal(out[0][0], [0, 0, 0])
    np.testing.assert_array_equal(out[1][0], [0, 0, 0, 1])
    np.testing.assert_array_equal(out[2][0], [0, 0, 0])
    np.testing.assert_array_equal(out[3][0], [0, 0, 0])
    for i in range(1, 15):
        j = parents[i]
        inv = Rotation.from_quat(rot[j]).inv()
        np.testing.assert_allclose(out[0][i], inv.apply(pos[i] - pos[j]), atol=1e-12)
        assert_quat_close(out[1][i], (inv * Rotation.from_quat(rot[i])).as_quat())
        np.testing.assert_allclose(out[2][i], inv.apply(lin[i] - lin[j]), atol=1e-12)
        np.testing.assert_allclose(out[3][i], inv.apply(ang[i] - ang[j]), atol=1e-12)


def test_model_and_local_space_of_no_bodies():
    empty = (np.zeros((0, 3)), np.zeros((0, 4)), np.zeros((0, 3)), np.zeros((0, 3)))
    for out in (tf.to_model_space(*empty), tf.to_local_space(*empty, np.zeros(0, int))):
        assert [a.shape for a in out] == [(0, 3), (0, 4), (0, 3), (0, 3)]


# ------------------------------------------------------------- batched == per-row loop
ROW_FUNCTIONS = {
    "quat_multiply": (tf.quat_multiply, ("q", "q")),
    "quat_conjugate": (tf.quat_conjugate, ("q",)),
    "quat_inverse": (tf.quat_inverse, ("q",)),
    "quat_rotate": (tf.quat_rotate, ("q", "v")),
    "quat_rotate_inverse": (tf.quat_rotate_inverse, ("q", "v")),
    "quat_to_matrix": (tf.quat_to_matrix, ("q",)),
    "quat_from_axis_angle": (tf.quat_from_axis_angle, ("v", "s")),
    "pose_inverse": (tf.pose_inverse, ("v", "q")),
    "pose_multiply": (tf.pose_multiply, ("v", "q", "v", "q")),
    "from_to_rotation": (tf.from_to_rotation, ("v", "v")),
}


def make_args(kinds, shape, seed):
    """Random arguments: 'q' quaternions, 'v' vectors, 's' scalars with batch ``shape``."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    out = []
    for i, kind in enumerate(kinds):
        if kind == "q":
            out.append(random_quats(n, seed + i).reshape(*shape, 4))
        elif kind == "v":
            out.append(rng.normal(size=(*shape, 3)))
        else:
            out.append(rng.uniform(-np.pi, np.pi, size=shape))
    return out


def as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("name", sorted(ROW_FUNCTIONS))
def test_batched_equals_per_row_loop(name):
    function, kinds = ROW_FUNCTIONS[name]
    args = make_args(kinds, (7,), seed=13)
    batched = as_tuple(function(*args))
    for i in range(7):
        row = as_tuple(function(*(a[i] for a in args)))
        for b, r in zip(batched, row, strict=True):
            np.testing.assert_allclose(b[i], r, rtol=0, atol=1e-14)


@pytest.mark.parametrize("name", sorted(ROW_FUNCTIONS))
def test_leading_dimensions_broadcast(name):
    """A (2, 5, k) batch against a (5, k) batch gives (2, 5, ...) results equal to the loop.

    A pose function's rotation output does not depend on a position argument, so with only
    the rotation shared (pose_inverse) it keeps the rotation's shape: it must broadcast.
    """
    function, kinds = ROW_FUNCTIONS[name]
    full = make_args(kinds, (2, 5), seed=14)
    # The last argument is shared across the leading axis of length 2.
    args = [*full[:-1], full[-1][0]] if len(kinds) > 1 else full
    results = as_tuple(function(*args))
    assert results[0].shape[:2] == (2, 5)
    for i in range(2):
        row_args = [a[i] for a in full[:-1]] + [full[-1][0]] if len(kinds) > 1 else [full[0][i]]
        for result, expected in zip(results, as_tuple(function(*row_args)), strict=True):
            full_shape = (2, 5, *result.shape[result.ndim - expected.ndim + 1 :])
            broadcast = np.broadcast_to(result, full_shape)
            np.testing.assert_allclose(broadcast[i], expected, rtol=0, atol=1e-14)


# --------------------------------------------------------------------------- bad shapes
@pytest.mark.parametrize(
    ("call", "shape"),
    [
        (lambda x: tf.quat_multiply(x, [0, 0, 0, 1]), (2, 3)),
        (lambda x: tf.quat_multiply([0, 0, 0, 1], x), (5,)),
        (lambda x: tf.quat_conjugate(x), (2, 5, 3)),
        (lambda x: tf.quat_inverse(x), (3,)),
        (lambda x: tf.quat_rotate(x, [1, 0, 0]), (4, 3)),
        (lambda x: tf.quat_rotate([0, 0, 0, 1], x), (2, 4)),
        (lambda x: tf.quat_rotate_inverse([0, 0, 0, 1], x), (2,)),
        (lambda x: tf.quat_from_axis_angle(x, 1.0), (4,)),
        (lambda x: tf.pose_inverse(x, [0, 0, 0, 1]), (6,)),
        (lambda x: tf.pose_inverse([0, 0, 0], x), (3,)),
        (lambda x: tf.pose_multiply(x, [0, 0, 0, 1], [0, 0, 0], [0, 0, 0, 1]), (1, 2)),
        (lambda x: tf.pose_multiply([0, 0, 0], [0, 0, 0, 1], [0, 0, 0], x), (3, 3)),
        (lambda x: tf.quat_to_matrix(x), (3, 3)),
        (lambda x: tf.from_to_rotation(x, [1, 0, 0]), (2, 2)),
        (lambda x: tf.from_to_rotation([1, 0, 0], x), (7,)),
        (
            lambda x: tf.to_model_space(x, np.zeros((2, 4)), np.zeros((2, 3)), np.zeros((2, 3))),
            (2, 4),
        ),
        (
            lambda x: tf.to_model_space(np.zeros((2, 3)), np.zeros((2, 4)), x, np.zeros((2, 3))),
            (3, 3),
        ),
    ],
)
def test_wrong_shapes_name_the_actual_shape(call, shape):
    with pytest.raises(ValueError, match=re.escape(str(shape))):
        call(np.zeros(shape))


def test_scalar_input_is_rejected():
    with pytest.raises(ValueError, match=re.escape("()")):
        tf.quat_conjugate(1.0)


def test_state_functions_reject_mismatched_body_counts():
    states = (np.zeros((3, 3)), np.tile([0.0, 0, 0, 1], (3, 1)), np.zeros((2, 3)), np.zeros((3, 3)))
    for call in (tf.to_model_space, lambda *s: tf.to_local_space(*s, [-1, 0, 1])):
        with pytest.raises(ValueError, match=re.escape("(2, 3)")):
            call(*states)
    good = (np.zeros((3, 3)), np.tile([0.0, 0, 0, 1], (3, 1)), np.zeros((3, 3)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match=re.escape("(2,)")):
        tf.to_local_space(*good, [-1, 0])


def test_cross_matches_numpy_and_broadcasts():
    rng = np.random.default_rng(7)
    a = rng.normal(size=(2, 5, 3))
    b = rng.normal(size=(5, 3))
    np.testing.assert_allclose(tf.cross(a, b), np.cross(a, b), atol=1e-14)
    np.testing.assert_array_equal(tf.cross([1, 0, 0], [0, 1, 0]), [0, 0, 1])
    with pytest.raises(ValueError, match=r"\(2,\)"):
        tf.cross([1.0, 2.0], [0.0, 1.0, 0.0])


def test_quat_conjugate_multiply_is_the_relative_rotation():
    rng = np.random.default_rng(7)
    a = rng.normal(size=(5, 3, 4))
    a /= np.linalg.norm(a, axis=-1, keepdims=True)
    b = rng.normal(size=(3, 4))  # broadcast against a's batch
    b /= np.linalg.norm(b, axis=-1, keepdims=True)
    expected = tf.quat_multiply(tf.quat_conjugate(a), b)
    np.testing.assert_allclose(tf.quat_conjugate_multiply(a, b), expected, atol=1e-12)
    relative = Rotation.from_quat(a.reshape(-1, 4)).inv() * Rotation.from_quat(
        np.broadcast_to(b, a.shape).reshape(-1, 4)
    )
    got = Rotation.from_quat(tf.quat_conjugate_multiply(a, b).reshape(-1, 4))
    assert np.allclose((got * relative.inv()).magnitude(), 0.0, atol=1e-9)
