"""Atomic file writes: write a temporary file beside the target, then ``os.replace`` it."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_copy", "atomic_output", "atomic_write_text"]


@contextlib.contextmanager
def atomic_output(path: str | Path) -> Iterator[Path]:
    """Yields a temporary path in ``path``'s folder; on success it replaces ``path``.

    Readers see either the old file or the complete new one, never a partial write. On an
    exception the temporary file is removed and ``path`` is left as it was.

    Args:
        path: the file to (re)write; its folder is created if missing.

    Yields:
        The temporary path to write to (it exists, empty).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        with open(temporary, "rb+") as written:
            os.fsync(written.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Writes ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_output(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def atomic_copy(source: str | Path, destination: str | Path) -> None:
    """Copies ``source`` to ``destination`` atomically (the destination is replaced)."""
    with atomic_output(destination) as temporary:
        shutil.copyfile(source, temporary)
