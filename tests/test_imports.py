"""Import hygiene: the core never pulls in a training library or runs anything at import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PHYSBODY = Path(__file__).resolve().parents[1] / "physbody"
HEAVY = ("torch", "stable_baselines3", "onnx", "onnxruntime", "ray", "tensorboard", "yaml")


def test_core_imports_no_training_library():
    code = (
        "import sys, physbody, envs, envs.crawler, envs.walker, physbody.testing\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"


def _imports(path: Path) -> list[str]:
    return [
        line.strip()
        for line in path.read_text().splitlines()
        if line.strip().startswith(("import ", "from "))
    ]


def test_transforms_imports_only_numpy():
    imports = _imports(PHYSBODY / "transforms.py")
    allowed = ("from __future__", "from collections.abc", "import numpy", "from numpy")
    assert imports and all(line.startswith(allowed) for line in imports), imports


def test_bullet_is_the_only_physbody_module_importing_pybullet():
    importers = sorted(
        path.name
        for path in PHYSBODY.glob("*.py")
        if any("pybullet" in line for line in _imports(path))
    )
    assert importers == ["bullet.py"]
