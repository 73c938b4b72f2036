"""``physbody plot``: learning curves of a run's ``episodes.csv`` files, drawn with matplotlib.

From Python::

    from physbody.train.plot import plot_run

    plot_run("results/ppo")                          # results/ppo/learning_curve.png
    plot_run("results/ppo", svg=True, reference=800.0, reference_label="ML-Agents")

Each behavior is one colour: every episode's return as a faint dot at the step count where it
ended, the moving mean over ``window`` episodes as a line, and the moving mean plus and minus
one standard deviation (over the same episodes) as a shaded band. An optional horizontal
reference line marks a target return, such as ML-Agents' published benchmark.

The figure is a plain ``matplotlib.figure.Figure`` rendered by the non-interactive Agg
backend: pyplot is never imported, so plotting works without a display whatever
``MPLBACKEND`` says. matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "FORMATS",
    "LearningCurve",
    "draw_learning_curves",
    "moving_mean_std",
    "plot_run",
    "read_episodes",
    "save_figure",
]

#: (steps, returns) of one behavior's episodes, both (n,) arrays.
LearningCurve = tuple[NDArray[np.float64], NDArray[np.float64]]

#: File extensions :func:`save_figure` writes.
FORMATS = (".png", ".svg")


def moving_mean_std(
    values: NDArray[np.float64], window: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Mean and standard deviation of the last ``window`` values at each index.

    The first ``window - 1`` entries use the values so far.

    Args:
        values: (n,) numbers, in order.
        window: values per window, >= 1.

    Returns:
        ``(mean, std)``, both (n,).

    Raises:
        ValueError: for a ``window`` below 1.
    """
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be an int >= 1, got {window!r}")
    values = np.asarray(values, dtype=np.float64)
    padded = np.concatenate([[0.0], values])
    sums, squares = np.cumsum(padded), np.cumsum(padded**2)
    end = np.arange(1, values.size + 1)
    start = np.maximum(end - window, 0)
    count = end - start
    mean = (sums[end] - sums[start]) / count
    variance = (squares[end] - squares[start]) / count - mean**2
    return mean, np.sqrt(np.maximum(variance, 0.0))


def _auto_window(episodes: int) -> int:
    return int(np.clip(episodes // 20, 1, 100))


def _format_steps(value: float, _position: float) -> str:
    magnitude = abs(value)
    for limit, suffix in ((1e6, "M"), (1e3, "k")):
        if magnitude >= limit:
            return f"{value / limit:g}{suffix}"
    return f"{value:g}"


def draw_learning_curves(
    curves: Mapping[str, LearningCurve],
    *,
    title: str = "",
    window: int | None = None,
    reference: float | None = None,
    reference_label: str | None = None,
    size: tuple[float, float] = (8.0, 5.0),
    dpi: int = 100,
    legend_loc: str = "best",
) -> Figure:
    """A figure of episode returns against environment steps, one colour per behavior.

    Args:
        curves: behavior name -> (steps, returns) of its episodes, in the order they ended.
            Behaviors without episodes are left out.
        title: text above the plot.
        window: episodes in the moving mean and spread; None picks ``clip(n // 20, 1, 100)``
            for each behavior.
        reference: a return to mark with a horizontal dashed line (e.g. ML-Agents' benchmark);
            None draws none.
        reference_label: the reference line's legend entry; ``"reference"`` by default.
        size: figure width and height, inches.
        dpi: pixels per inch of a PNG.
        legend_loc: where the legend goes, as matplotlib's ``loc`` (``"lower right"``, ...).

    Returns:
        A ``matplotlib.figure.Figure`` (Agg canvas); save it with :func:`save_figure` or
        ``figure.savefig``.

    Raises:
        ValueError: when no curve has an episode, a curve's arrays differ in length or hold a
            non-finite number, ``reference`` is not finite, or the size is not positive.
    """
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    if len(size) != 2 or not all(math.isfinite(s) and s > 0 for s in size) or dpi < 1:
        raise ValueError(f"size must be two positive inches and dpi >= 1, got {size}, {dpi}")
    if reference is not None and not math.isfinite(reference):
        raise ValueError(f"reference must be a finite return, got {reference!r}")
    series = {}
    for name, (steps, returns) in curves.items():
        steps = np.asarray(steps, dtype=np.float64).reshape(-1)
        returns = np.asarray(returns, dtype=np.float64).reshape(-1)
        if steps.shape != returns.shape:
            raise ValueError(
                f"{name}: {steps.size} step counts but {returns.size} returns; they must match"
            )
        if not (np.isfinite(steps).all() and np.isfinite(returns).all()):
            raise ValueError(f"{name}: steps and returns must be finite numbers")
        if steps.size:
            series[name] = (steps, returns)
    if not series:
        raise ValueError("no episodes to plot")

    figure = Figure(figsize=size, dpi=dpi, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    colours = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, (name, (steps, returns)) in enumerate(series.items()):
        colour = colours[index % len(colours)]
        episodes = window if window is not None else _auto_window(returns.size)
        mean, std = moving_mean_std(returns, episodes)
        axes.scatter(steps, returns, s=4, color=colour, alpha=0.2, linewidths=0, rasterized=True)
        axes.fill_between(steps, mean - std, mean + std, color=colour, alpha=0.2, linewidth=0)
        axes.plot(steps, mean, color=colour, linewidth=2, label=f"{name} (mean of {episodes})")
    if reference is not None:
        axes.axhline(
            reference,
            color="0.2",
            linestyle="--",
            linewidth=1.5,
            label=f"{reference_label or 'reference'} ({reference:g})",
        )
    axes.set_xlabel("environment steps")
    axes.set_ylabel("episode return")
    axes.xaxis.set_major_formatter(FuncFormatter(_format_steps))
    axes.set_xlim(left=0)
    axes.grid(True, alpha=0.3)
    axes.legend(loc=legend_loc, title="shaded: mean ± 1 std", title_fontsize="small")
    if title:
        axes.set_title(title)
    return figure


def save_figure(figure: Figure, path: str | Path) -> Path:
    """Writes ``figure`` to ``path``, whose extension (``.png`` or ``.svg``) picks the format.

    The folder is created when missing.

    Returns:
        ``path`` as a ``Path``.

    Raises:
        ValueError: for another extension.
    """
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"plot file must end in {' or '.join(FORMATS)}, got {str(path)!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format=path.suffix.lower()[1:])
    return path


def read_episodes(path: str | Path) -> LearningCurve:
    """(steps, returns) from an ``episodes.csv`` written by training.

    Raises:
        ValueError: when the file lacks the ``steps`` or ``return`` column, or a value is not a
            number (the message names the file and line).
    """
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        if reader.fieldnames is None or not {"steps", "return"} <= set(reader.fieldnames):
            raise ValueError(f"{path} must have 'steps' and 'return' columns")
        rows = []
        for row in reader:
            try:
                rows.append((float(row["steps"]), float(row["return"])))
            except (TypeError, ValueError):
                raise ValueError(
                    f"{path}, line {reader.line_num}: steps and return must be numbers, got "
                    f"{row['steps']!r} and {row['return']!r}"
                ) from None
    data = np.array(rows, dtype=np.float64).reshape(-1, 2)
    return data[:, 0], data[:, 1]


def plot_run(
    run_dir: str | Path,
    out: str | Path | None = None,
    *,
    window: int | None = None,
    title: str | None = None,
    reference: float | None = None,
    reference_label: str | None = None,
    svg: bool = False,
) -> Path:
    """Writes the learning curves of a run folder (every ``<behavior>/episodes.csv`` in it).

    Args:
        run_dir: ``<results>/<run-id>``.
        out: the file to write, ``.png`` or ``.svg``; ``<run_dir>/learning_curve.png`` by
            default.
        window: episodes in the moving mean and spread (None: automatic).
        title: text above the plot; the run folder's name by default.
        reference: a return to mark with a horizontal dashed line; None draws none.
        reference_label: the reference line's legend entry.
        svg: also write an SVG beside ``out``: same name, ``.svg``.

    Returns:
        ``out`` (the SVG, when ``svg`` adds one, is ``out.with_suffix(".svg")``).

    Raises:
        FileNotFoundError: when ``run_dir`` has no ``*/episodes.csv``.
        ValueError: when none of them holds an episode, or for a bad ``out`` extension,
            ``window`` or ``reference``.
    """
    run_dir = Path(run_dir)
    out = run_dir / "learning_curve.png" if out is None else Path(out)
    if out.suffix.lower() not in FORMATS:
        raise ValueError(f"plot file must end in {' or '.join(FORMATS)}, got {str(out)!r}")
    if window is not None:
        moving_mean_std(np.zeros(1), window)  # validates window before any file is read
    files = sorted(run_dir.glob("*/episodes.csv"))
    if not files:
        raise FileNotFoundError(f"no <behavior>/episodes.csv in {run_dir}")
    curves = {path.parent.name: read_episodes(path) for path in files}
    figure = draw_learning_curves(
        curves,
        title=run_dir.name if title is None else title,
        window=window,
        reference=reference,
        reference_label=reference_label,
    )
    save_figure(figure, out)
    if svg and out.suffix.lower() != ".svg":
        save_figure(figure, out.with_suffix(".svg"))
    return out
