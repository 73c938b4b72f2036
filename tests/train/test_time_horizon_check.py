"""scripts/time_horizon_check.py: its GAE is SB3's on segments and the plain sum on whole runs."""

from __future__ import annotations

import numpy as np
import pytest

GAMMA, LAMBDA = 0.995, 0.95


@pytest.fixture(scope="module")
def gae(load_script):
    pytest.importorskip("stable_baselines3")
    module = load_script("time_horizon_check")
    return module.gae


def _episodes(steps: int, agents: int, seed: int, truncations: bool = False):
    """Random rewards and values with episode ends, SB3's conventions.

    Returns rewards (T, N), values (T + 1, N) (``values[t]``: before step t), next_values
    (T, N), ended (T, N) and truncated (T, N). An ended step's next value is 0 after a
    termination and, after a truncation (about half of the ends if ``truncations``), the value of
    the final observation: a random number unrelated to the next episode's first value.
    """
    rng = np.random.default_rng(seed)
    rewards = rng.normal(size=(steps, agents))
    values = rng.normal(size=(steps + 1, agents))
    ended = rng.random((steps, agents)) < 0.05
    truncated = ended & (rng.random((steps, agents)) < (0.5 if truncations else 0.0))
    final_values = rng.normal(size=(steps, agents))
    next_values = np.where(truncated, final_values, np.where(ended, 0.0, values[1:]))
    return rewards, values, next_values, ended, truncated


def test_segments_match_sb3s_rollout_buffer(gae):
    """SB3 bootstraps a truncation by adding gamma * V(final observation) to its reward."""
    import torch as th
    from gymnasium.spaces import Box
    from stable_baselines3.common.buffers import RolloutBuffer

    segment, segments, agents = 20, 3, 4
    rewards, values, next_values, ended, truncated = _episodes(
        segment * segments, agents, seed=0, truncations=True
    )
    assert truncated.sum() >= 3 and (ended & ~truncated).sum() >= 3
    ours = gae(rewards, values[:-1], next_values, ended, GAMMA, LAMBDA, segment)
    sb3_rewards = rewards + GAMMA * np.where(truncated, next_values, 0.0)
    space = Box(-1.0, 1.0, (1,))
    for k in range(segments):
        buffer = RolloutBuffer(segment, space, space, gamma=GAMMA, gae_lambda=LAMBDA, n_envs=agents)
        for t in range(k * segment, (k + 1) * segment):
            starts = ended[t - 1] if t > 0 else np.ones(agents, dtype=bool)
            buffer.add(
                np.zeros((agents, 1)),
                np.zeros((agents, 1)),
                sb3_rewards[t],
                starts.astype(np.float32),
                th.as_tensor(values[t]),
                th.zeros(agents),
            )
        last = (k + 1) * segment
        buffer.compute_returns_and_advantage(
            th.as_tensor(values[last]), ended[last - 1].astype(np.float32)
        )
        np.testing.assert_allclose(
            buffer.advantages, ours[k * segment : last], rtol=1e-5, atol=1e-5
        )


def test_whole_runs_are_the_discounted_sum_of_td_errors(gae):
    rewards, values, next_values, ended, _ = _episodes(60, 3, seed=1, truncations=True)
    ours = gae(rewards, values[:-1], next_values, ended, GAMMA, LAMBDA, None)
    deltas = rewards + GAMMA * next_values - values[:-1]
    for agent in range(3):
        for t in range(60):
            total, weight = 0.0, 1.0
            for s in range(t, 60):
                total += weight * deltas[s, agent]
                if ended[s, agent]:
                    break
                weight *= GAMMA * LAMBDA
            assert ours[t, agent] == pytest.approx(total, rel=1e-9, abs=1e-9)
