"""``physbody train`` throughput against the raw one-core physics of the same environment.

Run: ``python benchmarks/training.py``. In this one run:

* raw physics: one Crawler-v0 world, random actions held for ``frame_skip`` raw
  ``stepSimulation`` calls (the joint commands untimed), episodes reset as they end: the env
  steps per second that one core's physics alone allows;
* training: ``physbody train``'s own setup (built-in CrawlerDynamic PPO settings, the default
  64 agents split over one worker process per core) for ``--iterations`` PPO iterations,
  with the rollout collection and the gradient updates timed apart;
* the ratio training env steps/s / raw one-core physics env steps/s. Goal: >= 0.65;
* the ceiling the updates alone set: env steps per second if collecting cost nothing
  (ML-Agents' 3 epochs over the 512 x 3 policy and value networks are fixed work per step).

Before and after it prints the load average: the ratio means little on a busy machine.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import gymnasium as gym
import numpy as np
import pybullet as p

import envs  # noqa: F401  (registers the ids)


def raw_physics_steps_per_second(env_id: str, seconds: float, seed: int) -> float:
    """Env steps per second of ``frame_skip`` raw stepSimulation calls per step, one world."""
    env = gym.make(env_id)
    unwrapped = env.unwrapped
    client, drive, frame_skip = unwrapped.client, unwrapped._drive, unwrapped._frame_skip
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    physics = 0.0
    steps = 0
    while physics < seconds:
        for action in rng.uniform(-1.0, 1.0, (100, *env.action_space.shape)):
            drive.apply(action)
            start = time.perf_counter()
            for _ in range(frame_skip):
                p.stepSimulation(physicsClientId=client)
            physics += time.perf_counter() - start
            steps += 1
        env.reset()  # a fallen body costs more contacts than a trained one: start afresh
    env.close()
    return steps / physics


def training_phases(env_id: str, iterations: int, seed: int) -> tuple[int, float, float]:
    """(env steps, rollout seconds, update seconds) of PPO iterations as physbody train runs.

    Builds the model and the vector env exactly as ``physbody.train.trainer.train`` does
    (including one torch thread while collecting and every core while updating).
    """
    import torch
    from stable_baselines3.common.callbacks import CallbackList
    from stable_baselines3.common.logger import configure

    from physbody.train.callbacks import TorchThreadsPerPhase
    from physbody.train.settings import TrainOptions, behavior_name, default_trainer_settings
    from physbody.train.trainer import _normalize, build_model, make_vec_env

    options = TrainOptions(env_id=env_id)
    settings = default_trainer_settings(behavior_name(env_id))
    venv = make_vec_env(env_id, settings, options.num_envs, options.worker_count)
    venv = _normalize(venv, settings)
    model = build_model(settings, venv, seed=seed)
    model.set_logger(configure(None, []))
    model._setup_learn(10**9, None)
    callback = CallbackList([TorchThreadsPerPhase(os.cpu_count() or 1)])
    callback.init_callback(model)
    rollout = update = 0.0
    steps = 0
    for _ in range(iterations):
        start = time.perf_counter()
        model.collect_rollouts(model.env, callback, model.rollout_buffer, model.n_steps)
        middle = time.perf_counter()
        model.train()
        rollout += middle - start
        update += time.perf_counter() - middle
        steps += model.n_steps * model.n_envs
    venv.close()
    torch.set_num_threads(os.cpu_count() or 1)
    return steps, rollout, update


def main() -> None:
    """Prints raw physics, training throughput by phase, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="Crawler-v0")
    parser.add_argument("--iterations", type=int, default=3, help="PPO iterations timed")
    parser.add_argument("--seconds", type=float, default=10.0, help="raw physics timed")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"before: load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory():
        raw = raw_physics_steps_per_second(args.env, args.seconds, args.seed)
        steps, rollout, update = training_phases(args.env, args.iterations, args.seed)
    rate = steps / (rollout + update)
    print(f"raw one-core physics ({args.env}, 5 stepSimulation per step): {raw:8.0f} steps/s")
    print(
        f"training: {steps} steps in {rollout + update:.1f} s = {rate:8.0f} steps/s "
        f"(rollouts {steps / rollout:.0f} steps/s for {rollout:.1f} s, "
        f"updates {update:.1f} s)"
    )
    print(f"training / raw one-core physics: {rate / raw:.2f}x  (goal >= 0.65)")
    print(
        f"update-bound ceiling (free collection): {steps / update:8.0f} steps/s "
        f"= {steps / update / raw:.2f}x raw one-core physics"
    )
    print(f"after: load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
