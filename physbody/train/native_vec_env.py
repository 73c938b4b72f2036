"""Stable-Baselines3 on the native vector envs: a thin ``VecEnv`` adapter.

``gym.make_vec(env_id, num_envs=N)`` gives a Gymnasium ``VectorEnv`` with N agents in one
PyBullet world (``envs.vector``) that resets an ended agent in the same step. SB3 expects
exactly that of a ``VecEnv``: the observation returned after an episode's end is the next
episode's first, the last one is ``infos[i]["terminal_observation"]``, and a time-limit end
is flagged ``infos[i]["TimeLimit.truncated"]``. :class:`NativeVecEnv` maps one onto the other;
wrap it in ``VecMonitor`` / ``VecNormalize`` as any ``VecEnv``::

    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor
    from physbody.train.native_vec_env import make_native_vec_env

    venv = VecMonitor(make_native_vec_env("Crawler-v0", num_envs=16))  # num_workers=2: 2 cores
    PPO("MlpPolicy", venv).learn(100_000)

This is the only module of the package that imports Stable-Baselines3 for the native envs;
``import envs`` never imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from numpy.typing import NDArray
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
    VecEnvWrapper,
)

__all__ = ["MLAgentsGaussianActions", "NativeVecEnv", "ScaledReward", "make_native_vec_env"]


class NativeVecEnv(VecEnv):
    """SB3 ``VecEnv`` over a Gymnasium ``VectorEnv`` that autoresets in the same step.

    Rewards come out as float32, ``dones = terminated | truncated``, and each agent's info
    is a plain dict: for an agent whose episode ended, the ended step's info (Gymnasium's
    ``final_info``) plus ``terminal_observation`` and ``TimeLimit.truncated`` (truncated and
    not terminated), with the new episode's reset info in ``reset_infos[i]``. Seeds set with
    ``seed(s)`` reach the agents as ``s + i`` at the next ``reset()``, as in SB3's own
    vector envs.

    The agents share one env object, so ``get_attr``, ``set_attr`` and ``env_method`` act on
    the vector env once and return its answer for every requested index.

    Args:
        venv: e.g. ``gym.make_vec("Crawler-v0", num_envs=16)``.

    Raises:
        ValueError: if ``venv`` does not autoreset in the same step.
    """

    def __init__(self, venv: VectorEnv) -> None:
        mode = venv.metadata.get("autoreset_mode")
        if mode != AutoresetMode.SAME_STEP:
            raise ValueError(
                f"NativeVecEnv needs a VectorEnv with same-step autoreset, got {mode!r}"
            )
        self.venv = venv
        self._actions: NDArray[Any] | None = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    def reset(self) -> VecEnvObs:
        """Resets every agent (with the seeds of ``seed()``, if any) and returns (N, ...) obs."""
        seeds: list[int | None] | None = list(self._seeds)
        if all(seed is None for seed in seeds):
            seeds = None
        observations, infos = self.venv.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = _per_agent(infos, self.num_envs)
        return observations

    def step_async(self, actions: NDArray[Any]) -> None:
        """Stores the (N, action_size) actions for ``step_wait``."""
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """Steps every agent; SB3's ``(obs, rewards, dones, infos)``."""
        observations, rewards, terminated, truncated, infos = self.venv.step(self._actions)
        dones = terminated | truncated
        agent_infos = _per_agent(infos, self.num_envs)
        if dones.any():
            final_obs, final_info = infos["final_obs"], infos["final_info"]
            ended = _per_agent(final_info, self.num_envs)
            for i in np.flatnonzero(dones):
                self.reset_infos[i] = agent_infos[i]
                info = ended[i]
                info["terminal_observation"] = final_obs[i]
                info["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                agent_infos[i] = info
        return observations, rewards.astype(np.float32), dones, agent_infos

    def close(self) -> None:
        """Closes the vector env."""
        self.venv.close()

    def get_images(self) -> Sequence[NDArray[np.uint8] | None]:
        """One RGB frame per agent (``render_mode="rgb_array"``), else Nones."""
        frames = self.venv.render()
        return list(frames) if frames is not None else [None] * self.num_envs

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The vector env's attribute, once per requested index."""
        return [getattr(self.venv, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Sets the attribute on the vector env (shared by every agent)."""
        setattr(self.venv, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Calls the vector env's method once; its result for every requested index."""
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result] * len(self._get_indices(indices))

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        """Always False: the agents are not Gymnasium envs and carry no wrappers."""
        return [False] * len(self._get_indices(indices))


class ScaledReward(VecEnvWrapper):
    """Multiplies every reward by a constant (ML-Agents' reward signal ``strength``).

    Args:
        venv: the SB3 vector env to wrap.
        strength: the factor applied to each agent's reward.
    """

    def __init__(self, venv: VecEnv, strength: float) -> None:
        super().__init__(venv)
        self.strength = float(strength)

    def reset(self) -> VecEnvObs:
        """Resets the wrapped env."""
        return self.venv.reset()

    def step_wait(self) -> VecEnvStepReturn:
        """Steps the wrapped env and scales its rewards."""
        observations, rewards, dones, infos = self.venv.step_wait()
        return observations, rewards * self.strength, dones, infos


class MLAgentsGaussianActions(VecEnvWrapper):
    """ML-Agents' continuous PPO actions: a Gaussian sample clipped to [-3, 3], divided by 3.

    ML-Agents' PPO policy of the seed's release samples ``N(mu, sigma)`` (sigma starting at 1)
    and sends ``clip(sample, -3, 3) / 3`` to the environment, so early exploration reaches a
    joint's limits only at three standard deviations. Stable-Baselines3 instead clips the sample
    to the action space, [-1, 1], where a standard deviation of 1 saturates about a third of
    all actions. This wrapper shows SB3 an action space three times as wide, so SB3's own clip
    is ML-Agents' clip to [-3, 3], and divides by 3 on the way to the environment. Export the
    trained policy with ``action_scale=1/3`` (``physbody.train.export``) so that its actions are
    the environment's.

    Args:
        venv: an SB3 vector env whose action space is the Box [-1, 1]^k.

    Raises:
        ValueError: for any other action space.
    """

    SPREAD = 3.0

    def __init__(self, venv: VecEnv) -> None:
        space = venv.action_space
        if not (
            isinstance(space, gym.spaces.Box)
            and np.all(space.low == -1.0)
            and np.all(space.high == 1.0)
        ):
            raise ValueError(
                f"MLAgentsGaussianActions needs the action space Box(-1, 1), got {space}"
            )
        wide = gym.spaces.Box(-self.SPREAD, self.SPREAD, space.shape, dtype=space.dtype)
        super().__init__(venv, action_space=wide)

    def reset(self) -> VecEnvObs:
        """Resets the wrapped env."""
        return self.venv.reset()

    def step_async(self, actions: NDArray[Any]) -> None:
        """Sends ``clip(actions, -3, 3) / 3`` to the wrapped env."""
        self.venv.step_async(np.clip(actions, -self.SPREAD, self.SPREAD) / self.SPREAD)

    def step_wait(self) -> VecEnvStepReturn:
        """The wrapped env's step results."""
        return self.venv.step_wait()


def make_native_vec_env(
    env_id: str, num_envs: int, *, num_workers: int = 1, **kwargs: Any
) -> NativeVecEnv:
    """``num_envs`` agents of ``env_id`` in one native vector env, as an SB3 ``VecEnv``.

    Args:
        env_id: one of ``envs.ENV_IDS``.
        num_envs: number of agents.
        num_workers: processes to split the agents over (2 uses both cores of a 2-core box).
        **kwargs: the env's arguments (``max_episode_steps``, reward weights, ...).
    """
    import envs  # noqa: F401  (registers the ids)

    venv = gym.make_vec(
        env_id,
        num_envs=num_envs,
        vectorization_mode="vector_entry_point",
        num_workers=num_workers,
        **kwargs,
    )
    return NativeVecEnv(venv)


def _per_agent(infos: dict[str, Any], num_envs: int) -> list[dict[str, Any]]:
    """Gymnasium vector infos -> one dict per agent (keys whose mask is set for it)."""
    agents: list[dict[str, Any]] = [{} for _ in range(num_envs)]
    for key, values in infos.items():
        if key.startswith("_") or key in ("final_obs", "final_info"):
            continue
        mask = infos.get(f"_{key}")
        rows = range(num_envs) if mask is None else np.flatnonzero(mask)
        for i in rows:
            agents[i][key] = values[i]
    return agents
