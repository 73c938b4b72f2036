"""``physbody play``: run an exported ONNX policy in its environment, optionally filmed.

Needs onnxruntime (and imageio-ffmpeg for ``video``, both in the training extra), not torch::

    from physbody.train.play import play

    returns = play("results/ppo/CrawlerDynamic.onnx", episodes=3, video="crawler.mp4")
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from physbody.train.inference import OnnxPolicy
from physbody.train.video import VideoWriter

__all__ = ["Policy", "play", "run_episodes"]

#: A policy maps one observation to one action.
Policy = Callable[[NDArray[np.float32]], NDArray[np.floating]]


def _check_env_id(env_id: str, where: str = "") -> None:
    """Raises ValueError unless ``env_id`` is one of physbody's environment ids."""
    import envs

    if env_id not in envs.ENV_IDS:
        raise ValueError(
            f"unknown environment {env_id!r}{where}; expected one of {', '.join(envs.ENV_IDS)}"
        )


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
    model_path: str | Path,
    env_id: str | None = None,
    *,
    episodes: int = 5,
    seed: int = 0,
    video: str | Path | None = None,
    on_episode: Callable[[int, float, int], None] | None = None,
) -> list[float]:
    """Runs an exported policy (deterministic actions) for ``episodes`` episodes.

    Args:
        model_path: an ``.onnx`` file written by ``physbody train``.
        env_id: environment; None uses the ``env_id`` stored in the model.
        episodes: number of episodes.
        seed: seed of the first reset.
        video: optional video file; its extension picks the format (``.mp4``, ``.gif``, ...).
        on_episode: called after each episode with ``(index, return, length)``.

    Returns:
        The return of each episode.

    Raises:
        FileNotFoundError: when ``model_path`` does not exist.
        ValueError: when ``model_path`` is not an ONNX policy, the environment is unknown, or
            its observation or action size differs from the model's.
    """
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
