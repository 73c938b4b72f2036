"""Time to the first step in a fresh process, against raw PyBullet loading the same URDF.

Run: ``python benchmarks/first_step.py``. Each measurement is a new Python process (so
imports count), best of ``--repeat``:

* physbody: ``import gymnasium, envs``; ``gym.make("Crawler-v0")``; ``reset``; one ``step``;
* raw PyBullet: ``import pybullet``; connect; load ``crawler.urdf``; one ``stepSimulation``.

Goal: physbody <= 0.30 s (nothing heavy on the import path).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

_PHYSBODY = """
import time
start = time.perf_counter()
import gymnasium as gym
import numpy as np
import envs
env = gym.make("Crawler-v0")
env.reset(seed=0)
env.step(np.zeros(20, dtype=np.float32))
print(time.perf_counter() - start)
"""

_RAW = """
import time
start = time.perf_counter()
import pybullet as p
client = p.connect(p.DIRECT)
p.loadURDF({urdf!r}, physicsClientId=client)
p.stepSimulation(physicsClientId=client)
print(time.perf_counter() - start)
"""


def fresh_process_seconds(code: str, repeat: int) -> float:
    """Best time (s) that ``code`` prints over ``repeat`` fresh interpreters."""
    times = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        times.append(float(out.strip().splitlines()[-1]))
    return min(times)


def main() -> None:
    """Prints both times and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from envs.body import urdf_path

    ours = fresh_process_seconds(_PHYSBODY, args.repeat)
    raw = fresh_process_seconds(_RAW.format(urdf=str(urdf_path("crawler.urdf"))), args.repeat)
    print(f"import, make, reset, step (physbody):   {ours:6.3f} s  (goal <= 0.30)")
    print(f"import, connect, load URDF, step (raw): {raw:6.3f} s")
    print(f"ratio: {ours / raw:.2f}x")


if __name__ == "__main__":
    main()
