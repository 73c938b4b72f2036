"""ONNX export of a Stable-Baselines3 policy: raw observation in, deterministic action out.

The graph is built node by node from the policy's weights with ``onnx.helper`` (no torch
exporter, so no dependence on its TorchScript/dynamo variants):

    obs (batch, n_obs) float32
      -> (obs - mean) / sqrt(var + epsilon), clipped to +-clip     [VecNormalize, if used;
                                                                    float64, as SB3 does]
      -> hidden layers (Gemm + activation)                          [policy MLP]
      -> PPO: Gemm, clipped to the action bounds; SAC: Gemm, tanh, rescaled to the bounds
      -> actions (batch, n_act) float32

which is what ``model.predict(vec_normalize.normalize_obs(obs), deterministic=True)`` returns.
Supported policies: SB3's ``MlpPolicy`` of PPO (``ActorCriticPolicy``, Gaussian actions) and SAC,
with ReLU, Tanh, SiLU, ELU or LeakyReLU activations.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from physbody.train.files import atomic_output

__all__ = [
    "INPUT_NAME",
    "OUTPUT_NAME",
    "OPSET",
    "ObsNormalization",
    "export_onnx",
    "mlp_graph",
    "policy_graph",
    "write_onnx",
]

#: Name of the ONNX model's input: raw observations, float32 (batch, n_obs).
INPUT_NAME = "obs"
#: Name of the ONNX model's output: deterministic actions, float32 (batch, n_act).
OUTPUT_NAME = "actions"
#: ONNX opset of the exported graph (every op used exists unchanged since opset 13).
OPSET = 17
_IR_VERSION = 8  # the IR version of opset 17, readable by onnxruntime >= 1.13


def _array_eq() -> Any:
    return attrs.cmp_using(eq=np.array_equal)


@attrs.frozen(kw_only=True)
class ObsNormalization:
    """Observation normalisation baked into the graph (SB3 ``VecNormalize``'s formula).

    Attributes:
        mean: (n_obs,) running mean of the raw observations.
        var: (n_obs,) running variance of the raw observations.
        epsilon: added to ``var`` before the square root.
        clip: normalised observations are clipped to [-clip, clip].
    """

    mean: NDArray[np.float64] = attrs.field(converter=np.asarray, eq=_array_eq())
    var: NDArray[np.float64] = attrs.field(converter=np.asarray, eq=_array_eq())
    epsilon: float = 1e-8
    clip: float = 10.0

    def __attrs_post_init__(self) -> None:
        if self.mean.ndim != 1 or self.mean.shape != self.var.shape:
            raise ValueError(
                f"mean and var must be 1-D arrays of one shape, got {self.mean.shape} and "
                f"{self.var.shape}"
            )

    @classmethod
    def from_vec_normalize(cls, vec_normalize: Any) -> ObsNormalization:
        """The statistics of an SB3 ``VecNormalize`` (``norm_obs=True``, Box observations)."""
        if not getattr(vec_normalize, "norm_obs", False):
            raise ValueError("vec_normalize does not normalise observations (norm_obs=False)")
        rms = vec_normalize.obs_rms
        return cls(
            mean=np.array(rms.mean, dtype=np.float64),
            var=np.array(rms.var, dtype=np.float64),
            epsilon=float(vec_normalize.epsilon),
            clip=float(vec_normalize.clip_obs),
        )

    def apply(self, obs: NDArray[np.floating]) -> NDArray[np.float32]:
        """Normalises raw observations ``(..., n_obs)`` with the same formula as the graph."""
        scaled = (np.asarray(obs, dtype=np.float64) - self.mean) / np.sqrt(self.var + self.epsilon)
        return np.clip(scaled, -self.clip, self.clip).astype(np.float32)


def _layers(sequential: Any, where: str) -> list[tuple[str, Any]]:
    """(kind, module) for each module of an MLP ``nn.Sequential``."""
    from torch import nn

    kinds = {
        nn.Linear: "linear",
        nn.ReLU: "relu",
        nn.Tanh: "tanh",
        nn.SiLU: "silu",
        nn.ELU: "elu",
        nn.LeakyReLU: "leaky_relu",
        nn.Identity: "identity",
    }
    layers = []
    for module in sequential:
        kind = kinds.get(type(module))
        if kind is None:
            raise ValueError(
                f"cannot export {where}: layer {type(module).__name__} is not one of "
                f"{', '.join(k.__name__ for k in kinds)}"
            )
        layers.append((kind, module))
    return layers


def _policy_structure(policy: Any) -> tuple[list[tuple[str, Any]], str]:
    """The deterministic actor of an SB3 policy as (layers, output squash)."""
    from stable_baselines3.common.distributions import DiagGaussianDistribution
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.common.torch_layers import FlattenExtractor
    from stable_baselines3.sac.policies import SACPolicy

    if isinstance(policy, ActorCriticPolicy):
        if not isinstance(policy.action_dist, DiagGaussianDistribution):
            raise ValueError(
                "cannot export: only Gaussian (Box action) PPO policies are supported, got "
                f"{type(policy.action_dist).__name__}"
            )
        extractor = policy.pi_features_extractor
        layers = _layers(policy.mlp_extractor.policy_net, "mlp_extractor.policy_net")
        layers.append(("linear", policy.action_net))
        squash = "clip"
    elif isinstance(policy, SACPolicy):
        actor = policy.actor
        if actor.use_sde:
            raise ValueError("cannot export: SAC with gSDE (use_sde=True) is not supported")
        extractor = actor.features_extractor
        layers = _layers(actor.latent_pi, "actor.latent_pi")
        layers.append(("linear", actor.mu))
        squash = "tanh"
    else:
        raise ValueError(f"cannot export {type(policy).__name__}: expected a PPO or SAC MlpPolicy")
    if not isinstance(extractor, FlattenExtractor):
        raise ValueError(
            f"cannot export: features extractor {type(extractor).__name__} is not a "
            "FlattenExtractor (MlpPolicy on a Box observation)"
        )
    return layers, squash


def policy_graph(
    model: Any,
    *,
    obs_normalization: ObsNormalization | None = None,
    metadata: Mapping[str, Any] | None = None,
    action_scale: float = 1.0,
) -> Any:
    """The ``onnx.ModelProto`` of ``model``'s deterministic policy.

    Args:
        model: a Stable-Baselines3 PPO or SAC model with an ``MlpPolicy``.
        obs_normalization: statistics to bake in; None feeds observations unchanged.
        metadata: string properties stored in the model (``metadata_props``).
        action_scale: factor applied to the model's actions (after its clip or squash): 1/3
            for a PPO model trained through ``MLAgentsGaussianActions``.

    Returns:
        A checked ONNX model with input ``obs`` and output ``actions``.

    Raises:
        ValueError: for a policy this exporter does not support (the message says why).
    """
    layers, squash = _policy_structure(model.policy)
    return mlp_graph(
        layers,
        squash,
        obs_size=int(np.prod(model.observation_space.shape)),
        action_space=model.action_space,
        obs_normalization=obs_normalization,
        metadata=metadata,
        action_scale=action_scale,
    )


def mlp_graph(
    layers: list[tuple[str, Any]],
    squash: str,
    *,
    obs_size: int,
    action_space: Any,
    obs_normalization: ObsNormalization | None = None,
    metadata: Mapping[str, Any] | None = None,
    action_scale: float = 1.0,
) -> Any:
    """The ``onnx.ModelProto`` of a deterministic MLP actor, whatever library trained it.

    Args:
        layers: ``(kind, module)`` in order: ``"linear"`` (a torch ``nn.Linear``), ``"relu"``,
            ``"tanh"``, ``"silu"``, ``"elu"``, ``"leaky_relu"`` or ``"identity"``; the last
            linear layer outputs the action means.
        squash: ``"clip"`` clips the means to the action bounds (Gaussian PPO policies);
            ``"tanh"`` squashes them and rescales to the bounds (SAC).
        obs_size: length of one observation.
        action_space: the Box action space (its ``low``, ``high`` and ``shape``).
        obs_normalization: statistics to bake in; None feeds observations unchanged.
        metadata: string properties stored in the model (``metadata_props``).
        action_scale: factor applied to the clipped or squashed actions (1 leaves them).

    Returns:
        A checked ONNX model with input ``obs`` and output ``actions``.

    Raises:
        ValueError: for an unknown ``squash``, a non-positive ``action_scale`` or
            normalisation statistics of the wrong size.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    if squash not in ("clip", "tanh"):
        raise ValueError(f"squash must be 'clip' or 'tanh', got {squash!r}")
    if not action_scale > 0.0:
        raise ValueError(f"action_scale must be > 0, got {action_scale!r}")
    # The last node writes the output; with a scale, it goes through one more Mul.
    bounded = OUTPUT_NAME if action_scale == 1.0 else "actions_bounded"
    action_size = int(np.prod(action_space.shape))
    initializers: list[Any] = []
    nodes: list[Any] = []

    def constant(name: str, value: NDArray[Any], dtype: type = np.float32) -> str:
        initializers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    current = INPUT_NAME
    if obs_normalization is not None:
        if obs_normalization.mean.shape != (obs_size,):
            raise ValueError(
                f"obs_normalization has {obs_normalization.mean.shape[0]} entries; the policy "
                f"observes {obs_size}"
            )
        # In float64, then cast, exactly as VecNormalize.normalize_obs computes it.
        std = np.sqrt(obs_normalization.var + obs_normalization.epsilon)
        limit = obs_normalization.clip
        nodes += [
            helper.make_node("Cast", [current], ["obs_double"], to=TensorProto.DOUBLE),
            helper.make_node(
                "Sub",
                ["obs_double", constant("obs_mean", obs_normalization.mean, np.float64)],
                ["obs_centred"],
            ),
            helper.make_node(
                "Div", ["obs_centred", constant("obs_std", std, np.float64)], ["obs_scaled"]
            ),
            helper.make_node(
                "Clip",
                [
                    "obs_scaled",
                    constant("obs_low", np.float64(-limit), np.float64),
                    constant("obs_high", np.float64(limit), np.float64),
                ],
                ["obs_clipped"],
            ),
            helper.make_node("Cast", ["obs_clipped"], ["obs_normalized"], to=TensorProto.FLOAT),
        ]
        current = "obs_normalized"
    for index, (kind, module) in enumerate(layers):
        output = f"layer{index}_{kind}"
        if kind == "linear":
            weight = module.weight.detach().cpu().numpy()
            bias = (
                module.bias.detach().cpu().numpy()
                if module.bias is not None
                else np.zeros(weight.shape[0])
            )
            nodes.append(
                helper.make_node(
                    "Gemm",
                    [
                        current,
                        constant(f"{output}_weight", weight),
                        constant(f"{output}_bias", bias),
                    ],
                    [output],
                    transB=1,
                )
            )
        elif kind == "relu":
            nodes.append(helper.make_node("Relu", [current], [output]))
        elif kind == "tanh":
            nodes.append(helper.make_node("Tanh", [current], [output]))
        elif kind == "silu":
            nodes += [
                helper.make_node("Sigmoid", [current], [f"{output}_sigmoid"]),
                helper.make_node("Mul", [current, f"{output}_sigmoid"], [output]),
            ]
        elif kind == "elu":
            nodes.append(helper.make_node("Elu", [current], [output], alpha=float(module.alpha)))
        elif kind == "leaky_relu":
            nodes.append(
                helper.make_node(
                    "LeakyRelu", [current], [output], alpha=float(module.negative_slope)
                )
            )
        else:  # identity
            nodes.append(helper.make_node("Identity", [current], [output]))
        current = output
    low = np.asarray(action_space.low, dtype=np.float32).reshape(-1)
    high = np.asarray(action_space.high, dtype=np.float32).reshape(-1)
    if squash == "clip":
        # SB3's predict() clips Gaussian means to the action bounds.
        nodes += [
            helper.make_node("Max", [current, constant("action_low", low)], ["actions_above"]),
            helper.make_node("Min", ["actions_above", constant("action_high", high)], [bounded]),
        ]
    else:
        # SAC squashes with tanh; predict() maps [-1, 1] onto [low, high].
        nodes += [
            helper.make_node("Tanh", [current], ["actions_squashed"]),
            helper.make_node(
                "Mul",
                ["actions_squashed", constant("action_half_range", (high - low) / 2.0)],
                ["actions_scaled"],
            ),
            helper.make_node(
                "Add",
                ["actions_scaled", constant("action_centre", (high + low) / 2.0)],
                [bounded],
            ),
        ]
    if action_scale != 1.0:
        scale = np.full(action_size, action_scale, dtype=np.float32)
        nodes.append(
            helper.make_node("Mul", [bounded, constant("action_scale", scale)], [OUTPUT_NAME])
        )
    graph = helper.make_graph(
        nodes,
        "physbody_policy",
        [helper.make_tensor_value_info(INPUT_NAME, TensorProto.FLOAT, ["batch", obs_size])],
        [helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, ["batch", action_size])],
        initializer=initializers,
    )
    proto = helper.make_model(
        graph,
        producer_name="physbody",
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=_IR_VERSION,
    )
    properties = {
        "observation_size": str(obs_size),
        "action_size": str(action_size),
        **{str(k): str(v) for k, v in (metadata or {}).items()},
    }
    helper.set_model_props(proto, properties)
    onnx.checker.check_model(proto)
    return proto


def export_onnx(
    model: Any,
    path: str | Path,
    *,
    obs_normalization: ObsNormalization | None = None,
    metadata: Mapping[str, Any] | None = None,
    action_scale: float = 1.0,
) -> Path:
    """Writes ``model``'s deterministic policy to ``path`` as ONNX, atomically.

    Args:
        model: a Stable-Baselines3 PPO or SAC model with an ``MlpPolicy``.
        path: the ``.onnx`` file to write.
        obs_normalization: statistics to bake in (``ObsNormalization.from_vec_normalize``).
        metadata: string properties stored in the model, e.g. ``{"env_id": "Crawler-v0"}``.
        action_scale: factor applied to the model's actions (see :func:`policy_graph`).

    Returns:
        ``path`` as a ``Path``.
    """
    proto = policy_graph(
        model, obs_normalization=obs_normalization, metadata=metadata, action_scale=action_scale
    )
    return write_onnx(proto, path)


def write_onnx(proto: Any, path: str | Path) -> Path:
    """Writes an ``onnx.ModelProto`` to ``path`` atomically and returns ``path`` as a Path."""
    path = Path(path)
    with atomic_output(path) as temporary:
        temporary.write_bytes(proto.SerializeToString())
    return path
