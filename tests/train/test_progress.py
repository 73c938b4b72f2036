"""The tqdm progress bar of ``physbody train``: drawn on a terminal only, counting run steps."""

from __future__ import annotations

import io

import pytest

pytest.importorskip("tqdm")
pytest.importorskip("stable_baselines3")

from stable_baselines3 import PPO  # noqa: E402

from physbody.train.callbacks import TqdmProgressBar  # noqa: E402


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _learn(stream: io.StringIO, total: int, *, start: int = 0) -> PPO:
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=64, n_epochs=1, device="cpu")
    model.num_timesteps = start
    model.learn(
        total_timesteps=128,
        callback=TqdmProgressBar(total, stream=stream),
        reset_num_timesteps=False,
    )
    return model


def test_the_bar_is_drawn_on_a_terminal_from_the_run_start_step():
    stream = _Terminal()
    model = _learn(stream, total=1000, start=500)
    drawn = stream.getvalue()
    assert model.num_timesteps == 628
    assert "/1.00k" in drawn, drawn  # the run's total, tqdm's unit_scale
    assert "500/1.00k" in drawn and "628/1.00k" in drawn, "counts from the resumed step"
    assert "step/s" in drawn


def test_no_bar_when_the_output_is_not_a_terminal():
    stream = io.StringIO()
    _learn(stream, total=128)
    assert stream.getvalue() == ""


def test_the_total_must_be_a_positive_int():
    with pytest.raises(ValueError, match="total_steps must be an int >= 1, got 0"):
        TqdmProgressBar(0)
