"""Checkpoint records and ``training_status.json``, with ML-Agents' (0.19) semantics.

The status file lives at ``<results>/<run-id>/run_logs/training_status.json`` and has
ML-Agents' layout: one key per behavior plus ``"metadata"``::

    {
        "CrawlerDynamic": {
            "checkpoints": [
                {"steps": 500000,
                 "file_path": "results/ppo/CrawlerDynamic/CrawlerDynamic-500000.onnx",
                 "reward": 12.5, "creation_time": 1764700000.0}
            ],
            "final_checkpoint": {"steps": 600000, "file_path": "results/ppo/CrawlerDynamic.onnx",
                                 "reward": 20.1, "creation_time": 1764700100.0}
        },
        "metadata": {"stats_format_version": "0.1.0", "physbody_version": "0.1.0",
                     "torch_version": "2.13.0+cpu"}
    }

Beyond ML-Agents, the file is rewritten atomically after every change (not only at exit), so a
killed run loses nothing already recorded. This module imports no training library.
"""

from __future__ import annotations

import filecmp
import glob
import importlib.metadata
import json
import logging
import math
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from physbody import __version__ as physbody_version
from physbody.train.files import atomic_write_text

__all__ = [
    "STATS_FORMAT_VERSION",
    "CheckpointManager",
    "CheckpointRecord",
    "TrainingStatusError",
    "current_metadata",
]

logger = logging.getLogger(__name__)

#: Version of the status file layout (ML-Agents' ``stats_format_version``).
STATS_FORMAT_VERSION = "0.1.0"

_RECORD_KEYS = ("steps", "file_path", "reward", "creation_time")


class TrainingStatusError(ValueError):
    """A ``training_status.json`` that cannot be resumed from; the message names the file."""


def _optional_finite(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{attribute.name} must be a finite number or None, got {value!r}")


@attrs.frozen(kw_only=True)
class CheckpointRecord:
    """One saved policy, as recorded in the status file (ML-Agents' ``NNCheckpoint``).

    Attributes:
        steps: environment steps trained when the checkpoint was taken.
        file_path: the exported ``.onnx`` policy.
        reward: mean return of the episodes that ended since the last policy update, or None
            when none did.
        creation_time: ``time.time()`` when it was written, seconds since the epoch.
    """

    steps: int = attrs.field(validator=[attrs.validators.instance_of(int), attrs.validators.ge(0)])
    file_path: str = attrs.field(converter=str)
    reward: float | None = attrs.field(default=None, validator=_optional_finite)
    creation_time: float = attrs.field(default=0.0, validator=_optional_finite)

    def as_dict(self) -> dict[str, Any]:
        """The record as the JSON object ML-Agents writes."""
        return {
            "steps": self.steps,
            "file_path": self.file_path,
            "reward": None if self.reward is None else float(self.reward),
            "creation_time": float(self.creation_time),
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "record") -> CheckpointRecord:
        """Reads a record written by :meth:`as_dict` (or by ML-Agents).

        Raises:
            TrainingStatusError: when keys are missing or extra, or a value is invalid.
        """
        if not isinstance(data, Mapping) or set(data) != set(_RECORD_KEYS):
            raise TrainingStatusError(
                f"{where} must be an object with keys {', '.join(_RECORD_KEYS)}, got {data!r}"
            )
        try:
            return cls(**data)
        except (TypeError, ValueError) as error:
            raise TrainingStatusError(f"{where}: {error}") from error


def current_metadata() -> dict[str, str | None]:
    """The ``metadata`` block this version writes: format, physbody and torch versions.

    The torch version is read from the installed distribution, so torch is not imported;
    it is None when torch is not installed.
    """
    try:
        torch_version: str | None = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        torch_version = None
    return {
        "stats_format_version": STATS_FORMAT_VERSION,
        "physbody_version": physbody_version,
        "torch_version": torch_version,
    }


class CheckpointManager:
    """Keeps one behavior's checkpoints, oldest first, and writes them to the status file.

    ``add_checkpoint`` appends a record, deletes the files of the oldest records beyond
    ``max_to_keep`` (``<= 0`` keeps all), and rewrites the status file atomically.
    ``track_final_checkpoint`` records the final model. Other behaviors' entries in the file
    are kept as they are. Only one manager should write a given status file at a time.

    The files of a checkpoint are every file in ``checkpoint_dir`` named like its record's
    ``file_path`` with any suffix (``CrawlerDynamic-500000.onnx``, ``.zip``, ``.pkl``, ...), and
    folders named so (the RLlib backend's ``CrawlerDynamic-500000.rllib``).

    Args:
        status_path: the ``training_status.json`` to write.
        behavior: the behavior name whose entry this manager owns.
        checkpoint_dir: the folder holding this behavior's checkpoint files.
        max_to_keep: checkpoints kept (ML-Agents' ``keep_checkpoints``); <= 0 keeps all.
    """

    def __init__(
        self,
        status_path: str | Path,
        behavior: str,
        checkpoint_dir: str | Path,
        *,
        max_to_keep: int = 5,
    ) -> None:
        if isinstance(max_to_keep, bool) or not isinstance(max_to_keep, int):
            raise TypeError(f"max_to_keep must be an int, got {max_to_keep!r}")
        if not isinstance(behavior, str) or not behavior or behavior == "metadata":
            raise ValueError(
                f"behavior must be a non-empty name other than 'metadata', got {behavior!r}"
            )
        self._status_path = Path(status_path)
        self._behavior = behavior
        self._checkpoint_dir = Path(checkpoint_dir)
        self._max_to_keep = max_to_keep
        self._checkpoints: list[CheckpointRecord] = []
        self._final: CheckpointRecord | None = None
        self._other: dict[str, Any] = {}
        self._extra: dict[str, Any] = {}
        self._metadata = current_metadata()

    @classmethod
    def restore(
        cls,
        status_path: str | Path,
        behavior: str,
        checkpoint_dir: str | Path,
        *,
        max_to_keep: int = 5,
    ) -> CheckpointManager:
        """A manager continuing the records of an existing status file (for ``--resume``).

        A missing or corrupt status file (not readable, not JSON, not an object, malformed
        records) loses nothing: the records are rebuilt from the checkpoint files on disk
        (:meth:`rebuild`), a warning says so, and a corrupt file is kept beside it as
        ``training_status.json.corrupt``. A version mismatch of physbody or torch is a warning.

        Raises:
            TrainingStatusError: when the file is a readable status file of an incompatible
                version: no ``metadata``, or another ``stats_format_version``.
        """
        manager = cls(status_path, behavior, checkpoint_dir, max_to_keep=max_to_keep)
        path = manager._status_path
        if not path.is_file():
            manager.rebuild(f"Training status file not found at {path}")
            return manager
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise TrainingStatusError(
                    f"{path} must hold a JSON object, got {type(data).__name__}"
                )
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, TrainingStatusError) as error:
            manager._set_aside_corrupt(f"cannot read training status {path}: {error}")
            return manager
        metadata = data.get("metadata")
        if not isinstance(metadata, dict):
            raise TrainingStatusError(
                f"Metadata not found in {path}: resuming from an incompatible version"
            )
        found = metadata.get("stats_format_version")
        if found != STATS_FORMAT_VERSION:
            raise TrainingStatusError(
                f"{path} has stats_format_version {found!r}; this physbody reads "
                f"{STATS_FORMAT_VERSION!r}"
            )
        for key in ("physbody_version", "torch_version"):
            if metadata.get(key) != manager._metadata[key]:
                logger.warning(
                    "%s was written with %s %r; this is %r: resuming anyway.",
                    path,
                    key,
                    metadata.get(key),
                    manager._metadata[key],
                )
        try:
            manager._read_entry(data)
        except TrainingStatusError as error:
            manager._other = {}
            manager._extra = {}
            manager._set_aside_corrupt(str(error))
        return manager

    def _read_entry(self, data: dict[str, Any]) -> None:
        """Takes this behavior's records (and the other entries) from a parsed status file."""
        path, behavior = self._status_path, self._behavior
        entry = data.get(behavior, {})
        if not isinstance(entry, dict):
            raise TrainingStatusError(f"{path}: {behavior!r} must be an object, got {entry!r}")
        records = entry.get("checkpoints", [])
        if not isinstance(records, list):
            raise TrainingStatusError(f"{path}: {behavior}.checkpoints must be a list")
        checkpoints = [
            CheckpointRecord.from_dict(item, f"{path}: {behavior}.checkpoints[{index}]")
            for index, item in enumerate(records)
        ]
        final = None
        if entry.get("final_checkpoint") is not None:
            final = CheckpointRecord.from_dict(
                entry["final_checkpoint"], f"{path}: {behavior}.final_checkpoint"
            )
        self._checkpoints, self._final = checkpoints, final
        self._other = {k: v for k, v in data.items() if k not in (behavior, "metadata")}
        self._extra = {
            k: v for k, v in entry.items() if k not in ("checkpoints", "final_checkpoint")
        }

    def _set_aside_corrupt(self, reason: str) -> None:
        """Keeps a corrupt status file as ``<name>.corrupt`` and rebuilds from the files."""
        kept = self._status_path.with_name(self._status_path.name + ".corrupt")
        try:
            shutil.copyfile(self._status_path, kept)
            reason += f" (kept as {kept})"
        except OSError as error:
            reason += f" (could not keep a copy: {error})"
        self.rebuild(reason)

    def rebuild(self, reason: str = "") -> list[CheckpointRecord]:
        """Replaces the records with those of the checkpoint files on disk, and saves them.

        Every ``<behavior>-<step>.onnx`` in ``checkpoint_dir`` becomes a record (oldest first)
        with the file's modification time as ``creation_time`` and no ``reward`` (it was only
        in the status file). The final model, ``<behavior>.onnx`` in ``checkpoint_dir``'s
        parent (the run folder), is recorded as ``final_checkpoint`` when it is a copy of one
        of them. Nothing is deleted, whatever ``max_to_keep`` says; the next
        :meth:`add_checkpoint` prunes as usual.

        Args:
            reason: why, for the warning (e.g. the status file is missing); empty logs none.

        Returns:
            The rebuilt records, oldest first.
        """
        pattern = re.compile(rf"{re.escape(self._behavior)}-(\d+)\.onnx")
        found: list[tuple[int, Path]] = []
        if self._checkpoint_dir.is_dir():
            for path in self._checkpoint_dir.iterdir():
                match = pattern.fullmatch(path.name)
                if match and path.is_file():
                    found.append((int(match.group(1)), path))
        found.sort()
        self._checkpoints = [
            CheckpointRecord(
                steps=steps, file_path=str(path), reward=None, creation_time=path.stat().st_mtime
            )
            for steps, path in found
        ]
        self._final = None
        final_model = self._checkpoint_dir.parent / f"{self._behavior}.onnx"
        if final_model.is_file():
            for record in reversed(self._checkpoints):
                if filecmp.cmp(record.file_path, final_model, shallow=False):
                    self._final = attrs.evolve(
                        record,
                        file_path=str(final_model),
                        creation_time=final_model.stat().st_mtime,
                    )
                    break
        if reason:
            logger.warning(
                "%s: rebuilt the records of %s from the checkpoint files in %s (steps %s%s); "
                "their rewards are unknown.",
                reason,
                self._behavior,
                self._checkpoint_dir,
                ", ".join(str(r.steps) for r in self._checkpoints) or "none",
                f"; final model at step {self._final.steps}" if self._final else "",
            )
        self.save()
        return list(self._checkpoints)

    # ------------------------------------------------------------------------- queries
    @property
    def status_path(self) -> Path:
        """The ``training_status.json`` this manager writes."""
        return self._status_path

    @property
    def behavior(self) -> str:
        """The behavior whose checkpoints this manager keeps."""
        return self._behavior

    @property
    def max_to_keep(self) -> int:
        """Checkpoints kept; <= 0 keeps all."""
        return self._max_to_keep

    @property
    def checkpoints(self) -> tuple[CheckpointRecord, ...]:
        """The recorded checkpoints, oldest first."""
        return tuple(self._checkpoints)

    @property
    def final_checkpoint(self) -> CheckpointRecord | None:
        """The final model's record, or None before one is tracked."""
        return self._final

    def all_steps(self) -> list[int]:
        """Step counts of the recorded checkpoints, oldest first."""
        return [record.steps for record in self._checkpoints]

    def latest_step(self) -> int | None:
        """Step count of the newest checkpoint, or None when there is none."""
        return self._checkpoints[-1].steps if self._checkpoints else None

    def latest_checkpoint(self) -> CheckpointRecord | None:
        """The newest checkpoint record, or None when there is none."""
        return self._checkpoints[-1] if self._checkpoints else None

    # ------------------------------------------------------------------------- changes
    def add_checkpoint(self, record: CheckpointRecord) -> list[CheckpointRecord]:
        """Appends ``record``, prunes the oldest beyond ``max_to_keep`` and saves the status.

        Args:
            record: the checkpoint just written.

        Returns:
            The records removed, oldest first (their files are deleted).
        """
        if not isinstance(record, CheckpointRecord):
            raise TypeError(f"record must be a CheckpointRecord, got {record!r}")
        self._checkpoints.append(record)
        removed = []
        while self._max_to_keep > 0 and len(self._checkpoints) > self._max_to_keep:
            oldest = self._checkpoints.pop(0)
            self._delete_files(oldest)
            removed.append(oldest)
        self.save()
        return removed

    def track_final_checkpoint(self, record: CheckpointRecord) -> None:
        """Records ``record`` as ``final_checkpoint`` and saves the status."""
        if not isinstance(record, CheckpointRecord):
            raise TypeError(f"record must be a CheckpointRecord, got {record!r}")
        self._final = record
        self.save()

    def as_dict(self) -> dict[str, Any]:
        """The whole status file's content."""
        entry: dict[str, Any] = dict(self._extra)
        entry["checkpoints"] = [record.as_dict() for record in self._checkpoints]
        if self._final is not None:
            entry["final_checkpoint"] = self._final.as_dict()
        return {**self._other, self._behavior: entry, "metadata": dict(self._metadata)}

    def save(self) -> None:
        """Writes the status file atomically (temporary file, then ``os.replace``)."""
        atomic_write_text(self._status_path, json.dumps(self.as_dict(), indent=4) + "\n")

    def _delete_files(self, record: CheckpointRecord) -> None:
        stem = Path(record.file_path).stem
        files = sorted(self._checkpoint_dir.glob(f"{glob.escape(stem)}.*"))
        if not files:
            logger.warning("Checkpoint at %s could not be found.", record.file_path)
        for path in files:
            if path.is_dir():  # an RLlib checkpoint is a folder (<behavior>-<step>.rllib)
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            logger.debug("Removed checkpoint file %s.", path)
