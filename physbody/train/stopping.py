"""Training-loop helpers that need no training library: checkpoint steps and stop signals.

Shared by the Stable-Baselines3 backend (:mod:`.callbacks`) and the RLlib backend
(:mod:`.rllib_backend`).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["next_save_step", "stop_on_signals"]

logger = logging.getLogger("physbody.train.callbacks")


def next_save_step(step: int, interval: int) -> int:
    """The next multiple of ``interval`` strictly after ``step`` (ML-Agents' next_save_step)."""
    return step + (interval - step % interval)


@contextlib.contextmanager
def stop_on_signals(event: threading.Event) -> Iterator[None]:
    """While active, SIGINT (Ctrl-C) and SIGTERM set ``event`` instead of killing the process.

    A second signal raises ``KeyboardInterrupt`` at once. The previous handlers are restored on
    exit. Outside the main thread (where Python cannot install handlers) this does nothing.

    Args:
        event: set when a signal arrives.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def request_stop(signum: int, frame: FrameType | None) -> None:
        if event.is_set():
            raise KeyboardInterrupt
        event.set()
        logger.warning(
            "%s received: saving a final checkpoint, then stopping (send it again to stop at "
            "once).",
            signal.Signals(signum).name,
        )

    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {number: signal.signal(number, request_stop) for number in signals}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
