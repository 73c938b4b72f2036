"""PhysicsSensorSettings: sizes, defaults, immutability and validation."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from physbody import PhysicsSensorSettings

FLAG_SIZES = {
    "model_space_translations": 3,
    "model_space_rotations": 4,
    "local_space_translations": 3,
    "local_space_rotations": 4,
    "model_space_linear_velocity": 3,
    "local_space_linear_velocity": 3,
    "model_space_angular_velocity": 3,
    "local_space_angular_velocity": 3,
}


def test_flags_are_exactly_the_documented_eight():
    assert [f.name for f in attrs.fields(PhysicsSensorSettings)] == list(FLAG_SIZES)


def test_default_matches_ml_agents():
    settings = PhysicsSensorSettings.default()
    assert settings.model_space_translations and settings.model_space_rotations
    assert settings.use_model_space and not settings.use_local_space
    assert settings.transform_size(5) == 5 * 7


@pytest.mark.parametrize("flag", list(FLAG_SIZES))
def test_each_flag_adds_its_size(flag):
    settings = PhysicsSensorSettings(**{flag: True})
    assert settings.transform_size(1) == FLAG_SIZES[flag]
    assert settings.transform_size(7) == 7 * FLAG_SIZES[flag]
    assert settings.use_model_space == flag.startswith("model_space")
    assert settings.use_local_space == flag.startswith("local_space")


def test_all_flags_and_none():
    everything = PhysicsSensorSettings(**dict.fromkeys(FLAG_SIZES, True))
    assert everything.transform_size(16) == 16 * sum(FLAG_SIZES.values()) == 16 * 26
    nothing = PhysicsSensorSettings()
    assert nothing.transform_size(16) == 0
    assert not nothing.use_model_space and not nothing.use_local_space
    assert everything.transform_size(np.int64(2)) == 52


def test_frozen_and_evolve():
    settings = PhysicsSensorSettings.default()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        settings.local_space_rotations = True
    changed = attrs.evolve(settings, local_space_rotations=True)
    assert changed.transform_size(1) == 11 and settings.transform_size(1) == 7
    assert changed != settings and hash(changed) != hash(settings)


@pytest.mark.parametrize("value", [1, 0, "yes", None, np.float64(1.0)])
def test_non_bool_flag_is_rejected_with_its_name(value):
    with pytest.raises(TypeError, match="model_space_rotations"):
        PhysicsSensorSettings(model_space_rotations=value)


def test_positional_and_unknown_arguments_are_rejected():
    with pytest.raises(TypeError):
        PhysicsSensorSettings(True)
    with pytest.raises(TypeError, match="use_joint_forces"):
        PhysicsSensorSettings(use_joint_forces=True)


@pytest.mark.parametrize(
    ("count", "error"), [(-1, ValueError), (2.0, TypeError), (True, TypeError)]
)
def test_transform_size_rejects_bad_counts(count, error):
    with pytest.raises(error, match=str(count)):
        PhysicsSensorSettings.default().transform_size(count)
