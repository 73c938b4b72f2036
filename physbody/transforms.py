"""Pure numpy rigid-body maths, vectorised over any leading batch dimensions.

Conventions used by every function here:

* Quaternions are ``(x, y, z, w)`` (scalar last), as PyBullet, SciPy's ``Rotation`` and
  ML-Agents' ``ObservationWriter`` order them. Shape ``(..., 4)``.
* Vectors and positions are ``(..., 3)``.
* A pose is a pair ``(position, rotation)``; ``pose_multiply(a, b)`` is ``b`` expressed in the
  frame ``a`` (ML-Agents' ``Pose.Multiply``: rotation ``q_a * q_b``, position
  ``q_a * p_b + p_a``).
* Outputs are not canonicalised: ``q`` and ``-q`` are the same rotation and either may come out.
  Rotations are assumed to be unit quaternions unless a docstring says otherwise.

Leading dimensions broadcast with the usual numpy rules. Shapes are checked at entry and a
wrong trailing dimension raises ``ValueError`` naming the expected and the actual shape.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "cross",
    "from_to_rotation",
    "pose_inverse",
    "pose_multiply",
    "quat_conjugate",
    "quat_conjugate_multiply",
    "quat_from_axis_angle",
    "quat_inverse",
    "quat_multiply",
    "quat_rotate",
    "quat_rotate_inverse",
    "quat_to_matrix",
    "to_local_space",
    "to_model_space",
]

FloatArray = NDArray[np.float64]

#: Below this squared norm a direction is treated as zero length.
_EPS_SQ = 1e-20


def _as_array(value: ArrayLike, size: int, name: str) -> FloatArray:
    """Converts ``value`` to a float64 array whose last axis has ``size`` entries."""
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 0 or array.shape[-1] != size:
        raise ValueError(f"{name} must have shape (..., {size}), got shape {array.shape}")
    return array


def quat_multiply(q1: ArrayLike, q2: ArrayLike) -> FloatArray:
    """Hamilton product ``q1 * q2`` (apply ``q2`` first, then ``q1``).

    Args:
        q1: (..., 4) quaternions (x, y, z, w).
        q2: (..., 4) quaternions (x, y, z, w), broadcast against ``q1``.

    Returns:
        (..., 4) quaternions (x, y, z, w).
    """
    a = _as_array(q1, 4, "q1")
    b = _as_array(q2, 4, "q2")
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack(
        (
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ),
        axis=-1,
    )


def quat_conjugate(q: ArrayLike) -> FloatArray:
    """Conjugate ``(-x, -y, -z, w)``; the inverse of a unit quaternion.

    Args:
        q: (..., 4) quaternions (x, y, z, w).

    Returns:
        (..., 4) quaternions (x, y, z, w).
    """
    out = _as_array(q, 4, "q").copy()
    out[..., :3] *= -1.0
    return out


def quat_conjugate_multiply(q1: ArrayLike, q2: ArrayLike) -> FloatArray:
    """``conj(q1) * q2``: the rotation ``q2`` relative to ``q1`` (for unit ``q1``).

    One outer product and one matrix product (the Hamilton product is bilinear), a few
    numpy calls for any batch, where :func:`quat_multiply` spends one per term.

    Args:
        q1: (..., 4) quaternions (x, y, z, w).
        q2: (..., 4) quaternions (x, y, z, w), broadcast against ``q1``.

    Returns:
        (..., 4) quaternions (x, y, z, w).
    """
    a = _as_array(q1, 4, "q1")
    b = _as_array(q2, 4, "q2")
    pairs = a[..., :, None] * b[..., None, :]
    return pairs.reshape(*pairs.shape[:-2], 16) @ _CONJUGATE_PRODUCT


def quat_inverse(q: ArrayLike) -> FloatArray:
    """Inverse ``conj(q) / |q|^2``; also correct for quaternions that are not unit length.

    Args:
        q: (..., 4) non-zero quaternions (x, y, z, w).

    Returns:
        (..., 4) quaternions (x, y, z, w).

    Raises:
        ValueError: if any quaternion has zero norm.
    """
    array = _as_array(q, 4, "q")
    norm_sq = np.sum(array * array, axis=-1, keepdims=True)
    if np.any(norm_sq < _EPS_SQ):
        raise ValueError(f"cannot invert a zero quaternion: {array[np.any(norm_sq < _EPS_SQ, -1)]}")
    return quat_conjugate(array) / norm_sq


def quat_rotate(q: ArrayLike, v: ArrayLike) -> FloatArray:
    """Rotates vectors ``v`` by unit quaternions ``q`` (``q * v * conj(q)``).

    Args:
        q: (..., 4) unit quaternions (x, y, z, w).
        v: (..., 3) vectors, broadcast against ``q``.

    Returns:
        (..., 3) rotated vectors, in the frame ``q`` maps into.
    """
    vec = _as_array(v, 3, "v")
    return (quat_to_matrix(q) @ vec[..., None])[..., 0]


def quat_rotate_inverse(q: ArrayLike, v: ArrayLike) -> FloatArray:
    """Rotates vectors ``v`` by the inverse of unit quaternions ``q``.

    Expresses a world-frame vector in the frame whose orientation is ``q``.

    Args:
        q: (..., 4) unit quaternions (x, y, z, w).
        v: (..., 3) vectors, broadcast against ``q``.

    Returns:
        (..., 3) vectors.
    """
    return quat_rotate(quat_conjugate(q), v)


def quat_from_axis_angle(axis: ArrayLike, angle: ArrayLike) -> FloatArray:
    """Rotation of ``angle`` radians about ``axis`` (right-hand rule).

    Args:
        axis: (..., 3) non-zero axes; normalised here.
        angle: (...) angles in radians, broadcast against ``axis[..., 0]``.

    Returns:
        (..., 4) unit quaternions (x, y, z, w).

    Raises:
        ValueError: if an axis has zero length.
    """
    axis_arr = _as_array(axis, 3, "axis")
    norm = np.linalg.norm(axis_arr, axis=-1, keepdims=True)
    if np.any(norm * norm < _EPS_SQ):
        raise ValueError(f"axis must be non-zero, got {axis_arr}")
    half = 0.5 * np.asarray(angle, dtype=np.float64)[..., None]
    xyz = axis_arr / norm * np.sin(half)
    # cos(half) carries only the angle's batch shape: broadcast it to the axes' as well.
    return np.concatenate((xyz, np.broadcast_to(np.cos(half), xyz.shape[:-1] + (1,))), axis=-1)


def pose_inverse(position: ArrayLike, rotation: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Inverse of poses: ``(-(q^-1 * p), q^-1)``.

    Args:
        position: (..., 3) positions.
        rotation: (..., 4) unit quaternions (x, y, z, w).

    Returns:
        ``(position, rotation)`` of the inverse poses, shapes (..., 3) and (..., 4).
    """
    inv_rotation = quat_conjugate(rotation)
    return -quat_rotate(inv_rotation, _as_array(position, 3, "position")), inv_rotation


def pose_multiply(
    position_a: ArrayLike,
    rotation_a: ArrayLike,
    position_b: ArrayLike,
    rotation_b: ArrayLike,
) -> tuple[FloatArray, FloatArray]:
    """Composes poses ``a * b``: pose ``b`` (given in frame ``a``) expressed in ``a``'s parent.

    ML-Agents' ``Pose.Multiply(a, b)``: rotation ``q_a * q_b``, position ``q_a * p_b + p_a``.

    Args:
        position_a: (..., 3) positions of ``a``.
        rotation_a: (..., 4) unit quaternions (x, y, z, w) of ``a``.
        position_b: (..., 3) positions of ``b``.
        rotation_b: (..., 4) unit quaternions (x, y, z, w) of ``b``.

    Returns:
        ``(position, rotation)`` with shapes (..., 3) and (..., 4).
    """
    position = quat_rotate(rotation_a, position_b) + _as_array(position_a, 3, "position_a")
    return position, quat_multiply(rotation_a, rotation_b)


def from_to_rotation(from_direction: ArrayLike, to_direction: ArrayLike) -> FloatArray:
    """Shortest-arc rotation taking ``from_direction`` to ``to_direction`` (Unity's FromToRotation).

    Directions need not be unit length. Antiparallel directions rotate by pi about an axis
    perpendicular to ``from_direction``; a zero-length direction gives the identity, as Unity does.

    Args:
        from_direction: (..., 3) vectors.
        to_direction: (..., 3) vectors, broadcast against ``from_direction``.

    Returns:
        (..., 4) unit quaternions (x, y, z, w).
    """
    a = _as_array(from_direction, 3, "from_direction")
    b = _as_array(to_direction, 3, "to_direction")
    # q = (a x b, |a||b| + a.b), normalised, is the half-angle rotation from a to b, with no
    # need to normalise a and b first.
    lengths = np.sqrt(np.einsum("...i,...i->...", a, a) * np.einsum("...i,...i->...", b, b))
    xyz = cross(a, b)
    w = (lengths + np.einsum("...i,...i->...", a, b))[..., None]
    # w = |a||b| (1 + cos(angle)) ~ |a||b| delta^2 / 2 at delta rad from antiparallel.
    # Rounding leaves w below ~1e-15 |a||b| for exactly antiparallel input; 1e-14 switches to
    # a fixed perpendicular axis only within ~1.4e-7 rad of antiparallel.
    antiparallel = w[..., 0] < 1e-14 * lengths
    if xyz.shape[:-1] != w.shape[:-1]:  # one side broadcast against the other's batch
        xyz, w = np.broadcast_arrays(xyz, w[..., [0, 0, 0]])
        w = w[..., :1]
    if np.any(antiparallel):
        a = a + np.zeros_like(xyz)
        # Any axis perpendicular to a: cross with the basis vector least aligned with it.
        basis = np.eye(3)[np.argmin(np.abs(a), axis=-1)]
        perpendicular = cross(a, basis)
        xyz = np.where(antiparallel[..., None], perpendicular, xyz)
        w = np.where(antiparallel[..., None], 0.0, w)
    quat = np.concatenate((xyz, w), axis=-1)
    norm = np.sqrt(np.einsum("...i,...i->...", quat, quat))[..., None]
    degenerate = lengths[..., None] ** 2 < _EPS_SQ  # a zero-length direction: Unity's identity
    return np.where(degenerate, _IDENTITY, quat / np.where(degenerate, 1.0, norm))


_IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])
_IDENTITY.flags.writeable = False


def quat_to_matrix(q: ArrayLike) -> FloatArray:
    """Rotation matrices of unit quaternions.

    Args:
        q: (..., 4) unit quaternions (x, y, z, w).

    Returns:
        (..., 3, 3) matrices ``R`` with ``R @ v == quat_rotate(q, v)``.
    """
    quat = _as_array(q, 4, "q")
    batch = quat.shape[:-1]
    outer = quat[..., :, None] * quat[..., None, :]
    return (outer.reshape(*batch, 16) @ _ROTATION_MATRIX).reshape(*batch, 3, 3)


def cross(a: ArrayLike, b: ArrayLike) -> FloatArray:
    """Cross product ``a x b`` over the last axis, broadcasting leading dimensions.

    Four gathers and three ufuncs: ``np.cross`` costs ~13 us per call at these sizes.

    Args:
        a: (..., 3) vectors.
        b: (..., 3) vectors, broadcast against ``a``.

    Returns:
        (..., 3) vectors.
    """
    a = _as_array(a, 3, "a")
    b = _as_array(b, 3, "b")
    return a[..., _NEXT] * b[..., _AFTER_NEXT] - a[..., _AFTER_NEXT] * b[..., _NEXT]


_NEXT = np.array([1, 2, 0])
_AFTER_NEXT = np.array([2, 0, 1])
_NEXT.flags.writeable = False
_AFTER_NEXT.flags.writeable = False


def to_model_space(
    position: ArrayLike,
    rotation: ArrayLike,
    linear_velocity: ArrayLike,
    angular_velocity: ArrayLike,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Expresses the world states of ``n`` bodies relative to body 0, the root.

    Pose: ``inv(root_pose) * body_pose``. Velocities: ``inv(root_rotation) * (v_i - v_root)``
    (linear and angular alike), so the root's own model-space pose is the identity and its
    velocities are zero. Output rotations are normalised to unit length.

    Args:
        position: (n, 3) world positions, metres.
        rotation: (n, 4) world rotations (x, y, z, w).
        linear_velocity: (n, 3) world linear velocities, m/s.
        angular_velocity: (n, 3) world angular velocities, rad/s.

    Returns:
        ``(position, rotation, linear_velocity, angular_velocity)`` in the root's frame, with the
        input shapes. An empty input (n = 0) gives empty outputs.
    """
    rows = _pack(position, rotation, linear_velocity, angular_velocity)
    model = np.empty_like(rows)
    relative_rows(rows, np.zeros(rows.shape[0], dtype=np.intp), model)
    return _unpack_normalized(model)


def to_local_space(
    position: ArrayLike,
    rotation: ArrayLike,
    linear_velocity: ArrayLike,
    angular_velocity: ArrayLike,
    parent_indices: ArrayLike,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Expresses the world states of ``n`` bodies relative to each body's parent.

    Pose: ``inv(parent_pose) * body_pose``; velocities ``inv(parent_rotation) * (v_i - v_parent)``.
    A body whose parent index is -1 (the root) gets the identity pose and zero velocities, as in
    ML-Agents. Output rotations are normalised to unit length. Parents are gathered with one
    fancy index and each parent's inverse is formed once, with no per-body loop.

    Args:
        position: (n, 3) world positions, metres.
        rotation: (n, 4) world rotations (x, y, z, w).
        linear_velocity: (n, 3) world linear velocities, m/s.
        angular_velocity: (n, 3) world angular velocities, rad/s.
        parent_indices: (n,) integer parent index of each body, -1 for a root.

    Returns:
        ``(position, rotation, linear_velocity, angular_velocity)`` relative to the parents.
    """
    rows = _pack(position, rotation, linear_velocity, angular_velocity)
    parents = np.asarray(parent_indices)
    if parents.shape != (rows.shape[0],):
        raise ValueError(
            f"parent_indices must have shape ({rows.shape[0]},), got shape {parents.shape}"
        )
    is_root = parents < 0
    local = np.empty_like(rows)
    relative_rows(rows, np.where(is_root, np.arange(parents.shape[0]), parents), local)
    local[is_root, STATE_ROTATION] = (0.0, 0.0, 0.0, 1.0)
    return _unpack_normalized(local)


def _normalized(quat: FloatArray) -> FloatArray:
    """Rescales quaternions to unit length in place.

    Simulators report rotations normalised only to about 1e-7, enough for a component to
    read 1.0000001 in float32; relative rotations are returned exactly unit length.
    """
    quat /= np.sqrt(np.sum(quat * quat, axis=-1, keepdims=True))
    return quat


def _pack(
    position: ArrayLike,
    rotation: ArrayLike,
    linear_velocity: ArrayLike,
    angular_velocity: ArrayLike,
) -> FloatArray:
    """Checks per-body world states share one body count and packs them as (n, 13) rows."""
    arrays = (
        _as_array(position, 3, "position"),
        _as_array(rotation, 4, "rotation"),
        _as_array(linear_velocity, 3, "linear_velocity"),
        _as_array(angular_velocity, 3, "angular_velocity"),
    )
    shapes = [a.shape for a in arrays]
    if any(len(s) != 2 for s in shapes) or len({s[0] for s in shapes}) != 1:
        raise ValueError(
            "position, rotation, linear_velocity and angular_velocity must be (n, 3), (n, 4), "
            f"(n, 3), (n, 3) with one n, got shapes {shapes}"
        )
    rows = np.empty((shapes[0][0], STATE_WIDTH))
    for array, where in zip(
        arrays,
        (STATE_POSITION, STATE_ROTATION, STATE_LINEAR_VELOCITY, STATE_ANGULAR_VELOCITY),
        strict=True,
    ):
        rows[:, where] = array
    return rows


def _unpack_normalized(
    rows: FloatArray,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Unpacks packed rows into copies, rotations rescaled to unit length."""
    return (
        rows[:, STATE_POSITION].copy(),
        _normalized(rows[:, STATE_ROTATION].copy()),
        rows[:, STATE_LINEAR_VELOCITY].copy(),
        rows[:, STATE_ANGULAR_VELOCITY].copy(),
    )


# ------------------------------------------------------------------------ packed states
# The hot path keeps the world state of n bodies in one (n, 13) array, one row per body:
# position (3), linear velocity (3), angular velocity (3), rotation (4, x y z w). The three
# vectors are contiguous, so one matmul turns all of them into another frame, and the few
# dozen rows cost a handful of numpy calls instead of one call per quantity.
STATE_WIDTH = 13
STATE_POSITION = slice(0, 3)
STATE_LINEAR_VELOCITY = slice(3, 6)
STATE_ANGULAR_VELOCITY = slice(6, 9)
STATE_VECTORS = slice(0, 9)
STATE_ROTATION = slice(9, 13)


def _bilinear_matrix(
    product: Callable[[FloatArray, FloatArray], FloatArray], size: int
) -> FloatArray:
    """(16, size) matrix ``B`` with ``product(a, b) == (a outer b).ravel() @ B``.

    Both the Hamilton product and the rotation matrix of a unit quaternion are bilinear in
    the quaternion components, so a product of many pairs is one outer product and one
    matmul. ``B`` is read off the product of basis quaternions.
    """
    basis = np.eye(4)
    rows = [np.ravel(product(basis[j], basis[k])) for j in range(4) for k in range(4)]
    matrix = np.array(rows).reshape(16, size)
    matrix.flags.writeable = False
    return matrix


def _unit_quat_matrix(a: FloatArray, b: FloatArray) -> FloatArray:
    """Rotation-matrix entries as the bilinear form whose diagonal (a = b = q) gives R(q).

    For a unit quaternion ``1 - 2 (y^2 + z^2) = w^2 + x^2 - y^2 - z^2``, so every entry of
    ``quat_to_matrix`` is a quadratic form of ``q``; this is its symmetric bilinear form.
    """
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bw + ax * bx - ay * by - az * bz,
            ax * by + ay * bx - aw * bz - az * bw,
            ax * bz + az * bx + aw * by + ay * bw,
            ax * by + ay * bx + aw * bz + az * bw,
            aw * bw - ax * bx + ay * by - az * bz,
            ay * bz + az * by - aw * bx - ax * bw,
            ax * bz + az * bx - aw * by - ay * bw,
            ay * bz + az * by + aw * bx + ax * bw,
            aw * bw - ax * bx - ay * by + az * bz,
        ]
    )


#: ``(a outer b).ravel() @ _CONJUGATE_PRODUCT == quat_multiply(conj(a), b)``.
_CONJUGATE_PRODUCT = _bilinear_matrix(lambda a, b: quat_multiply(quat_conjugate(a), b), 4)
#: ``(q outer q).ravel() @ _ROTATION_MATRIX == quat_to_matrix(q).ravel()`` for unit ``q``.
_ROTATION_MATRIX = _bilinear_matrix(_unit_quat_matrix, 9)


def relative_rows(states: FloatArray, reference_rows: NDArray[np.intp], out: FloatArray) -> None:
    """Packed states of every row relative to a reference row: ``inv(ref) * state``.

    Positions become ``inv(q_ref) * (p - p_ref)``, velocities ``inv(q_ref) * (v - v_ref)``
    and rotations ``conj(q_ref) * q``. With row 0 as every row's reference this is model
    space; with each row's parent it is local space; ``reference_rows`` of shape (2, n) does
    both in one pass (numpy pays per call, not per row, at these sizes).

    Args:
        states: (..., n, 13) packed world states (see ``STATE_*``), unit rotations; leading
            axes are independent trees.
        reference_rows: (n,) or (s, n) integer row of each row's reference frame (s spaces).
        out: (..., n, 13) or (..., s, n, 13) array receiving the relative packed states.
    """
    references = states[..., reference_rows, :]
    rows = states if reference_rows.ndim == 1 else states[..., None, :, :]
    batch = references.shape[:-1]
    reference_rotation = references[..., STATE_ROTATION]
    outer = reference_rotation[..., :, None] * reference_rotation[..., None, :]
    matrices = (outer.reshape(*batch, 16) @ _ROTATION_MATRIX).reshape(*batch, 3, 3)
    # Row vectors times R apply R^T = inv(R) to each of the three vectors of a row.
    offsets = (rows[..., STATE_VECTORS] - references[..., STATE_VECTORS]).reshape(*batch, 3, 3)
    out[..., STATE_VECTORS] = (offsets @ matrices).reshape(*batch, 9)
    pairs = reference_rotation[..., :, None] * rows[..., None, STATE_ROTATION]
    np.matmul(pairs.reshape(*batch, 16), _CONJUGATE_PRODUCT, out=out[..., STATE_ROTATION])
