"""scripts/render_results.py: the run statistics the README quotes, on episodes made by hand."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def script(load_script):
    pytest.importorskip("matplotlib")
    module = load_script("render_results")
    return module


def test_first_step_at_the_benchmark_counts_only_full_100_episode_windows(script):
    # 150 episodes: the first scores 1000 (a 1-episode mean over the benchmark, not counted),
    # then 0 until episode 120, then 1000. The 100-episode mean ending at episode k (1-based)
    # holds k - 120 episodes of 1000 for k > 120: it first reaches 250 at k = 145.
    returns = np.zeros(150)
    returns[0] = 1000.0
    returns[120:] = 1000.0
    steps = np.arange(1, 151) * 1000.0
    stats = script.run_statistics(steps, returns, np.full(150, 1000.0), benchmark=250.0)
    assert stats.first_at_benchmark == 145_000.0
    never = script.run_statistics(steps, returns, np.full(150, 1000.0), benchmark=400.0)
    assert never.first_at_benchmark is None
    assert "never" in script.describe("X", never, 400.0)


def test_million_means_and_the_last_millions_full_and_short_episodes(script):
    steps = np.array([0.2e6, 0.9e6, 1.5e6, 2.1e6, 2.6e6, 3.05e6, 3.1e6])
    returns = np.array([1.0, 3.0, 10.0, 20.0, 40.0, 100.0, 7.0])
    lengths = np.array([5, 1000, 1000, 1000, 12, 1000, 30])
    stats = script.run_statistics(steps, returns, lengths, benchmark=1e9)
    np.testing.assert_allclose(stats.million_means, [2.0, 10.0, 30.0, 53.5])
    # The last million is (2.1M, 3.1M]: 2.6M (short), 3.05M (full), 3.1M (short).
    assert stats.last_million_mean == pytest.approx(49.0)
    assert stats.last_million_full == pytest.approx(1 / 3)
    assert stats.last_million_full_mean == 100.0
    assert stats.last_million_short_mean == pytest.approx(23.5)
    line = script.describe("CrawlerDynamic-x", stats, 800.0)
    assert line.startswith("runs/CrawlerDynamic-x: 100-episode mean first >= 800 never;")
    assert "1M-step means: 2, 10, 30, 54;" in line
    assert "last 1M: mean 49, 33% full-length episodes (mean 100), the others mean 24" in line


def test_a_million_without_an_episode_end_is_nan(script):
    stats = script.run_statistics(
        np.array([0.5e6, 2.5e6]), np.array([4.0, 6.0]), np.array([1000, 1000]), benchmark=1.0
    )
    assert np.isnan(stats.million_means[1])
    np.testing.assert_allclose(stats.million_means[[0, 2]], [4.0, 6.0])
    assert np.isnan(stats.last_million_short_mean)


def test_mismatched_or_empty_records_are_refused_with_their_shapes(script):
    with pytest.raises(ValueError, match=r"\(3,\), \(2,\) and \(3,\)"):
        script.run_statistics(np.zeros(3), np.zeros(2), np.zeros(3), benchmark=1.0)
    with pytest.raises(ValueError, match="non-empty"):
        script.run_statistics(np.zeros(0), np.zeros(0), np.zeros(0), benchmark=1.0)


def test_records_are_read_in_one_pass_with_wall_time_gaps_over_five_minutes_left_out(
    script, tmp_path
):
    path = tmp_path / "episodes.csv"
    path.write_text(
        "steps,return,length,wall_time\n1000,1.5,13,100.0\n2000,2.5,1000,160.0\n"
        "3000,3.5,1000,1000.0\n4000,4.5,40,1030.0\n"
    )
    records = script.read_records(path)
    assert records.shape == (4, 4)
    np.testing.assert_allclose(records[:, 1], [1.5, 2.5, 3.5, 4.5])
    assert script.wall_seconds(records[:, 3]) == pytest.approx(90.0)
