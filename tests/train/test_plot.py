"""PNG writer and learning-curve plot."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from physbody.train.plot import draw_learning_curves, nice_ticks, plot_run, read_episodes
from physbody.train.png import encode_png, write_png


def decode_png(data: bytes) -> np.ndarray:
    """Decodes an 8-bit RGB, filter-0 PNG (what encode_png writes), checking every CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks = 8, []
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", data[position + 8 + length : position + 12 + length])
        assert crc == zlib.crc32(kind + body), kind
        chunks.append((kind, body))
        position += 12 + length
    assert [k for k, _ in chunks][0] == b"IHDR" and chunks[-1] == (b"IEND", b"")
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, colour, interlace) == (8, 2, 0)
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(height, 1 + 3 * width)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(height, width, 3)


def test_png_round_trip(tmp_path):
    image = np.random.default_rng(0).integers(0, 256, size=(7, 13, 3), dtype=np.uint8)
    assert np.array_equal(decode_png(encode_png(image)), image)
    path = write_png(tmp_path / "a.png", image)
    assert np.array_equal(decode_png(path.read_bytes()), image)


@pytest.mark.parametrize(
    "bad", [np.zeros((4, 4), np.uint8), np.zeros((4, 4, 3), np.float32), np.zeros((0, 4, 3))]
)
def test_png_rejects_bad_images(bad):
    with pytest.raises(ValueError, match=r"\(H, W, 3\) uint8"):
        encode_png(bad)


def test_nice_ticks():
    assert nice_ticks(0, 1_000_000).tolist() == [0, 200_000, 400_000, 600_000, 800_000, 1_000_000]
    ticks = nice_ticks(-37.2, 412.0)
    assert ticks[0] <= -37.2 and ticks[-1] >= 412.0 and np.allclose(np.diff(ticks), 100.0)
    assert nice_ticks(5.0, 5.0).size >= 2


def _write_episodes(path, steps, returns):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["steps,return,length,wall_time"]
    lines += [f"{s},{r},1000,0.0" for s, r in zip(steps, returns, strict=True)]
    path.write_text("\n".join(lines) + "\n")


def test_plot_run_writes_a_png_with_the_curve(tmp_path):
    run = tmp_path / "run"
    steps = np.arange(1, 201) * 1000
    _write_episodes(run / "CrawlerDynamic" / "episodes.csv", steps, np.linspace(-50, 300, 200))
    _write_episodes(run / "WalkerDynamic" / "episodes.csv", steps[:50], np.zeros(50))
    path = plot_run(run)
    assert path == run / "learning_curve.png"
    image = decode_png(path.read_bytes())
    assert image.shape == (500, 800, 3)
    blue = np.all(image == (31, 119, 180), axis=-1)
    red = np.all(image == (214, 39, 40), axis=-1)
    assert blue.sum() > 500 and red.sum() > 100, "both mean lines are drawn"
    # The rising curve: its pixels near the left sit lower than those near the right.
    rows, cols = np.nonzero(blue[90:440, 100:740])  # below the legend
    assert rows[cols < 100].mean() > rows[cols > 500].mean()
    out = plot_run(run, tmp_path / "elsewhere" / "curve.png", window=5, title="x")
    assert out.is_file()


def test_plot_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="episodes.csv"):
        plot_run(tmp_path)
    _write_episodes(tmp_path / "B" / "episodes.csv", [], [])
    with pytest.raises(ValueError, match="no episodes to plot"):
        plot_run(tmp_path)
    (tmp_path / "C").mkdir()
    (tmp_path / "C" / "episodes.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="'steps' and 'return'"):
        read_episodes(tmp_path / "C" / "episodes.csv")
    with pytest.raises(ValueError, match="at least 200x150"):
        draw_learning_curves({"A": ([1.0], [1.0])}, width=10)
