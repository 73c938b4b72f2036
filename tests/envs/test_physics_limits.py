"""scripts/physics_limits.py: a drive at its force limit, one far from it, angular speeds."""

from __future__ import annotations

import numpy as np
import pytest

from envs.crawler import CRAWLER


@pytest.fixture(scope="module")
def script(load_script):
    module = load_script("physics_limits")
    return module


def test_summary_of_hand_made_records(script):
    played = script.Record(
        torques=np.array([[10.0, 0.0, 5.0], [99.5, 50.0, 7.0]]),
        limits=np.array([[100.0, 0.0, 10.0], [100.0, 100.0, 10.0]]),  # one joint-step without
        spins=np.array([[1.0, 60.0], [49.0, 2.0]]),
    )
    got = script.summary(played)
    loads = [0.1, 0.5, 0.995, 0.5, 0.7]
    assert got["drive load, share at the limit"] == pytest.approx(0.2)
    assert got["drive load, median"] == pytest.approx(np.median(loads))
    assert got["drive load, largest"] == pytest.approx(0.995)
    assert got["torque, median (N*m)"] == pytest.approx(8.5)
    assert got["torque, largest (N*m)"] == pytest.approx(99.5)
    assert got["angular speed, share above 50 rad/s"] == pytest.approx(0.25)
    assert got["angular speed, largest (rad/s)"] == pytest.approx(60.0)


def _swing(strength: float):
    """Every driven joint from one limit to the other each decision, at one strength."""
    size = CRAWLER.action_size
    strengths = [part.strength_action for part in CRAWLER.actuated]
    decision = iter(range(10**6))

    def act(obs):
        action = np.full(size, 1.0 if next(decision) % 2 else -1.0, dtype=np.float32)
        action[strengths] = strength
        return action

    return act


def test_a_weak_drive_is_at_its_limit_and_a_full_one_is_not(script):
    weak = script.summary(script.record("Crawler-v0", _swing(-0.99), decisions=20))
    full_record = script.record("Crawler-v0", _swing(1.0), decisions=20)
    full = script.summary(full_record)
    # 0.5% of maxJointForceLimit (50 N*m) cannot swing a leg between its limits in 1/75 s.
    assert weak["drive load, share at the limit"] > 0.5
    assert weak["torque, largest (N*m)"] == pytest.approx(0.005 * 10000.0, rel=1e-3)
    assert full["drive load, share at the limit"] < 0.05
    assert full["torque, largest (N*m)"] > weak["torque, largest (N*m)"]
    # The body and its 8 leg parts; full-strength swings spin the legs at several rad/s.
    assert full_record.spins.shape == (100, 9)
    assert 5.0 < full["angular speed, largest (rad/s)"] < 100.0
