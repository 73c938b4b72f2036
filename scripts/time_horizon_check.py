"""How far SB3's rollout segments move PPO's advantages from ML-Agents' whole trajectories.

ML-Agents (``time_horizon: 1000``, episodes of at most 1000 decisions) computes GAE over whole
episodes. ``physbody train`` runs SB3's PPO, whose rollout gives each agent
``buffer_size / num_envs`` steps (20240 / 80 = 253 for the Crawler) and bootstraps the GAE of
the last steps of each segment from the value of the state where the segment is cut. This
script plays a trained checkpoint (stochastic actions, as in training) and computes both
advantages on the same data::

    python scripts/time_horizon_check.py runs/CrawlerDynamic/CrawlerDynamic/CrawlerDynamic-10018800

It prints how well the two agree: correlation, the share of samples whose sign differs, and the
difference by position within a segment.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch as th
from numpy.typing import NDArray
from stable_baselines3.common.vec_env import VecNormalize

from physbody.train.mlagents_ppo import MLAgentsPPO
from physbody.train.settings import BEHAVIOR_NAMES, default_trainer_settings
from physbody.train.trainer import make_vec_env


def gae(
    rewards: NDArray[np.float64],
    values: NDArray[np.float64],
    next_values: NDArray[np.float64],
    ended: NDArray[np.bool_],
    gamma: float,
    lam: float,
    segment: int | None,
) -> NDArray[np.float64]:
    """GAE(lambda) advantages of (T, N) steps, restarted every ``segment`` steps if given.

    ``next_values[t]`` is the value of the state after step t: 0 after a termination, the
    value of the final observation after a truncation.
    """
    advantages = np.zeros_like(rewards)
    carried = np.zeros(rewards.shape[1])
    for t in reversed(range(len(rewards))):
        if segment is not None and (t + 1) % segment == 0:
            carried = np.zeros_like(carried)  # the segment ends here: bootstrap from V only
        delta = rewards[t] + gamma * next_values[t] - values[t]
        carried = delta + gamma * lam * (~ended[t]) * carried
        advantages[t] = carried
    return advantages


def main() -> None:
    """Plays the checkpoint, computes both advantages and prints how they differ."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="checkpoint path without extension (.zip and .pkl)")
    parser.add_argument("--env", default="Crawler-v0", choices=sorted(BEHAVIOR_NAMES))
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument(
        "--segment", type=int, help="steps per agent and rollout (default: the checkpoint's)"
    )
    parser.add_argument("--segments", type=int, default=4, help="segments compared")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    settings = default_trainer_settings(BEHAVIOR_NAMES[args.env])
    gamma = settings.reward_signals.extrinsic.gamma
    lam = settings.hyperparameters.lambd
    venv = VecNormalize.load(
        args.checkpoint + ".pkl", make_vec_env(args.env, settings, args.agents)
    )
    venv.training = False
    model = MLAgentsPPO.load(args.checkpoint + ".zip", env=venv, device="cpu")
    segment = args.segment or model.n_steps
    if segment <= 66:
        parser.error(f"--segment must be > 66 steps (the bands printed), got {segment}")
    model.set_random_seed(args.seed)
    venv.seed(args.seed)

    def value(obs: NDArray[np.float32]) -> NDArray[np.float64]:
        with th.no_grad():
            tensor = th.as_tensor(obs, dtype=th.float32)
            return model.policy.predict_values(tensor).numpy().astype(np.float64).ravel()

    compared = segment * args.segments
    steps = compared + 300  # (gamma * lambda)^300 < 1e-7: the tail past the data is negligible
    shape = (steps, args.agents)
    values, rewards, next_values = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    ended = np.zeros(shape, dtype=bool)
    obs = venv.reset()
    for t in range(steps):
        values[t] = value(obs)
        actions, _ = model.predict(obs, deterministic=False)
        obs, _, done, infos = venv.step(actions)
        rewards[t] = venv.get_original_reward()
        next_values[t] = value(obs)
        ended[t] = done
        for i in np.flatnonzero(done):
            truncated = infos[i].get("TimeLimit.truncated", False)
            final = venv.normalize_obs(infos[i]["terminal_observation"])[None]
            next_values[t, i] = value(final)[0] if truncated else 0.0
    venv.close()

    whole = gae(rewards, values, next_values, ended, gamma, lam, None)[:compared]
    cut = gae(rewards, values, next_values, ended, gamma, lam, segment)[:compared]
    difference = cut - whole
    scale = whole.std()
    print(f"{args.agents} agents x {compared} steps, {ended[:compared].sum()} episode ends, "
          f"mean reward {rewards[:compared].mean():.3f} per step")  # fmt: skip
    print(f"correlation(segments, whole): {np.corrcoef(cut.ravel(), whole.ravel())[0, 1]:.5f}")
    print(f"rms difference / std of whole: {np.sqrt((difference**2).mean()) / scale:.4f}")
    print(f"samples whose sign differs: {100 * (np.sign(cut) != np.sign(whole)).mean():.2f}%")
    position = np.arange(compared) % segment
    for low, high in [(0, segment - 66), (segment - 66, segment - 26),
                      (segment - 26, segment)]:  # fmt: skip
        rows = (position >= low) & (position < high)
        rms = np.sqrt((difference[rows] ** 2).mean()) / scale
        print(f"segment steps {low}-{high}: rms difference / std = {rms:.4f}")


if __name__ == "__main__":
    main()
