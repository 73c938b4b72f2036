"""A native vector env split over worker processes, presented as one Gymnasium ``VectorEnv``.

``envs.vector.make_vector_env`` (so ``gym.make_vec(env_id, num_envs=N, num_workers=W)``) builds
a :class:`ProcessVectorEnv`: W processes, each running a native vector env of about N / W
agents. Actions, observations, rewards and flags travel through shared memory; each batch step
is one small pipe message to every worker and one reply with its infos.
"""

from __future__ import annotations

import atexit
import functools
import multiprocessing
import signal
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.typing import NDArray

from envs.joint_drive import validate_actions
from envs.vector import LocomotionVectorEnv, reset_mask, seed_list

__all__ = ["ProcessVectorEnv"]


class ProcessVectorEnv(VectorEnv):
    """A native vector env split over worker processes, presented as one ``VectorEnv``.

    Worker w runs ``env_factory(n_w)``, a native vector env of ``n_w`` consecutive agents
    (``n_w`` about ``num_envs / num_workers``). Actions, observations, rewards and flags
    travel through shared memory; each batch step costs one small pipe message to every
    worker and one reply carrying its infos, so the workers step their worlds in parallel.
    Spaces, the same-step autoreset and the infos are those of :class:`LocomotionVectorEnv`,
    and seeding matches it: ``reset(seed=s)`` gives agent k ``agent_seeds(s, num_envs)[k]``.

    Args:
        env_factory: builds a same-step-autoreset ``VectorEnv`` of n agents: ``factory(n)``.
            Called once in this process with n = 1 to read the spaces, then in each worker.
        num_envs: total number of agents, >= num_workers.
        num_workers: processes, >= 1.
        context: multiprocessing start method (None: the platform default).

    Raises:
        ValueError: for bad counts or a factory whose env does not autoreset in the same step.
    """

    def __init__(
        self,
        env_factory: Callable[[int], VectorEnv],
        num_envs: int,
        *,
        num_workers: int = 2,
        context: str | None = None,
    ) -> None:
        self._pipes: list[Connection] = []
        self._processes: list[multiprocessing.process.BaseProcess] = []
        self._exit_hook = functools.partial(_shut_down, self._pipes, self._processes)
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if not 1 <= num_workers <= num_envs:
            raise ValueError(f"num_workers must be in [1, num_envs={num_envs}], got {num_workers}")
        probe = env_factory(1)
        try:
            if probe.metadata.get("autoreset_mode") != AutoresetMode.SAME_STEP:
                raise ValueError(
                    "ProcessVectorEnv needs envs that autoreset in the same step, got "
                    f"{probe.metadata.get('autoreset_mode')!r}"
                )
            self.single_observation_space = probe.single_observation_space
            self.single_action_space = probe.single_action_space
            self.metadata = dict(probe.metadata)
            self.render_mode = probe.render_mode
        finally:
            probe.close()
        self.num_envs = num_envs
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        bounds = [round(num_envs * w / num_workers) for w in range(num_workers + 1)]
        self._slices = [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        ctx = multiprocessing.get_context(context)
        obs_size = int(np.prod(self.single_observation_space.shape))
        action_size = int(np.prod(self.single_action_space.shape))
        raw = {
            "obs": ctx.RawArray("f", num_envs * obs_size),
            "actions": ctx.RawArray("d", num_envs * action_size),
            "rewards": ctx.RawArray("d", num_envs),
            "terminated": ctx.RawArray("b", num_envs),
            "truncated": ctx.RawArray("b", num_envs),
        }
        self._obs, self._actions, self._rewards, self._terminated, self._truncated = _views(
            raw, num_envs, obs_size, action_size
        )
        for index, where in enumerate(self._slices):
            parent, child = ctx.Pipe()
            process = ctx.Process(
                target=_worker,
                name=f"ProcessVectorEnv-{index}",
                args=(env_factory, where, raw, num_envs, obs_size, action_size, child, parent),
                daemon=True,
            )
            process.start()
            child.close()
            self._pipes.append(parent)
            self._processes.append(process)
        # The workers ignore SIGTERM, so multiprocessing's own exit hook (SIGTERM, then an
        # unbounded join) would wait for ever on workers of an env nobody closed. Registered
        # after that hook, this one runs first. It holds the lists, not the env, and is this
        # env's own object (a partial compares by identity), so closing unregisters just it.
        atexit.register(self._exit_hook)
        try:
            self._collect()  # every worker has built its world
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------------ gymnasium
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Resets every agent, or those in ``options["reset_mask"]``; as the native env."""
        self._check_open()
        seeds = seed_list(seed, self.num_envs)
        mask = reset_mask(options, self.num_envs)
        if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
            super().reset(seed=int(seed))
        asked = []
        for index, where in enumerate(self._slices):
            worker_options = None
            if mask is not None:
                if not mask[where].any():
                    continue
                worker_options = {"reset_mask": mask[where].copy()}
            self._pipes[index].send(("reset", (seeds[where], worker_options)))
            asked.append(index)
        parts: list[dict[str, Any]] = [{} for _ in self._slices]
        for index, reply in zip(asked, self._collect(asked), strict=True):
            parts[index] = reply
        return self._obs.copy(), _concat_infos(parts, self._sizes())

    def step(
        self, actions: NDArray[np.float32]
    ) -> tuple[
        NDArray[np.float32], NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_], dict
    ]:
        """Steps every worker's agents in parallel; as the native env's ``step``."""
        self._check_open()
        self._actions[:] = validate_actions(actions, self.action_space.shape)
        for pipe in self._pipes:
            pipe.send(("step", None))
        infos = _concat_infos(self._collect(), self._sizes())
        return (
            self._obs.copy(),
            self._rewards.copy(),
            self._terminated.astype(bool),
            self._truncated.astype(bool),
            infos,
        )

    def render(self) -> tuple[NDArray[np.uint8], ...] | None:
        """Every worker's frames, in agent order (``rgb_array``)."""
        self._check_open()
        for pipe in self._pipes:
            pipe.send(("render", None))
        frames = self._collect()
        if any(part is None for part in frames):
            return None
        return tuple(frame for part in frames for frame in part)

    def close_extras(self, **kwargs: Any) -> None:
        """Closes the workers' envs and ends the processes; safe to call twice."""
        atexit.unregister(self._exit_hook)
        self._exit_hook()

    # ---------------------------------------------------------------------------- helpers
    def _sizes(self) -> list[int]:
        return [where.stop - where.start for where in self._slices]

    def _collect(self, workers: Sequence[int] | None = None) -> list[Any]:
        """Each asked worker's reply, in worker order; re-raises a worker's exception."""
        if workers is None:
            workers = range(len(self._pipes))
        replies = []
        error: BaseException | None = None
        for index in workers:
            try:
                status, payload = self._pipes[index].recv()
            except EOFError:
                status, payload = "error", RuntimeError(f"worker {index} died")
            if status == "error" and error is None:
                error = payload
            replies.append(payload)
        if error is not None:
            raise error
        return replies

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("this env is closed")


def _shut_down(
    pipes: list[Connection], processes: list[multiprocessing.process.BaseProcess]
) -> None:
    """Asks every worker to close, waits up to 5 s for each, kills any still alive.

    Empties both lists, so a second call does nothing.
    """
    for pipe in pipes:
        try:
            pipe.send(("close", None))
        except OSError:  # the worker has gone already
            pass
    for pipe in pipes:
        try:
            if pipe.poll(5.0):
                pipe.recv()
        except (EOFError, OSError):
            pass
        pipe.close()
    for process in processes:
        process.join(timeout=5.0)
        if process.is_alive():
            process.kill()
            process.join()
    pipes.clear()
    processes.clear()


def _views(
    raw: dict[str, Any], num_envs: int, obs_size: int, action_size: int
) -> tuple[NDArray[Any], ...]:
    """Views of the shared arrays: obs, actions, rewards, terminated, truncated."""
    return (
        np.frombuffer(raw["obs"], dtype=np.float32).reshape(num_envs, obs_size),
        np.frombuffer(raw["actions"], dtype=np.float64).reshape(num_envs, action_size),
        np.frombuffer(raw["rewards"], dtype=np.float64),
        np.frombuffer(raw["terminated"], dtype=np.int8),
        np.frombuffer(raw["truncated"], dtype=np.int8),
    )


def _worker(
    env_factory: Callable[[int], VectorEnv],
    where: slice,
    raw: dict[str, Any],
    num_envs: int,
    obs_size: int,
    action_size: int,
    pipe: Connection,
    parent_pipe: Connection,
) -> None:
    """A worker's loop: build the env, then serve reset / step / render / close requests.

    SIGINT and SIGTERM are ignored: Ctrl-C in a terminal, ``pkill -f`` and batch schedulers
    signal every process of the group, and the parent, which owns shutdown, still needs its
    workers to finish the step in flight and to close cleanly after its final checkpoint. A
    worker ends on "close", when the parent's end of the pipe closes (the parent died), or on
    SIGKILL.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    parent_pipe.close()
    obs, actions, rewards, terminated, truncated = (
        view[where] for view in _views(raw, num_envs, obs_size, action_size)
    )
    try:
        env = env_factory(where.stop - where.start)
        if isinstance(env, LocomotionVectorEnv):
            env._agent_index_offset = where.start
    except Exception as error:  # noqa: BLE001  (reported to the parent, which raises it)
        pipe.send(("error", _transportable(error)))
        return
    pipe.send(("ok", None))
    while True:
        try:
            command, payload = pipe.recv()
        except EOFError:
            break
        try:
            if command == "step":
                result = env.step(actions)
                obs[:], rewards[:], terminated[:], truncated[:] = result[:4]
                pipe.send(("ok", result[4]))
            elif command == "reset":
                seeds, options = payload
                observations, infos = env.reset(seed=seeds, options=options)
                obs[:] = observations
                pipe.send(("ok", infos))
            elif command == "render":
                pipe.send(("ok", env.render()))
            elif command == "close":
                env.close()
                pipe.send(("ok", None))
                break
            else:
                raise ValueError(f"unknown command {command!r}")
        except Exception as error:  # noqa: BLE001  (reported to the parent, which raises it)
            pipe.send(("error", _transportable(error)))
    pipe.close()


def _transportable(error: Exception) -> Exception:
    """The exception itself if it pickles, else a RuntimeError with its traceback."""
    import pickle

    try:
        pickle.dumps(error)
    except Exception:  # noqa: BLE001
        return RuntimeError("".join(traceback.format_exception(error)))
    return error


def _concat_infos(parts: Sequence[dict[str, Any]], sizes: Sequence[int]) -> dict[str, Any]:
    """Joins the workers' vector infos along the agent axis.

    A key a worker did not report becomes zeros (masks: False) or Nones for its agents.
    """
    keys: dict[str, None] = {}
    for part in parts:
        keys.update(dict.fromkeys(part))
    out: dict[str, Any] = {}
    for key in keys:
        values = [part.get(key) for part in parts]
        present = next(value for value in values if value is not None)
        if isinstance(present, dict):
            out[key] = _concat_infos([value or {} for value in values], sizes)
            continue
        arrays = []
        for value, size in zip(values, sizes, strict=True):
            if value is None:
                if present.dtype == object:
                    value = np.full(size, None, dtype=object)
                else:
                    value = np.zeros((size, *present.shape[1:]), dtype=present.dtype)
            arrays.append(value)
        out[key] = np.concatenate(arrays)
    return out
