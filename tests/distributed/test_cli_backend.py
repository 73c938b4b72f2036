"""``physbody train --backend rllib`` on the command line, with or without the extra."""

from __future__ import annotations

import importlib.util

import pytest

from physbody.cli import build_parser, main


def test_parser_reads_the_rllib_options() -> None:
    args = build_parser().parse_args(
        [
            "train",
            "--backend",
            "rllib",
            "--address",
            "ray://head:10001",
            "--num-env-runners",
            "8",
            "--num-envs-per-runner",
            "2",
        ]
    )
    assert (args.backend, args.address) == ("rllib", "ray://head:10001")
    assert (args.num_env_runners, args.num_envs_per_runner) == (8, 2)
    defaults = build_parser().parse_args(["train"])
    assert (defaults.backend, defaults.address) == ("sb3", None)


def test_address_needs_the_rllib_backend(tmp_path, capsys) -> None:
    status = main(["train", "--address", "auto", "--results-dir", str(tmp_path)])
    assert status == 1
    assert "--address needs --backend rllib" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="ray is installed")
def test_without_ray_the_error_names_the_extra(tmp_path, capsys) -> None:
    status = main(["train", "--backend", "rllib", "--results-dir", str(tmp_path)])
    assert status == 1
    assert "distributed extra" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_rllib_backend_refuses_sac(tmp_path, capsys) -> None:
    config = tmp_path / "sac.yaml"
    config.write_text("behaviors:\n  CrawlerDynamic:\n    trainer_type: sac\n")
    status = main(
        ["train", str(config), "--backend", "rllib", "--results-dir", str(tmp_path / "r")]
    )
    assert status == 1
    assert "trainer_type 'ppo' only" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
