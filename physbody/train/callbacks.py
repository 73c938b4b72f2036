"""Stable-Baselines3 callbacks of a physbody run, and the stop-on-signal guard.

- :class:`EpisodeTracker`: one CSV row per finished episode, the mean return since the last
  policy update (the checkpoint's ``reward``), and ML-Agents' summary line every
  ``summary_freq`` steps.
- :class:`PeriodicCheckpoint`: calls a save function every ``checkpoint_interval`` steps.
- :class:`StopOnRequest`: ends ``learn()`` once a stop was requested (SIGINT/SIGTERM).
- :class:`TqdmProgressBar`: a tqdm progress bar on a terminal (none when output is redirected).
- :class:`TorchThreadsPerPhase`: one torch thread while collecting, every core for updates.
- :class:`EntropySchedule`: PPO's entropy coefficient along ML-Agents' beta schedule.
"""

from __future__ import annotations

import csv
import io
import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from physbody.train.files import atomic_write_text
from physbody.train.stopping import next_save_step, stop_on_signals

__all__ = [
    "EPISODE_COLUMNS",
    "EpisodeTracker",
    "PeriodicCheckpoint",
    "StopOnRequest",
    "TqdmProgressBar",
    "next_save_step",
    "stop_on_signals",
    "truncate_episode_log",
]

logger = logging.getLogger(__name__)

#: Columns of ``episodes.csv``: environment steps when the episode ended, its return
#: (sum of rewards), its length in decisions, and the wall-clock time (seconds since the epoch).
EPISODE_COLUMNS = ("steps", "return", "length", "wall_time")


def truncate_episode_log(path: Path, max_step: int) -> None:
    """Drops rows of ``episodes.csv`` past ``max_step`` (for a resume from an older checkpoint)."""
    if not path.is_file():
        return
    with open(path, newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file))
    if not rows:
        return
    kept = [rows[0]] + [row for row in rows[1:] if row and int(float(row[0])) <= max_step]
    if len(kept) != len(rows):
        buffer = io.StringIO()
        csv.writer(buffer).writerows(kept)
        atomic_write_text(path, buffer.getvalue())


class EpisodeTracker(BaseCallback):
    """Logs finished episodes (from ``VecMonitor`` infos) and keeps the checkpoint reward.

    Args:
        csv_path: ``episodes.csv``; rows are appended, the header written when it is new.
        behavior: behavior name, for the summary lines.
        summary_freq: environment steps between summary lines (``logging`` at INFO level) and
            TensorBoard ``Environment/*`` scalars.
    """

    def __init__(self, csv_path: Path, behavior: str, summary_freq: int) -> None:
        super().__init__()
        self._csv_path = Path(csv_path)
        self._behavior = behavior
        self._summary_freq = summary_freq
        self._since_update: list[float] = []
        self._since_summary: list[tuple[float, int]] = []
        self._next_summary = 0
        self._start_time = 0.0

    def mean_return_since_update(self) -> float | None:
        """Mean return of the episodes that ended since the last policy update, or None."""
        return float(np.mean(self._since_update)) if self._since_update else None

    def _on_training_start(self) -> None:
        self._start_time = time.time()
        self._next_summary = next_save_step(self.num_timesteps, self._summary_freq)
        self._csv_path.parent.mkdir(parents=True, exist_ok=True)
        if not self._csv_path.is_file() or self._csv_path.stat().st_size == 0:
            with open(self._csv_path, "w", newline="", encoding="utf-8") as file:
                csv.writer(file).writerow(EPISODE_COLUMNS)

    def _on_rollout_start(self) -> None:
        # A rollout starts right after a policy update (PPO: once per buffer; SAC: every
        # train_freq steps), so the checkpoint reward only counts episodes of the new policy.
        self._since_update.clear()

    def _on_step(self) -> bool:
        rows = []
        for info in self.locals.get("infos", ()):
            episode = info.get("episode")
            if episode is None:
                continue
            episode_return, length = float(episode["r"]), int(episode["l"])
            self._since_update.append(episode_return)
            self._since_summary.append((episode_return, length))
            rows.append((self.num_timesteps, repr(episode_return), length, f"{time.time():.3f}"))
        if rows:
            with open(self._csv_path, "a", newline="", encoding="utf-8") as file:
                csv.writer(file).writerows(rows)
        if self.num_timesteps >= self._next_summary:
            self._summarise()
            self._next_summary = next_save_step(self.num_timesteps, self._summary_freq)
        return True

    def _summarise(self) -> None:
        elapsed = time.time() - self._start_time
        if not self._since_summary:
            logger.info(
                "%s. Step: %d. Time Elapsed: %.3f s. No episode was completed since last "
                "summary. Training.",
                self._behavior,
                self.num_timesteps,
                elapsed,
            )
            return
        returns = np.array([r for r, _ in self._since_summary])
        lengths = np.array([n for _, n in self._since_summary])
        self._since_summary.clear()
        logger.info(
            "%s. Step: %d. Time Elapsed: %.3f s. Mean Reward: %.3f. Std of Reward: %.3f. Training.",
            self._behavior,
            self.num_timesteps,
            elapsed,
            returns.mean(),
            returns.std(),
        )
        self.logger.record("Environment/Cumulative Reward", float(returns.mean()))
        self.logger.record("Environment/Episode Length", float(lengths.mean()))


class PeriodicCheckpoint(BaseCallback):
    """Calls ``save(step)`` when the step count reaches each multiple of ``interval``.

    As in ML-Agents, the checkpoint carries the step count at which it is taken (a multiple
    of ``interval`` rounded up to the number of environments) and none is taken at step 0.

    Args:
        interval: environment steps between checkpoints.
        save: called with the current step count.
    """

    def __init__(self, interval: int, save: Callable[[int], Any]) -> None:
        super().__init__()
        if interval <= 0:
            raise ValueError(f"interval must be > 0, got {interval}")
        self._interval = interval
        self._save = save
        self._next = interval

    def _on_training_start(self) -> None:
        self._next = next_save_step(self.num_timesteps, self._interval)

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next and self.num_timesteps != 0:
            self._save(self.num_timesteps)
            self._next = next_save_step(self.num_timesteps, self._interval)
        return True


class StopOnRequest(BaseCallback):
    """Ends training (``learn()`` returns) once ``event`` is set.

    Args:
        event: set by :func:`stop_on_signals` (or by the caller) to request a stop.
    """

    def __init__(self, event: threading.Event) -> None:
        super().__init__()
        self._event = event

    def _on_step(self) -> bool:
        return not self._event.is_set()


class TorchThreadsPerPhase(BaseCallback):
    """One torch thread while the rollout is collected, ``update_threads`` for the updates.

    While collecting, the environments' worker processes need the cores and each policy call
    is a small batch: torch's thread pool would only wait (spinning) on the cores the physics
    wants. During the update the workers are idle and the large minibatches use every core.
    Measured on 2 cores, Crawler-v0 with 16 agents in 2 workers: 964 env steps/s against 755
    with torch's default of 2 threads throughout.

    Args:
        update_threads: torch threads for the gradient updates (the machine's cores).
    """

    def __init__(self, update_threads: int) -> None:
        super().__init__()
        self._update_threads = max(1, int(update_threads))

    def _on_rollout_start(self) -> None:
        import torch

        torch.set_num_threads(1)

    def _on_rollout_end(self) -> None:
        import torch

        torch.set_num_threads(self._update_threads)

    def _on_step(self) -> bool:
        return True


class EntropySchedule(BaseCallback):
    """Sets PPO's ``ent_coef`` from a schedule before each update (ML-Agents' decaying beta).

    SB3 takes schedules for the learning rate and the clip range but a constant entropy
    coefficient; this sets it after each rollout, at the step count the update sees.

    Args:
        schedule: maps ``progress_remaining`` (1 at step 0, 0 at ``max_steps``) to beta.
        max_steps: the run's total environment steps.
    """

    def __init__(self, schedule: Callable[[float], float], max_steps: int) -> None:
        super().__init__()
        self._schedule = schedule
        self._max_steps = max_steps

    def _on_training_start(self) -> None:
        self._set()

    def _on_rollout_end(self) -> None:
        self._set()

    def _set(self) -> None:
        progress = 1.0 - self.model.num_timesteps / self._max_steps
        self.model.ent_coef = float(self._schedule(progress))

    def _on_step(self) -> bool:
        return True


class TqdmProgressBar(BaseCallback):
    """A tqdm progress bar of the run's step count (steps/s, elapsed, time left).

    It counts from the step count at which ``learn()`` starts (so a resumed run shows its whole
    progress towards ``total_steps``) and draws only when ``stream`` is a terminal: tqdm's
    ``disable=None``.

    Args:
        total_steps: the step count at which training ends.
        stream: where to draw; ``sys.stderr`` by default.
    """

    def __init__(self, total_steps: int, stream: TextIO | None = None) -> None:
        super().__init__()
        if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps < 1:
            raise ValueError(f"total_steps must be an int >= 1, got {total_steps!r}")
        self._total = total_steps
        self._stream = stream
        self._bar: Any = None

    def _on_training_start(self) -> None:
        from tqdm import tqdm

        self._bar = tqdm(
            total=self._total,
            initial=min(self.num_timesteps, self._total),
            file=self._stream if self._stream is not None else sys.stderr,
            disable=None,  # no bar when the stream is not a terminal
            unit="step",
            unit_scale=True,
            dynamic_ncols=True,
            mininterval=0.5,
        )

    def _on_step(self) -> bool:
        if self._bar is not None:
            self._bar.update(min(self.num_timesteps, self._total) - self._bar.n)
        return True

    def _on_training_end(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
