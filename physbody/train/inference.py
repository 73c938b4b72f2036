"""Running an exported policy with onnxruntime (no torch, no Stable-Baselines3)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

__all__ = ["OnnxPolicy"]


class OnnxPolicy:
    """A policy exported by :func:`physbody.train.export.export_onnx`.

    Calling it maps raw observations to deterministic actions, with the observation
    normalisation of training included::

        policy = OnnxPolicy("results/ppo/CrawlerDynamic.onnx")
        action = policy(observation)          # (142,) -> (20,), or batched (n, 142) -> (n, 20)

    Args:
        path: the ``.onnx`` file.

    Raises:
        FileNotFoundError: when ``path`` does not exist.
        PermissionError: when it cannot be read.
        ValueError: when it is not an ONNX model, or not a policy of one (batch, n) float input
            and one (batch, k) output.
        ImportError: when onnxruntime is not installed.
    """

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"ONNX model not found: {path.resolve()}")
        with open(path, "rb"):  # an unreadable file is an OSError naming it, not onnxruntime's
            pass
        try:
            import onnxruntime
        except ImportError as error:
            raise ImportError(
                'running an ONNX policy needs onnxruntime: pip install "physbody[play]"'
            ) from error
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 4  # onnxruntime's own log lines: fatal only
        try:
            self._session = onnxruntime.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime's pybind errors derive from Exception only
            reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise ValueError(
                f"{path} is not an ONNX policy that onnxruntime can load "
                f"({type(error).__name__}: {reason}); expected an .onnx file written by "
                "physbody train"
            ) from None
        inputs, outputs = self._session.get_inputs(), self._session.get_outputs()
        if len(inputs) != 1 or len(outputs) != 1:
            raise ValueError(
                f"{path} must have one input and one output, got {[i.name for i in inputs]} "
                f"and {[o.name for o in outputs]}"
            )
        self._input = inputs[0].name
        obs_size, action_size = inputs[0].shape[-1:], outputs[0].shape[-1:]
        if not (
            len(inputs[0].shape) == 2
            and len(outputs[0].shape) == 2
            and isinstance(obs_size[0], int)
            and isinstance(action_size[0], int)
        ):
            raise ValueError(
                f"{path} is not a policy: expected an input of shape (batch, n) and an output "
                f"of shape (batch, k) with fixed n and k, got {inputs[0].shape} and "
                f"{outputs[0].shape}"
            )
        self._obs_size = int(obs_size[0])
        self._action_size = int(action_size[0])
        self._metadata = dict(self._session.get_modelmeta().custom_metadata_map)
        self._path = path

    @property
    def path(self) -> Path:
        """The model file."""
        return self._path

    @property
    def observation_size(self) -> int:
        """Length of one observation."""
        return self._obs_size

    @property
    def action_size(self) -> int:
        """Length of one action."""
        return self._action_size

    @property
    def metadata(self) -> Mapping[str, str]:
        """Properties stored at export (``env_id``, ``behavior``, ``steps``, ...)."""
        return dict(self._metadata)

    def __call__(self, obs: NDArray[np.floating]) -> NDArray[np.float32]:
        """Deterministic actions for raw observations.

        Args:
            obs: ``(observation_size,)`` or ``(batch, observation_size)``.

        Returns:
            ``(action_size,)`` or ``(batch, action_size)`` float32, matching ``obs``.

        Raises:
            ValueError: when the last dimension is not ``observation_size``.
        """
        array = np.asarray(obs, dtype=np.float32)
        single = array.ndim == 1
        batch = array.reshape(1, -1) if single else array
        if batch.ndim != 2 or batch.shape[1] != self._obs_size:
            raise ValueError(
                f"observations must have shape ({self._obs_size},) or (batch, "
                f"{self._obs_size}), got {array.shape}"
            )
        actions = self._session.run(None, {self._input: batch})[0]
        return actions[0] if single else actions
