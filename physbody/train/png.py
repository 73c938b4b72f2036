"""A minimal PNG writer (8-bit RGB, no filtering), with zlib and struct only."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from physbody.train.files import atomic_output

__all__ = ["encode_png", "write_png"]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, CRC-32 of type and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_png(image: NDArray[np.uint8]) -> bytes:
    """The PNG file bytes of an RGB image.

    Args:
        image: (height, width, 3) uint8, row 0 at the top.

    Returns:
        A PNG (colour type 2, bit depth 8, filter 0 on every row, no interlace).

    Raises:
        ValueError: when ``image`` is not (H, W, 3) uint8 with H, W >= 1.
    """
    array = np.asarray(image)
    if array.ndim != 3 or array.shape[2] != 3 or array.dtype != np.uint8 or 0 in array.shape:
        raise ValueError(f"image must be (H, W, 3) uint8, got {array.shape} {array.dtype}")
    height, width = array.shape[:2]
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = np.concatenate(
        [np.zeros((height, 1), dtype=np.uint8), array.reshape(height, width * 3)], axis=1
    )
    return b"".join(
        (
            _SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", zlib.compress(rows.tobytes(), 9)),
            _chunk(b"IEND", b""),
        )
    )


def write_png(path: str | Path, image: NDArray[np.uint8]) -> Path:
    """Writes ``image`` (H, W, 3) uint8 to ``path`` as PNG, atomically; returns the path."""
    data = encode_png(image)
    path = Path(path)
    with atomic_output(path) as temporary:
        temporary.write_bytes(data)
    return path
