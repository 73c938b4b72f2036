"""The wheel ships the URDFs: install it in a fresh virtual environment and make every env."""

from __future__ import annotations

import json
import math
import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHECK = """
import json, pathlib, sys
import gymnasium as gym
import envs, physbody
out = {"envs": envs.__file__, "physbody": physbody.__file__, "shapes": {}}
for env_id in envs.ENV_IDS:
    env = gym.make(env_id)
    obs, _ = env.reset(seed=0)
    obs, reward, *_ = env.step(env.action_space.sample())
    out["shapes"][env_id] = [obs.shape[0], env.action_space.shape[0], float(reward)]
    env.close()
out["torch_imported"] = "torch" in sys.modules
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    (built,) = dist.glob("physbody-*.whl")
    return built


def test_wheel_contains_the_urdfs(wheel):
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert "envs/assets/urdf/crawler.urdf" in names
    assert "envs/assets/urdf/walker.urdf" in names
    assert "envs/assets/policies/CrawlerDynamic.onnx" in names
    assert "physbody/py.typed" in names
    assert not any(name.startswith("tests/") for name in names)
    (metadata,) = (name for name in names if name.endswith(".dist-info/METADATA"))
    assert "License-Expression: Apache-2.0" in zipfile.ZipFile(wheel).read(metadata).decode()
    assert metadata.replace("METADATA", "licenses/LICENSE") in names


def test_installed_wheel_makes_every_env_outside_the_repository(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    target = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # Our wheel goes into the new environment; its dependencies (numpy, pybullet, gymnasium,
    # attrs) are borrowed from this interpreter's site-packages through a .pth path line,
    # which puts them after the new site-packages and does not run their .pth hooks (so an
    # editable install of physbody there stays invisible).
    borrowed = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    Path(target, "borrowed_deps.pth").write_text("\n".join(sorted(borrowed)) + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-index", str(wheel)],
        check=True,
    )  # fmt: skip
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [str(python), "-c", CHECK],
        cwd=workdir,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["envs"].startswith(str(venv)) and report["physbody"].startswith(str(venv))
    sizes = {env_id: values[:2] for env_id, values in report["shapes"].items()}
    assert sizes == {
        "Crawler-v0": [142, 20],
        "CrawlerStatic-v0": [142, 20],
        "Walker-v0": [248, 39],
        "WalkerStatic-v0": [248, 39],
    }
    assert all(math.isfinite(values[2]) for values in report["shapes"].values())
    assert report["torch_imported"] is False
