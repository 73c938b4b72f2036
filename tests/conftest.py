"""Helpers shared by every test folder: loading a file of ``scripts/`` as a module."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

#: The repository's scripts folder (not a package: its files are run as programs).
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _load(name: str) -> ModuleType:
    """``scripts/<name>.py`` imported as a module named ``name``, without running its main."""
    path = SCRIPTS / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def load_script() -> Callable[[str], ModuleType]:
    """A function that imports ``scripts/<name>.py`` (``load_script("render_results")``)."""
    return _load
