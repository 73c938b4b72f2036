"""``physbody play``: run an exported ONNX policy in its environment, optionally filmed.

Needs onnxruntime (and imageio-ffmpeg for ``video``: the ``play`` extra), not torch::

    from physbody.train.play import play

    returns = play("results/ppo/CrawlerDynamic.onnx", episodes=3, video="crawler.mp4")
    returns = play("Crawler-v0")    # the policy shipped with the package, as ML-Agents' examples

The package ships the newest policy of each long run in ``envs/assets/policies`` under the
behaviour's name (``Crawler-v0`` -> ``CrawlerDynamic.onnx``); :func:`shipped_policy` finds it.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from physbody.train.inference import OnnxPolicy
from physbody.train.settings import behavior_name
from physbody.train.video import VideoWriter

__all__ = ["Policy", "play", "run_episodes", "shipped_policies", "shipped_policy"]

#: A policy maps one observation to one action.
Policy = Callable[[NDArray[np.float32]], NDArray[np.floating]]


def _check_env_id(env_id: str, where: str = "") -> None:
    """Raises ValueError unless ``env_id`` is one of physbody's environment ids."""
    import envs

    if env_id not in envs.ENV_IDS:
        raise ValueError(
            f"unknown environment {env_id!r}{where}; expected one of {', '.join(envs.ENV_IDS)}"
        )


def _policies_dir() -> Path:
    return Path(str(resources.files("envs") / "assets" / "policies"))


def shipped_policies() -> dict[str, Path]:
    """The ONNX policies shipped with the package: env id -> file, in ``envs.ENV_IDS`` order."""
    import envs

    found = {}
    for env_id in envs.ENV_IDS:
        path = _policies_dir() / f"{behavior_name(env_id)}.onnx"
        if path.is_file():
            found[env_id] = path
    return found


def shipped_policy(env_id: str) -> Path:
    """The ONNX policy shipped for ``env_id`` (``envs/assets/policies/<behaviour>.onnx``).

    Raises:
        ValueError: when ``env_id`` is unknown or no policy is shipped for it; the message lists
            the ids that have one.
    """
    _check_env_id(env_id)
    shipped = shipped_policies()
    if env_id not in shipped:
        raise ValueError(
            f"no trained policy is shipped for {env_id}; shipped: "
            f"{', '.join(shipped) or 'none'} (or pass an .onnx file written by physbody train)"
        )
    return shipped[env_id]


def run_episodes(
    policy: Policy,
    env_id: str,
    episodes: int,
    *,
    seed: int = 0,
    video: str | Path | None = None,
    on_episode: Callable[[int, float, int], None] | None = None,
) -> list[float]:
    """Runs ``episodes`` full episodes of ``env_id`` with ``policy``.

    The first reset uses ``seed``; later episodes continue the environment's random stream.

    Args:
        policy: maps an observation to an action.
        env_id: a registered environment id (``envs.ENV_IDS``).
        episodes: number of episodes, >= 1.
        seed: seed of the first reset.
        video: file to film every step into (``rgb_array`` frames, the env's ``render_fps``);
            None films nothing.
        on_episode: called after each episode with ``(index, return, length)``.

    Returns:
        The return (sum of rewards) of each episode.

    Raises:
        ValueError: for ``episodes < 1``, an unknown ``env_id`` or a ``video`` extension that
            :class:`~physbody.train.video.VideoWriter` does not write (before any episode).
    """
    import gymnasium as gym

    import envs  # noqa: F401  (registers the ids)

    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be an int >= 1, got {episodes!r}")
    _check_env_id(env_id)
    env = gym.make(env_id, render_mode="rgb_array" if video is not None else None)
    try:
        writer = (
            VideoWriter(video, fps=env.metadata.get("render_fps", 15))
            if video is not None
            else None
        )
        returns = []
        try:
            for index in range(episodes):
                obs, _ = env.reset(seed=seed if index == 0 else None)
                total, length, done = 0.0, 0, False
                if writer is not None:
                    writer.write(env.render())
                while not done:
                    obs, reward, terminated, truncated, _ = env.step(policy(obs))
                    total += float(reward)
                    length += 1
                    done = terminated or truncated
                    if writer is not None:
                        writer.write(env.render())
                returns.append(total)
                if on_episode is not None:
                    on_episode(index, total, length)
        finally:
            if writer is not None:
                writer.close()
    finally:
        env.close()
    return returns


def play(
    model: str | Path,
    env_id: str | None = None,
    *,
    episodes: int = 5,
    seed: int = 0,
    video: str | Path | None = None,
    on_episode: Callable[[int, float, int], None] | None = None,
) -> list[float]:
    """Runs an exported policy (deterministic actions) for ``episodes`` episodes.

    Args:
        model: an ``.onnx`` file written by ``physbody train``, or an environment id
            (``"Crawler-v0"``) to play the policy shipped for it (:func:`shipped_policy`). A
            file of that name in the working directory is not taken for an id.
        env_id: environment; None uses the ``env_id`` stored in the model.
        episodes: number of episodes.
        seed: seed of the first reset.
        video: optional video file; its extension picks the format (``.mp4``, ``.gif``, ...).
        on_episode: called after each episode with ``(index, return, length)``.

    Returns:
        The return of each episode.

    Raises:
        FileNotFoundError: when ``model`` does not exist.
        ValueError: when ``model`` is not an ONNX policy, names an environment without a
            shipped policy, the environment is unknown, or its observation or action size
            differs from the model's.
    """
    import envs

    model_path = Path(model)
    if str(model) in envs.ENV_IDS and not model_path.exists():
        model_path = shipped_policy(str(model))
    policy = OnnxPolicy(model_path)
    if env_id is None:
        env_id = policy.metadata.get("env_id")
        if env_id is None:
            raise ValueError(f"{model_path} does not name its environment: pass --env ID")
    import gymnasium as gym

    import envs  # noqa: F401  (registers the ids)

    _check_env_id(env_id, f" (the env_id stored in {model_path})")

    spec_env = gym.make(env_id)
    try:
        obs_shape = spec_env.observation_space.shape
        action_shape = spec_env.action_space.shape
    finally:
        spec_env.close()
    if obs_shape != (policy.observation_size,) or action_shape != (policy.action_size,):
        raise ValueError(
            f"{model_path} maps {policy.observation_size} observations to "
            f"{policy.action_size} actions; {env_id} has observations {obs_shape} and actions "
            f"{action_shape}"
        )
    return run_episodes(policy, env_id, episodes, seed=seed, video=video, on_episode=on_episode)
