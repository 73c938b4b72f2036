"""PoseExtractor on fake extractors holding fixed world states (dm_control's FakePhysics idea).

The first tests re-create ML-Agents' PoseExtractorTests (spec section 3.5) with the same
inputs and expected values; the rest check the tree, the virtual root, the enabled flags and
bad input. Expected values are computed with SciPy's Rotation, not with physbody.transforms.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from physbody import transforms
from physbody.pose_extractor import BodyStates, PoseExtractor, validate_parent_indices

IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])


class FakeExtractor(PoseExtractor):
    """Returns the world states it holds and counts the reads."""

    def __init__(self, parent_indices, states: BodyStates | None = None, **kwargs) -> None:
        super().__init__(parent_indices, **kwargs)
        self.states = states
        self.reads = 0

    def read_world_state(self) -> BodyStates:
        self.reads += 1
        return self.states


def states_of(positions, rotations=None, linear=None, angular=None) -> BodyStates:
    positions = np.asarray(positions, dtype=float)
    n = len(positions)
    return BodyStates(
        positions,
        np.tile(IDENTITY, (n, 1)) if rotations is None else np.asarray(rotations, dtype=float),
        np.zeros((n, 3)) if linear is None else np.asarray(linear, dtype=float),
        np.zeros((n, 3)) if angular is None else np.asarray(angular, dtype=float),
    )


def assert_quat_close(actual, expected, atol=1e-12):
    actual = np.asarray(actual, dtype=float).reshape(-1, 4)
    expected = np.asarray(expected, dtype=float).reshape(-1, 4)
    diff = np.minimum(
        np.abs(actual - expected).max(axis=-1), np.abs(actual + expected).max(axis=-1)
    )
    assert np.all(diff <= atol), f"max difference {diff.max()}:\n{actual}\n{expected}"


# ------------------------------------------------------------ ML-Agents PoseExtractorTests
def test_empty_extractor():
    extractor = FakeExtractor([])
    assert extractor.num_poses == 0
    extractor.update_model_space_poses()
    extractor.update_local_space_poses()
    extractor.update()
    assert extractor.reads == 0
    assert extractor.num_enabled_poses == 0
    assert extractor.enabled_indices.size == 0
    assert extractor.root_name is None
    assert extractor.model_positions.shape == (0, 3)
    assert extractor.local_rotations.shape == (0, 4)
    with pytest.raises(IndexError):
        extractor.get_parent_index(0)


def test_simple_extractor():
    extractor = FakeExtractor([-1, 0])
    assert extractor.num_poses == 2
    assert extractor.get_parent_index(0) == -1
    assert extractor.get_parent_index(1) == 0


def test_chain():
    """TestChain: 4 bodies, identity rotations, at offset + (i, i, i)."""
    offset = np.array([0.5, 0.75, 0.333])
    positions = offset + np.arange(4)[:, None] * np.ones(3)
    extractor = FakeExtractor([-1, 0, 1, 2], states_of(positions))
    extractor.update_model_space_poses()
    extractor.update_local_space_poses()
    assert extractor.reads == 2
    np.testing.assert_array_equal(extractor.enabled_indices, [0, 1, 2, 3])
    np.testing.assert_allclose(extractor.model_positions[0], [0, 0, 0], atol=1e-12)
    np.testing.assert_allclose(extractor.model_rotations[0], IDENTITY)
    np.testing.assert_allclose(extractor.local_positions[0], [0, 0, 0])
    np.testing.assert_allclose(extractor.local_rotations[0], IDENTITY)
    for i in range(1, 4):
        np.testing.assert_allclose(extractor.model_positions[i], [i, i, i], atol=1e-12)
        np.testing.assert_allclose(extractor.model_rotations[i], IDENTITY)
        np.testing.assert_allclose(extractor.local_positions[i], [1, 1, 1], atol=1e-12)
        np.testing.assert_allclose(extractor.local_rotations[i], IDENTITY)


@pytest.mark.parametrize(
    ("parents", "bad_index"),
    [([0, 1], 0), ([-1, 1], 1), ([-1, -1], 1), ([-1, 0, 5], 2), ([-1, 0, 1, 3], 3)],
)
def test_bad_parent_trees_name_the_index(parents, bad_index):
    """TestExpectedRoot and friends: the message names the first bad index."""
    with pytest.raises(ValueError, match=re.escape(f"parent_indices[{bad_index}]")):
        FakeExtractor(parents)


def test_parent_tree_type_and_rank():
    with pytest.raises(TypeError, match="integers"):
        validate_parent_indices([-1.0, 0.0])
    with pytest.raises(ValueError, match=re.escape("(1, 2)")):
        validate_parent_indices([[-1, 0]])
    parents = validate_parent_indices([-1, 0, 0, 2])
    assert not parents.flags.writeable


def test_inverse():
    """PoseExtensionTests.TestInverse with physbody.transforms."""
    rotation = transforms.quat_from_axis_angle([1.0, 1.0, 1.0], np.deg2rad(23.0))
    position = np.array([-1.0, 2.0, 3.0])
    inv_position, inv_rotation = transforms.pose_inverse(position, rotation)
    out_position, out_rotation = transforms.pose_multiply(
        inv_position, inv_rotation, position, rotation
    )
    np.testing.assert_allclose(out_position, [0.0, 0.0, 0.0], atol=1e-12)
    assert_quat_close(out_rotation, IDENTITY)
    # The same rotation from SciPy: 23 degrees about normalize(1, 1, 1).
    expected = Rotation.from_rotvec(np.ones(3) / np.sqrt(3) * np.deg2rad(23.0)).as_quat()
    assert_quat_close(rotation, expected)


# ------------------------------------------------------------------- model / local maths
def random_tree_states(n: int, seed: int):
    rng = np.random.default_rng(seed)
    parents = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
    rotations = Rotation.random(n, random_state=seed).as_quat()
    special = np.deg2rad([0.0, 90.0, -90.0, 180.0])[: min(n, 4)]
    rotations[: len(special)] = Rotation.from_rotvec(np.outer(special, [0, 0, 1])).as_quat()
    states = states_of(
        rng.normal(size=(n, 3)) * 2.0, rotations, rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    )
    return parents, states


@pytest.mark.parametrize("seed", range(5))
def test_model_and_local_space_match_scipy_oracle(seed):
    n = 2 + 4 * seed
    parents, world = random_tree_states(n, seed)
    extractor = FakeExtractor(parents, world)
    extractor.update()
    root_inv = Rotation.from_quat(world.rotation[0]).inv()
    for i in range(n):
        rot_i = Rotation.from_quat(world.rotation[i])
        np.testing.assert_allclose(
            extractor.model_positions[i], root_inv.apply(world.position[i] - world.position[0])
        )
        assert_quat_close(extractor.model_rotations[i], (root_inv * rot_i).as_quat())
        np.testing.assert_allclose(
            extractor.model_linear_velocities[i],
            root_inv.apply(world.linear_velocity[i] - world.linear_velocity[0]),
            atol=1e-12,
        )
        np.testing.assert_allclose(
            extractor.model_angular_velocities[i],
            root_inv.apply(world.angular_velocity[i] - world.angular_velocity[0]),
            atol=1e-12,
        )
        if i == 0:
            continue
        j = parents[i]
        parent_inv = Rotation.from_quat(world.rotation[j]).inv()
        np.testing.assert_allclose(
            extractor.local_positions[i], parent_inv.apply(world.position[i] - world.position[j])
        )
        assert_quat_close(extractor.local_rotations[i], (parent_inv * rot_i).as_quat())
        np.testing.assert_allclose(
            extractor.local_linear_velocities[i],
            parent_inv.apply(world.linear_velocity[i] - world.linear_velocity[j]),
            atol=1e-12,
        )
    np.testing.assert_array_equal(extractor.local_rotations[0], IDENTITY)
    np.testing.assert_array_equal(extractor.local_linear_velocities[0], [0, 0, 0])


def test_update_flags_choose_the_spaces():
    _, world = random_tree_states(3, 7)
    extractor = FakeExtractor([-1, 0, 1], world)
    extractor.update(model_space=True, local_space=False)
    assert extractor.model_positions.any()
    assert not extractor.local_positions.any()
    extractor.update(model_space=False, local_space=False)
    assert extractor.reads == 1  # nothing requested: nothing read
    extractor.update(model_space=False, local_space=True)
    assert extractor.local_positions.any()


def test_arrays_are_read_only_and_replaced_per_update():
    _, world = random_tree_states(3, 8)
    extractor = FakeExtractor([-1, 0, 0], world)
    extractor.update()
    before = extractor.model_positions
    with pytest.raises(ValueError, match="read-only"):
        before[0, 0] = 1.0
    extractor.states = states_of(world.position + 1.0, world.rotation)
    extractor.update()
    assert extractor.model_positions is not before
    # The world states snapshot is a copy.
    snapshot = extractor.world_states
    np.testing.assert_allclose(snapshot.position, world.position + 1.0)
    with pytest.raises(ValueError, match="read-only"):
        snapshot.position[0, 0] = 5.0


# -------------------------------------------------------------------------- virtual root
def test_virtual_root_stands_at_index_zero():
    world = states_of([[1.0, 0.0, 0.0], [1.0, 2.0, 0.0]], linear=[[2.0, 0, 0], [0, 1.0, 0]])
    yaw = Rotation.from_euler("z", 42.0, degrees=True)
    extractor = FakeExtractor(
        [-1, 0],
        world,
        body_names=["torso", "leg"],
        virtual_root=([0.0, 0.0, 2.0], yaw.as_quat()),
        virtual_root_name="cube",
    )
    assert extractor.num_poses == 3
    assert extractor.body_names == ("cube", "torso", "leg")
    assert extractor.root_name == "torso"
    assert extractor.has_virtual_root
    np.testing.assert_array_equal(extractor.parent_indices, [-1, 0, 1])
    np.testing.assert_array_equal(extractor.pose_enabled, [False, True, True])
    extractor.update()
    np.testing.assert_allclose(extractor.world_states.position[0], [0.0, 0.0, 2.0])
    assert_quat_close(extractor.world_states.rotation[0], yaw.as_quat())
    np.testing.assert_array_equal(extractor.world_states.linear_velocity[0], [0, 0, 0])
    np.testing.assert_allclose(
        extractor.model_positions[1], yaw.inv().apply([1.0, 0.0, -2.0]), atol=1e-12
    )
    np.testing.assert_allclose(
        extractor.model_linear_velocities[1], yaw.inv().apply([2.0, 0, 0]), atol=1e-12
    )
    np.testing.assert_allclose(extractor.local_positions[2], [0.0, 2.0, 0.0], atol=1e-12)
    # Moving the virtual root changes model space without another body read's help.
    extractor.set_virtual_root([1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0])  # normalised
    extractor.update()
    np.testing.assert_allclose(extractor.model_positions[1], [0, 0, 0], atol=1e-12)
    np.testing.assert_allclose(extractor.world_states.rotation[0], IDENTITY)


def test_virtual_root_without_bodies_is_ignored():
    extractor = FakeExtractor([], virtual_root=([0, 0, 0], IDENTITY))
    assert extractor.num_poses == 0
    assert not extractor.has_virtual_root


@pytest.mark.parametrize(
    ("virtual_root", "match"),
    [
        (([0.0, 0.0], IDENTITY), re.escape("(2,)")),
        (([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]), re.escape("(3,)")),
        (([0.0, np.nan, 0.0], IDENTITY), "finite"),
        (([0.0, 0.0, 0.0], [0.0, 0.0, np.inf, 1.0]), "finite"),
        (([0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]), "non-zero"),
        (([0.0, 0.0, 0.0], IDENTITY, [1.0]), "pair"),
    ],
)
def test_bad_virtual_root(virtual_root, match):
    with pytest.raises(ValueError, match=match):
        FakeExtractor([-1], virtual_root=virtual_root)
    extractor = FakeExtractor([-1], virtual_root=([0, 0, 0], IDENTITY))
    if len(virtual_root) == 2:
        with pytest.raises(ValueError, match=match):
            extractor.set_virtual_root(*virtual_root)


def test_set_virtual_root_needs_one():
    with pytest.raises(RuntimeError, match="without a virtual root"):
        FakeExtractor([-1]).set_virtual_root([0, 0, 0], IDENTITY)


# ------------------------------------------------------------------------ enabled flags
def test_set_pose_enabled():
    extractor = FakeExtractor([-1, 0, 0])
    extractor.set_pose_enabled(1, False)
    assert extractor.num_enabled_poses == 2
    np.testing.assert_array_equal(extractor.enabled_indices, [0, 2])
    extractor.set_pose_enabled(1, np.bool_(True))
    assert extractor.num_enabled_poses == 3
    with pytest.raises(ValueError, match="read-only"):
        extractor.pose_enabled[0] = False


@pytest.mark.parametrize("value", [1, 0, "yes", None, 1.0])
def test_set_pose_enabled_rejects_non_bool(value):
    extractor = FakeExtractor([-1, 0])
    with pytest.raises(TypeError, match="bool"):
        extractor.set_pose_enabled(0, value)
    np.testing.assert_array_equal(extractor.pose_enabled, [True, True])


def test_set_pose_enabled_rejects_bad_index():
    with pytest.raises(IndexError, match="out of range"):
        FakeExtractor([-1, 0]).set_pose_enabled(2, True)


# ---------------------------------------------------------------- bad states from reader
@pytest.mark.parametrize(
    ("field", "bad", "shape"),
    [
        ("position", np.zeros((2, 3)), (2, 3)),
        ("rotation", np.zeros((3, 3)), (3, 3)),
        ("linear_velocity", np.zeros(9), (9,)),
        ("angular_velocity", np.zeros((3, 4)), (3, 4)),
    ],
)
def test_wrong_state_shapes_are_reported(field, bad, shape):
    states = states_of(np.zeros((3, 3)))._replace(**{field: bad})
    extractor = FakeExtractor([-1, 0, 1], states)
    with pytest.raises(ValueError, match=re.escape(f"{field} must have shape (3,")) as info:
        extractor.update()
    assert str(shape) in str(info.value)


@pytest.mark.parametrize("field", BodyStates._fields)
def test_non_finite_states_name_the_body(field):
    states = states_of(np.zeros((3, 3)))
    array = np.array(getattr(states, field))
    array[2, 0] = np.nan if field != "angular_velocity" else np.inf
    extractor = FakeExtractor(
        [-1, 0, 1], states._replace(**{field: array}), body_names=("pelvis", "thigh", "shin")
    )
    with pytest.raises(ValueError, match=r"non-finite world state for bodies \['shin'\]") as info:
        extractor.update()
    bad = "inf" if field == "angular_velocity" else "nan"
    assert f"{field.replace('_', ' ')} [[{bad}" in str(info.value)
    assert "thigh" not in str(info.value)


def test_body_names_must_match_the_tree():
    with pytest.raises(ValueError, match="2 entries"):
        FakeExtractor([-1, 0, 0], body_names=("a", "b"))
    assert FakeExtractor([-1, 0]).body_names == ("body0", "body1")
