"""The example scripts run and print what they promise."""

from __future__ import annotations

import runpy
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_sensor_demo_prints_every_block(capsys):
    demo = runpy.run_path(str(EXAMPLES / "sensor_demo.py"))
    assert demo["main"]() == 0
    printed = capsys.readouterr().out
    assert "ArticulationBodySensor:" in printed and "30 floats" in printed  # 3 x (3 + 4) + 3 x 3
    for block in ("model_space/", "local_space/"):
        assert printed.count(block) == 3
