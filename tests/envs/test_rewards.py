"""Reward terms: values against independent arithmetic, and every NaN guard's message."""

from __future__ import annotations

import numpy as np
import pytest

from envs import rewards
from envs.rewards import RewardNaNError

FORWARD = np.array([[0.0, 1.0, 0.0], [0.6, 0.8, 0.0]])


def test_moving_towards_target_sums_weighted_dots():
    velocity = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
    expected = 0.03 * ((0 * 1 + 1 * 2) + (0.6 * -1 + 0.8 * 0.5))
    assert rewards.moving_towards_target(FORWARD, velocity, 0.03) == pytest.approx(expected)


def test_clamp_magnitude_matches_unity():
    vectors = np.array([[3.0, 4.0, 0.0], [0.3, 0.4, 0.0], [0.0, 0.0, 0.0]])
    clamped = rewards.clamp_magnitude(vectors, 1.0)
    np.testing.assert_allclose(clamped, [[0.6, 0.8, 0.0], [0.3, 0.4, 0.0], [0.0, 0.0, 0.0]])
    fast = np.array([[0.0, 2000.0, 0.0]])
    assert rewards.moving_towards_target([[0.0, 1.0, 0.0]], fast, 1.0) == pytest.approx(999.0)


def test_facing_target_sums_weighted_dots():
    body = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert rewards.facing_target(FORWARD, body, 0.01) == pytest.approx(0.01 * (1.0 + 0.0))


def test_head_height_over_feet_divides_only_the_right_foot():
    head = np.array([[0.0, 0.0, 3.0]])
    left = np.array([[0.0, 0.0, 1.0]])
    right = np.array([[0.0, 0.0, 0.5]])
    expected = 0.005 * ((3.0 - 1.0) + (3.0 - 0.5) / 10.0)
    assert rewards.head_height_over_feet(head, left, right, 0.005) == pytest.approx(expected)


def test_single_vectors_count_as_one_step():
    assert rewards.facing_target((0.0, 1.0, 0.0), (0.0, 1.0, 0.0), 0.5) == 0.5


def test_reward_terms_return_python_floats():
    value = rewards.facing_target(FORWARD, FORWARD, 0.01)
    assert type(value) is float


def test_moving_nan_message_names_term_and_inputs():
    velocity = np.array([[np.nan, 0.0, 0.0], [0.0, 0.0, 0.0]])
    with pytest.raises(RewardNaNError) as error:
        rewards.moving_towards_target(
            FORWARD, velocity, 0.02, term="moveTowardsTargetReward", velocity_name="hips.velocity"
        )
    lines = str(error.value).splitlines()
    assert lines == [
        "NaN in moveTowardsTargetReward.",
        " cubeForward: [[0.0, 1.0, 0.0], [0.6, 0.8, 0.0]]",
        " hips.velocity: [[nan, 0.0, 0.0], [0.0, 0.0, 0.0]]",
        " maximumWalkingSpeed: 999.0",
    ]
    assert isinstance(error.value, ValueError)


def test_facing_nan_message_names_its_own_term():
    # The seed's Crawler printed "NaN in movingTowardsDot." here too; this names the term.
    body = np.array([[0.0, np.nan, 0.0], [0.0, 1.0, 0.0]])
    with pytest.raises(RewardNaNError) as error:
        rewards.facing_target(
            FORWARD,
            body,
            0.01,
            term="facingDot",
            cube_name="orientationCube.transform.forward",
            forward_name="body.forward",
        )
    assert str(error.value).splitlines() == [
        "NaN in facingDot.",
        " orientationCube.transform.forward: [[0.0, 1.0, 0.0], [0.6, 0.8, 0.0]]",
        " body.forward: [[0.0, nan, 0.0], [0.0, 1.0, 0.0]]",
    ]


def test_head_height_nan_message():
    head = np.array([[0.0, 0.0, np.nan]])
    foot = np.array([[0.0, 0.0, 0.1]])
    with pytest.raises(RewardNaNError) as error:
        rewards.head_height_over_feet(head, foot, foot, 0.005)
    assert str(error.value).splitlines() == [
        "NaN in headHeightOverFeetReward.",
        " head.position: [[0.0, 0.0, nan]]",
        " footL.position: [[0.0, 0.0, 0.1]]",
        " footR.position: [[0.0, 0.0, 0.1]]",
    ]


def test_guard_raises_before_adding_anything():
    # A NaN in the last step still raises, even though earlier steps were finite.
    velocity = np.array([[1.0, 1.0, 0.0], [np.nan, 0.0, 0.0]])
    with pytest.raises(RewardNaNError):
        rewards.moving_towards_target(FORWARD, velocity, 0.03)


def test_wrong_shapes_are_rejected():
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        rewards.facing_target(np.zeros((2, 2)), FORWARD, 1.0)
