"""Renders the README's pictures of the Crawler and the Walker into docs/.

Run: ``python scripts/render_docs.py``. Each env is reset with a fixed seed and stepped with
mid-range joint targets at half strength so the body has landed, then one ``rgb_array``
frame (TinyRenderer, headless) is written as PNG with imageio (the training extra).
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import imageio.v3 as iio
import numpy as np

import envs  # noqa: F401  (registers the ids)

DOCS = Path(__file__).resolve().parents[1] / "docs"


def render(env_id: str, path: Path, steps: int = 12) -> None:
    """Writes one 640 x 480 frame of ``env_id`` after ``steps`` env steps to ``path``."""
    env = gym.make(env_id, render_mode="rgb_array", width=640, height=480)
    env.reset(seed=0)
    action = np.zeros(env.action_space.shape, dtype=np.float32)
    for _ in range(steps):
        env.step(action)
    iio.imwrite(path, env.render())
    env.close()


def main() -> None:
    """Renders docs/crawler.png and docs/walker.png."""
    DOCS.mkdir(exist_ok=True)
    render("Crawler-v0", DOCS / "crawler.png")
    render("Walker-v0", DOCS / "walker.png", steps=3)
    print(f"wrote {DOCS / 'crawler.png'} and {DOCS / 'walker.png'}")


if __name__ == "__main__":
    main()
