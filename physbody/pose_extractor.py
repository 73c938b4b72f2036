"""PoseExtractor: world states of a body tree -> model-space and local-space arrays.

A pose tree is a ``parent_indices`` array: index 0 is the root with parent -1, and every other
body's parent has a smaller index. Subclasses say how the world states of their bodies are read
(``read_world_state``), all bodies at once; this class turns them into model space (relative to
the root) and local space (relative to each body's parent) with vectorised numpy.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from physbody import transforms

__all__ = [
    "LOCAL_SPACE",
    "MODEL_SPACE",
    "BodyStates",
    "PoseExtractor",
    "validate_parent_indices",
]

FloatArray = NDArray[np.float64]

_IDENTITY_ROTATION = (0.0, 0.0, 0.0, 1.0)
_IDENTITY = np.array(_IDENTITY_ROTATION)
_IDENTITY.flags.writeable = False
_ROTATION = transforms.STATE_ROTATION
_VECTORS = transforms.STATE_VECTORS
#: Index of each space in ``PoseExtractor.packed_spaces``.
MODEL_SPACE = 0
LOCAL_SPACE = 1


class BodyStates(NamedTuple):
    """World-frame states of ``n`` bodies, in the extractor's body order.

    Attributes:
        position: (n, 3) link-frame origins, metres, world frame.
        rotation: (n, 4) link-frame orientations, quaternions (x, y, z, w), world frame.
        linear_velocity: (n, 3) velocity of the link-frame origin, m/s, world frame.
        angular_velocity: (n, 3) angular velocity, rad/s, world frame.
    """

    position: FloatArray
    rotation: FloatArray
    linear_velocity: FloatArray
    angular_velocity: FloatArray


def validate_parent_indices(parent_indices: ArrayLike) -> NDArray[np.intp]:
    """Checks a pose tree and returns it as a read-only integer array.

    Args:
        parent_indices: (n,) integers; index 0 must be -1 (the root) and every other entry
            must name a smaller index (``0 <= parent_indices[i] < i``). Empty is allowed.

    Returns:
        (n,) read-only ``intp`` array.

    Raises:
        ValueError: naming the first bad index and its value.
        TypeError: if the entries are not integers.
    """
    raw = np.asarray(parent_indices)
    if raw.size == 0:
        raw = raw.astype(np.intp)
    if raw.ndim != 1:
        raise ValueError(f"parent_indices must be 1-D, got shape {raw.shape}")
    if not np.issubdtype(raw.dtype, np.integer):
        raise TypeError(f"parent_indices must be integers, got {raw.tolist()!r}")
    parents = raw.astype(np.intp)
    if parents.size and parents[0] != -1:
        raise ValueError(f"Expected parent_indices[0] to be -1 (the root), got {parents[0]}")
    bad = np.flatnonzero((parents[1:] < 0) | (parents[1:] >= np.arange(1, parents.size))) + 1
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"parent_indices[{i}] = {parents[i]} is invalid: every body after the root needs a "
            f"parent index in [0, {i - 1}] (bad indices: {bad.tolist()})"
        )
    parents.flags.writeable = False
    return parents


class PoseExtractor(abc.ABC):
    """Turns the world states of a body tree into model-space and local-space arrays.

    Subclasses implement :meth:`read_world_state`, which returns the world states of their own
    bodies in one call. With a virtual root (a caller-supplied frame, as ML-Agents release 6
    added), that frame stands at index 0 with zero velocity, the real bodies follow at indices
    1..n and the real root's parent is 0. The virtual root's pose is disabled by default, so a
    sensor does not observe it (it is the identity in model space); every real body is enabled.

    After :meth:`update` the arrays ``model_positions`` ... ``local_angular_velocities`` hold
    one row per pose (shapes (num_poses, 3) or (num_poses, 4)). They are read-only and replaced
    at each update: copy them to keep values across updates.

    A batch extractor (``batch_size`` given) observes that many identical trees at once, for
    example the same robot in N agents: every array gains a leading axis of ``batch_size``
    trees (``(batch_size, num_poses, 3)`` ...), the read fills all trees' rows and the maths
    runs once over all of them. The tree (``parent_indices``, names, enabled poses) is shared.

    Args:
        parent_indices: (n,) pose tree of the real bodies (see ``validate_parent_indices``);
            empty for an extractor with no root, which has 0 poses and whose updates do nothing.
        body_names: one name per real body; defaults to ``"body<i>"``.
        virtual_root: optional ``(position (3,), rotation (4,) x, y, z, w)`` of a frame to
            stand at index 0; move it later with :meth:`set_virtual_root`.
        virtual_root_name: name of the virtual root in ``body_names``.
        batch_size: None for one tree; an int >= 1 for a batch extractor of that many trees
            (then ``virtual_root`` is ``(positions (batch_size, 3), rotations (batch_size, 4))``
            or one pose for every tree).
    """

    def __init__(
        self,
        parent_indices: ArrayLike,
        *,
        body_names: Sequence[str] | None = None,
        virtual_root: tuple[ArrayLike, ArrayLike] | None = None,
        virtual_root_name: str = "virtual_root",
        batch_size: int | None = None,
    ) -> None:
        if batch_size is not None and (
            isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1
        ):
            raise ValueError(f"batch_size must be None or an int >= 1, got {batch_size!r}")
        real_parents = validate_parent_indices(parent_indices)
        num_real = int(real_parents.size)
        if body_names is None:
            body_names = tuple(f"body{i}" for i in range(num_real))
        names = tuple(body_names)
        if len(names) != num_real:
            raise ValueError(
                f"body_names has {len(names)} entries, expected one per body ({num_real})"
            )
        self._has_virtual_root = virtual_root is not None and num_real > 0
        self._offset = int(self._has_virtual_root)
        if self._has_virtual_root:
            parents = np.concatenate(([-1], real_parents + 1))
            parents[1] = 0
            names = (virtual_root_name, *names)
        else:
            parents = real_parents.copy()
        parents.flags.writeable = False
        self._parent_indices = parents
        self._body_names = names
        self._real_root_name = names[self._offset] if num_real else None
        n = parents.size
        self._enabled = np.ones(n, dtype=bool)
        if self._has_virtual_root:
            self._enabled[0] = False
        # Packed world states of every pose (transforms.STATE_* columns), the virtual root's
        # row included with zero velocity; model and local space side by side in one array.
        # With a batch, one leading axis of trees on every array; a single tree is a batch of
        # one internally, and its public arrays drop that axis.
        self._batch_size = batch_size
        trees = 1 if batch_size is None else batch_size
        self._world = np.zeros((trees, n, transforms.STATE_WIDTH))
        self._world[..., transforms.STATE_ROTATION] = _IDENTITY_ROTATION
        self._spaces = np.zeros((trees, 2, n, transforms.STATE_WIDTH))
        self._spaces[..., transforms.STATE_ROTATION] = _IDENTITY_ROTATION
        # Reference row of every row in each space: the root (row 0) for model space, the
        # parent for local space, the root being its own parent (its local state is zero).
        self._references = np.stack((np.zeros(n, dtype=np.intp), np.maximum(parents, 0)))
        if virtual_root is not None and self._has_virtual_root:
            if len(virtual_root) != 2:
                raise ValueError(
                    "virtual_root must be a (position (3,), rotation (4,)) pair, "
                    f"got {len(virtual_root)} items: {virtual_root!r}"
                )
            self.set_virtual_root(*virtual_root)

    # ----------------------------------------------------------------------------- tree
    @property
    def num_poses(self) -> int:
        """Number of poses, the virtual root included."""
        return int(self._parent_indices.size)

    @property
    def parent_indices(self) -> NDArray[np.intp]:
        """(num_poses,) read-only parent index of each pose; -1 for the root."""
        return self._parent_indices

    @property
    def body_names(self) -> tuple[str, ...]:
        """Name of each pose, in index order (the virtual root first, when there is one)."""
        return self._body_names

    @property
    def root_name(self) -> str | None:
        """Name of the real root body (not the virtual root); None with no bodies."""
        return self._real_root_name

    @property
    def batch_size(self) -> int | None:
        """Number of trees of a batch extractor; None for a single tree."""
        return self._batch_size

    @property
    def has_virtual_root(self) -> bool:
        """Whether index 0 is a caller-supplied virtual root."""
        return self._has_virtual_root

    def get_parent_index(self, index: int) -> int:
        """Parent index of pose ``index`` (-1 for the root).

        Raises:
            IndexError: if ``index`` is not in ``[0, num_poses)``.
        """
        if not 0 <= index < self.num_poses:
            raise IndexError(f"pose index {index} out of range [0, {self.num_poses})")
        return int(self._parent_indices[index])

    # -------------------------------------------------------------------------- enabled
    @property
    def pose_enabled(self) -> NDArray[np.bool_]:
        """(num_poses,) read-only flags: which poses a sensor observes."""
        view = self._enabled.view()
        view.flags.writeable = False
        return view

    @property
    def num_enabled_poses(self) -> int:
        """Number of poses a sensor observes."""
        return int(np.count_nonzero(self._enabled))

    @property
    def enabled_indices(self) -> NDArray[np.intp]:
        """Indices of the enabled poses, in index order."""
        return np.flatnonzero(self._enabled)

    def set_pose_enabled(self, index: int, enabled: bool) -> None:
        """Enables or disables observing pose ``index``.

        Raises:
            IndexError: if ``index`` is out of range.
            TypeError: if ``enabled`` is not a bool.
        """
        self.get_parent_index(index)
        if not isinstance(enabled, bool | np.bool_):
            raise TypeError(f"enabled must be a bool, got {enabled!r}")
        self._enabled[index] = bool(enabled)

    # ---------------------------------------------------------------------- virtual root
    def set_virtual_root(
        self, position: ArrayLike, rotation: ArrayLike, trees: NDArray[np.intp] | None = None
    ) -> None:
        """Moves the virtual root (index 0) to a world pose; its velocity stays zero.

        Args:
            position: (3,) world position, metres; (trees, 3) for a batch extractor (or (3,)
                for every tree).
            rotation: (4,) world rotation (x, y, z, w), normalised here; (trees, 4) for a
                batch extractor (or (4,) for every tree).
            trees: for a batch extractor, the (k,) indices of the trees to move (then
                ``position`` is (k, 3) or (3,)); None for all.

        Raises:
            RuntimeError: if this extractor has no virtual root.
            ValueError: if the shapes are wrong, a value is not finite or a rotation is zero.
        """
        if not self._has_virtual_root:
            raise RuntimeError("this PoseExtractor was built without a virtual root")
        if trees is not None and self._batch_size is None:
            raise ValueError("trees= selects trees of a batch extractor; this one has one tree")
        pos = np.asarray(position, dtype=np.float64)
        rot = np.asarray(rotation, dtype=np.float64)
        count = self._world.shape[0] if trees is None else len(trees)
        allowed = ((3,), (count, 3)) if self._batch_size is not None else ((3,),)
        if pos.shape not in allowed or rot.shape[:-1] != pos.shape[:-1] or rot.shape[-1:] != (4,):
            expected = "(3,) and (4,)"
            if self._batch_size is not None:
                expected = f"({count}, 3) and ({count}, 4), or (3,) and (4,)"
            raise ValueError(
                f"virtual root needs position and rotation of shapes {expected}, got "
                f"{pos.shape}, {rot.shape}"
            )
        norm = np.sqrt(np.einsum("...i,...i->...", rot, rot))
        if not (np.isfinite(norm).all() and np.isfinite(pos).all()):
            raise ValueError(
                f"virtual root pose must be finite, got position {pos}, rotation {rot}"
            )
        if np.any(norm < 1e-9):
            raise ValueError(f"virtual root rotation must be non-zero, got {rot}")
        rows = slice(None) if trees is None else trees
        self._world[rows, 0, transforms.STATE_POSITION] = pos
        self._world[rows, 0, transforms.STATE_ROTATION] = rot / norm[..., None]

    # --------------------------------------------------------------------------- update
    @abc.abstractmethod
    def read_world_state(self) -> BodyStates:
        """Reads the world states of the real bodies (not the virtual root), all at once.

        Returns:
            ``BodyStates`` with one row per real body, in the order of ``parent_indices``.
        """

    def update(
        self,
        *,
        model_space: bool = True,
        local_space: bool = True,
        trees: NDArray[np.intp] | None = None,
    ) -> None:
        """Reads the world states once and recomputes the requested spaces.

        Args:
            model_space: recompute the model-space arrays.
            local_space: recompute the local-space arrays.
            trees: for a batch extractor, the (k,) indices of the trees to read and recompute
                (the others keep their values); None for all.

        Raises:
            ValueError: if the read returns wrong shapes or non-finite values, or ``trees`` is
                given to a single-tree extractor.
        """
        self.update_fields(
            model_vectors=model_space,
            model_rotations=model_space,
            local_vectors=local_space,
            local_rotations=local_space,
            trees=trees,
        )

    def update_fields(
        self,
        *,
        model_vectors: bool = True,
        model_rotations: bool = True,
        local_vectors: bool = True,
        local_rotations: bool = True,
        trees: NDArray[np.intp] | None = None,
    ) -> None:
        """Reads the world states once and recomputes only the requested fields.

        Vectors are positions, linear and angular velocities; rotations the quaternions. A
        field not requested keeps its last value. Model space shares one reference rotation
        per tree (the root's), so its vectors cost one small matrix product per tree; local
        vectors need one rotation matrix per body (then both spaces are computed in one pass).
        A sensor asks for the fields it writes.

        Args:
            model_vectors: recompute ``model_positions`` and the model-space velocities.
            model_rotations: recompute ``model_rotations``.
            local_vectors: recompute ``local_positions`` and the local-space velocities.
            local_rotations: recompute ``local_rotations``.
            trees: as for :meth:`update`.

        Raises:
            ValueError: as :meth:`update`.
        """
        if self.num_poses == 0 or not (
            model_vectors or model_rotations or local_vectors or local_rotations
        ):
            return
        if trees is not None and self._batch_size is None:
            raise ValueError("trees= selects trees of a batch extractor; this one has one tree")
        full = trees is None
        world = self._world if full else self._world[trees]
        real = world[:, self._offset :]
        if full:
            self._read_rows(real)
        else:
            self._read_rows(real, trees)
        # One sum is cheaper than a finite test per value; a huge finite sum can overflow,
        # so the exact test runs before anything is raised.
        if not np.isfinite(real.sum()) and not np.isfinite(real).all():
            self._raise_non_finite(real, trees)
        rotation = real[..., _ROTATION]
        rotation /= np.sqrt(np.einsum("...i,...i->...", rotation, rotation))[..., None]
        spaces = self._spaces if full else self._spaces[trees]
        model = model_vectors or model_rotations
        if local_vectors:  # a rotation matrix per body anyway: one pass over both spaces
            if model:
                transforms.relative_rows(world, self._references, spaces)
            else:
                transforms.relative_rows(
                    world, self._references[LOCAL_SPACE], spaces[:, LOCAL_SPACE]
                )
        else:
            if model:
                _relative_to_root(world, spaces[:, MODEL_SPACE], model_vectors, model_rotations)
            if local_rotations:
                parent_rotation = world[:, self._references[LOCAL_SPACE], _ROTATION]
                spaces[:, LOCAL_SPACE, :, _ROTATION] = transforms.quat_conjugate_multiply(
                    parent_rotation, world[..., _ROTATION]
                )
        # The root relative to itself: zero vectors exactly; the identity exactly, not 1e-16.
        spaces[:, :, 0, _ROTATION] = _IDENTITY
        if not full:
            self._world[trees] = world
            self._spaces[trees] = spaces

    def update_model_space_poses(self) -> None:
        """Reads the world states and recomputes model space (ML-Agents' name)."""
        self.update(model_space=True, local_space=False)

    def update_local_space_poses(self) -> None:
        """Reads the world states and recomputes local space (ML-Agents' name)."""
        self.update(model_space=False, local_space=True)

    def _read_rows(self, out: FloatArray) -> None:
        """Fills ``out`` with the real bodies' packed world states (``transforms.STATE_*``).

        This default goes through :meth:`read_world_state` and fills one tree; a subclass may
        override it with a read that fills the packed rows directly (a batch extractor must).

        Args:
            out: (trees, num_real_bodies, 13) view of the world array to fill (one tree unless
                the extractor is a batch extractor).

        Raises:
            ValueError: if ``read_world_state`` returns arrays of the wrong shape.
        """
        if out.shape[0] != 1:
            raise NotImplementedError(
                f"{type(self).__name__} reads one tree; a batch extractor overrides _read_rows"
            )
        states = self.read_world_state()
        out = out[0]
        n_real = out.shape[0]
        columns = (
            transforms.STATE_POSITION,
            transforms.STATE_ROTATION,
            transforms.STATE_LINEAR_VELOCITY,
            transforms.STATE_ANGULAR_VELOCITY,
        )
        for name, array, where in zip(BodyStates._fields, states, columns, strict=True):
            width = where.stop - where.start
            if np.shape(array) != (n_real, width):
                raise ValueError(
                    f"read_world_state() {name} must have shape ({n_real}, {width}), "
                    f"got {np.shape(array)}"
                )
            out[:, where] = array

    def _raise_non_finite(self, real: FloatArray, trees: NDArray[np.intp] | None = None) -> None:
        """Raises ``ValueError`` naming the bodies (and tree) whose world state is not finite."""
        bad = int(np.flatnonzero(~np.isfinite(real).all(axis=(1, 2)))[0])
        tree = bad if trees is None else int(trees[bad])
        rows = np.flatnonzero(~np.isfinite(real[tree]).all(axis=1))
        names = [self._body_names[i + self._offset] for i in rows]
        states = _unpack(real[bad, rows])
        where = f" of tree {tree}" if self._batch_size is not None else ""
        raise ValueError(
            f"non-finite world state{where} for bodies {names}: position "
            f"{states.position.tolist()}, "
            f"rotation {states.rotation.tolist()}, linear velocity "
            f"{states.linear_velocity.tolist()}, angular velocity "
            f"{states.angular_velocity.tolist()}"
        )

    # --------------------------------------------------------------------------- arrays
    @property
    def world_states(self) -> BodyStates:
        """Copies of the world states of every pose as of the last update (virtual root first).

        Shapes (num_poses, ...), or (batch_size, num_poses, ...) for a batch extractor.
        """
        return _unpack(_read_only_view(self._tree_axis(self._world).copy()))

    @property
    def packed_world(self) -> FloatArray:
        """(num_poses, 13) read-only view of the world states as packed rows (no copy).

        ``transforms.STATE_*`` columns; the virtual root first; (batch_size, num_poses, 13) for
        a batch extractor. Overwritten in place by each update: copy to keep (``world_states``
        does).
        """
        return _read_only_view(self._tree_axis(self._world))

    @property
    def packed_spaces(self) -> FloatArray:
        """(2, num_poses, 13) read-only view: model space, local space, as packed rows.

        ``packed_spaces[MODEL_SPACE]`` and ``packed_spaces[LOCAL_SPACE]`` hold one
        ``transforms.STATE_*`` row (position, linear velocity, angular velocity, rotation) per
        pose; (batch_size, 2, num_poses, 13) for a batch extractor. Overwritten in place by
        each update: copy to keep.
        """
        return _read_only_view(self._tree_axis(self._spaces))

    @property
    def model_positions(self) -> FloatArray:
        """(num_poses, 3) positions relative to the root, metres."""
        return self._space_view(MODEL_SPACE, transforms.STATE_POSITION)

    @property
    def model_rotations(self) -> FloatArray:
        """(num_poses, 4) rotations relative to the root, quaternions (x, y, z, w)."""
        return self._space_view(MODEL_SPACE, transforms.STATE_ROTATION)

    @property
    def model_linear_velocities(self) -> FloatArray:
        """(num_poses, 3) ``inv(root_rotation) * (v - v_root)``, m/s."""
        return self._space_view(MODEL_SPACE, transforms.STATE_LINEAR_VELOCITY)

    @property
    def model_angular_velocities(self) -> FloatArray:
        """(num_poses, 3) ``inv(root_rotation) * (w - w_root)``, rad/s."""
        return self._space_view(MODEL_SPACE, transforms.STATE_ANGULAR_VELOCITY)

    @property
    def local_positions(self) -> FloatArray:
        """(num_poses, 3) positions relative to each parent, metres (root: zero)."""
        return self._space_view(LOCAL_SPACE, transforms.STATE_POSITION)

    @property
    def local_rotations(self) -> FloatArray:
        """(num_poses, 4) rotations relative to each parent, (x, y, z, w) (root: identity)."""
        return self._space_view(LOCAL_SPACE, transforms.STATE_ROTATION)

    @property
    def local_linear_velocities(self) -> FloatArray:
        """(num_poses, 3) ``inv(parent_rotation) * (v - v_parent)``, m/s (root: zero)."""
        return self._space_view(LOCAL_SPACE, transforms.STATE_LINEAR_VELOCITY)

    @property
    def local_angular_velocities(self) -> FloatArray:
        """(num_poses, 3) ``inv(parent_rotation) * (w - w_parent)``, rad/s (root: zero)."""
        return self._space_view(LOCAL_SPACE, transforms.STATE_ANGULAR_VELOCITY)

    def _space_view(self, space: int, field: slice) -> FloatArray:
        """Read-only view of one field of one space; overwritten by the next update."""
        return _read_only_view(self._tree_axis(self._spaces[:, space, :, field]))

    def _tree_axis(self, array: FloatArray) -> FloatArray:
        """``array`` (trees, ...) as the public arrays show it: without the axis for one tree."""
        return array if self._batch_size is not None else array[0]


def _relative_to_root(world: FloatArray, out: FloatArray, vectors: bool, rotations: bool) -> None:
    """Model space of (trees, n, 13) world rows into ``out`` (trees, n, 13): row 0 is the root.

    One rotation matrix per tree, ``R(q_root)``: row vectors times it apply its inverse.
    """
    root_rotation = world[:, 0, _ROTATION]
    if vectors:
        trees, n = world.shape[:2]
        matrices = transforms.quat_to_matrix(root_rotation)  # (trees, 3, 3)
        offsets = world[..., _VECTORS] - world[:, :1, _VECTORS]
        out[..., _VECTORS] = (offsets.reshape(trees, 3 * n, 3) @ matrices).reshape(trees, n, 9)
    if rotations:
        out[..., _ROTATION] = transforms.quat_conjugate_multiply(
            root_rotation[:, None, :], world[..., _ROTATION]
        )


def _read_only_view(array: FloatArray) -> FloatArray:
    """A view of ``array`` that cannot be written through."""
    view = array.view()
    view.flags.writeable = False
    return view


def _unpack(rows: FloatArray) -> BodyStates:
    """Splits packed rows (..., 13) into ``BodyStates`` (views of ``rows``)."""
    return BodyStates(
        rows[..., transforms.STATE_POSITION],
        rows[..., transforms.STATE_ROTATION],
        rows[..., transforms.STATE_LINEAR_VELOCITY],
        rows[..., transforms.STATE_ANGULAR_VELOCITY],
    )
