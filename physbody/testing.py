"""Test helpers for sensor users: ML-Agents' SensorHelper.CompareObservation."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from physbody.sensor import PhysicsBodySensor

__all__ = ["compare_observation"]

#: Written around and over the sensor's region first, so untouched or stray floats show.
SENTINEL = np.float32(-1234.5)
_GUARD = 3


def compare_observation(
    sensor: PhysicsBodySensor,
    expected: ArrayLike,
    *,
    atol: float = 1e-5,
    update: bool = True,
) -> tuple[bool, str]:
    """Updates ``sensor``, writes it into a sentinel-filled buffer and compares with ``expected``.

    The buffer has ``SENTINEL`` guard floats before and after the sensor's region and is
    written at an offset, so the check also proves that ``write`` returns its count, fills
    its whole region and writes nothing outside it.

    Args:
        sensor: the sensor to check.
        expected: (k,) expected float values.
        atol: absolute tolerance per value (float32 precision by default).
        update: call ``sensor.update()`` first.

    Returns:
        ``(ok, message)``: ``message`` is empty when ``ok``; otherwise it names the first
        mismatch with its index, expected and actual values.
    """
    want = np.asarray(expected, dtype=np.float64).reshape(-1)
    if sensor.observation_shape != (want.size,):
        return False, (f"observation shape {sensor.observation_shape} != expected ({want.size},)")
    if update:
        sensor.update()
    buffer = np.full(want.size + 2 * _GUARD, SENTINEL, dtype=np.float32)
    written = sensor.write(buffer, _GUARD)
    if written != want.size:
        return False, f"write() returned {written}, expected {want.size}"
    guards = np.concatenate((buffer[:_GUARD], buffer[_GUARD + want.size :]))
    if np.any(guards != SENTINEL):
        return False, f"write() touched floats outside its region: guard values {guards}"
    actual = buffer[_GUARD : _GUARD + want.size].astype(np.float64)
    bad = np.flatnonzero(~np.isclose(actual, want, rtol=0.0, atol=atol))
    if bad.size:
        i = int(bad[0])
        return False, (
            f"observation differs at index {i}: expected {want[i]}, got {actual[i]} "
            f"({bad.size} differing of {want.size})"
        )
    return True, ""
