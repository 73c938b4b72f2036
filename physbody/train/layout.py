"""Where a run keeps its files (ML-Agents' results layout).

::

    <results>/<run-id>/
        configuration.yaml                      effective settings of the last start
        run_logs/training_status.json           checkpoint records (see checkpoints.py)
        <behavior>.onnx                         final policy (the status' final_checkpoint)
        <behavior>/
            <behavior>-<step>.onnx              exported policy of each kept checkpoint
            <behavior>-<step>.zip               SB3 model with optimiser state (to resume)
            <behavior>-<step>.pkl               VecNormalize statistics (when normalize: true)
            <behavior>-<step>.replay.pkl        SAC replay buffer (when save_replay_buffer)
            episodes.csv                        one row per finished episode
            events.out.tfevents.*               TensorBoard logs
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

__all__ = ["RunLayout"]


@attrs.frozen(kw_only=True)
class RunLayout:
    """The paths of one behavior's files in one run.

    Attributes:
        results_dir: folder holding all runs.
        run_id: the run's folder name.
        behavior: the behavior name (``CrawlerDynamic``, ...).
    """

    results_dir: Path = attrs.field(converter=Path)
    run_id: str
    behavior: str

    @property
    def run_dir(self) -> Path:
        """``<results>/<run-id>``."""
        return self.results_dir / self.run_id

    @property
    def status_path(self) -> Path:
        """``<results>/<run-id>/run_logs/training_status.json``."""
        return self.run_dir / "run_logs" / "training_status.json"

    @property
    def config_path(self) -> Path:
        """``<results>/<run-id>/configuration.yaml``."""
        return self.run_dir / "configuration.yaml"

    @property
    def behavior_dir(self) -> Path:
        """``<results>/<run-id>/<behavior>``: checkpoints, episode log, TensorBoard logs."""
        return self.run_dir / self.behavior

    @property
    def final_model(self) -> Path:
        """``<results>/<run-id>/<behavior>.onnx``."""
        return self.run_dir / f"{self.behavior}.onnx"

    @property
    def episodes_csv(self) -> Path:
        """``<results>/<run-id>/<behavior>/episodes.csv``."""
        return self.behavior_dir / "episodes.csv"

    def checkpoint(self, step: int, suffix: str) -> Path:
        """``<behavior_dir>/<behavior>-<step><suffix>``, e.g. ``suffix=".onnx"``."""
        return self.behavior_dir / f"{self.behavior}-{step}{suffix}"

    def saved_steps(self) -> list[int]:
        """Steps of the resumable checkpoints on disk (those with an SB3 ``.zip``), ascending."""
        pattern = re.compile(rf"{re.escape(self.behavior)}-(\d+)\.zip")
        if not self.behavior_dir.is_dir():
            return []
        steps = []
        for path in self.behavior_dir.iterdir():
            match = pattern.fullmatch(path.name)
            if match:
                steps.append(int(match.group(1)))
        return sorted(steps)
