"""CheckpointManager: ML-Agents' checkpoint bookkeeping, pruning and the status file."""

from __future__ import annotations

import json
import logging
import time

import pytest

from physbody.train.checkpoints import (
    STATS_FORMAT_VERSION,
    CheckpointManager,
    CheckpointRecord,
    TrainingStatusError,
    current_metadata,
)

BEHAVIOR = "Mock_brain"


def _record(folder, step, reward=None):
    """A record of step ``step`` with its .onnx, .zip and .pkl files on disk."""
    for suffix in (".onnx", ".zip", ".pkl"):
        (folder / f"{BEHAVIOR}-{step}{suffix}").write_bytes(b"x")
    return CheckpointRecord(
        steps=step,
        file_path=str(folder / f"{BEHAVIOR}-{step}.onnx"),
        reward=reward,
        creation_time=time.time(),
    )


@pytest.fixture
def layout(tmp_path):
    folder = tmp_path / "results" / "run" / BEHAVIOR
    folder.mkdir(parents=True)
    return tmp_path / "results" / "run" / "run_logs" / "training_status.json", folder


def test_model_management(layout):
    """The seed's test: three recorded, a fourth with keep 4, a fifth pruned, final tracked."""
    status_path, folder = layout
    manager = CheckpointManager(status_path, BEHAVIOR, folder, max_to_keep=4)
    for step, reward in ((1, 1.312), (2, 1.912), (3, 2.312)):
        assert manager.add_checkpoint(_record(folder, step, reward)) == []
    assert manager.all_steps() == [1, 2, 3]

    manager.add_checkpoint(_record(folder, 4, 2.678))
    assert len(manager.checkpoints) == 4
    assert manager.all_steps() == [1, 2, 3, 4]

    removed = manager.add_checkpoint(_record(folder, 5, 3.122))
    assert [r.steps for r in removed] == [1]
    assert len(manager.checkpoints) == 4
    assert manager.all_steps() == [2, 3, 4, 5]
    assert not any(folder.glob(f"{BEHAVIOR}-1.*")), "the oldest checkpoint's files are gone"
    assert sorted(p.name for p in folder.glob(f"{BEHAVIOR}-2.*")) == [
        f"{BEHAVIOR}-2.onnx",
        f"{BEHAVIOR}-2.pkl",
        f"{BEHAVIOR}-2.zip",
    ]

    final = CheckpointRecord(
        steps=6, file_path=str(folder.parent / f"{BEHAVIOR}.onnx"), reward=3.294, creation_time=1.0
    )
    manager.track_final_checkpoint(final)
    assert len(manager.checkpoints) == 4
    assert manager.final_checkpoint == final

    saved = json.loads(status_path.read_text())
    assert set(saved) == {BEHAVIOR, "metadata"}
    assert [c["steps"] for c in saved[BEHAVIOR]["checkpoints"]] == [2, 3, 4, 5]
    assert saved[BEHAVIOR]["checkpoints"][-1] == {
        "steps": 5,
        "file_path": str(folder / f"{BEHAVIOR}-5.onnx"),
        "reward": 3.122,
        "creation_time": manager.checkpoints[-1].creation_time,
    }
    assert saved[BEHAVIOR]["final_checkpoint"] == final.as_dict()
    assert saved["metadata"] == current_metadata()
    assert saved["metadata"]["stats_format_version"] == STATS_FORMAT_VERSION


@pytest.mark.parametrize("keep", [0, -1])
def test_keep_non_positive_keeps_all(layout, keep):
    status_path, folder = layout
    manager = CheckpointManager(status_path, BEHAVIOR, folder, max_to_keep=keep)
    for step in range(1, 8):
        assert manager.add_checkpoint(_record(folder, step)) == []
    assert manager.all_steps() == list(range(1, 8))
    assert len(list(folder.glob("*.onnx"))) == 7


def test_missing_file_of_a_pruned_checkpoint_is_a_warning(layout, caplog):
    status_path, folder = layout
    manager = CheckpointManager(status_path, BEHAVIOR, folder, max_to_keep=1)
    manager.add_checkpoint(
        CheckpointRecord(steps=1, file_path=str(folder / "gone.onnx"), creation_time=1.0)
    )
    with caplog.at_level(logging.WARNING):
        manager.add_checkpoint(_record(folder, 2))
    assert "could not be found" in caplog.text and "gone.onnx" in caplog.text


def test_status_is_written_at_every_change_and_atomically(layout):
    status_path, folder = layout
    manager = CheckpointManager(status_path, BEHAVIOR, folder, max_to_keep=2)
    manager.add_checkpoint(_record(folder, 10, 0.5))
    assert json.loads(status_path.read_text())[BEHAVIOR]["checkpoints"][0]["steps"] == 10
    manager.add_checkpoint(_record(folder, 20))
    assert json.loads(status_path.read_text())[BEHAVIOR]["checkpoints"][1]["reward"] is None
    leftovers = [p.name for p in status_path.parent.iterdir() if p.name != status_path.name]
    assert leftovers == [], "no temporary files are left beside the status file"


def test_restore_continues_records_and_keeps_other_entries(layout):
    status_path, folder = layout
    manager = CheckpointManager(status_path, BEHAVIOR, folder, max_to_keep=3)
    for step in (1, 2, 3):
        manager.add_checkpoint(_record(folder, step))
    data = json.loads(status_path.read_text())
    data["Other"] = {"checkpoints": [], "lesson_num": 2}
    status_path.write_text(json.dumps(data))

    restored = CheckpointManager.restore(status_path, BEHAVIOR, folder, max_to_keep=3)
    assert restored.all_steps() == [1, 2, 3]
    assert restored.latest_step() == 3
    restored.add_checkpoint(_record(folder, 4))
    assert restored.all_steps() == [2, 3, 4]
    assert not any(folder.glob(f"{BEHAVIOR}-1.*"))
    assert json.loads(status_path.read_text())["Other"] == {"checkpoints": [], "lesson_num": 2}


def test_restore_without_a_status_file_rebuilds_from_the_files(layout, caplog):
    status_path, folder = layout
    for step in (20, 3, 100):
        _record(folder, step)
    (folder / f"{BEHAVIOR}-7.zip").write_bytes(b"x")  # no .onnx: not a recorded checkpoint
    (folder / f"{BEHAVIOR}-x.onnx").write_bytes(b"x")  # not a step: ignored
    (folder.parent / f"{BEHAVIOR}.onnx").write_bytes(b"x")  # same bytes as every checkpoint
    with caplog.at_level(logging.WARNING):
        manager = CheckpointManager.restore(status_path, BEHAVIOR, folder, max_to_keep=2)
    assert "Training status file not found" in caplog.text
    assert "rebuilt the records of Mock_brain" in caplog.text and "steps 3, 20, 100" in caplog.text
    assert manager.all_steps() == [3, 20, 100], "nothing is pruned by a rebuild"
    assert manager.latest_checkpoint().file_path == str(folder / f"{BEHAVIOR}-100.onnx")
    assert manager.latest_checkpoint().reward is None
    assert manager.final_checkpoint.steps == 100
    assert manager.final_checkpoint.file_path == str(folder.parent / f"{BEHAVIOR}.onnx")
    saved = json.loads(status_path.read_text())
    assert [c["steps"] for c in saved[BEHAVIOR]["checkpoints"]] == [3, 20, 100]
    manager.add_checkpoint(_record(folder, 200))
    assert manager.all_steps() == [100, 200]
    assert not any(folder.glob(f"{BEHAVIOR}-3.*")) and not any(folder.glob(f"{BEHAVIOR}-20.*"))


def test_rebuild_of_an_empty_folder_has_no_records(layout, caplog):
    status_path, folder = layout
    with caplog.at_level(logging.WARNING):
        manager = CheckpointManager.restore(status_path, BEHAVIOR, folder)
    assert "steps none" in caplog.text
    assert manager.latest_step() is None and manager.final_checkpoint is None


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "cannot read training status"),
        ('{"metadata": {"stats_form', "cannot read training status"),
        ("[]", "must hold a JSON object"),
        (
            json.dumps({"metadata": current_metadata(), BEHAVIOR: {"checkpoints": [{"steps": 1}]}}),
            "checkpoints[0] must be an object with keys",
        ),
        (json.dumps({"metadata": current_metadata(), BEHAVIOR: []}), "must be an object"),
        (
            json.dumps({"metadata": current_metadata(), BEHAVIOR: {"checkpoints": {}}}),
            "checkpoints must be a list",
        ),
    ],
)
def test_restore_of_a_corrupt_status_keeps_it_and_rebuilds(layout, caplog, content, reason):
    status_path, folder = layout
    status_path.parent.mkdir(parents=True)
    status_path.write_bytes(content.encode())
    _record(folder, 5)
    with caplog.at_level(logging.WARNING):
        manager = CheckpointManager.restore(status_path, BEHAVIOR, folder)
    assert reason in caplog.text and str(status_path) in caplog.text
    assert "rebuilt the records" in caplog.text
    assert manager.all_steps() == [5]
    kept = status_path.with_name("training_status.json.corrupt")
    assert kept.read_bytes() == content.encode(), "the corrupt file is kept as it was"
    saved = json.loads(status_path.read_text())
    assert set(saved) == {BEHAVIOR, "metadata"}
    assert [c["steps"] for c in saved[BEHAVIOR]["checkpoints"]] == [5]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (json.dumps({BEHAVIOR: {"checkpoints": []}}), "Metadata not found"),
        (
            json.dumps({"metadata": {"stats_format_version": "9.9.9"}}),
            "stats_format_version '9.9.9'",
        ),
    ],
)
def test_restore_rejects_a_status_of_another_version(layout, content, message):
    status_path, folder = layout
    status_path.parent.mkdir(parents=True)
    status_path.write_text(content)
    _record(folder, 5)
    with pytest.raises(TrainingStatusError, match=message) as error:
        CheckpointManager.restore(status_path, BEHAVIOR, folder)
    assert str(status_path) in str(error.value)
    assert status_path.read_text() == content, "an incompatible file is left alone"


def test_restore_warns_on_other_versions(layout, caplog):
    status_path, folder = layout
    status_path.parent.mkdir(parents=True)
    metadata = {**current_metadata(), "physbody_version": "0.0.1"}
    status_path.write_text(json.dumps({"metadata": metadata}))
    with caplog.at_level(logging.WARNING):
        CheckpointManager.restore(status_path, BEHAVIOR, folder)
    assert "physbody_version '0.0.1'" in caplog.text


def test_record_validation():
    with pytest.raises(ValueError, match="reward must be a finite number"):
        CheckpointRecord(steps=1, file_path="a.onnx", reward=float("nan"))
    with pytest.raises(ValueError, match="steps"):
        CheckpointRecord(steps=-1, file_path="a.onnx")
    with pytest.raises(TypeError, match="max_to_keep must be an int"):
        CheckpointManager("s.json", BEHAVIOR, ".", max_to_keep=2.0)
    with pytest.raises(ValueError, match="other than 'metadata'"):
        CheckpointManager("s.json", "metadata", ".")
