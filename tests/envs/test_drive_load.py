"""scripts/drive_load.py: it sees a drive at its force limit, and one far from it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from envs.crawler import CRAWLER

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "drive_load.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("drive_load", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_summary_of_hand_made_loads(script):
    torques = np.array([[10.0, 0.0, 5.0], [99.5, 50.0, 7.0]])
    limits = np.array([[100.0, 0.0, 10.0], [100.0, 100.0, 10.0]])  # one joint-step without
    got = script.summary(torques, limits)
    loads = [0.1, 0.5, 0.995, 0.5, 0.7]
    assert got["share at the limit"] == pytest.approx(0.2)
    assert got["median load"] == pytest.approx(np.median(loads))
    assert got["largest load"] == pytest.approx(0.995)
    assert got["median torque"] == pytest.approx(8.5)
    assert got["largest torque"] == pytest.approx(99.5)


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
    weak = script.summary(*script.drive_load("Crawler-v0", _swing(-0.99), decisions=20))
    full = script.summary(*script.drive_load("Crawler-v0", _swing(1.0), decisions=20))
    # 0.5% of maxJointForceLimit (50 N*m) cannot swing a leg between its limits in 1/75 s.
    assert weak["share at the limit"] > 0.5
    assert weak["largest torque"] == pytest.approx(0.005 * 10000.0, rel=1e-3)
    assert full["share at the limit"] < 0.05
    assert full["largest torque"] > weak["largest torque"]
