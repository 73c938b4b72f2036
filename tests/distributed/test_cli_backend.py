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
    assert (defaults.on_env_runner_failure, defaults.env_runner_probe_timeout) == ("restart", 30.0)


def test_parser_reads_the_env_runner_failure_options(capsys) -> None:
    args = build_parser().parse_args(
        ["train", "--on-env-runner-failure", "stop", "--env-runner-probe-timeout", "2.5"]
    )
    assert (args.on_env_runner_failure, args.env_runner_probe_timeout) == ("stop", 2.5)
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--on-env-runner-failure", "retry"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'retry'" in capsys.readouterr().err
    for bad in ("0", "-1", "inf", "soon"):
        with pytest.raises(SystemExit):
            main(["train", "--env-runner-probe-timeout", bad])
        assert f"expected a positive number, got '{bad}'" in capsys.readouterr().err


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


def test_ray_options_validate_the_failure_settings() -> None:
    from physbody.train.rllib_backend import RayOptions

    options = RayOptions(on_env_runner_failure="ignore", env_runner_probe_timeout_s=5)
    assert (options.on_env_runner_failure, options.env_runner_probe_timeout_s) == ("ignore", 5.0)
    with pytest.raises(ValueError, match="on_env_runner_failure"):
        RayOptions(on_env_runner_failure="retry")
    with pytest.raises(ValueError, match="env_runner_probe_timeout_s"):
        RayOptions(env_runner_probe_timeout_s=0)
