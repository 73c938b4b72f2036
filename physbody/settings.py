"""PhysicsSensorSettings: which quantities a PhysicsBodySensor observes."""

from __future__ import annotations

import operator

import attrs

__all__ = ["PhysicsSensorSettings"]


def _flag() -> bool:
    """A boolean settings field, default off, that rejects non-bool values at construction."""
    return attrs.field(default=False, validator=attrs.validators.instance_of(bool))


@attrs.frozen(kw_only=True)
class PhysicsSensorSettings:
    """Flags selecting the per-body quantities written by a ``PhysicsBodySensor``.

    The first six flags are ML-Agents' ``PhysicsSensorSettings`` ``Use*`` flags in snake_case;
    the two angular-velocity flags are physbody's own. Each flag adds, for every enabled body,
    the number of floats given in its description. Instances are immutable: derive a changed
    copy with ``attrs.evolve(settings, local_space_rotations=True)``.

    Attributes:
        model_space_translations: position relative to the root body, metres (3).
        model_space_rotations: rotation relative to the root body, quaternion x, y, z, w (4).
        local_space_translations: position relative to the parent body, metres (3).
        local_space_rotations: rotation relative to the parent body, quaternion x, y, z, w (4).
        model_space_linear_velocity: ``inv(root_rotation) * (v - v_root)``, m/s (3).
        local_space_linear_velocity: ``inv(parent_rotation) * (v - v_parent)``, m/s (3).
        model_space_angular_velocity: ``inv(root_rotation) * (w - w_root)``, rad/s (3).
        local_space_angular_velocity: ``inv(parent_rotation) * (w - w_parent)``, rad/s (3).
    """

    model_space_translations: bool = _flag()
    model_space_rotations: bool = _flag()
    local_space_translations: bool = _flag()
    local_space_rotations: bool = _flag()
    model_space_linear_velocity: bool = _flag()
    local_space_linear_velocity: bool = _flag()
    model_space_angular_velocity: bool = _flag()
    local_space_angular_velocity: bool = _flag()

    @classmethod
    def default(cls) -> PhysicsSensorSettings:
        """ML-Agents' ``Default()``: model-space translations and rotations only."""
        return cls(model_space_translations=True, model_space_rotations=True)

    @property
    def use_model_space(self) -> bool:
        """Whether any model-space quantity is observed."""
        return self.model_space_size > 0

    @property
    def use_local_space(self) -> bool:
        """Whether any local-space quantity is observed."""
        return self.local_space_size > 0

    @property
    def model_space_size(self) -> int:
        """Floats written per body in the model-space block."""
        return (
            3 * self.model_space_translations
            + 4 * self.model_space_rotations
            + 3 * self.model_space_linear_velocity
            + 3 * self.model_space_angular_velocity
        )

    @property
    def local_space_size(self) -> int:
        """Floats written per body in the local-space block."""
        return (
            3 * self.local_space_translations
            + 4 * self.local_space_rotations
            + 3 * self.local_space_linear_velocity
            + 3 * self.local_space_angular_velocity
        )

    def transform_size(self, num_transforms: int) -> int:
        """Number of floats observed for ``num_transforms`` enabled bodies.

        Args:
            num_transforms: count of enabled bodies, >= 0.

        Returns:
            ``num_transforms * (model_space_size + local_space_size)``.

        Raises:
            TypeError: if ``num_transforms`` is not an integer.
            ValueError: if ``num_transforms`` is negative.
        """
        if isinstance(num_transforms, bool):
            raise TypeError(f"num_transforms must be an int, got {num_transforms!r}")
        try:
            count = operator.index(num_transforms)
        except TypeError:
            raise TypeError(f"num_transforms must be an int, got {num_transforms!r}") from None
        if count < 0:
            raise ValueError(f"num_transforms must be >= 0, got {count}")
        return count * (self.model_space_size + self.local_space_size)
