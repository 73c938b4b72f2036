"""Real (tiny) training runs: files left behind, status file, resume, SIGINT, run folders."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("yaml")

from physbody.train.checkpoints import current_metadata  # noqa: E402
from physbody.train.inference import OnnxPolicy  # noqa: E402
from physbody.train.settings import TrainOptions  # noqa: E402
from physbody.train.trainer import resolve_settings, train  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _files(run_dir: Path) -> set[str]:
    return {
        path.relative_to(run_dir).as_posix()
        for path in run_dir.rglob("*")
        if path.is_file() and not path.name.startswith("events.out.tfevents")
    }


def _read_status(run_dir: Path) -> dict:
    return json.loads((run_dir / "run_logs" / "training_status.json").read_text())


def _check_status(run_dir: Path, behavior: str = "CrawlerDynamic") -> dict:
    status = _read_status(run_dir)
    assert set(status) == {behavior, "metadata"}
    assert status["metadata"] == current_metadata()
    entry = status[behavior]
    steps = [record["steps"] for record in entry["checkpoints"]]
    assert steps == sorted(steps)
    for record in [*entry["checkpoints"], entry["final_checkpoint"]]:
        assert set(record) == {"steps", "file_path", "reward", "creation_time"}
        assert Path(record["file_path"]).is_file()
        assert record["reward"] is None or isinstance(record["reward"], float)
    assert entry["final_checkpoint"]["file_path"] == str(run_dir / f"{behavior}.onnx")
    assert entry["final_checkpoint"]["steps"] == steps[-1]
    return status


def test_tiny_run_leaves_exactly_the_expected_files(tiny_run):
    _, run_dir, result = tiny_run
    # 2 envs x 256 steps per rollout: 3,000 steps end after the rollout reaching 3,072.
    assert (result.start_steps, result.steps, result.interrupted) == (0, 3072, False)
    assert result.final_model == run_dir / "CrawlerDynamic.onnx"
    assert result.steps_per_second > 0
    kept = [f"CrawlerDynamic/CrawlerDynamic-{step}{suffix}" for step in (3000, 3072)
            for suffix in (".onnx", ".pkl", ".zip")]  # fmt: skip
    assert _files(run_dir) == {
        "configuration.yaml",
        "run_logs/training_status.json",
        "CrawlerDynamic.onnx",
        "CrawlerDynamic/episodes.csv",
        *kept,
    }
    if __import__("importlib").util.find_spec("tensorboard"):
        assert list((run_dir / "CrawlerDynamic").glob("events.out.tfevents.*"))
    status = _check_status(run_dir)
    checkpoints = status["CrawlerDynamic"]["checkpoints"]
    assert [c["steps"] for c in checkpoints] == [3000, 3072]
    assert checkpoints[0]["file_path"] == str(
        run_dir / "CrawlerDynamic" / "CrawlerDynamic-3000.onnx"
    )
    assert status["CrawlerDynamic"]["final_checkpoint"] == {
        **checkpoints[-1],
        "file_path": str(run_dir / "CrawlerDynamic.onnx"),
    }
    final = OnnxPolicy(run_dir / "CrawlerDynamic.onnx")
    assert (final.observation_size, final.action_size) == (142, 20)
    assert final.metadata["env_id"] == "Crawler-v0" and final.metadata["steps"] == "3072"


def test_episode_log_and_configuration(tiny_run):
    _, run_dir, _ = tiny_run
    with open(run_dir / "CrawlerDynamic" / "episodes.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert rows, "episodes finished during 3,000 steps"
    assert list(rows[0]) == ["steps", "return", "length", "wall_time"]
    steps = [int(row["steps"]) for row in rows]
    assert steps == sorted(steps) and 0 < steps[-1] <= 3072
    assert all(1 <= int(row["length"]) <= 1000 for row in rows)
    from physbody.train.settings import load_run_settings

    saved = load_run_settings(run_dir / "configuration.yaml")
    assert saved.behaviors["CrawlerDynamic"].network_settings.hidden_units == 16


def test_resume_continues_the_step_count(tiny_run, tmp_path):
    results, run_dir, _ = tiny_run
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    result = train(
        TrainOptions(
            run_id="tiny",
            results_dir=copy,
            resume=True,
            max_steps=4500,
            num_envs=2,
            progress_bar=False,
        )
    )
    assert result.start_steps == 3072
    assert result.steps == 4608  # the rollout that reaches 4,500
    status = _check_status(copy / "tiny")
    assert [c["steps"] for c in status["CrawlerDynamic"]["checkpoints"]] == [4000, 4608]
    assert not list((copy / "tiny" / "CrawlerDynamic").glob("CrawlerDynamic-3*"))
    from stable_baselines3 import PPO

    model = PPO.load(copy / "tiny" / "CrawlerDynamic" / "CrawlerDynamic-4608.zip", device="cpu")
    assert model.num_timesteps == 4608
    with open(copy / "tiny" / "CrawlerDynamic" / "episodes.csv", newline="") as file:
        steps = [int(row["steps"]) for row in csv.DictReader(file)]
    assert steps == sorted(steps) and steps[-1] > 3072


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_resume_rebuilds_a_missing_or_corrupt_status_from_the_files(
    tiny_run, tmp_path, caplog, damage
):
    results, _, _ = tiny_run
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    status_path = copy / "tiny" / "run_logs" / "training_status.json"
    if damage == "missing":
        status_path.unlink()
    else:
        status_path.write_text(status_path.read_text()[:57])  # cut off mid-write
    result = train(
        TrainOptions(
            run_id="tiny",
            results_dir=copy,
            resume=True,
            max_steps=3500,
            num_envs=2,
            progress_bar=False,
        )
    )
    assert "rebuilt the records of CrawlerDynamic" in caplog.text
    assert "steps 3000, 3072" in caplog.text
    assert (status_path.with_name("training_status.json.corrupt").is_file()) == (
        damage == "corrupt"
    )
    assert (result.start_steps, result.steps) == (3072, 3584)
    status = _check_status(copy / "tiny")
    # The rebuilt records were kept and pruned as usual (keep_checkpoints: 2): nothing lost.
    assert [c["steps"] for c in status["CrawlerDynamic"]["checkpoints"]] == [3072, 3584]
    assert status["CrawlerDynamic"]["checkpoints"][0]["reward"] is None
    assert not list((copy / "tiny" / "CrawlerDynamic").glob("CrawlerDynamic-3000.*"))


def test_resume_with_incompatible_status_is_an_error(tiny_run, tmp_path):
    from physbody.train.checkpoints import TrainingStatusError

    results, _, _ = tiny_run
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    status = copy / "tiny" / "run_logs" / "training_status.json"
    status.write_text(json.dumps({"CrawlerDynamic": {}}))
    with pytest.raises(TrainingStatusError, match="Metadata not found"):
        train(TrainOptions(run_id="tiny", results_dir=copy, resume=True, num_envs=2))


def test_existing_run_folder_needs_resume_or_force(tiny_run, tmp_path):
    results, _, _ = tiny_run
    with pytest.raises(FileExistsError, match="--resume .* --force"):
        train(TrainOptions(run_id="tiny", results_dir=results))
    with pytest.raises(FileNotFoundError, match="cannot resume"):
        train(TrainOptions(run_id="nothing", results_dir=results, resume=True))
    stranger = tmp_path / "results" / "mine"
    stranger.mkdir(parents=True)
    (stranger / "notes.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="refuses to delete"):
        train(TrainOptions(run_id="mine", results_dir=tmp_path / "results", force=True))
    assert (stranger / "notes.txt").is_file()


def test_force_replaces_the_run(tiny_run, tmp_path, write_config):
    results, _, _ = tiny_run
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    config = write_config(tmp_path, keep=0, interval=400, max_steps=1000)
    result = train(
        TrainOptions(
            config_path=config,
            run_id="tiny",
            results_dir=copy,
            force=True,
            num_envs=2,
            progress_bar=False,
        )
    )
    assert result.steps == 1024
    status = _check_status(copy / "tiny")
    assert [c["steps"] for c in status["CrawlerDynamic"]["checkpoints"]] == [400, 800, 1024]


def test_config_behaviour_warnings(tmp_path, caplog):
    config = tmp_path / "c.yaml"
    config.write_text("behaviors:\n  Hopper: {}\n  WalkerStatic: {max_steps: 7}\n")
    env_id, behavior, settings = resolve_settings(TrainOptions(config_path=config))
    assert (env_id, behavior, settings.max_steps) == ("WalkerStatic-v0", "WalkerStatic", 7)
    assert "Hopper" in caplog.text and "match no environment" in caplog.text
    caplog.clear()
    env_id, behavior, settings = resolve_settings(
        TrainOptions(config_path=config, env_id="Crawler-v0", max_steps=11)
    )
    assert (behavior, settings.max_steps) == ("CrawlerDynamic", 11)
    assert "CrawlerDynamic of Crawler-v0 not found" in caplog.text
    assert "found: Hopper, WalkerStatic" in caplog.text


@pytest.mark.parametrize(
    ("signum", "whole_group"),
    [
        (signal.SIGINT, False),
        (signal.SIGTERM, False),
        (signal.SIGINT, True),
        (signal.SIGTERM, True),
    ],
    ids=["SIGINT", "SIGTERM", "SIGINT-group", "SIGTERM-group"],
)
def test_signal_saves_a_final_model_and_a_valid_status(tmp_path, write_config, signum, whole_group):
    """A signal to the trainer, or to its whole group, stops it with a final checkpoint.

    Ctrl-C in a terminal, ``pkill -f`` and batch schedulers signal every process of the group,
    the two worker processes included.
    """
    config = write_config(tmp_path, keep=3, interval=500, max_steps=1_000_000)
    results = tmp_path / "results"
    code = (
        "import sys\nfrom physbody.cli import main\n"
        f"sys.exit(main(['train', {str(config)!r}, '--results-dir', {str(results)!r}, "
        "'--run-id', 'sig', '--num-envs', '2', '--num-workers', '2', '--no-progress-bar']))\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        start_new_session=True,
    )
    status_path = results / "sig" / "run_logs" / "training_status.json"
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if status_path.is_file() and _read_status(results / "sig")["CrawlerDynamic"].get(
                "checkpoints"
            ):
                break
            time.sleep(0.2)
        assert process.poll() is None, process.communicate()
        if whole_group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert f"{signal.Signals(signum).name} received" in err and "interrupted" in out
    status = _check_status(results / "sig")
    final = status["CrawlerDynamic"]["final_checkpoint"]
    assert 500 <= final["steps"] < 1_000_000
    assert (results / "sig" / "CrawlerDynamic.onnx").is_file()
    assert len(status["CrawlerDynamic"]["checkpoints"]) <= 3


SAC_CONFIG = """\
behaviors:
  CrawlerStatic:
    trainer_type: sac
    hyperparameters:
      batch_size: 32
      buffer_size: 2000
      buffer_init_steps: 100
      steps_per_update: 4
      save_replay_buffer: true
    network_settings: {normalize: false, hidden_units: 16, num_layers: 1}
    keep_checkpoints: 1
    checkpoint_interval: 200
    max_steps: 300
"""


def test_sac_run_and_resume(tmp_path):
    config = tmp_path / "sac.yaml"
    config.write_text(SAC_CONFIG)
    results = tmp_path / "results"
    first = train(
        TrainOptions(config_path=config, run_id="sac", results_dir=results, num_envs=2,
                     progress_bar=False)
    )  # fmt: skip
    assert (first.env_id, first.behavior, first.steps) == ("CrawlerStatic-v0", "CrawlerStatic", 300)
    behavior_dir = results / "sac" / "CrawlerStatic"
    assert sorted(p.name for p in behavior_dir.glob("CrawlerStatic-*")) == [
        "CrawlerStatic-300.onnx",
        "CrawlerStatic-300.replay.pkl",
        "CrawlerStatic-300.zip",
    ]
    second = train(
        TrainOptions(run_id="sac", results_dir=results, resume=True, max_steps=400, num_envs=2,
                     progress_bar=False)
    )  # fmt: skip
    assert (second.start_steps, second.steps) == (300, 400)
    status = _check_status(results / "sac", "CrawlerStatic")
    assert [c["steps"] for c in status["CrawlerStatic"]["checkpoints"]] == [400]
    policy = OnnxPolicy(results / "sac" / "CrawlerStatic.onnx")
    assert policy.metadata["trainer_type"] == "sac"


def test_truncate_episode_log(tmp_path):
    from physbody.train.callbacks import truncate_episode_log

    path = tmp_path / "episodes.csv"
    path.write_text("steps,return,length,wall_time\n10,1.5,10,0\n20,2.5,10,0\n30,3.5,10,0\n")
    truncate_episode_log(path, 20)
    with open(path, newline="") as file:
        assert [row["steps"] for row in csv.DictReader(file)] == ["10", "20"]
    truncate_episode_log(tmp_path / "missing.csv", 5)
