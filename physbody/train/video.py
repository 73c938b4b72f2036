"""Video files from RGB frames, written by the ffmpeg that the imageio-ffmpeg wheel ships.

``pip install`` is all it takes: no system ``ffmpeg`` program is needed. Frames are streamed to
ffmpeg one by one (through ``imageio_ffmpeg.write_frames``), so a long video does not sit in
memory. The file name's extension picks the format:

==========================  ======================================================
``.mp4 .m4v .mov .mkv``     H.264 (libx264), yuv420p; odd sizes are padded by 1 px
``.webm``                   VP9 (libvpx-vp9), yuv420p; odd sizes are padded by 1 px
``.gif``                    GIF with ffmpeg's fixed 256-colour (rgb8) palette
==========================  ======================================================

Read a video back with imageio: ``imageio.v3.imread("episode.mp4")`` -> (frames, H, W, 3).
"""

from __future__ import annotations

import types
from collections.abc import Generator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["VIDEO_FORMATS", "VideoWriter", "ffmpeg_executable"]

_PAD_EVEN = ["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"]

#: Extension -> (codec, output pixel format, extra ffmpeg output arguments).
VIDEO_FORMATS: Mapping[str, tuple[str, str, tuple[str, ...]]] = types.MappingProxyType(
    {
        ".mp4": ("libx264", "yuv420p", (*_PAD_EVEN, "-crf", "23")),
        ".m4v": ("libx264", "yuv420p", (*_PAD_EVEN, "-crf", "23")),
        ".mov": ("libx264", "yuv420p", (*_PAD_EVEN, "-crf", "23")),
        ".mkv": ("libx264", "yuv420p", (*_PAD_EVEN, "-crf", "23")),
        ".webm": ("libvpx-vp9", "yuv420p", (*_PAD_EVEN, "-crf", "32", "-b:v", "0")),
        ".gif": ("gif", "rgb8", ()),
    }
)


def ffmpeg_executable() -> str:
    """The path of the ffmpeg binary bundled with the imageio-ffmpeg wheel.

    Raises:
        ModuleNotFoundError: when imageio-ffmpeg is not installed (the training extra has it).
        RuntimeError: when imageio-ffmpeg has no binary for this platform.
    """
    import imageio_ffmpeg

    try:
        return imageio_ffmpeg.get_ffmpeg_exe()
    except RuntimeError as error:
        raise RuntimeError(f"imageio-ffmpeg found no ffmpeg binary: {error}") from error


class VideoWriter:
    """Writes (H, W, 3) uint8 RGB frames to a video file.

    Use it as a context manager; the file is complete when it exits::

        with VideoWriter("episode.mp4", fps=15) as video:
            video.write(env.render())

    Args:
        path: output file; its extension picks the format (see :data:`VIDEO_FORMATS`).
        fps: frames per second, > 0.

    Raises:
        ValueError: for a non-positive ``fps`` or an extension not in :data:`VIDEO_FORMATS`
            (checked here, before any frame).
        ModuleNotFoundError: when imageio-ffmpeg is not installed.
    """

    def __init__(self, path: str | Path, fps: float) -> None:
        if isinstance(fps, bool) or not isinstance(fps, int | float) or not fps > 0:
            raise ValueError(f"fps must be a number > 0, got {fps!r}")
        self._path = Path(path)
        suffix = self._path.suffix.lower()
        if suffix not in VIDEO_FORMATS:
            raise ValueError(
                f"video file must end in one of {', '.join(VIDEO_FORMATS)}, got {str(path)!r}"
            )
        self._format = VIDEO_FORMATS[suffix]
        self._executable = ffmpeg_executable()
        self._fps = float(fps)
        self._generator: Generator[None, Any, None] | None = None
        self._shape: tuple[int, ...] | None = None
        self.frames = 0

    @property
    def path(self) -> Path:
        """The video file."""
        return self._path

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
        import imageio_ffmpeg

        codec, pixel_format, output_params = self._format
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._path.unlink(missing_ok=True)  # so close() can tell a file ffmpeg never wrote
        self._generator = imageio_ffmpeg.write_frames(
            str(self._path),
            (width, height),
            pix_fmt_in="rgb24",
            pix_fmt_out=pixel_format,
            fps=self._fps,
            codec=codec,
            quality=None,
            macro_block_size=1,
            ffmpeg_log_level="error",
            output_params=list(output_params),
        )
        self._generator.send(None)

    def write(self, frame: NDArray[np.uint8]) -> None:
        """Appends one frame; every frame must have the first frame's shape.

        Raises:
            ValueError: for a frame that is not (H, W, 3) uint8 of the first frame's size.
            RuntimeError: when ffmpeg stopped taking frames (its messages are on stderr).
        """
        frame = np.asarray(frame)
        if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8 or 0 in frame.shape:
            raise ValueError(f"frames must be (H, W, 3) uint8, got {frame.shape} {frame.dtype}")
        if self._shape is None:
            self._start(frame.shape[1], frame.shape[0])
            self._shape = frame.shape
        elif frame.shape != self._shape:
            raise ValueError(f"frame shape {frame.shape} differs from the first, {self._shape}")
        if self._generator is None:
            raise RuntimeError(f"{self._path} is closed: no frame can be added")
        try:
            self._generator.send(np.ascontiguousarray(frame))
        except OSError as error:
            self._generator = None
            first_line = str(error).strip().splitlines()[0]
            raise RuntimeError(
                f"ffmpeg stopped writing {self._path} ({first_line}); its messages are above"
            ) from error
        self.frames += 1

    def close(self) -> None:
        """Finishes the file (waits for ffmpeg); safe to call more than once.

        Raises:
            RuntimeError: when frames were written but ffmpeg left no video file.
        """
        generator, self._generator = self._generator, None
        if generator is None:
            return
        generator.close()
        if not self._path.is_file() or self._path.stat().st_size == 0:
            raise RuntimeError(f"ffmpeg failed to write {self._path}; its messages are above")
