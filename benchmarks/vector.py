"""Agent-steps per second of the native vector envs against Gymnasium's vectorisers.

Run: ``python benchmarks/vector.py``. For Crawler-v0 and Walker-v0, all in this one run, with
random actions and episodes ending and resetting as they do in training:

* agent-steps per second (one agent-step = one decision of one agent, 5 physics steps) of
  a plain single-env loop, ``SyncVectorEnv`` of 16 single envs, ``AsyncVectorEnv`` of 2
  single envs (one per core), the native ``gym.make_vec(..., num_envs=16)`` in one process,
  and the native 16 agents split over 2 processes (``num_workers=2``);
* for the native form, (cost per agent-step) / (raw physics cost per agent-step in the same
  world): blocks of ``env.step`` alternate with a replay of the same block's physics from
  its saved start (the same joint commands, untimed, then ``frame_skip`` timed
  ``stepSimulation`` calls per step), as ``benchmarks/env_step.py`` does for one env. Agents
  the env autoresets inside a block go on in the replay where their episode ended.

Each configuration is timed in ``--rounds`` rounds that alternate between configurations,
and the best round counts, so that a burst of load from other processes on the machine
hits one round, not one configuration. Before and after, the script prints the load
average and the speed-up two processes of a CPU-bound loop get right then (2.0x on two
idle cores): the two-process lines mean little when that is near 1.
Goals: native(16) >= 1.3x SyncVectorEnv(16); native on 2 cores >= 1.8x native in one
process; overhead ratio <= 1.10.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np
import pybullet as p

import envs  # noqa: F401  (registers the ids)
from envs.agents import validate_actions
from envs.joint_drive import JointDriveController

NUM_ENVS = 16


def _configurations(env_id: str) -> dict[str, tuple[Callable[[], object], int]]:
    """Name -> (constructor, agents per step) of every measured form."""
    native = "vector_entry_point"
    return {
        "single env": (lambda: gym.make(env_id), 1),
        f"SyncVectorEnv({NUM_ENVS})": (
            lambda: gym.make_vec(env_id, num_envs=NUM_ENVS, vectorization_mode="sync"),
            NUM_ENVS,
        ),
        "AsyncVectorEnv(2)": (
            lambda: gym.make_vec(env_id, num_envs=2, vectorization_mode="async"),
            2,
        ),
        f"native make_vec({NUM_ENVS})": (
            lambda: gym.make_vec(env_id, num_envs=NUM_ENVS, vectorization_mode=native),
            NUM_ENVS,
        ),
        f"native({NUM_ENVS}) on 2 cores": (
            lambda: gym.make_vec(
                env_id, num_envs=NUM_ENVS, vectorization_mode=native, num_workers=2
            ),
            NUM_ENVS,
        ),
    }


def _run(env: object, agents: int, seconds: float, rng: np.random.Generator) -> float:
    """Steps ``env`` for about ``seconds``; returns agent-steps per second."""
    single = agents == 1 and isinstance(env, gym.Env)
    space = env.action_space
    actions = rng.uniform(-1.0, 1.0, (64, *space.shape)).astype(np.float32)
    steps = 0
    start = time.perf_counter()
    while True:
        for action in actions:
            result = env.step(action)
            if single and (result[2] or result[3]):
                env.reset()
        steps += len(actions)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps * agents / elapsed


def throughputs(env_id: str, rounds: int, seconds: float, seed: int) -> dict[str, float]:
    """Best agent-steps per second of each configuration over alternating rounds."""
    rng = np.random.default_rng(seed)
    built = {}
    for name, (make, agents) in _configurations(env_id).items():
        env = make()
        env.reset(seed=seed)
        _run(env, agents, 0.2, rng)  # warm up
        built[name] = (env, agents)
    best = dict.fromkeys(built, 0.0)
    for _ in range(rounds):
        for name, (env, agents) in built.items():
            best[name] = max(best[name], _run(env, agents, seconds, rng))
    for env, _ in built.values():
        env.close()
    return best


def overhead_ratio(env_id: str, blocks: int, steps_per_block: int, seed: int) -> float:
    """Native(16) cost per agent-step / raw physics cost per agent-step in the same world."""
    env = gym.make_vec(env_id, num_envs=NUM_ENVS, vectorization_mode="vector_entry_point")
    unwrapped = env.unwrapped
    client, frame_skip = unwrapped.client, unwrapped._frame_skip
    drives = [agent.drive for agent in unwrapped.agents]
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    env_time = raw_time = 0.0
    for _ in range(blocks):
        actions = rng.uniform(-1.0, 1.0, (steps_per_block, *env.action_space.shape))
        actions = actions.astype(np.float32)
        before = p.saveState(physicsClientId=client)
        start = time.perf_counter()
        for action in actions:
            env.step(action)
        env_time += time.perf_counter() - start
        after = p.saveState(physicsClientId=client)
        p.restoreState(before, physicsClientId=client)
        for action in actions:
            JointDriveController.apply_all(drives, validate_actions(action, action.shape))
            start = time.perf_counter()
            for _ in range(frame_skip):
                p.stepSimulation(physicsClientId=client)
            raw_time += time.perf_counter() - start
        p.restoreState(after, physicsClientId=client)
        for state in (before, after):
            p.removeState(state, physicsClientId=client)
    env.close()
    return env_time / raw_time


def _spin(count: int) -> float:
    start = time.perf_counter()
    total = 0
    for i in range(count):
        total += i
    return time.perf_counter() - start


def parallel_speedup(count: int = 5_000_000) -> float:
    """How much faster two processes finish two CPU-bound loops than one process, now."""
    alone = _spin(count)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        start = time.perf_counter()
        pool.map(_spin, [count, count])
        together = time.perf_counter() - start
    return 2.0 * alone / together


def _machine() -> str:
    return (
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores, "
        f"2-process speed-up of a CPU-bound loop {parallel_speedup():.2f}x"
    )


def main() -> None:
    """Prints agent-steps per second, the speed-ups and the overhead ratio per env id."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating timing rounds")
    parser.add_argument("--seconds", type=float, default=2.0, help="per configuration per round")
    parser.add_argument("--blocks", type=int, default=20, help="env/raw blocks for the ratio")
    parser.add_argument("--steps", type=int, default=25, help="steps per block")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"before: {_machine()}")
    native, sync = f"native make_vec({NUM_ENVS})", f"SyncVectorEnv({NUM_ENVS})"
    two_cores = f"native({NUM_ENVS}) on 2 cores"
    for env_id in ("Crawler-v0", "Walker-v0"):
        rates = throughputs(env_id, args.rounds, args.seconds, args.seed)
        for name, rate in rates.items():
            note = ""
            if name == native:
                note = f"  = {rate / rates[sync]:.2f}x {sync} (goal >= 1.3)"
            elif name == two_cores:
                note = f"  = {rate / rates[native]:.2f}x native in one process (goal >= 1.8)"
            elif name != "single env":
                note = f"  = {rate / rates['single env']:.2f}x single env"
            print(f"{env_id:<11} {name:<24} {rate:8.0f} agent-steps/s{note}")
        ratio = overhead_ratio(env_id, args.blocks, args.steps, args.seed)
        print(
            f"{env_id:<11} {native}: cost per agent-step / raw physics per agent-step "
            f"in the same world: {ratio:5.3f}x (goal <= 1.10)"
        )
    print(f"after: {_machine()}")


if __name__ == "__main__":
    main()
