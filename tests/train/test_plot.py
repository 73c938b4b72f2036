"""Learning curves with matplotlib: PNG and SVG files, the figure's content, headless use."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

pytest.importorskip("matplotlib")
iio = pytest.importorskip("imageio.v3")

from matplotlib.collections import FillBetweenPolyCollection  # noqa: E402

from physbody.train.plot import (  # noqa: E402
    draw_learning_curves,
    moving_mean_std,
    plot_run,
    read_episodes,
    save_figure,
)


def _write_episodes(path, steps, returns):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["steps,return,length,wall_time"]
    lines += [f"{s},{r},1000,0.0" for s, r in zip(steps, returns, strict=True)]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def two_behaviour_run(tmp_path):
    run = tmp_path / "run"
    rng = np.random.default_rng(0)
    steps = np.arange(1, 201) * 1000
    rising = np.linspace(-50, 300, 200) + rng.normal(0, 20, 200)
    _write_episodes(run / "CrawlerDynamic" / "episodes.csv", steps, rising)
    _write_episodes(run / "WalkerDynamic" / "episodes.csv", steps[:50], rng.normal(0, 5, 50))
    return run


def test_moving_mean_std():
    values = np.array([1.0, 3.0, 5.0, 7.0])
    mean, std = moving_mean_std(values, 2)
    assert np.allclose(mean, [1.0, 2.0, 4.0, 6.0])
    assert np.allclose(std, [0.0, 1.0, 1.0, 1.0])
    mean, std = moving_mean_std(values, 10)
    assert np.allclose(mean, np.cumsum(values) / np.arange(1, 5))
    assert np.isclose(std[-1], np.std(values))
    with pytest.raises(ValueError, match="window must be an int >= 1, got 0"):
        moving_mean_std(values, 0)


def test_plot_run_writes_a_png_and_an_svg(two_behaviour_run):
    run = two_behaviour_run
    path = plot_run(run, svg=True, reference=250.0, reference_label="ML-Agents")
    assert path == run / "learning_curve.png"
    image = iio.imread(path)
    assert image.shape[:2] == (500, 800) and image.dtype == np.uint8
    colours = np.unique(image[..., :3].reshape(-1, 3), axis=0)
    assert len(colours) > 200, "anti-aliased lines, bands and text, not a blank canvas"
    blue = np.all(image[..., :3] == (31, 119, 180), axis=-1)  # the first line colour
    assert blue.sum() > 300

    svg = run / "learning_curve.svg"
    root = ElementTree.parse(svg).getroot()
    assert root.tag.endswith("svg")
    paths = [e for e in root.iter() if e.tag.endswith("path")]
    assert len(paths) > 20
    text = svg.read_text()
    assert "environment steps" in text and "CrawlerDynamic" in text and "ML-Agents" in text


def test_the_figure_has_a_mean_line_and_a_band_per_behaviour(two_behaviour_run):
    curves = {
        name: read_episodes(two_behaviour_run / name / "episodes.csv")
        for name in ("CrawlerDynamic", "WalkerDynamic")
    }
    figure = draw_learning_curves(curves, title="t", window=10, reference=100.0)
    (axes,) = figure.axes
    lines = {line.get_label(): line for line in axes.get_lines()}
    assert set(lines) == {
        "CrawlerDynamic (mean of 10)",
        "WalkerDynamic (mean of 10)",
        "reference (100)",
    }
    steps, returns = curves["CrawlerDynamic"]
    mean, std = moving_mean_std(returns, 10)
    x, y = lines["CrawlerDynamic (mean of 10)"].get_data()
    assert np.allclose(x, steps) and np.allclose(y, mean)
    assert y[-1] > y[20], "the rising behaviour's mean rises"
    assert np.allclose(lines["reference (100)"].get_ydata(), 100.0)
    bands = [c for c in axes.collections if isinstance(c, FillBetweenPolyCollection)]
    assert len(bands) == 2
    vertices = bands[0].get_paths()[0].vertices
    assert np.isclose(vertices[:, 1].max(), (mean + std).max())
    assert np.isclose(vertices[:, 1].min(), (mean - std).min())
    assert axes.get_xlabel() == "environment steps" and axes.get_ylabel() == "episode return"
    assert axes.xaxis.get_major_formatter()(200_000, 0) == "200k"
    assert axes.xaxis.get_major_formatter()(1_500_000, 0) == "1.5M"


def test_plot_works_without_a_display_whatever_the_backend(two_behaviour_run, tmp_path):
    code = (
        "import sys; from physbody.train.plot import plot_run; "
        f"plot_run({str(two_behaviour_run)!r}, {str(tmp_path / 'c.svg')!r}); "
        "print('pyplot' in ' '.join(sys.modules))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["MPLBACKEND"] = "TkAgg"  # an interactive backend, which needs a display
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False", "pyplot (and its backend) is never imported"
    assert (tmp_path / "c.svg").stat().st_size > 1000


def test_plot_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="episodes.csv"):
        plot_run(tmp_path)
    _write_episodes(tmp_path / "B" / "episodes.csv", [], [])
    with pytest.raises(ValueError, match="no episodes to plot"):
        plot_run(tmp_path)
    with pytest.raises(ValueError, match=r"must end in \.png or \.svg, got '.*curve\.jpg'"):
        plot_run(tmp_path, tmp_path / "curve.jpg")
    with pytest.raises(ValueError, match="window must be an int >= 1"):
        plot_run(tmp_path, window=0)
    (tmp_path / "C").mkdir()
    (tmp_path / "C" / "episodes.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="'steps' and 'return'"):
        read_episodes(tmp_path / "C" / "episodes.csv")
    (tmp_path / "C" / "episodes.csv").write_text("steps,return\n1,2\n2,oops\n")
    with pytest.raises(ValueError, match="line 3: steps and return must be numbers"):
        read_episodes(tmp_path / "C" / "episodes.csv")
    curve = {"A": ([1.0, 2.0], [1.0, 2.0])}
    with pytest.raises(ValueError, match="reference must be a finite return, got nan"):
        draw_learning_curves(curve, reference=float("nan"))
    with pytest.raises(ValueError, match="2 step counts but 1 returns"):
        draw_learning_curves({"A": ([1.0, 2.0], [1.0])})
    with pytest.raises(ValueError, match="must be finite numbers"):
        draw_learning_curves({"A": ([1.0], [float("inf")])})
    with pytest.raises(ValueError, match="must end in"):
        save_figure(draw_learning_curves(curve), tmp_path / "x.pdf")
