"""The ``physbody`` command through ``main([...])``, and import hygiene."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from physbody.cli import build_parser, main


def test_imports_stay_light():
    code = (
        "import sys, physbody, physbody.cli, physbody.train, physbody.train.settings, "
        "physbody.train.checkpoints, physbody.train.plot\n"
        "print([m for m in ('torch', 'stable_baselines3', 'onnx', 'onnxruntime', 'yaml') "
        "if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_help_and_bad_arguments(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    assert "train" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--resume", "--force"])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit):
        main(["train", "--max-steps", "0"])
    with pytest.raises(SystemExit):
        main(["play", "m.onnx", "--env", "Hopper-v4"])
    args = build_parser().parse_args(["train"])
    assert (args.run_id, args.results_dir, args.num_envs, args.max_steps) == (
        "ppo",
        "results",
        8,
        None,
    )


def test_bad_config_exits_1_naming_the_key(tmp_path, capsys):
    pytest.importorskip("yaml")
    config = tmp_path / "bad.yaml"
    config.write_text("behaviors:\n  CrawlerDynamic:\n    hyperparameters: {learning_rat: 1}\n")
    assert main(["train", str(config), "--results-dir", str(tmp_path / "r")]) == 1
    err = capsys.readouterr().err
    assert "'learning_rat'" in err and "PPOSettings" in err
    assert not (tmp_path / "r").exists()


def test_train_play_plot(tmp_path, capsys, write_config):
    for module in ("torch", "stable_baselines3", "onnx", "onnxruntime", "yaml"):
        pytest.importorskip(module)
    config = write_config(tmp_path, keep=1, interval=500, max_steps=600)
    results = tmp_path / "results"
    argv = ["train", str(config), "--results-dir", str(results), "--run-id", "cli",
            "--num-envs", "1", "--no-progress-bar"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    final = results / "cli" / "CrawlerDynamic.onnx"
    assert f"final model: {final}" in out and "CrawlerDynamic: 1,024 steps" in out
    assert main(argv) == 1
    assert "already exists" in capsys.readouterr().err

    assert main(["play", str(final), "--episodes", "1", "--seed", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("episode 1: return ") and "mean return over 1 episodes" in lines[1]

    assert main(["plot", str(results / "cli"), "--out", str(tmp_path / "c.png")]) == 0
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    assert main(["play", str(tmp_path / "nope.onnx")]) == 1
    assert "ONNX model not found" in capsys.readouterr().err
    assert main(["play", str(final), "--env", "Walker-v0"]) == 1
    assert "Walker-v0 has observations (248,)" in capsys.readouterr().err


def test_video_writer(tmp_path):
    from physbody.train.video import VideoWriter, find_ffmpeg

    try:
        find_ffmpeg()
    except FileNotFoundError:
        pytest.skip("ffmpeg is not installed")
    frames = np.zeros((10, 33, 47, 3), dtype=np.uint8)
    frames[:, :, :, 0] = np.arange(10)[:, None, None] * 25
    for name in ("clip.mp4", "clip.gif"):
        with VideoWriter(tmp_path / name, fps=15) as video:
            for frame in frames:
                video.write(frame)
        assert video.frames == 10 and (tmp_path / name).stat().st_size > 0
    with (
        pytest.raises(ValueError, match="differs from the first"),
        VideoWriter(tmp_path / "x.mp4", fps=15) as video,
    ):
        video.write(frames[0])
        video.write(np.zeros((8, 8, 3), np.uint8))


def test_missing_ffmpeg_is_a_clear_error(tmp_path, monkeypatch):
    import shutil

    from physbody.train.video import VideoWriter

    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(FileNotFoundError, match="needs the ffmpeg program"):
        VideoWriter(tmp_path / "a.mp4", fps=15)
