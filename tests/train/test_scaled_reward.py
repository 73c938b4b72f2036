"""The training vector env: native agents, rewards scaled by the reward signal's strength."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from physbody.train.native_vec_env import ScaledReward, make_native_vec_env  # noqa: E402


def _rollout(venv, steps: int = 5) -> list[np.ndarray]:
    venv.seed(4)
    venv.reset()
    rng = np.random.default_rng(0)
    rewards = []
    for _ in range(steps):
        actions = rng.uniform(-1, 1, (venv.num_envs, *venv.action_space.shape))
        _, reward, _, _ = venv.step(actions.astype(np.float32))
        rewards.append(reward)
    venv.close()
    return rewards


def test_strength_scales_every_agent_reward():
    plain = _rollout(make_native_vec_env("Crawler-v0", 3))
    scaled = _rollout(ScaledReward(make_native_vec_env("Crawler-v0", 3), 0.5))
    for a, b in zip(plain, scaled, strict=True):
        np.testing.assert_allclose(b, 0.5 * a, rtol=1e-6)
    assert any(np.any(r != 0.0) for r in plain)
