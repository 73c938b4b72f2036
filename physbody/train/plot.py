"""``physbody plot``: a learning-curve PNG from a run's ``episodes.csv`` files.

Drawn with numpy into an RGB array (a 5x7 bitmap font for the labels) and written by
:mod:`physbody.train.png`, so plotting needs no plotting library::

    from physbody.train.plot import plot_run

    plot_run("results/ppo")        # writes results/ppo/learning_curve.png

Each behavior of the run is one colour: every episode's return as a faint dot at the step
count where it ended, and the moving mean over ``window`` episodes as a line.
"""

from __future__ import annotations

import csv
import math
import types
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from physbody.train.png import write_png

__all__ = [
    "LearningCurve",
    "draw_learning_curves",
    "nice_ticks",
    "plot_run",
    "read_episodes",
    "text_width",
]

#: (steps, returns) of one behavior's episodes, both (n,) arrays.
LearningCurve = tuple[NDArray[np.float64], NDArray[np.float64]]

# 5x7 glyphs: seven rows of five bits, most significant bit on the left.
_GLYPHS: Mapping[str, tuple[int, ...]] = types.MappingProxyType(
    {
        "0": (0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E),
        "1": (0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E),
        "2": (0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F),
        "3": (0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E),
        "4": (0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02),
        "5": (0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E),
        "6": (0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E),
        "7": (0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08),
        "8": (0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E),
        "9": (0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C),
        "A": (0x0E, 0x11, 0x11, 0x11, 0x1F, 0x11, 0x11),
        "B": (0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E),
        "C": (0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E),
        "D": (0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C),
        "E": (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F),
        "F": (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10),
        "G": (0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F),
        "H": (0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11),
        "I": (0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E),
        "J": (0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C),
        "K": (0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11),
        "L": (0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F),
        "M": (0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11),
        "N": (0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11),
        "O": (0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E),
        "P": (0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10),
        "Q": (0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D),
        "R": (0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11),
        "S": (0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E),
        "T": (0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04),
        "U": (0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E),
        "V": (0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04),
        "W": (0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A),
        "X": (0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11),
        "Y": (0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04),
        "Z": (0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F),
        " ": (0, 0, 0, 0, 0, 0, 0),
        ".": (0, 0, 0, 0, 0, 0x0C, 0x0C),
        ",": (0, 0, 0, 0, 0x0C, 0x04, 0x08),
        "-": (0, 0, 0, 0x1F, 0, 0, 0),
        "+": (0, 0x04, 0x04, 0x1F, 0x04, 0x04, 0),
        ":": (0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0),
        "/": (0, 0x01, 0x02, 0x04, 0x08, 0x10, 0),
        "(": (0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02),
        ")": (0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08),
        "_": (0, 0, 0, 0, 0, 0, 0x1F),
        "=": (0, 0, 0x1F, 0, 0x1F, 0, 0),
        "%": (0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03),
        "?": (0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04),
    }
)
_GLYPH_W, _GLYPH_H, _ADVANCE = 5, 7, 6

_WHITE = (255, 255, 255)
_BLACK = (0, 0, 0)
_GRID = (225, 225, 225)
_COLOURS = ((31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189), (255, 127, 14))


def _text_bitmap(text: str) -> NDArray[np.bool_]:
    """(7, 6 * len(text) - 1) mask of ``text`` in upper case; unknown characters show '?'."""
    text = text.upper()
    if not text:
        return np.zeros((_GLYPH_H, 0), dtype=bool)
    mask = np.zeros((_GLYPH_H, _ADVANCE * len(text) - 1), dtype=bool)
    bits = 1 << np.arange(_GLYPH_W - 1, -1, -1)
    for index, char in enumerate(text):
        rows = np.array(_GLYPHS.get(char, _GLYPHS["?"]))
        mask[:, index * _ADVANCE : index * _ADVANCE + _GLYPH_W] = (rows[:, None] & bits) != 0
    return mask


def text_width(text: str, scale: int = 2) -> int:
    """Width in pixels of ``text`` drawn at ``scale``."""
    return max(0, _ADVANCE * len(text) - 1) * scale


def _draw_text(
    image: NDArray[np.uint8],
    x: int,
    y: int,
    text: str,
    colour: Sequence[int] = _BLACK,
    *,
    scale: int = 2,
    anchor: str = "left",
    vertical: bool = False,
) -> None:
    """Draws ``text`` with its top-left (or centre/right, per ``anchor``) at (x, y).

    ``vertical`` rotates it a quarter turn anticlockwise (reads bottom to top), anchored on y.
    """
    mask = np.kron(_text_bitmap(text), np.ones((scale, scale), dtype=bool))
    if vertical:
        mask = np.rot90(mask)
        if anchor == "centre":
            y -= mask.shape[0] // 2
    elif anchor == "centre":
        x -= mask.shape[1] // 2
    elif anchor == "right":
        x -= mask.shape[1]
    height, width = image.shape[:2]
    rows, cols = np.nonzero(mask)
    rows, cols = rows + y, cols + x
    keep = (rows >= 0) & (rows < height) & (cols >= 0) & (cols < width)
    image[rows[keep], cols[keep]] = colour


def _segment_pixels(xs: NDArray[np.float64], ys: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
    """Integer pixels along the polyline through (xs, ys), every segment densely sampled."""
    if xs.size == 1:
        return np.rint(xs).astype(int), np.rint(ys).astype(int)
    dx, dy = np.diff(xs), np.diff(ys)
    counts = np.maximum(np.ceil(np.maximum(np.abs(dx), np.abs(dy))).astype(int), 1) + 1
    segment = np.repeat(np.arange(dx.size), counts)
    starts = np.cumsum(counts) - counts
    t = (np.arange(counts.sum()) - np.repeat(starts, counts)) / np.repeat(counts - 1, counts)
    px = xs[segment] + t * dx[segment]
    py = ys[segment] + t * dy[segment]
    return np.rint(px).astype(int), np.rint(py).astype(int)


def _plot_pixels(
    image: NDArray[np.uint8],
    px: NDArray[np.int_],
    py: NDArray[np.int_],
    colour: Sequence[int],
    *,
    thickness: int = 1,
    box: tuple[int, int, int, int] | None = None,
) -> None:
    """Colours pixels (px, py), each grown to a ``thickness`` square, clipped to ``box``."""
    height, width = image.shape[:2]
    x0, y0, x1, y1 = box if box is not None else (0, 0, width - 1, height - 1)
    offsets = np.arange(thickness) - (thickness - 1) // 2
    ox, oy = np.meshgrid(offsets, offsets)
    allx = (px[:, None] + ox.reshape(1, -1)).ravel()
    ally = (py[:, None] + oy.reshape(1, -1)).ravel()
    keep = (allx >= x0) & (allx <= x1) & (ally >= y0) & (ally <= y1)
    image[ally[keep], allx[keep]] = colour


def nice_ticks(low: float, high: float, count: int = 5) -> NDArray[np.float64]:
    """Round tick values (1, 2 or 5 times a power of ten apart) covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"tick range must be finite, got [{low}, {high}]")
    if high <= low:
        high = low + 1.0
    raw = (high - low) / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 5.0, 10.0) if m * power >= raw)
    first = math.floor(low / step) * step
    last = math.ceil(high / step) * step
    return first + step * np.arange(int(round((last - first) / step)) + 1)


def _tick_label(value: float, step: float) -> str:
    magnitude = abs(value)
    for limit, suffix in ((1e6, "M"), (1e3, "K")):
        if magnitude >= limit or (step >= limit and value != 0):
            scaled, scaled_step = value / limit, step / limit
            digits = max(0, -math.floor(math.log10(scaled_step))) if scaled_step < 1 else 0
            return f"{scaled:.{digits}f}{suffix}"
    digits = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    return f"{value:.{digits}f}"


def _moving_mean(values: NDArray[np.float64], window: int) -> NDArray[np.float64]:
    """Mean of the last ``window`` values at each index (fewer at the start)."""
    sums = np.cumsum(np.concatenate([[0.0], values]))
    index = np.arange(1, values.size + 1)
    start = np.maximum(index - window, 0)
    return (sums[index] - sums[start]) / (index - start)


def draw_learning_curves(
    curves: Mapping[str, LearningCurve],
    *,
    title: str = "",
    width: int = 800,
    height: int = 500,
    window: int | None = None,
) -> NDArray[np.uint8]:
    """An RGB image of episode returns against environment steps.

    Args:
        curves: behavior name -> (steps, returns) of its episodes, in the order they ended.
        title: text above the plot.
        width: image width, pixels (>= 200).
        height: image height, pixels (>= 150).
        window: episodes in the moving mean; None picks ``clip(n // 20, 1, 100)``.

    Returns:
        (height, width, 3) uint8.

    Raises:
        ValueError: when no curve has an episode, or the size is too small.
    """
    if width < 200 or height < 150:
        raise ValueError(f"image must be at least 200x150, got {width}x{height}")
    series = {
        name: (np.asarray(s, dtype=np.float64), np.asarray(r, dtype=np.float64))
        for name, (s, r) in curves.items()
        if np.asarray(s).size
    }
    if not series:
        raise ValueError("no episodes to plot")
    image = np.full((height, width, 3), 255, dtype=np.uint8)
    left, right, top, bottom = 90, width - 40, 40, height - 60
    all_steps = np.concatenate([s for s, _ in series.values()])
    all_returns = np.concatenate([r for _, r in series.values()])
    xticks = nice_ticks(0.0, float(all_steps.max()), 5)
    yticks = nice_ticks(float(all_returns.min()), float(all_returns.max()), 5)
    x_lo, x_hi, y_lo, y_hi = xticks[0], xticks[-1], yticks[0], yticks[-1]

    def to_x(steps: NDArray[np.float64]) -> NDArray[np.float64]:
        return left + (steps - x_lo) / (x_hi - x_lo) * (right - left)

    def to_y(values: NDArray[np.float64]) -> NDArray[np.float64]:
        return bottom - (values - y_lo) / (y_hi - y_lo) * (bottom - top)

    box = (left, top, right, bottom)
    for value in xticks:
        x = int(round(float(to_x(np.float64(value)))))
        image[top : bottom + 1, x] = _GRID
        image[bottom + 1 : bottom + 6, x] = _BLACK
        _draw_text(
            image, x, bottom + 10, _tick_label(value, xticks[1] - xticks[0]), anchor="centre"
        )
    for value in yticks:
        y = int(round(float(to_y(np.float64(value)))))
        image[y, left : right + 1] = _GRID
        image[y, left - 5 : left] = _BLACK
        _draw_text(
            image, left - 9, y - 7, _tick_label(value, yticks[1] - yticks[0]), anchor="right"
        )
    image[top : bottom + 1, left] = _BLACK
    image[bottom, left : right + 1] = _BLACK
    _draw_text(image, (left + right) // 2, height - 22, "environment steps", anchor="centre")
    _draw_text(image, 12, (top + bottom) // 2, "episode return", anchor="centre", vertical=True)
    if title:
        _draw_text(image, (left + right) // 2, 12, title, anchor="centre")
    for index, (name, (steps, returns)) in enumerate(series.items()):
        colour = np.array(_COLOURS[index % len(_COLOURS)])
        faint = tuple(int(c) for c in (colour + 3 * 255) // 4)
        px, py = to_x(steps), to_y(returns)
        _plot_pixels(
            image, np.rint(px).astype(int), np.rint(py).astype(int), faint, thickness=3, box=box
        )
        size = window if window is not None else int(np.clip(returns.size // 20, 1, 100))
        mean = _moving_mean(returns, max(1, size))
        lx, ly = _segment_pixels(px, to_y(mean))
        _plot_pixels(image, lx, ly, tuple(int(c) for c in colour), thickness=2, box=box)
        legend_y = top + 8 + 20 * index
        image[legend_y + 6 : legend_y + 9, left + 12 : left + 32] = colour
        _draw_text(image, left + 38, legend_y, f"{name} (mean of {size})", colour)
    return image


def read_episodes(path: str | Path) -> LearningCurve:
    """(steps, returns) from an ``episodes.csv`` written by training.

    Raises:
        ValueError: when the file lacks the ``steps`` or ``return`` column.
    """
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        if reader.fieldnames is None or not {"steps", "return"} <= set(reader.fieldnames):
            raise ValueError(f"{path} must have 'steps' and 'return' columns")
        rows = [(float(row["steps"]), float(row["return"])) for row in reader]
    data = np.array(rows, dtype=np.float64).reshape(-1, 2)
    return data[:, 0], data[:, 1]


def plot_run(
    run_dir: str | Path,
    out: str | Path | None = None,
    *,
    window: int | None = None,
    title: str | None = None,
) -> Path:
    """Writes the learning curve of a run folder as PNG.

    Args:
        run_dir: ``<results>/<run-id>``; every ``<behavior>/episodes.csv`` in it is plotted.
        out: the PNG to write; ``<run_dir>/learning_curve.png`` by default.
        window: episodes in the moving mean (None: automatic).
        title: text above the plot; the run folder's name by default.

    Returns:
        The PNG's path.

    Raises:
        FileNotFoundError: when ``run_dir`` has no ``*/episodes.csv``.
        ValueError: when none of them holds an episode.
    """
    run_dir = Path(run_dir)
    files = sorted(run_dir.glob("*/episodes.csv"))
    if not files:
        raise FileNotFoundError(f"no <behavior>/episodes.csv in {run_dir}")
    curves = {path.parent.name: read_episodes(path) for path in files}
    image = draw_learning_curves(
        curves, title=run_dir.name if title is None else title, window=window
    )
    return write_png(run_dir / "learning_curve.png" if out is None else out, image)
