"""PyBullet readers: the world states of a multibody or of constrained bodies, read in a batch.

This is the only physbody module that imports pybullet. Both extractors take the physics
client id explicitly and pass it on every call, so several worlds can live in one process.

Frames and units of what the readers return (``BodyStates``, world frame):

* position: the body's **link frame** origin (the URDF ``<link>`` origin), metres; not its
  centre of mass. PyBullet reports a base at its centre-of-mass frame, so a base with an
  ``<inertial>`` offset is moved back to its link frame here.
* rotation: the link frame's orientation, quaternion ``(x, y, z, w)``.
* linear velocity: the velocity of the link-frame origin, m/s. PyBullet reports the
  centre of mass's velocity ``v_com``; the link origin moves at
  ``v_com + w x (p_link - p_com)``. The two agree when the inertial origin is the link origin.
  (ML-Agents reports ``Rigidbody.velocity``, the centre of mass's velocity, at the
  rigidbody's origin: the same number in that common case.)
* angular velocity: rad/s, the same for every point of a body.
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Sequence
from itertools import chain
from typing import Any

import numpy as np
import pybullet as p
from numpy.typing import ArrayLike, NDArray

from physbody import transforms
from physbody.pose_extractor import BodyStates, PoseExtractor

__all__ = ["ArticulationBatchPoseExtractor", "ArticulationPoseExtractor", "RigidBodyPoseExtractor"]

FloatArray = NDArray[np.float64]
_Vec3 = tuple[float, float, float]
_Quat = tuple[float, float, float, float]
_Pose = tuple[_Vec3, _Quat]

# Positions in PyBullet's result tuples (bullet3 pybullet.c / SharedMemoryPublic.h).
# getLinkState(s), with computeLinkVelocity=1: all in the world frame.
_LINK_COM_POSITION = 0
_LINK_FRAME_POSITION = 4  # URDF link frame, not the centre of mass (items 0 and 1)
_LINK_FRAME_ORIENTATION = 5
_LINK_COM_LINEAR_VELOCITY = 6
_LINK_ANGULAR_VELOCITY = 7
# getJointInfo(body, j): describes link j and the joint to its parent.
_JOINT_LINK_NAME = 12
_JOINT_PARENT_INDEX = 16
# getBodyInfo(body): (base link name, body name), bytes.
_BODY_BASE_NAME = 0
# getDynamicsInfo(body, link): the inertial frame in the link frame.
_DYNAMICS_INERTIAL_POSITION = 3
_DYNAMICS_INERTIAL_ORIENTATION = 4
# getConstraintInfo(uid): (parentBody, parentLink, childBody, childLink, type, ...).
_CONSTRAINT_PARENT_BODY = 0
_CONSTRAINT_CHILD_BODY = 2

_BASE_LINK = -1

# Columns of the (n, 13) or (n, 16) array that a reader's unpacking builds, one row per body:
# the packed state of physbody.transforms (link-frame position, COM linear velocity, angular
# velocity, link-frame rotation) and, only when some body's centre of mass is off its link
# origin, the COM position.
_POSITION = transforms.STATE_POSITION
_LINEAR = transforms.STATE_LINEAR_VELOCITY
_ANGULAR = transforms.STATE_ANGULAR_VELOCITY
_ROTATION = transforms.STATE_ROTATION
_COM = slice(13, 16)
_WIDTH = transforms.STATE_WIDTH
_WIDTH_WITH_COM = 16

#: One getLinkStates entry -> (link position, COM velocity, angular velocity, link rotation).
_LINK_ROW = operator.itemgetter(
    _LINK_FRAME_POSITION, _LINK_COM_LINEAR_VELOCITY, _LINK_ANGULAR_VELOCITY, _LINK_FRAME_ORIENTATION
)
#: The same plus the COM position, for the lever arm of the velocity correction.
_LINK_ROW_WITH_COM = operator.itemgetter(
    _LINK_FRAME_POSITION,
    _LINK_COM_LINEAR_VELOCITY,
    _LINK_ANGULAR_VELOCITY,
    _LINK_FRAME_ORIENTATION,
    _LINK_COM_POSITION,
)

_flatten = chain.from_iterable


#: Inertial offsets below this (metres, or quaternion components) count as none.
_OFFSET_TOLERANCE = 1e-12


class ArticulationPoseExtractor(PoseExtractor):
    """Poses of one PyBullet multibody: its base and links (ML-Agents' ArticulationBody).

    Pose 0 is the base (PyBullet link -1), then the observed links. Each link's parent is its
    nearest ancestor in the joint tree that is observed, so helper links in between (for
    example the massless links of a chain of revolute joints) are skipped, as ML-Agents takes
    "the first ArticulationBody found from the transform parent upwards". Names are resolved
    once, here; each :meth:`read_world_state` is one ``getLinkStates`` call (velocities and
    forward kinematics on) plus the base's ``getBasePositionAndOrientation`` and
    ``getBaseVelocity``. The returned frames are the links' URDF frames (see the module
    docstring), not their centres of mass. :class:`ArticulationBatchPoseExtractor` observes
    many copies of one multibody at once.

    Args:
        body_id: PyBullet multibody id; None gives an extractor with no bodies (0 poses,
            updates do nothing), ML-Agents' null root.
        client: PyBullet physics client id, passed on every call.
        link_names: the links to observe, in pose order, as URDF link names; the base's name
            must come first and every observed link after its nearest observed ancestor.
            None observes the base and every link, in link-index order.
        virtual_root: optional ``(position (3,), rotation (4,) x, y, z, w)`` world frame to
            stand at index 0 (see ``PoseExtractor``).
        virtual_root_name: the virtual root's name in ``body_names``.

    Raises:
        TypeError: if ``body_id`` or ``client`` is not an int, or ``link_names`` is a string.
        ValueError: if the client is not connected, the body does not exist, a link name is
            unknown (the message lists the available names), repeated or ambiguous, the base
            is not first, or a link comes before its nearest observed ancestor.
    """

    def __init__(
        self,
        body_id: int | None,
        *,
        client: int,
        link_names: Sequence[str] | None = None,
        virtual_root: tuple[ArrayLike, ArrayLike] | None = None,
        virtual_root_name: str = "virtual_root",
    ) -> None:
        self._build(
            [] if body_id is None else [body_id],
            [client],
            link_names,
            virtual_root,
            virtual_root_name,
            batch_size=None,
        )

    def _build(
        self,
        body_ids: Sequence[int],
        clients: Sequence[int],
        link_names: Sequence[str] | None,
        virtual_root: tuple[ArrayLike, ArrayLike] | None,
        virtual_root_name: str,
        batch_size: int | None,
    ) -> None:
        """Resolves the tree on the first body, checks the others match, builds the arrays."""
        self._clients = [_check_client(client) for client in clients]
        self._client = self._clients[0]
        self._bodies: list[tuple[int, int]] = []
        self._link_indices: list[int] = []
        self._base_to_link: _Pose | None = None
        self._with_com = False
        if not body_ids:
            super().__init__(
                [], body_names=(), virtual_root=virtual_root, virtual_root_name=virtual_root_name
            )
            return
        bodies = [
            (_check_body(body, client, "body_id"), client)
            for body, client in zip(body_ids, self._clients, strict=True)
        ]
        body, client = bodies[0]
        base_name = _base_name(body, client)
        all_link_names = _link_names(body, client)
        joint_infos = [
            p.getJointInfo(body, j, physicsClientId=client) for j in range(len(all_link_names))
        ]
        link_parents = [int(info[_JOINT_PARENT_INDEX]) for info in joint_infos]
        for other, other_client in bodies[1:]:
            names = (_base_name(other, other_client), *_link_names(other, other_client))
            if names != (base_name, *all_link_names):
                raise ValueError(
                    f"body {other} has the links {list(names)}, body {body} has "
                    f"{[base_name, *all_link_names]}: a batch observes copies of one multibody"
                )
        if link_names is None:
            links = list(range(len(joint_infos)))
        else:
            links = _resolve_link_names(link_names, base_name, all_link_names)
        parents = _nearest_observed_ancestors(links, link_parents, all_link_names, base_name)

        self._bodies = bodies
        self._link_indices = links
        base_position, base_rotation = _inertial_frame(body, _BASE_LINK, client)
        self._base_to_link = _inverse_or_none(base_position, base_rotation)
        # Some centre of mass off its link origin: read COM positions and correct velocities.
        self._with_com = _is_offset(base_position) or any(
            _is_offset(_inertial_frame(body, j, client)[0]) for j in links
        )
        super().__init__(
            parents,
            body_names=(base_name, *(all_link_names[j] for j in links)),
            virtual_root=virtual_root,
            virtual_root_name=virtual_root_name,
            batch_size=batch_size,
        )

    @property
    def body_id(self) -> int | None:
        """The PyBullet multibody id (the first tree's in a batch), or None with no bodies."""
        return self._bodies[0][0] if self._bodies else None

    @property
    def client(self) -> int:
        """The PyBullet physics client id (the first tree's in a batch)."""
        return self._client

    @property
    def link_indices(self) -> tuple[int, ...]:
        """PyBullet link index of each real pose: -1 for the base, then the observed links."""
        if not self._bodies:
            return ()
        return (_BASE_LINK, *self._link_indices)

    def read_world_state(self) -> BodyStates:
        """Reads the base and the observed links in one batch.

        Returns:
            ``BodyStates`` of the real bodies (base first), world frame: link-frame positions
            (n, 3) m, link-frame rotations (n, 4) (x, y, z, w), link-origin linear velocities
            (n, 3) m/s, angular velocities (n, 3) rad/s; with a leading axis of trees for a
            batch extractor.

        Raises:
            RuntimeError: if PyBullet fails to read the body (for example it was removed).
        """
        if not self._bodies:
            return _empty_states()
        return _read_states(self, len(self._bodies), 1 + len(self._link_indices))

    def _read_rows(self, out: FloatArray, trees: NDArray[np.intp] | None = None) -> None:
        """Fills ``out`` (trees, n, 13) with the packed world states of every tree.

        Per tree: the base's pose and velocity and one ``getLinkStates``; then one conversion
        of everything read into floats. ``trees`` (a batch's subset) selects which.
        """
        bodies = self._bodies if trees is None else [self._bodies[k] for k in trees.tolist()]
        links = self._link_indices
        get_pose, get_velocity = p.getBasePositionAndOrientation, p.getBaseVelocity
        get_links = p.getLinkStates
        reads = []
        try:
            for body, client in bodies:
                reads.append(
                    (
                        get_pose(body, physicsClientId=client),
                        get_velocity(body, physicsClientId=client),
                        get_links(
                            body,
                            links,
                            computeLinkVelocity=1,
                            computeForwardKinematics=1,
                            physicsClientId=client,
                        )
                        if links
                        else (),
                    )
                )
        except p.error as error:
            body, client = bodies[len(reads)]
            raise RuntimeError(
                f"PyBullet could not read body {body} ({self.root_name!r}) in physics client "
                f"{client}: {error}"
            ) from error
        out[...] = self._unpack(reads)

    def _unpack(self, reads: Sequence[tuple[_Pose, tuple[_Vec3, _Vec3], Any]]) -> FloatArray:
        """Turns PyBullet's nested tuples into (trees, n, 13) packed rows in one conversion.

        Args:
            reads: per tree, ``(getBasePositionAndOrientation`` (the base's COM frame),
                ``getBaseVelocity`` (COM linear and angular velocity), ``getLinkStates``
                with velocities, one entry per observed link).
        """
        to_link = self._base_to_link
        with_com = self._with_com
        link_row = _LINK_ROW_WITH_COM if with_com else _LINK_ROW
        width = _WIDTH_WITH_COM if with_com else _WIDTH

        def tree_rows(read: tuple[_Pose, tuple[_Vec3, _Vec3], Any]) -> Any:
            base_pose, base_velocity, link_states = read
            base_position, base_rotation = (
                base_pose if to_link is None else _compose(*base_pose, *to_link)
            )
            base_row = (base_position, *base_velocity, base_rotation)
            if with_com:
                base_row = (*base_row, base_pose[0])
            return chain((base_row,), map(link_row, link_states))

        trees = len(reads)
        n = 1 + len(self._link_indices)
        flat = np.fromiter(
            _flatten(_flatten(_flatten(map(tree_rows, reads)))),
            dtype=np.float64,
            count=trees * n * width,
        )
        return _packed_rows(flat.reshape(trees, n, width))


class ArticulationBatchPoseExtractor(ArticulationPoseExtractor):
    """Poses of many copies of one PyBullet multibody at once: a batch extractor.

    Every body must have the same links (the first body's tree is resolved and the others are
    checked against its link names). The arrays have a leading axis of trees (see
    ``PoseExtractor``); each update is one ``getLinkStates`` plus the two base reads per body,
    and one conversion and one pass of the maths for all of them. Tree ``k`` is exactly what
    an :class:`ArticulationPoseExtractor` of ``body_ids[k]`` gives.

    Args:
        body_ids: the multibodies, one per tree, at least one.
        client: the physics client of every body, or one client id per body (the bodies may
            live in several worlds).
        link_names: as for :class:`ArticulationPoseExtractor`.
        virtual_root: optional ``(positions (trees, 3), rotations (trees, 4))``, or one pose
            for every tree.
        virtual_root_name: the virtual root's name in ``body_names``.

    Raises:
        TypeError, ValueError: as :class:`ArticulationPoseExtractor`, and for an empty
            ``body_ids``, a client list of another length, or bodies with different links.
    """

    def __init__(
        self,
        body_ids: Sequence[int],
        *,
        client: int | Sequence[int],
        link_names: Sequence[str] | None = None,
        virtual_root: tuple[ArrayLike, ArrayLike] | None = None,
        virtual_root_name: str = "virtual_root",
    ) -> None:
        bodies = list(body_ids)
        if not bodies:
            raise ValueError("body_ids must name at least one body")
        if isinstance(client, int | np.integer) and not isinstance(client, bool):
            clients = [int(client)] * len(bodies)
        else:
            clients = list(client)
            if len(clients) != len(bodies):
                raise ValueError(
                    f"client must be one id or one per body ({len(bodies)}), got {clients!r}"
                )
        self._build(bodies, clients, link_names, virtual_root, virtual_root_name, len(bodies))

    @property
    def body_ids(self) -> tuple[int, ...]:
        """The PyBullet multibody id of each tree."""
        return tuple(body for body, _ in self._bodies)

    @property
    def clients(self) -> tuple[int, ...]:
        """The physics client id of each tree."""
        return tuple(client for _, client in self._bodies)


class RigidBodyPoseExtractor(PoseExtractor):
    """Poses of separate bodies joined by constraints (ML-Agents' Rigidbody + Joint).

    Each body is a PyBullet multibody with no links (``createMultiBody`` or a one-link URDF);
    a constraint made with ``createConstraint(parent, -1, child, -1, ...)`` plays the part
    of a joint whose ``connectedBody`` is ``parent``. The tree is found once, here: depth
    first from the root along constraints from parent to child, children in constraint-id
    order (constraints to the world, id -1, are ignored). The pose order is that depth-first
    order, so every parent comes before its children. Each :meth:`read_world_state` calls
    ``getBasePositionAndOrientation`` and ``getBaseVelocity`` once per body (PyBullet has no
    batched form for several bodies) and converts everything in one go. Frames and units as
    in the module docstring: link frames, link-origin velocities.

    Args:
        root_body_id: PyBullet id of the root body; None gives an extractor with no bodies
            (0 poses, updates do nothing), ML-Agents' null root.
        client: PyBullet physics client id, passed on every call.
        body_ids: optional set of body ids the tree may use (ML-Agents' ``rootGameObject``):
            constraints to other bodies are not followed. It must hold the root, and every
            body in it must be reached from the root.
        virtual_root: optional ``(position (3,), rotation (4,) x, y, z, w)`` world frame to
            stand at index 0 (see ``PoseExtractor``).
        virtual_root_name: the virtual root's name in ``body_names``.

    Raises:
        TypeError: if an id or ``client`` is not an int.
        ValueError: if the client is not connected, a body does not exist, a body has links,
            the root is not in ``body_ids``, a body is reached twice (the constraints form a
            loop), or a body in ``body_ids`` is not reached from the root.
    """

    def __init__(
        self,
        root_body_id: int | None,
        *,
        client: int,
        body_ids: Collection[int] | None = None,
        virtual_root: tuple[ArrayLike, ArrayLike] | None = None,
        virtual_root_name: str = "virtual_root",
    ) -> None:
        self._client = _check_client(client)
        self._body_ids: list[int] = []
        self._base_to_link: list[_Pose | None] | None = None
        if root_body_id is None:
            super().__init__(
                [], body_names=(), virtual_root=virtual_root, virtual_root_name=virtual_root_name
            )
            return
        root = _check_body(root_body_id, self._client, "root_body_id")
        allowed = None
        if body_ids is not None:
            allowed = {_check_body(b, self._client, "body_ids") for b in body_ids}
            if root not in allowed:
                raise ValueError(f"root body {root} is not in body_ids {sorted(allowed)}")
        order, parents = _constraint_tree(root, allowed, self._client)
        if allowed is not None and len(order) != len(allowed):
            missing = sorted(allowed.difference(order))
            raise ValueError(
                f"bodies {missing} in body_ids are not reached from root body {root} along "
                "constraints (parent -> child)"
            )
        names = []
        for body in order:
            name = _base_name(body, self._client)
            num_links = p.getNumJoints(body, physicsClientId=self._client)
            if num_links:
                raise ValueError(
                    f"body {body} ({name!r}) has {num_links} links; RigidBodyPoseExtractor reads "
                    "bodies without links (use ArticulationPoseExtractor for a multibody)"
                )
            names.append(name)
        frames = [_inertial_frame(body, _BASE_LINK, self._client) for body in order]
        base_to_link = [_inverse_or_none(*frame) for frame in frames]
        self._body_ids = order
        # None when every COM frame is its link frame: then the read needs no correction.
        self._base_to_link = None if all(f is None for f in base_to_link) else base_to_link
        super().__init__(
            parents,
            body_names=names,
            virtual_root=virtual_root,
            virtual_root_name=virtual_root_name,
        )

    @property
    def body_ids(self) -> tuple[int, ...]:
        """PyBullet body id of each real pose, in pose order."""
        return tuple(self._body_ids)

    @property
    def client(self) -> int:
        """The PyBullet physics client id."""
        return self._client

    def read_world_state(self) -> BodyStates:
        """Reads every body's base state.

        Returns:
            ``BodyStates`` of the real bodies in pose order, world frame: link-frame
            positions (n, 3) m, rotations (n, 4) (x, y, z, w), link-origin linear velocities
            (n, 3) m/s, angular velocities (n, 3) rad/s.

        Raises:
            RuntimeError: if PyBullet fails to read a body (for example it was removed).
        """
        if not self._body_ids:
            return _empty_states()
        return _read_states(self, 1, len(self._body_ids))

    def _read_rows(self, out: FloatArray) -> None:
        """Fills ``out`` (1, n, 13) with the packed world states (``read_world_state``'s reads)."""
        client = self._client
        get_pose, get_velocity = p.getBasePositionAndOrientation, p.getBaseVelocity
        try:
            poses = [get_pose(body, physicsClientId=client) for body in self._body_ids]
            velocities = [get_velocity(body, physicsClientId=client) for body in self._body_ids]
        except p.error as error:
            raise RuntimeError(
                f"PyBullet could not read the bodies {self._body_ids} in physics client "
                f"{client}: {error}"
            ) from error
        out[0] = self._unpack(poses, velocities)

    def _unpack(
        self, poses: Sequence[_Pose], velocities: Sequence[tuple[_Vec3, _Vec3]]
    ) -> FloatArray:
        """Turns PyBullet's nested tuples into (n, 13) packed rows in one conversion.

        Args:
            poses: ``getBasePositionAndOrientation`` of each body: its COM frame.
            velocities: ``getBaseVelocity`` of each body: COM linear and angular velocity.
        """
        n = len(poses)
        if self._base_to_link is None:
            rows = (
                (pose[0], *velocity, pose[1])
                for pose, velocity in zip(poses, velocities, strict=True)
            )
            flat = np.fromiter(_flatten(_flatten(rows)), np.float64, count=n * _WIDTH)
            return flat.reshape(n, _WIDTH)
        # One step per body, like the reads: moves each COM frame back to its link frame.
        link_poses = (
            pose if to_link is None else _compose(*pose, *to_link)
            for pose, to_link in zip(poses, self._base_to_link, strict=True)
        )
        link_rows = (
            (link_pose[0], *velocity, link_pose[1], pose[0])
            for link_pose, pose, velocity in zip(link_poses, poses, velocities, strict=True)
        )
        flat = np.fromiter(_flatten(_flatten(link_rows)), np.float64, count=n * _WIDTH_WITH_COM)
        return _packed_rows(flat.reshape(n, _WIDTH_WITH_COM))


# ------------------------------------------------------------------------------ helpers
def _check_client(client: int) -> int:
    """Returns ``client`` as an int after checking it names a connected physics server."""
    if isinstance(client, bool) or not isinstance(client, int | np.integer):
        raise TypeError(f"client must be a PyBullet physics client id (int), got {client!r}")
    client = int(client)
    if not p.isConnected(physicsClientId=client):
        raise ValueError(f"PyBullet physics client {client} is not connected")
    return client


def _check_body(body_id: int, client: int, what: str) -> int:
    """Returns ``body_id`` as an int after checking the body exists in ``client``."""
    if isinstance(body_id, bool) or not isinstance(body_id, int | np.integer):
        raise TypeError(f"{what}: a PyBullet body id must be an int, got {body_id!r}")
    body = int(body_id)
    try:
        p.getBodyInfo(body, physicsClientId=client)
    except p.error as error:
        raise ValueError(
            f"{what}: no body with id {body} in PyBullet physics client {client} ({error})"
        ) from error
    return body


def _link_names(body: int, client: int) -> tuple[str, ...]:
    """URDF names of every link of ``body``, in link-index order."""
    return tuple(
        p.getJointInfo(body, j, physicsClientId=client)[_JOINT_LINK_NAME].decode("utf-8")
        for j in range(p.getNumJoints(body, physicsClientId=client))
    )


def _base_name(body: int, client: int) -> str:
    """The name of a body's base link (URDF root link name)."""
    return p.getBodyInfo(body, physicsClientId=client)[_BODY_BASE_NAME].decode("utf-8")


def _inertial_frame(body: int, link: int, client: int) -> tuple[_Vec3, _Quat]:
    """The centre-of-mass frame of ``link`` (-1: the base) in its link frame."""
    info = p.getDynamicsInfo(body, link, physicsClientId=client)
    return info[_DYNAMICS_INERTIAL_POSITION], info[_DYNAMICS_INERTIAL_ORIENTATION]


def _is_offset(position: _Vec3) -> bool:
    """Whether a centre of mass lies off its link origin."""
    return bool(np.any(np.abs(position) > _OFFSET_TOLERANCE))


def _inverse_or_none(position: _Vec3, rotation: _Quat) -> _Pose | None:
    """The link frame in the COM frame (the inverse inertial frame); None if it is identity."""
    rotation_offset = np.abs(np.asarray(rotation)) - (0.0, 0.0, 0.0, 1.0)
    if not _is_offset(position) and np.all(np.abs(rotation_offset) <= _OFFSET_TOLERANCE):
        return None
    inv_position, inv_rotation = transforms.pose_inverse(position, rotation)
    px, py, pz = inv_position.tolist()
    qx, qy, qz, qw = inv_rotation.tolist()
    return (px, py, pz), (qx, qy, qz, qw)


def _compose(position_a: _Vec3, rotation_a: _Quat, position_b: _Vec3, rotation_b: _Quat) -> _Pose:
    """One pose product ``a * b`` in Python floats (``transforms.pose_multiply`` semantics).

    Used on the read path for a single base, where plain floats take ~2 us and a numpy call
    per operation ~40 us.

    Args:
        position_a: (3,) position of ``a``.
        rotation_a: (4,) unit quaternion (x, y, z, w) of ``a``.
        position_b: (3,) position of ``b`` in frame ``a``.
        rotation_b: (4,) unit quaternion (x, y, z, w) of ``b`` in frame ``a``.

    Returns:
        ``(position, rotation)``: ``q_a * p_b + p_a`` and ``q_a * q_b``.
    """
    ax, ay, az = position_a
    x, y, z, w = rotation_a
    bx, by, bz = position_b
    qx, qy, qz, qw = rotation_b
    # q * v * conj(q) = v + w t + u x t with t = 2 u x v (u: vector part of q).
    tx = 2.0 * (y * bz - z * by)
    ty = 2.0 * (z * bx - x * bz)
    tz = 2.0 * (x * by - y * bx)
    position = (
        ax + bx + w * tx + y * tz - z * ty,
        ay + by + w * ty + z * tx - x * tz,
        az + bz + w * tz + x * ty - y * tx,
    )
    rotation = (
        w * qx + x * qw + y * qz - z * qy,
        w * qy - x * qz + y * qw + z * qx,
        w * qz + x * qy - y * qx + z * qw,
        w * qw - x * qx - y * qy - z * qz,
    )
    return position, rotation


def _packed_rows(rows: FloatArray) -> FloatArray:
    """The (..., n, 13) packed states of an (..., n, 13) or (..., n, 16) read array.

    With the COM column present, the COM velocity becomes the link origin's:
    ``v_link = v_com + w x (p_link - p_com)``, for all rows at once.
    """
    if rows.shape[-1] == _WIDTH_WITH_COM:
        lever = rows[..., _POSITION] - rows[..., _COM]
        rows[..., _LINEAR] += transforms.cross(rows[..., _ANGULAR], lever)
        return rows[..., :_WIDTH]
    return rows


def _read_states(
    extractor: ArticulationPoseExtractor | RigidBodyPoseExtractor, trees: int, n: int
) -> BodyStates:
    """``BodyStates`` (views of one fresh packed array) from an extractor's packed read.

    Shapes (n, ...) for a single tree, (trees, n, ...) for a batch extractor.
    """
    rows = np.empty((trees, n, _WIDTH))
    extractor._read_rows(rows)
    if extractor.batch_size is None:
        rows = rows[0]
    return BodyStates(
        rows[..., _POSITION], rows[..., _ROTATION], rows[..., _LINEAR], rows[..., _ANGULAR]
    )


def _empty_states() -> BodyStates:
    """``BodyStates`` of no bodies."""
    return BodyStates(np.zeros((0, 3)), np.zeros((0, 4)), np.zeros((0, 3)), np.zeros((0, 3)))


def _resolve_link_names(
    link_names: Sequence[str], base_name: str, all_link_names: Sequence[str]
) -> list[int]:
    """Link indices of ``link_names`` (base first), with every naming error reported."""
    if isinstance(link_names, str):
        raise TypeError(
            f"link_names must be a sequence of link names, got the string {link_names!r}"
        )
    names = list(link_names)
    available = [base_name, *all_link_names]
    if not names or names[0] != base_name:
        first = repr(names[0]) if names else "nothing"
        raise ValueError(
            f"link_names must start with the base's name {base_name!r}, got {first}; "
            f"available names: {available}"
        )
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"link_names repeats {repeated}")
    unknown = [name for name in names[1:] if name not in all_link_names]
    if unknown:
        raise ValueError(f"unknown link names {unknown}; available names: {available}")
    ambiguous = [name for name in names[1:] if all_link_names.count(name) > 1]
    if ambiguous:
        raise ValueError(f"link names {ambiguous} name several links of this body")
    return [all_link_names.index(name) for name in names[1:]]


def _nearest_observed_ancestors(
    links: Sequence[int], link_parents: Sequence[int], link_names: Sequence[str], base_name: str
) -> list[int]:
    """Parent pose index of each pose: the nearest observed ancestor in the joint tree.

    Pose 0 is the base; pose ``i + 1`` is ``links[i]``.

    Raises:
        ValueError: naming the link and its ancestor if the ancestor comes after it.
    """
    pose_of_link = {link: pose for pose, link in enumerate(links, start=1)}
    pose_of_link[_BASE_LINK] = 0
    parents = [-1]
    for pose, link in enumerate(links, start=1):
        ancestor = link_parents[link]
        while ancestor not in pose_of_link:
            ancestor = link_parents[ancestor]
        parent_pose = pose_of_link[ancestor]
        if parent_pose >= pose:
            ancestor_name = base_name if ancestor == _BASE_LINK else link_names[ancestor]
            raise ValueError(
                f"link {link_names[link]!r} (pose {pose}) comes before its nearest observed "
                f"ancestor {ancestor_name!r} (pose {parent_pose}): list parents first"
            )
        parents.append(parent_pose)
    return parents


def _constraint_tree(
    root: int, allowed: set[int] | None, client: int
) -> tuple[list[int], list[int]]:
    """Depth-first tree of bodies from ``root`` along parent -> child constraints.

    Returns:
        ``(bodies, parent_indices)`` in depth-first order, children in constraint-id order.

    Raises:
        ValueError: if a body is reached twice.
    """
    children: dict[int, list[tuple[int, int]]] = {}
    for i in range(p.getNumConstraints(physicsClientId=client)):
        uid = p.getConstraintUniqueId(i, physicsClientId=client)
        info = p.getConstraintInfo(uid, physicsClientId=client)
        parent, child = info[_CONSTRAINT_PARENT_BODY], info[_CONSTRAINT_CHILD_BODY]
        if parent < 0 or child < 0 or parent == child:
            continue  # a constraint to the world, or inside one multibody
        if allowed is not None and (parent not in allowed or child not in allowed):
            continue
        children.setdefault(parent, []).append((uid, child))
    order: list[int] = []
    parents: list[int] = []
    reached = {root}
    stack = [(root, -1)]  # (body, parent pose index)
    while stack:
        body, parent_pose = stack.pop()
        pose = len(order)
        order.append(body)
        parents.append(parent_pose)
        # Reversed onto the stack so the lowest constraint id is visited first.
        for uid, child in sorted(children.get(body, ()), reverse=True):
            if child in reached:
                raise ValueError(
                    f"body {child} is reached twice from root body {root} (again through "
                    f"constraint {uid} from body {body}): the constraints must form a tree"
                )
            reached.add(child)
            stack.append((child, pose))
    return order, parents
