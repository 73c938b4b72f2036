"""Video files from RGB frames, by piping raw frames to the ``ffmpeg`` program.

The container and codec follow the file name's extension as ffmpeg chooses them (``.mp4``,
``.mkv``, ``.webm``, ``.gif``, ...). ffmpeg is a program, not a Python package: install it with
the system's package manager (``apt-get install ffmpeg`` on Debian and Ubuntu).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

import numpy as np
from numpy.typing import NDArray

__all__ = ["VideoWriter", "find_ffmpeg"]

# Extensions whose default codecs want yuv420p frames with even width and height.
_YUV420_EXTENSIONS = (".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi")


def find_ffmpeg() -> str:
    """The path of the ``ffmpeg`` executable.

    Raises:
        FileNotFoundError: when ``ffmpeg`` is not on PATH (the message says how to get it).
    """
    path = shutil.which("ffmpeg")
    if path is None:
        raise FileNotFoundError(
            "writing a video needs the ffmpeg program on PATH, which was not found; install it "
            "(e.g. apt-get install ffmpeg) or leave out --video"
        )
    return path


class VideoWriter:
    """Writes (H, W, 3) uint8 RGB frames to a video file through ffmpeg.

    Use it as a context manager; the file is complete when it exits::

        with VideoWriter("episode.mp4", fps=15) as video:
            video.write(env.render())

    Args:
        path: output file; its extension picks the format.
        fps: frames per second.

    Raises:
        FileNotFoundError: when ffmpeg is not installed (checked here, before any frame).
        ValueError: for a non-positive ``fps`` or a path without an extension.
    """

    def __init__(self, path: str | Path, fps: float) -> None:
        if not fps > 0:
            raise ValueError(f"fps must be > 0, got {fps!r}")
        self._path = Path(path)
        if not self._path.suffix:
            raise ValueError(f"video path needs an extension such as .mp4, got {str(path)!r}")
        self._ffmpeg = find_ffmpeg()
        self._fps = fps
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr = tempfile.TemporaryFile()
        self._shape: tuple[int, ...] | None = None
        self.frames = 0

    def __enter__(self) -> VideoWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _start(self, width: int, height: int) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        command = [
            self._ffmpeg, "-y", "-loglevel", "error",
            "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{width}x{height}",
            "-r", f"{self._fps:g}", "-i", "-", "-an",
        ]  # fmt: skip
        if self._path.suffix.lower() in _YUV420_EXTENSIONS:
            command += ["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-pix_fmt", "yuv420p"]
        command.append(str(self._path))
        self._process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._stderr
        )

    def write(self, frame: NDArray[np.uint8]) -> None:
        """Appends one frame; every frame must have the first frame's shape.

        Raises:
            ValueError: for a frame that is not (H, W, 3) uint8 of the first frame's size.
            RuntimeError: when ffmpeg exited early (its error output is in the message).
        """
        frame = np.asarray(frame)
        if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            raise ValueError(f"frames must be (H, W, 3) uint8, got {frame.shape} {frame.dtype}")
        if self._shape is None:
            self._shape = frame.shape
            self._start(frame.shape[1], frame.shape[0])
        elif frame.shape != self._shape:
            raise ValueError(f"frame shape {frame.shape} differs from the first, {self._shape}")
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write(np.ascontiguousarray(frame).tobytes())
        except BrokenPipeError as error:
            self._process.wait()
            raise RuntimeError(f"ffmpeg stopped writing {self._path}: {self._errors()}") from error
        self.frames += 1

    def close(self) -> None:
        """Finishes the file (waits for ffmpeg); safe to call more than once.

        Raises:
            RuntimeError: when ffmpeg failed (its error output is in the message).
        """
        process, self._process = self._process, None
        try:
            if process is not None:
                assert process.stdin is not None
                try:
                    process.stdin.close()
                except BrokenPipeError:
                    pass
                if process.wait() != 0:
                    raise RuntimeError(f"ffmpeg failed to write {self._path}: {self._errors()}")
        finally:
            if process is None or process.returncode is not None:
                self._stderr.close()

    def _errors(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace").strip() or "no error output"
