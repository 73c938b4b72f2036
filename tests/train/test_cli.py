"""The ``physbody`` command through ``main([...])``, and import hygiene."""

from __future__ import annotations

import os
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
    assert (args.run_id, args.results_dir, args.num_envs, args.num_workers, args.max_steps) == (
        "ppo",
        "results",
        80,
        None,
        None,
    )
    assert build_parser().parse_args(["train", "--num-workers", "2"]).num_workers == 2
    with pytest.raises(SystemExit):
        main(["train", "--num-workers", "0"])


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
    assert main(["plot", str(results / "cli"), "--out", str(tmp_path / "c.jpg")]) == 1
    assert "plot file must end in .png or .svg" in capsys.readouterr().err

    assert main(["play", str(tmp_path / "nope.onnx")]) == 1
    assert "ONNX model not found" in capsys.readouterr().err
    assert main(["play", str(final), "--env", "Walker-v0"]) == 1
    assert "Walker-v0 has observations (248,)" in capsys.readouterr().err


def test_two_episodes_filmed_to_an_mp4_read_back(tmp_path):
    iio = pytest.importorskip("imageio.v3")
    from physbody.train.play import run_episodes

    lengths = []
    video = tmp_path / "films" / "crawler.mp4"
    returns = run_episodes(
        lambda obs: np.full(20, -1.0, np.float32),  # folds the legs: episodes end in steps
        "Crawler-v0",
        2,
        seed=1,
        video=video,
        on_episode=lambda index, episode_return, length: lengths.append(length),
    )
    assert len(returns) == 2 and len(lengths) == 2 and sum(lengths) < 200
    frames = iio.imread(video)  # every frame: each reset, then each step
    assert frames.shape == (sum(lengths) + 2, 480, 480, 3) and frames.dtype == np.uint8
    assert frames.std() > 10, "the frames show the scene, not a blank image"
    assert iio.immeta(video)["fps"] == pytest.approx(15.0)


@pytest.mark.parametrize("name", ["clip.mp4", "clip.gif", "clip.webm", "clip.mkv"])
def test_video_writer_formats_read_back(tmp_path, name):
    iio = pytest.importorskip("imageio.v3")
    from physbody.train.video import VideoWriter

    frames = np.zeros((10, 33, 47, 3), dtype=np.uint8)  # odd sizes: padded for yuv420p
    frames[:, :, :, 0] = np.arange(10)[:, None, None] * 25
    frames[:, 5:20, 10:30, 1] = 200
    with VideoWriter(tmp_path / "sub" / name, fps=15) as video:
        for frame in frames:
            video.write(frame)
    assert video.frames == 10
    back = iio.imread(tmp_path / "sub" / name, index=None)[..., :3]
    assert back.shape[0] == 10 and back.shape[1:3] in ((33, 47), (34, 48))
    error = np.abs(back[:, :33, :47].astype(int) - frames).mean()
    assert error < 12, f"{name} keeps the picture (mean error {error:.1f})"


def test_video_writer_errors(tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    from physbody.train.video import VideoWriter

    with pytest.raises(ValueError, match=r"must end in one of \.mp4.*\.gif, got '.*x\.avi2'"):
        VideoWriter(tmp_path / "x.avi2", fps=15)
    with pytest.raises(ValueError, match="fps must be a number > 0, got 0"):
        VideoWriter(tmp_path / "x.mp4", fps=0)
    frame = np.zeros((16, 16, 3), np.uint8)
    with (
        pytest.raises(ValueError, match="differs from the first"),
        VideoWriter(tmp_path / "x.mp4", fps=15) as video,
    ):
        video.write(frame)
        video.write(np.zeros((8, 8, 3), np.uint8))
    with VideoWriter(tmp_path / "y.mp4", fps=15) as video:
        with pytest.raises(ValueError, match=r"\(H, W, 3\) uint8"):
            video.write(np.zeros((16, 16, 3), np.float32))
        video.write(frame)
    video.close()  # twice is fine
    with pytest.raises(RuntimeError, match="is closed"):
        video.write(frame)


def _one_line_error(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("physbody play: error: "), captured.err
    assert "Traceback" not in captured.err
    return lines[0]


def test_play_on_files_that_are_not_onnx_models(tmp_path, capsys):
    pytest.importorskip("onnxruntime")
    import pickle

    text = tmp_path / "notes.txt"
    text.write_text("this is not a model\n")
    pickled = tmp_path / "model.pkl"
    pickled.write_bytes(pickle.dumps({"weights": [1.0, 2.0]}))
    for path in (text, pickled):
        assert main(["play", str(path)]) == 1
        line = _one_line_error(capsys)
        assert f"{path} is not an ONNX policy that onnxruntime can load" in line
    assert main(["play", str(tmp_path)]) == 1
    assert "ONNX model not found" in _one_line_error(capsys)


def test_play_on_an_onnx_model_that_is_not_a_policy(tmp_path, capsys):
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["c"])],
        "add",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in "ab"],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / "add.onnx"
    onnx.save(model, path)
    assert main(["play", str(path)]) == 1
    assert "must have one input and one output" in _one_line_error(capsys)


def test_play_with_a_video_format_it_cannot_write_fails_before_any_episode(tiny_run, capsys):
    _, run_dir, _ = tiny_run
    assert main(["play", str(run_dir / "CrawlerDynamic.onnx"), "--video", "x.avi2"]) == 1
    assert "video file must end in one of" in _one_line_error(capsys)
    assert capsys.readouterr().out == ""


def test_plot_command_svg_and_reference(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    run = tmp_path / "run"
    (run / "CrawlerDynamic").mkdir(parents=True)
    rows = "\n".join(f"{i * 100},{i * 0.5},10,0" for i in range(1, 60))
    (run / "CrawlerDynamic" / "episodes.csv").write_text(f"steps,return,length,wall_time\n{rows}\n")
    argv = ["plot", str(run), "--svg", "--reference", "20", "--reference-label", "ML-Agents"]
    assert main(argv) == 0
    assert capsys.readouterr().out.split() == [
        str(run / "learning_curve.png"),
        str(run / "learning_curve.svg"),
    ]
    assert "ML-Agents (20)" in (run / "learning_curve.svg").read_text()
    assert main(["plot", str(run), "--reference-label", "x"]) == 1
    assert "--reference-label needs --reference" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["plot", str(run), "--reference", "nan"])
    assert "expected a finite number, got 'nan'" in capsys.readouterr().err


def test_train_steps_the_agents_in_two_worker_processes(
    tmp_path, capsys, monkeypatch, write_config
):
    for module in ("torch", "stable_baselines3", "onnx", "onnxruntime", "yaml"):
        pytest.importorskip(module)
    from envs.processes import ProcessVectorEnv

    config = write_config(tmp_path, keep=1, interval=1000, max_steps=1024)
    results = tmp_path / "results"
    argv = ["train", str(config), "--results-dir", str(results), "--run-id", "two",
            "--num-envs", "4", "--num-workers", "2", "--no-progress-bar"]  # fmt: skip
    built = []
    original = ProcessVectorEnv.__init__

    def recording(self, env_factory, num_envs, **kwargs):
        original(self, env_factory, num_envs, **kwargs)
        built.append((num_envs, [process.pid for process in self._processes]))

    monkeypatch.setattr(ProcessVectorEnv, "__init__", recording)
    assert main(argv) == 0
    assert "CrawlerDynamic: 1,024 steps" in capsys.readouterr().out
    [(num_envs, pids)] = built
    assert num_envs == 4 and len(set(pids)) == 2 and os.getpid() not in pids
    assert (results / "two" / "CrawlerDynamic.onnx").is_file()
