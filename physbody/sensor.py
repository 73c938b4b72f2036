"""PhysicsBodySensor: a PoseExtractor and PhysicsSensorSettings behind a Gymnasium Box."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
from gymnasium import spaces
from numpy.typing import ArrayLike, NDArray

from physbody import transforms
from physbody.bullet import (
    ArticulationBatchPoseExtractor,
    ArticulationPoseExtractor,
    RigidBodyPoseExtractor,
)
from physbody.pose_extractor import LOCAL_SPACE, MODEL_SPACE, PoseExtractor
from physbody.settings import PhysicsSensorSettings

__all__ = ["PhysicsBodySensor"]


class PhysicsBodySensor:
    """Observes the poses and velocities of a body tree, as ML-Agents' PhysicsBodySensor.

    The observed bodies are the extractor's enabled poses, fixed when the sensor is built
    (a virtual root is disabled by default, every real body enabled). Layout of the
    ``settings.transform_size(num_bodies)`` floats, following the seed version of ML-Agents
    (#4192, interleaved per body):

    1. if any model-space flag is on, body by body: [translation 3][rotation 4 (x, y, z, w)]
       [linear velocity 3][angular velocity 3], each only if flagged, relative to the root;
    2. then, if any local-space flag is on, the same body by body relative to each parent.

    ``observation_layout`` names the slice of every body's block. Values are float32. The Box
    bounds are [-1, 1] for quaternion components and the whole finite float32 range for
    positions and velocities, which have no physical bound: a non-finite value is outside.

    Args:
        extractor: the body tree to observe.
        settings: which quantities to observe; ``PhysicsSensorSettings.default()`` if None.
        name: sensor name; defaults to ``"PhysicsBodySensor:<root body name>"``.

    Raises:
        TypeError: if ``extractor`` or ``settings`` has the wrong type.
    """

    def __init__(
        self,
        extractor: PoseExtractor,
        settings: PhysicsSensorSettings | None = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(extractor, PoseExtractor):
            raise TypeError(f"extractor must be a PoseExtractor, got {extractor!r}")
        if settings is None:
            settings = PhysicsSensorSettings.default()
        if not isinstance(settings, PhysicsSensorSettings):
            raise TypeError(f"settings must be a PhysicsSensorSettings, got {settings!r}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str or None, got {name!r}")
        self._extractor = extractor
        self._settings = settings
        self._name = name if name is not None else f"PhysicsBodySensor:{extractor.root_name}"
        indices = extractor.enabled_indices
        self._body_names = tuple(extractor.body_names[i] for i in indices)
        self._size = settings.transform_size(len(indices))
        self._model_fields = _fields(
            settings.model_space_translations,
            settings.model_space_rotations,
            settings.model_space_linear_velocity,
            settings.model_space_angular_velocity,
        )
        self._local_fields = _fields(
            settings.local_space_translations,
            settings.local_space_rotations,
            settings.local_space_linear_velocity,
            settings.local_space_angular_velocity,
        )
        vectors = (True, False, True, True)  # translation, rotation, linear, angular
        self._fields_needed = {
            f"{space}_{kind}": any(
                flag and is_vector == (kind == "vectors")
                for flag, is_vector in zip(flags, vectors, strict=True)
            )
            for space, flags in (
                (
                    "model",
                    (
                        settings.model_space_translations,
                        settings.model_space_rotations,
                        settings.model_space_linear_velocity,
                        settings.model_space_angular_velocity,
                    ),
                ),
                (
                    "local",
                    (
                        settings.local_space_translations,
                        settings.local_space_rotations,
                        settings.local_space_linear_velocity,
                        settings.local_space_angular_velocity,
                    ),
                ),
            )
            for kind in ("vectors", "rotations")
        }
        high = self._upper_bounds()
        self._space = spaces.Box(-high, high, dtype=np.float32)
        # Flat positions in one tree's packed (2, num_poses, 13) spaces of every float this
        # sensor writes, in write order: one gather per write, for every tree at once.
        self._batch_size = extractor.batch_size
        self._packed = extractor.packed_spaces.reshape(self._batch_size or 1, -1)
        rows_per_space = extractor.num_poses * _STATE_WIDTH
        blocks = [
            (
                space * rows_per_space + indices[:, None] * _STATE_WIDTH + _columns(fields)[None, :]
            ).ravel()
            for fields, space in (
                (self._model_fields, MODEL_SPACE),
                (self._local_fields, LOCAL_SPACE),
            )
        ]
        self._gather = np.concatenate(blocks).astype(np.intp)
        self._layout = self._build_layout()

    @classmethod
    def from_rigid_bodies(
        cls,
        root_body_id: int | None,
        *,
        client: int,
        settings: PhysicsSensorSettings | None = None,
        virtual_root: tuple[ArrayLike, ArrayLike] | None = None,
        body_ids: Collection[int] | None = None,
        name: str | None = None,
    ) -> PhysicsBodySensor:
        """Builds a sensor over bodies joined by constraints (ML-Agents' RigidBodySensorComponent).

        Args:
            root_body_id: PyBullet id of the root body; None gives an empty sensor.
            client: PyBullet physics client id.
            settings: quantities to observe; ``default()`` if None.
            virtual_root: optional ``(position (3,), rotation (4,) x, y, z, w)`` frame that
                stands at index 0 (not observed itself); move it with ``set_virtual_root``.
            body_ids: optional set restricting the bodies (ML-Agents' ``rootGameObject``).
            name: sensor name; ``"PhysicsBodySensor:<root body name>"`` if None.
        """
        extractor = RigidBodyPoseExtractor(
            root_body_id, client=client, body_ids=body_ids, virtual_root=virtual_root
        )
        return cls(extractor, settings, name)

    @classmethod
    def from_articulations(
        cls,
        body_ids: Sequence[int],
        *,
        client: int | Sequence[int],
        settings: PhysicsSensorSettings | None = None,
        link_names: Sequence[str] | None = None,
        virtual_root: tuple[ArrayLike, ArrayLike] | None = None,
        name: str | None = None,
    ) -> PhysicsBodySensor:
        """A batch sensor over many copies of one multibody (one tree per body).

        ``write`` then takes a (len(body_ids), >= size) buffer and fills one row per tree;
        row ``k`` is exactly what ``from_articulation(body_ids[k], ...)`` writes.

        Args:
            body_ids: PyBullet multibody ids, one per tree.
            client: the physics client of every body, or one per body.
            settings: quantities to observe; ``default()`` if None.
            link_names: optional links to observe, base first; others are skipped.
            virtual_root: optional ``(positions (trees, 3), rotations (trees, 4))`` frames.
            name: sensor name; ``"ArticulationBodySensor:<base name>"`` if None.
        """
        extractor = ArticulationBatchPoseExtractor(
            body_ids, client=client, link_names=link_names, virtual_root=virtual_root
        )
        if name is None:
            name = f"ArticulationBodySensor:{extractor.root_name}"
        return cls(extractor, settings, name)

    @classmethod
    def from_articulation(
        cls,
        body_id: int,
        *,
        client: int,
        settings: PhysicsSensorSettings | None = None,
        link_names: Sequence[str] | None = None,
        virtual_root: tuple[ArrayLike, ArrayLike] | None = None,
        name: str | None = None,
    ) -> PhysicsBodySensor:
        """Builds a sensor over one multibody (ML-Agents' ArticulationBodySensorComponent).

        Args:
            body_id: PyBullet multibody id; its base is the root.
            client: PyBullet physics client id.
            settings: quantities to observe; ``default()`` if None.
            link_names: optional links to observe, base first; others are skipped.
            virtual_root: optional frame that stands at index 0 (not observed itself).
            name: sensor name; ``"ArticulationBodySensor:<base name>"`` if None, as ML-Agents.
        """
        extractor = ArticulationPoseExtractor(
            body_id, client=client, link_names=link_names, virtual_root=virtual_root
        )
        if name is None:
            name = f"ArticulationBodySensor:{extractor.root_name}"
        return cls(extractor, settings, name)

    # ------------------------------------------------------------------------ properties
    @property
    def name(self) -> str:
        """The sensor's name."""
        return self._name

    @property
    def extractor(self) -> PoseExtractor:
        """The pose extractor this sensor reads."""
        return self._extractor

    @property
    def settings(self) -> PhysicsSensorSettings:
        """The (immutable) settings this sensor was built with."""
        return self._settings

    @property
    def body_names(self) -> tuple[str, ...]:
        """Names of the observed bodies, in write order."""
        return self._body_names

    @property
    def observation_shape(self) -> tuple[int]:
        """``(settings.transform_size(num_observed_bodies),)``."""
        return (self._size,)

    @property
    def observation_space(self) -> spaces.Box:
        """float32 Box: quaternion components in [-1, 1], the rest any finite float32."""
        return self._space

    @property
    def observation_layout(self) -> dict[str, slice]:
        """``{"model_space/<body>" | "local_space/<body>": slice}`` over the sensor's output."""
        return dict(self._layout)

    # ------------------------------------------------------------------------ observing
    @property
    def batch_size(self) -> int | None:
        """Trees observed at once (a batch extractor's), or None for one tree."""
        return self._batch_size

    def update(self, trees: NDArray[np.intp] | None = None) -> None:
        """Reads the bodies once and recomputes the quantities the settings observe.

        Only the fields this sensor writes are recomputed (see
        ``PoseExtractor.update_fields``); the extractor's other arrays keep older values.

        Args:
            trees: for a batch sensor, the (k,) indices of the trees to update; None for all.
        """
        self._extractor.update_fields(**self._fields_needed, trees=trees)

    def write_rows(self, buffer: NDArray[np.floating], rows: NDArray[np.intp], offset: int) -> int:
        """A batch sensor's values of the trees ``rows`` into ``buffer[rows, offset:...]``.

        The hot-path form of :meth:`write` for a batch: no checks beyond numpy's own.

        Args:
            buffer: (batch_size, m) floating array, m >= offset + size.
            rows: (k,) tree indices, which are also the buffer rows written.
            offset: first column written.

        Returns:
            The number of floats written per tree.
        """
        buffer[rows, offset : offset + self._size] = self._packed[rows].take(self._gather, axis=1)
        return self._size

    def write(self, buffer: NDArray[np.floating], offset: int = 0) -> int:
        """Writes the last update's values into ``buffer[offset:offset + size]``.

        Values are cast to the buffer's dtype (float32 for an observation). Nothing outside
        the sensor's region is touched. A batch sensor (``batch_size`` trees) writes one row
        per tree: ``buffer[:, offset:offset + size]`` of a (batch_size, m) buffer.

        Args:
            buffer: writable floating-point numpy array: 1-D, or (batch_size, m) for a batch.
            offset: index of the first float to write (in each row), >= 0.

        Returns:
            The number of floats written per tree (``observation_shape[0]``), ML-Agents'
            ``WritePoses``.

        Raises:
            TypeError: if ``buffer`` is not a floating numpy array or ``offset`` not an int.
            ValueError: if ``buffer`` has the wrong number of dimensions or rows, is
                read-only, or is too short.
        """
        _check_buffer(buffer, offset, self._size, self._batch_size)
        if self._batch_size is None:
            buffer[offset : offset + self._size] = self._packed[0].take(self._gather)
        else:
            buffer[:, offset : offset + self._size] = self._packed.take(self._gather, axis=1)
        return self._size

    def observe(self) -> NDArray[np.float32]:
        """Updates, then returns the observation as a new float32 array.

        Shape ``(size,)``, or ``(batch_size, size)`` for a batch sensor.
        """
        self.update()
        rows = () if self._batch_size is None else (self._batch_size,)
        out = np.empty((*rows, self._size), dtype=np.float32)
        self.write(out, 0)
        return out

    def reset(self) -> None:
        """Does nothing: the sensor keeps no state between episodes (as in ML-Agents)."""

    def _upper_bounds(self) -> NDArray[np.float32]:
        """Upper bound of every float: 1 for quaternion components, float32 max otherwise."""
        big = np.finfo(np.float32).max
        rows = []
        for fields in (self._model_fields, self._local_fields):
            block = [
                np.full(
                    field.stop - field.start,
                    1.0 if field == transforms.STATE_ROTATION else big,
                    dtype=np.float32,
                )
                for field in fields
            ]
            if block:
                rows.append(np.tile(np.concatenate(block), len(self._body_names)))
        return np.concatenate(rows) if rows else np.zeros(0, dtype=np.float32)

    def _build_layout(self) -> dict[str, slice]:
        """Names each body's model-space and local-space slice, in write order."""
        layout: dict[str, slice] = {}
        start = 0
        blocks = (("model_space", self._model_fields), ("local_space", self._local_fields))
        for space, fields in blocks:
            width = sum(field.stop - field.start for field in fields)
            if width == 0:
                continue
            for body in self._body_names:
                layout[f"{space}/{body}"] = slice(start, start + width)
                start += width
        return layout


#: Where each quantity sits in a packed state row.
_PACKED = (
    transforms.STATE_POSITION,
    transforms.STATE_ROTATION,
    transforms.STATE_LINEAR_VELOCITY,
    transforms.STATE_ANGULAR_VELOCITY,
)
_STATE_WIDTH = transforms.STATE_WIDTH


def _fields(*flags: bool) -> tuple[slice, ...]:
    """Packed-state columns of the flagged quantities, in write order.

    The flags are, in order: translation, rotation, linear velocity, angular velocity.
    """
    return tuple(field for field, flag in zip(_PACKED, flags, strict=True) if flag)


def _columns(fields: tuple[slice, ...]) -> NDArray[np.intp]:
    """The packed-state column indices of ``fields``, in write order."""
    if not fields:
        return np.zeros(0, dtype=np.intp)
    return np.concatenate([np.arange(field.start, field.stop) for field in fields])


def _check_buffer(
    buffer: NDArray[np.floating], offset: int, size: int, batch_size: int | None
) -> None:
    """Raises if ``size`` floats (per tree) cannot be written into ``buffer`` at ``offset``."""
    if not isinstance(buffer, np.ndarray) or not np.issubdtype(buffer.dtype, np.floating):
        raise TypeError(f"buffer must be a floating-point numpy array, got {type(buffer)!r}")
    if isinstance(offset, bool) or not isinstance(offset, int | np.integer):
        raise TypeError(f"offset must be an int, got {offset!r}")
    if batch_size is None and buffer.ndim != 1:
        raise ValueError(f"buffer must be 1-D, got shape {buffer.shape}")
    if batch_size is not None and (buffer.ndim != 2 or buffer.shape[0] != batch_size):
        raise ValueError(
            f"a batch sensor of {batch_size} trees writes into a ({batch_size}, m) buffer, "
            f"got shape {buffer.shape}"
        )
    if not buffer.flags.writeable:
        raise ValueError("buffer is read-only")
    length = buffer.shape[-1]
    if offset < 0 or offset + size > length:
        raise ValueError(
            f"sensor writes {size} floats at offset {offset}, but the buffer has "
            f"{length} (needs offset in [0, {length - size}])"
        )
