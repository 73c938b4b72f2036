"""A two-node Ray cluster on this machine loses its worker node in the middle of a run.

Ray's own ``ray.cluster_utils.Cluster`` starts a head node with 1 CPU and adds a worker node with
1 CPU; the run asks for 2 env runners of 1 CPU each, so one of them can only live on the worker
node. Once the run has written its first checkpoint, the worker node is removed (its processes
are killed, as when a machine goes away):

- ``on_env_runner_failure="stop"``: the run stops with a final checkpoint and a valid status
  file, and ``--resume`` continues it on what is left (here also without the status file,
  which it rebuilds from the checkpoint files);
- ``on_env_runner_failure="restart"`` (RLlib's default): the run goes on with the env runner
  that is left and reaches ``max_steps`` (slow: about a minute).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")
pytest.importorskip("onnxruntime")

from ray.cluster_utils import Cluster  # noqa: E402

from physbody.train.inference import OnnxPolicy  # noqa: E402
from physbody.train.rllib_backend import CHECKPOINT_SUFFIX, RayOptions, train_rllib  # noqa: E402
from physbody.train.settings import TrainOptions  # noqa: E402

pytestmark = pytest.mark.distributed

BEHAVIOR = "CrawlerDynamic"
CONFIG = """\
behaviors:
  CrawlerDynamic:
    trainer_type: ppo
    hyperparameters: {{batch_size: 250, buffer_size: 1000, learning_rate: 0.0003,
                      num_epoch: 1, learning_rate_schedule: linear}}
    network_settings: {{normalize: true, hidden_units: 32, num_layers: 2}}
    reward_signals: {{extrinsic: {{gamma: 0.995, strength: 1.0}}}}
    keep_checkpoints: 10
    checkpoint_interval: 1000
    max_steps: {max_steps}
    summary_freq: 1000
"""


@pytest.fixture(scope="module")
def cluster():
    """A head node with 1 CPU (the driver joins it); tests add and remove worker nodes."""
    if ray.is_initialized():
        ray.shutdown()
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 1,
            "include_dashboard": False,
            # Notice a lost node within about a second (the default takes tens of seconds).
            "_system_config": {
                "health_check_initial_delay_ms": 0,
                "health_check_period_ms": 500,
                "health_check_failure_threshold": 2,
            },
        },
    )
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def _status(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "run_logs" / "training_status.json").read_text())


def _checkpoint_steps(run_dir: Path) -> list[int]:
    try:
        return [c["steps"] for c in _status(run_dir)[BEHAVIOR]["checkpoints"]]
    except (OSError, ValueError, KeyError):
        return []


class _NodeRemover(threading.Thread):
    """Removes ``node`` once the run has recorded a checkpoint and both CPUs are in use."""

    def __init__(self, cluster: Cluster, node: Any, run_dir: Path, timeout: float = 240) -> None:
        super().__init__(daemon=True)
        self._cluster, self._node, self._run_dir = cluster, node, run_dir
        self._timeout = timeout
        self.removed_after: int | None = None
        self.cpus_free_before: float | None = None

    def run(self) -> None:
        deadline = time.monotonic() + self._timeout
        while time.monotonic() < deadline and not _checkpoint_steps(self._run_dir):
            time.sleep(0.1)
        steps = _checkpoint_steps(self._run_dir)
        if not steps:
            return
        # Two env runners of 1 CPU on two 1-CPU nodes: no CPU is free, one runner is on the
        # worker node.
        self.cpus_free_before = ray.available_resources().get("CPU", 0.0)
        self.removed_after = steps[-1]
        self._cluster.remove_node(self._node)


def _start_run(tmp_path: Path, cluster: Cluster, max_steps: int) -> tuple[TrainOptions, Any]:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG.format(max_steps=max_steps))
    options = TrainOptions(
        config_path=config,
        env_id="Crawler-v0",
        run_id="lost",
        results_dir=tmp_path / "results",
        progress_bar=False,
    )
    worker = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    return options, worker


def _ray_options(mode: str, runners: int = 2) -> RayOptions:
    return RayOptions(
        num_env_runners=runners,
        num_envs_per_runner=1,
        on_env_runner_failure=mode,
        env_runner_probe_timeout_s=5.0,
    )


def _check_valid_status(run_dir: Path) -> dict[str, Any]:
    entry = _status(run_dir)[BEHAVIOR]
    final = entry["final_checkpoint"]
    assert final["steps"] == entry["checkpoints"][-1]["steps"]
    assert final["file_path"] == str(run_dir / f"{BEHAVIOR}.onnx")
    for record in entry["checkpoints"]:
        assert Path(record["file_path"]).is_file()
        rllib_folder = Path(record["file_path"]).with_suffix(CHECKPOINT_SUFFIX)
        assert rllib_folder.is_dir(), "every recorded checkpoint can be resumed from"
    policy = OnnxPolicy(final["file_path"])
    assert (policy.observation_size, policy.action_size) == (142, 20)
    return entry


def test_losing_a_node_with_stop_saves_a_final_checkpoint_and_resumes(
    tmp_path: Path, cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    options, worker = _start_run(tmp_path, cluster, max_steps=5000)
    remover = _NodeRemover(cluster, worker, options.run_dir)
    remover.start()
    with pytest.raises(RuntimeError, match="final checkpoint is saved: --resume continues"):
        train_rllib(options, _ray_options("stop"))
    remover.join(timeout=10)
    assert remover.removed_after is not None, "the worker node was removed during the run"
    assert remover.cpus_free_before == 0.0, "an env runner ran on the worker node"

    entry = _check_valid_status(options.run_dir)
    stopped_at = entry["final_checkpoint"]["steps"]
    assert remover.removed_after <= stopped_at < 5000

    # What is left (the head's CPU) is enough for one env runner: --resume goes on from there,
    # even without the status file (the records are rebuilt from the checkpoint files).
    (options.run_dir / "run_logs" / "training_status.json").unlink()
    with caplog.at_level(logging.WARNING, logger="physbody"):
        resumed = train_rllib(
            TrainOptions(
                config_path=options.config_path,
                env_id="Crawler-v0",
                run_id="lost",
                results_dir=options.results_dir,
                resume=True,
                max_steps=stopped_at + 1000,
                progress_bar=False,
            ),
            _ray_options("stop", runners=1),
        )
    assert "rebuilt the records of CrawlerDynamic" in caplog.text
    assert resumed.start_steps == stopped_at and resumed.steps >= stopped_at + 1000
    entry = _check_valid_status(options.run_dir)
    assert entry["checkpoints"][0]["steps"] <= stopped_at < entry["checkpoints"][-1]["steps"]


@pytest.mark.slow
def test_losing_a_node_with_restart_goes_on_with_the_runners_left(
    tmp_path: Path, cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    options, worker = _start_run(tmp_path, cluster, max_steps=4000)
    remover = _NodeRemover(cluster, worker, options.run_dir)
    remover.start()
    with caplog.at_level(logging.INFO, logger="physbody"):
        result = train_rllib(options, _ray_options("restart"))
    remover.join(timeout=10)
    assert remover.removed_after is not None, "the worker node was removed during the run"
    assert remover.cpus_free_before == 0.0, "an env runner ran on the worker node"
    assert remover.removed_after < 4000

    assert result.steps >= 4000 and not result.interrupted
    assert "1 of 2 env runners are healthy" in caplog.text
    entry = _check_valid_status(options.run_dir)
    after = [c["steps"] for c in entry["checkpoints"] if c["steps"] > remover.removed_after]
    assert len(after) >= 2, "checkpoints kept coming after the node was lost"
    rows = (options.run_dir / BEHAVIOR / "episodes.csv").read_text().splitlines()[1:]
    assert max(int(row.split(",")[0]) for row in rows) >= 4000
