"""RLlib backend: two PPO iterations on a local Ray with 2 CPUs (the ``distributed`` extra).

Run with ``python -m pytest tests/distributed``; skipped when ray is not installed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")
pytest.importorskip("onnxruntime")

from physbody.train.inference import OnnxPolicy  # noqa: E402
from physbody.train.rllib_backend import CHECKPOINT_SUFFIX, RayOptions, train_rllib  # noqa: E402
from physbody.train.settings import TrainOptions  # noqa: E402

pytestmark = pytest.mark.distributed

CONFIG = """\
behaviors:
  CrawlerDynamic:
    trainer_type: ppo
    hyperparameters: {batch_size: 250, buffer_size: 1000, learning_rate: 0.0003,
                      num_epoch: 1, learning_rate_schedule: linear}
    network_settings: {normalize: true, hidden_units: 32, num_layers: 2}
    reward_signals: {extrinsic: {gamma: 0.995, strength: 1.0}}
    keep_checkpoints: 1
    checkpoint_interval: 1000
    max_steps: 2000
    summary_freq: 1000
"""


@pytest.fixture
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_two_ppo_iterations_write_status_and_onnx(tmp_path: Path, local_ray: None) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    options = TrainOptions(
        config_path=config,
        env_id="Crawler-v0",
        run_id="ray",
        results_dir=tmp_path / "results",
        progress_bar=False,
    )
    result = train_rllib(options, RayOptions(num_env_runners=1, num_envs_per_runner=1))

    assert result.steps >= 2000
    assert ray.is_initialized(), "a Ray started by the caller must be left running"
    run_dir = tmp_path / "results" / "ray"
    status = json.loads((run_dir / "run_logs" / "training_status.json").read_text())
    entry = status["CrawlerDynamic"]
    assert status["metadata"]["stats_format_version"] == "0.1.0"
    # keep_checkpoints: 1 pruned the checkpoint of the first iteration, files and folder.
    assert len(entry["checkpoints"]) == 1
    record = entry["checkpoints"][0]
    assert record["steps"] == result.steps
    assert Path(record["file_path"]).is_file()
    behavior_dir = run_dir / "CrawlerDynamic"
    assert sorted(p.name for p in behavior_dir.glob("CrawlerDynamic-*")) == [
        f"CrawlerDynamic-{result.steps}.onnx",
        f"CrawlerDynamic-{result.steps}{CHECKPOINT_SUFFIX}",
    ]
    assert entry["final_checkpoint"]["file_path"] == str(run_dir / "CrawlerDynamic.onnx")
    assert (behavior_dir / "episodes.csv").is_file()

    policy = OnnxPolicy(run_dir / "CrawlerDynamic.onnx")
    assert policy.metadata["env_id"] == "Crawler-v0"
    assert policy.metadata["backend"] == "rllib"
    observations = np.random.default_rng(0).normal(size=(3, 142)).astype(np.float32)
    actions = policy(observations)
    assert actions.shape == (3, 20)
    assert actions.dtype == np.float32
    assert np.all(np.abs(actions) <= 1.0)
    assert policy(observations[0]).shape == (20,)
