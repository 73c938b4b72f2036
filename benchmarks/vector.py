"""Agent-steps per second of the native vector envs against Gymnasium's vectorisers.

Run: ``python benchmarks/vector.py``. For Crawler-v0 and Walker-v0, all in this one run, with
random actions and episodes ending and resetting as they do in training:

* agent-steps per second (one agent-step = one decision of one agent, 5 physics steps) of
  a plain single-env loop, ``SyncVectorEnv`` of 16 single envs, ``AsyncVectorEnv`` of 2
  single envs (one per core), the native ``gym.make_vec(..., num_envs=16)`` in one process,
  and the native 16 agents split over 2 processes (``num_workers=2``);
* for the native form, (cost per agent-step) / (raw physics cost per agent-step), the raw
  physics measured two ways: blocks of ``env.step`` alternate with a replay of the same
  block's physics from its saved start in the same world (the same joint commands, untimed,
  then ``frame_skip`` timed ``stepSimulation`` calls per step), and with the same block in 16
  one-agent worlds started from the batch agents' states. Agents the env autoresets inside a
  block go on in the replays where their episode ended.

Each configuration is timed in ``--rounds`` rounds that alternate between configurations,
and the best round counts, so that a burst of load from other processes on the machine
hits one round, not one configuration. Before and after, the script prints the load
average and the speed-up two processes of a CPU-bound loop get right then (2.0x on two
idle cores): the two-process lines mean little when that is near 1.
Goals: native(16) >= 1.3x SyncVectorEnv(16); native on 2 cores >= 1.85x native in one
process; overhead ratio against 16 one-agent worlds <= 1.15.
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
from envs.joint_drive import JointDriveController, validate_actions

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


def _copy_agent_state(source_client: int, agent, target_env) -> None:
    """Puts a single env's robot and target into the state of a batch agent (platform frame)."""
    unwrapped, client = target_env.unwrapped, target_env.unwrapped.client
    own = unwrapped.agents[0]
    joints = list(range(p.getNumJoints(agent.robot, physicsClientId=source_client)))
    for source, target in ((agent.robot, own.robot), (agent.target, own.target)):
        position, orientation = p.getBasePositionAndOrientation(
            source, physicsClientId=source_client
        )
        linear, angular = p.getBaseVelocity(source, physicsClientId=source_client)
        shifted = np.subtract(position, agent.offset) + own.offset
        p.resetBasePositionAndOrientation(target, shifted, orientation, physicsClientId=client)
        p.resetBaseVelocity(target, linear, angular, physicsClientId=client)
    states = p.getJointStatesMultiDof(agent.robot, joints, physicsClientId=source_client)
    moving = [(joint, state) for joint, state in zip(joints, states, strict=True) if state[0]]
    p.resetJointStatesMultiDof(
        own.robot,
        [joint for joint, _ in moving],
        [list(state[0]) for _, state in moving],
        targetVelocities=[list(state[1]) for _, state in moving],
        physicsClientId=client,
    )


def overhead_ratios(
    env_id: str, blocks: int, steps_per_block: int, seed: int
) -> tuple[float, float]:
    """Native(16) cost per agent-step against raw physics per agent-step, two ways.

    Returns ``(same world, separate worlds)``: the denominator is the same block's physics
    replayed in the native env's own world from its saved start (the same joint commands,
    untimed, then ``frame_skip`` timed ``stepSimulation`` calls per step), or in 16 one-agent
    worlds that start each block in the batch agents' states (bodies, joints, targets) and
    take the same commands, each world its own ``stepSimulation`` calls.
    """
    env = gym.make_vec(env_id, num_envs=NUM_ENVS, vectorization_mode="vector_entry_point")
    unwrapped = env.unwrapped
    client, frame_skip = unwrapped.client, unwrapped._frame_skip
    drives = [agent.drive for agent in unwrapped.agents]
    singles = [gym.make(env_id) for _ in range(NUM_ENVS)]
    for k, single in enumerate(singles):
        single.reset(seed=seed + k)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    env_time = same_world = separate_worlds = 0.0
    for _ in range(blocks):
        actions = rng.uniform(-1.0, 1.0, (steps_per_block, *env.action_space.shape))
        actions = actions.astype(np.float32)
        for agent, single in zip(unwrapped.agents, singles, strict=True):
            _copy_agent_state(client, agent, single)
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
            same_world += time.perf_counter() - start
        p.restoreState(after, physicsClientId=client)
        for state in (before, after):
            p.removeState(state, physicsClientId=client)
        clients = [single.unwrapped.client for single in singles]
        for action in actions:
            for single, agent_action in zip(singles, action, strict=True):
                single.unwrapped._drive.apply(agent_action.astype(np.float64))
            start = time.perf_counter()
            for _ in range(frame_skip):
                for single_client in clients:
                    p.stepSimulation(physicsClientId=single_client)
            separate_worlds += time.perf_counter() - start
    env.close()
    for single in singles:
        single.close()
    return env_time / same_world, env_time / separate_worlds


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
                note = f"  = {rate / rates[native]:.2f}x native in one process (goal >= 1.85)"
            elif name != "single env":
                note = f"  = {rate / rates['single env']:.2f}x single env"
            print(f"{env_id:<11} {name:<24} {rate:8.0f} agent-steps/s{note}")
        same, separate = overhead_ratios(env_id, args.blocks, args.steps, args.seed)
        print(
            f"{env_id:<11} {native}: cost per agent-step / raw physics per agent-step: "
            f"{same:5.3f}x of the same world, {separate:5.3f}x of {NUM_ENVS} one-agent "
            "worlds (goal <= 1.15)"
        )
    print(f"after: {_machine()}")


if __name__ == "__main__":
    main()
