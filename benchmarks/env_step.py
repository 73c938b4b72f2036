"""Env steps per second, and the cost of ``env.step`` against the raw physics it wraps.

Run: ``python benchmarks/env_step.py``. For Crawler-v0 and Walker-v0, in this one run:

* env steps per second with random actions (episodes reset as they end);
* the ratio ``env.step`` cost / cost of ``frame_skip`` raw ``stepSimulation`` calls on the
  same world, replaying each block's physics from its saved start so that both walk through
  the same states, in alternating blocks under the same machine load. Peers on this
  machine: Gymnasium's MuJoCo envs 1.30x, pybullet_envs 2.65-3.45x. Goals: Crawler <= 1.6x,
  Walker <= 1.3x.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
import pybullet as p

import envs  # noqa: F401  (registers the ids)

#: The goal for each env's ratio env.step / raw physics.
GOALS = {"Crawler-v0": 1.6, "Walker-v0": 1.3}


def measure(env_id: str, blocks: int, steps_per_block: int, seed: int) -> tuple[float, float]:
    """Returns (env steps per second, env.step cost / raw physics cost).

    Each block runs ``env.step`` until ``steps_per_block`` steps or the episode's end, then
    replays the same physics from the block's saved start: the same joint motor commands
    (untimed) and ``frame_skip`` timed ``stepSimulation`` calls per env step. PyBullet is
    deterministic here, so both walk through the same states and contacts.
    """
    env = gym.make(env_id)
    unwrapped = env.unwrapped
    frame_skip = unwrapped._frame_skip
    client = unwrapped.client
    drive = unwrapped._drive
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    env_time = raw_time = 0.0
    env_steps = 0
    for _ in range(blocks):
        actions = rng.uniform(-1.0, 1.0, (steps_per_block, *env.action_space.shape))
        actions = actions.astype(np.float32)
        before = p.saveState(physicsClientId=client)
        ended = False
        taken = 0
        start = time.perf_counter()
        for action in actions:
            _, _, terminated, truncated, _ = env.step(action)
            taken += 1
            if terminated or truncated:
                ended = True
                break
        env_time += time.perf_counter() - start
        env_steps += taken
        after = p.saveState(physicsClientId=client)
        p.restoreState(before, physicsClientId=client)
        for action in actions[:taken]:
            drive.apply(action.astype(np.float64))
            start = time.perf_counter()
            for _ in range(frame_skip):
                p.stepSimulation(physicsClientId=client)
            raw_time += time.perf_counter() - start
        p.restoreState(after, physicsClientId=client)
        for state in (before, after):
            p.removeState(state, physicsClientId=client)
        if ended:
            env.reset()
    env.close()
    return env_steps / env_time, env_time / raw_time


def main() -> None:
    """Prints steps per second and the overhead ratio for each env id."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=40, help="alternating env/raw blocks")
    parser.add_argument("--steps", type=int, default=100, help="env steps per block (at most)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for env_id, goal in GOALS.items():
        per_second, ratio = measure(env_id, args.blocks, args.steps, args.seed)
        print(
            f"{env_id:<11} {per_second:8.0f} env steps/s   "
            f"env.step / {5} x stepSimulation: {ratio:5.3f}x  (goal <= {goal})"
        )


if __name__ == "__main__":
    main()
