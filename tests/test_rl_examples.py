"""The RL-library examples train for a few hundred steps, print episode returns, and are seeded.

Each test skips cleanly when its library is absent; ``pip install -c constraints.txt -e
".[test,examples]"`` installs them all.
"""

from __future__ import annotations

import re
import runpy
from collections.abc import Callable
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# torchrl 0.14 deprecates its own weight updaters while defining them at import.
pytestmark = pytest.mark.filterwarnings("ignore:Creating .*WeightUpdater:DeprecationWarning")

# 256 environment steps in two updates of 128, with one or two short passes over each batch.
SMOKE_ARGS = {
    "cleanrl_ppo.py": [
        "--total-timesteps=256",
        "--num-envs=2",
        "--num-steps=64",
        "--update-epochs=2",
        "--num-minibatches=4",
        "--hidden-units=32",
    ],
    "torchrl_gymenv.py": [
        "--total-timesteps=256",
        "--frames-per-batch=128",
        "--minibatch-size=32",
        "--update-epochs=2",
        "--hidden-units=32",
    ],
    "skrl_ppo.py": [
        "--total-timesteps=256",
        "--num-envs=2",
        "--rollouts=64",
        "--learning-epochs=2",
        "--mini-batches=4",
        "--hidden-units=32",
    ],
}

REPORT = re.compile(r"^step (\d+): (\d+ episodes, return mean -?\d+\.\d+|no episode ended)")


def load_main(script: str) -> Callable[[list[str]], int]:
    """The ``main`` function of ``examples/<script>``."""
    return runpy.run_path(str(EXAMPLES / script))["main"]


def run(script: str, capsys: pytest.CaptureFixture[str], *extra: str) -> list[str]:
    """Runs the script's ``main`` with the smoke settings; returns its report lines."""
    assert load_main(script)([*SMOKE_ARGS[script], *extra]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if REPORT.match(line)]
    return [re.sub(r" \(\d+ steps/s\)$", "", line) for line in lines]  # drop the timing


def check_smoke_run(script: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Two updates, steps counted, episodes reported; the same seed gives the same report."""
    lines = run(script, capsys)
    assert [int(REPORT.match(line)[1]) for line in lines] == [128, 256], lines
    # A random Crawler soon falls over, so some episodes end within 256 steps.
    assert any("episodes, return mean" in line for line in lines), lines
    assert run(script, capsys) == lines
    assert run(script, capsys, "--seed=2") != lines


def test_cleanrl_ppo_trains_and_reports_returns(capsys):
    pytest.importorskip("torch")
    check_smoke_run("cleanrl_ppo.py", capsys)


def test_torchrl_gymenv_trains_and_reports_returns(capsys):
    pytest.importorskip("torchrl")
    check_smoke_run("torchrl_gymenv.py", capsys)


def test_skrl_ppo_trains_and_reports_returns(capsys):
    pytest.importorskip("skrl")
    check_smoke_run("skrl_ppo.py", capsys)


@pytest.mark.parametrize("script", sorted(SMOKE_ARGS))
def test_example_help_names_every_setting(script, capsys):
    pytest.importorskip(
        {"torchrl_gymenv.py": "torchrl", "skrl_ppo.py": "skrl"}.get(script, "torch")
    )
    with pytest.raises(SystemExit) as exit_info:
        load_main(script)(["--help"])
    assert exit_info.value.code == 0
    printed = capsys.readouterr().out
    for flag in ("--env-id", "--seed", "--total-timesteps", "--torch-threads"):
        assert flag in printed
