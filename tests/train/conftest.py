"""Shared helpers of the training tests: tiny configs and one small finished run."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

#: A PPO config small enough to train a few thousand Crawler steps in seconds.
TINY_PPO = """\
behaviors:
  CrawlerDynamic:
    trainer_type: ppo
    hyperparameters:
      batch_size: 64
      buffer_size: 512
      learning_rate: 3.0e-4
      num_epoch: 1
    network_settings:
      normalize: true
      hidden_units: 16
      num_layers: 2
    reward_signals:
      extrinsic:
        gamma: 0.99
    keep_checkpoints: {keep}
    checkpoint_interval: {interval}
    max_steps: {max_steps}
    summary_freq: 1000
"""


def _write_config(
    folder: Path, *, keep: int = 2, interval: int = 1000, max_steps: int = 3000
) -> Path:
    """Writes TINY_PPO with the given values to ``folder/tiny.yaml``."""
    path = folder / "tiny.yaml"
    path.write_text(TINY_PPO.format(keep=keep, interval=interval, max_steps=max_steps))
    return path


@pytest.fixture
def write_config():
    """``write_config(folder, keep=2, interval=1000, max_steps=3000) -> Path`` of TINY_PPO."""
    return _write_config


@pytest.fixture
def read_status():
    """``read_status(run_dir) -> dict``: the run's parsed ``training_status.json``."""

    def read(run_dir: Path) -> dict:
        return json.loads((run_dir / "run_logs" / "training_status.json").read_text())

    return read


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """A finished 3,000-step run: checkpoints every 1,000 steps, 2 kept, 2 environments.

    Returns (results_dir, run_dir, TrainResult). Tests that change the run copy it first.
    """
    pytest.importorskip("stable_baselines3")
    pytest.importorskip("onnx")
    pytest.importorskip("yaml")
    from physbody.train.settings import TrainOptions
    from physbody.train.trainer import train

    root = tmp_path_factory.mktemp("tiny_run")
    config = _write_config(root)
    results = root / "results"
    logging.getLogger("physbody").setLevel(logging.INFO)
    result = train(
        TrainOptions(
            config_path=config,
            run_id="tiny",
            results_dir=results,
            num_envs=2,
            seed=3,
            progress_bar=False,
        )
    )
    return results, results / "tiny", result
