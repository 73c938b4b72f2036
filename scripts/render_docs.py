"""Renders the README's pictures of the Crawler and the Walker into docs/.

Run: ``python scripts/render_docs.py``. Each env is reset with a fixed seed and stepped with
mid-range joint targets at half strength so the body has landed, then one ``rgb_array``
frame (TinyRenderer, headless) is written as PNG with imageio (the training extra).

``python scripts/render_docs.py --gif`` also films the shipped Crawler and Walker policies
(``physbody play Crawler-v0``, ``Walker-v0``; those that are shipped) walking to their targets into
``docs/crawler_trained.gif`` and ``docs/walker_trained.gif``: one frame per decision at the
env's real-time rate, each frame quantised to its own palette by Pillow (through imageio). The
camera, unlike the env's own, keeps the target in the picture: it looks at the midpoint of the
body and the target from a distance that grows with their separation, both smoothed so that a
target's jump pans the view instead of cutting it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gymnasium as gym
import imageio.v3 as iio
import numpy as np
import pybullet as p

import envs  # noqa: F401  (registers the ids)
from envs.scene import render_view

DOCS = Path(__file__).resolve().parents[1] / "docs"

#: The env ids whose shipped policies ``--gif`` films, and their GIFs in docs/.
GIFS = {"Crawler-v0": "crawler_trained.gif", "Walker-v0": "walker_trained.gif"}


def render(env_id: str, path: Path, steps: int = 12) -> None:
    """Writes one 640 x 480 frame of ``env_id`` after ``steps`` env steps to ``path``."""
    env = gym.make(env_id, render_mode="rgb_array", width=640, height=480)
    env.reset(seed=0)
    action = np.zeros(env.action_space.shape, dtype=np.float32)
    for _ in range(steps):
        env.step(action)
    iio.imwrite(path, env.render())
    env.close()


def film_shipped_policy(
    env_id: str, path: Path, decisions: int = 250, size: tuple[int, int] = (360, 270)
) -> float:
    """Films ``decisions`` decisions of the policy shipped for ``env_id`` into the GIF ``path``.

    Returns:
        The return over the filmed decisions.
    """
    from physbody.train.inference import OnnxPolicy
    from physbody.train.play import shipped_policy

    policy = OnnxPolicy(shipped_policy(env_id))
    env = gym.make(env_id, render_mode="rgb_array")
    world = env.unwrapped
    agent = world.agents[0]

    def aim() -> tuple[np.ndarray, float]:
        body = np.array(p.getBasePositionAndOrientation(agent.robot, world.client)[0])
        target = np.array(p.getBasePositionAndOrientation(agent.target, world.client)[0])
        return (body + target) / 2.0, 3.0 + 0.8 * float(np.linalg.norm(target - body))

    obs, _ = env.reset(seed=0)
    focus, distance = aim()
    frames, total = [], 0.0
    for step in range(decisions + 1):
        new_focus, new_distance = aim()
        focus += 0.15 * (new_focus - focus)
        distance += 0.15 * (new_distance - distance)
        frames.append(render_view(world.client, "rgb_array", focus, distance, *size, pitch=-50.0))
        if step == decisions:
            break
        obs, reward, terminated, truncated, _ = env.step(policy(obs))
        total += float(reward)
        if terminated or truncated:
            break
    fps = env.metadata["render_fps"]
    env.close()
    iio.imwrite(path, np.stack(frames), extension=".gif", duration=1000.0 / fps, loop=0)
    return total


def main() -> None:
    """Renders docs/crawler.png and docs/walker.png (and with ``--gif`` the trained bodies)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gif", action="store_true", help="film the shipped policies")
    args = parser.parse_args()
    DOCS.mkdir(exist_ok=True)
    render("Crawler-v0", DOCS / "crawler.png")
    render("Walker-v0", DOCS / "walker.png", steps=3)
    print(f"wrote {DOCS / 'crawler.png'} and {DOCS / 'walker.png'}")
    if args.gif:
        from physbody.train.play import shipped_policies

        for env_id, name in GIFS.items():
            if env_id not in shipped_policies():
                print(f"no policy is shipped for {env_id}: {name} not filmed")
                continue
            total = film_shipped_policy(env_id, DOCS / name)
            size = (DOCS / name).stat().st_size / 1e6
            print(f"wrote {DOCS / name} ({size:.1f} MB, return {total:.1f})")


if __name__ == "__main__":
    main()
