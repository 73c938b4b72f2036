"""Env steps per second of RLlib PPO on Crawler-v0 with 1 and 2 env runners (Ray, local).

Run: ``python benchmarks/rllib_scaling.py`` (needs the ``distributed`` extra). For each number
of env runners, on a local Ray with one CPU per runner (at least the machine's CPUs):

* sampling: env steps per second of the env runners alone, stepping their environments in
  parallel with the current policy (what adding runners, or machines, scales);
* training: env steps per second of whole ``algorithm.train()`` iterations (sampling, then
  the PPO update in the driver), as ``physbody train --backend rllib`` runs them.

The PPO settings are ML-Agents' CrawlerDynamic ones with a smaller buffer
(``--buffer-size``), so that an iteration takes seconds.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import attrs

from physbody.train.rllib_backend import RayOptions, build_algorithm, register_ray_envs
from physbody.train.settings import PPOSettings, default_trainer_settings


def _sampled_steps(episodes: Any) -> int:
    return sum(len(episode) for episode in episodes)


def measure(
    env_id: str, runners: int, envs_per_runner: int, buffer_size: int, iterations: int
) -> tuple[float, float]:
    """Returns (sampling env steps/s, training env steps/s) with ``runners`` env runners."""
    import ray

    ray.init(
        address="local",  # a new local Ray, even when `ray start` left a cluster address
        num_cpus=max(runners + 1, os.cpu_count() or 1),
        include_dashboard=False,
        log_to_driver=False,
    )
    try:
        register_ray_envs()
        settings = default_trainer_settings("CrawlerDynamic")
        settings = attrs.evolve(
            settings,
            hyperparameters=attrs.evolve(
                settings.hyperparameters,
                buffer_size=buffer_size,
                batch_size=min(buffer_size, 2024),
            ),
            max_steps=10_000_000,
        )
        assert isinstance(settings.hyperparameters, PPOSettings)
        algorithm = build_algorithm(
            env_id,
            settings,
            RayOptions(num_env_runners=runners, num_envs_per_runner=envs_per_runner),
            seed=0,
        )
        try:
            algorithm.train()  # warm-up: actors, environments, first update
            per_runner = buffer_size // runners
            group = algorithm.env_runner_group
            began = time.perf_counter()
            counts = group.foreach_env_runner(
                lambda runner: _sampled_steps(runner.sample(num_timesteps=per_runner)),
                local_env_runner=False,
            )
            sampling = sum(counts) / (time.perf_counter() - began)
            steps = 0
            began = time.perf_counter()
            for _ in range(iterations):
                result = algorithm.train()
                steps += int(result["env_runners"]["num_env_steps_sampled"])
            training = steps / (time.perf_counter() - began)
        finally:
            algorithm.stop()
    finally:
        ray.shutdown()
    return sampling, training


def main() -> None:
    """Prints one line per number of env runners."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="Crawler-v0")
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--envs-per-runner", type=int, default=4)
    parser.add_argument("--buffer-size", type=int, default=8000)
    parser.add_argument("--iterations", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{args.env}, RLlib PPO, {args.envs_per_runner} envs per runner, "
        f"{args.buffer_size} steps per iteration, {os.cpu_count()} CPUs"
    )
    baseline = None
    for runners in args.runners:
        sampling, training = measure(
            args.env, runners, args.envs_per_runner, args.buffer_size, args.iterations
        )
        baseline = baseline or sampling
        print(
            f"{runners} env runner{'s' if runners > 1 else ' '}: sampling {sampling:8,.0f} env "
            f"steps/s ({sampling / baseline:.2f}x), training {training:8,.0f} env steps/s",
            flush=True,
        )


if __name__ == "__main__":
    main()
