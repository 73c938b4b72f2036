"""Does PPO learn Crawler-v0? Returns of a random and a trained policy, and training speed.

Run: ``python benchmarks/learning.py`` (1,000,000 steps: about 20-25 minutes on 2 cores), or
``python benchmarks/learning.py --steps 20000`` for a quick check. It

* runs a uniformly random policy for ``--episodes`` episodes and prints their mean return;
* trains ``physbody train``'s default PPO (ML-Agents' CrawlerDynamic settings) for ``--steps``
  environment steps in ``--results-dir/--run-id`` (replacing an earlier run of that name);
* runs the exported ONNX policy (deterministic actions) for ``--episodes`` episodes from the
  same seed and prints their mean return, then the training throughput;
* writes the learning curve (episode returns against steps) to ``--plot``.

This is a benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import logging

import numpy as np

from physbody.train.play import play, run_episodes
from physbody.train.plot import plot_run
from physbody.train.settings import TrainOptions
from physbody.train.trainer import train


def random_returns(env_id: str, episodes: int, seed: int) -> list[float]:
    """Returns of ``episodes`` episodes with uniformly random actions in [-1, 1]."""
    import gymnasium as gym

    import envs  # noqa: F401  (registers the ids)

    probe = gym.make(env_id)
    size = probe.action_space.shape
    probe.close()
    rng = np.random.default_rng(seed)
    return run_episodes(
        lambda obs: rng.uniform(-1.0, 1.0, size).astype(np.float32), env_id, episodes, seed=seed
    )


def main() -> None:
    """Parses the flags, runs the three phases and prints one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000, help="training steps")
    parser.add_argument("--episodes", type=int, default=10, help="evaluation episodes")
    parser.add_argument("--env", default="Crawler-v0", help="environment id")
    parser.add_argument("--num-envs", type=int, default=8, help="environments stepped together")
    parser.add_argument("--seed", type=int, default=0, help="training and evaluation seed")
    parser.add_argument("--results-dir", default="results", help="folder of the run")
    parser.add_argument("--run-id", default="learning-benchmark", help="run folder name")
    parser.add_argument("--plot", default="docs/learning_curve.png", help="learning curve PNG")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="[%(levelname)s] %(message)s")

    before = random_returns(args.env, args.episodes, args.seed)
    print(
        f"random policy:  mean episode return {np.mean(before):9.3f} "
        f"(std {np.std(before):.3f}) over {len(before)} episodes"
    )
    result = train(
        TrainOptions(
            env_id=args.env,
            run_id=args.run_id,
            results_dir=args.results_dir,
            force=True,
            seed=args.seed,
            num_envs=args.num_envs,
            max_steps=args.steps,
        )
    )
    after = play(result.final_model, args.env, episodes=args.episodes, seed=args.seed)
    print(
        f"trained policy: mean episode return {np.mean(after):9.3f} "
        f"(std {np.std(after):.3f}) over {len(after)} episodes, after {result.steps:,} steps"
    )
    print(
        f"training throughput: {result.steps_per_second:,.0f} env steps/s "
        f"({result.steps - result.start_steps:,} steps in {result.seconds:,.0f} s, "
        f"{args.num_envs} envs)"
    )
    path = plot_run(result.run_dir, args.plot, title=f"PPO on {args.env}")
    print(f"learning curve: {path}")


if __name__ == "__main__":
    main()
