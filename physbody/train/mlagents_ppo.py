"""ML-Agents' PPO update (mlagents 0.18, the seed's release) on Stable-Baselines3's PPO.

SB3's PPO collects the rollout, computes GAE(lambda) and bootstraps time-limit ends from the
last observation as ML-Agents' trainer does. Its update step differs from ML-Agents' TF
optimizer (``ppo/optimizer.py`` and ``ppo/trainer.py`` of mlagents 0.18) in six places, which
:class:`MLAgentsPPO` replaces with ML-Agents' own:

- **Entropy bonus.** SB3: ``ent_coef`` times the entropy summed over the action dimensions.
  ML-Agents: ``beta`` times the mean entropy of one dimension, 20x smaller for the Crawler's
  20 actions.
- **Value loss.** SB3: ``(R - V)^2``. ML-Agents: ``max((R - V)^2, (R - V_clip)^2)`` with
  ``V_clip = V_old + clip(V - V_old, -epsilon, epsilon)``.
- **Advantages.** SB3 normalises them per minibatch (``+ 1e-8``); ML-Agents once over the
  whole buffer (``+ 1e-10``).
- **Gradient.** SB3 clips its global norm to 0.5; ML-Agents does not clip it.
- **Adam's epsilon.** SB3: 1e-5; ML-Agents: TensorFlow's default, 1e-8.
- **Initial weights.** SB3: orthogonal, gain sqrt(2) for hidden layers, 0.01 for the action
  means, 1 for the value. ML-Agents (TensorFlow 1): ``variance_scaling(1.0)`` for hidden
  layers and ``variance_scaling(0.01)`` for the action means (truncated normals of standard
  deviation ``sqrt(scale / fan_in)``), Glorot-uniform for the value head; zero biases and
  log sigma in both (:func:`init_mlagents_weights`).

Minibatches: ML-Agents shuffles the buffer every epoch and takes ``buffer // batch_size`` full
minibatches, dropping the rest; so does :class:`MLAgentsPPO` (SB3 would update on the rest).
The loss is ``policy_loss + 0.5 * value_loss - beta * entropy``, with ``beta`` in
``ent_coef`` (set along ML-Agents' decay by :class:`~physbody.train.callbacks.EntropySchedule`)
and ``epsilon`` in ``clip_range``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch as th
from numpy.typing import NDArray
from stable_baselines3 import PPO
from stable_baselines3.common.preprocessing import get_action_dim
from stable_baselines3.common.utils import explained_variance
from torch import Tensor

__all__ = [
    "ADAM_EPSILON",
    "VALUE_COEFFICIENT",
    "MLAgentsPPO",
    "init_mlagents_weights",
    "normalize_advantages",
    "ppo_losses",
    "variance_scaling_",
]

#: Weight of the value loss in ML-Agents' PPO loss.
VALUE_COEFFICIENT = 0.5
#: TensorFlow 1's ``AdamOptimizer`` epsilon, which ML-Agents 0.18 keeps.
ADAM_EPSILON = 1e-8
#: ML-Agents' guard in the advantage normalisation.
_ADVANTAGE_EPSILON = 1e-10
#: Standard deviation of a standard normal truncated to [-2, 2] (TensorFlow's correction).
_TRUNCATED_STD = 0.87962566103423978


def variance_scaling_(weight: Tensor, scale: float) -> Tensor:
    """TensorFlow 1's ``variance_scaling(scale)`` in place on a (fan_out, fan_in) weight.

    A normal truncated at two of its standard deviations, scaled so that the values have a
    standard deviation of ``sqrt(scale / fan_in)``.

    Returns:
        ``weight``.
    """
    std = math.sqrt(scale / weight.shape[1]) / _TRUNCATED_STD
    return th.nn.init.trunc_normal_(weight, 0.0, std, -2.0 * std, 2.0 * std)


def init_mlagents_weights(policy: Any) -> None:
    """Re-initialises an SB3 ``ActorCriticPolicy`` of MLPs as ML-Agents 0.18 builds its networks.

    Hidden layers: ``variance_scaling(1.0)``; action means: ``variance_scaling(0.01)``; value
    head: Glorot-uniform; every bias zero; log sigma (if any) zero. In place, so an optimizer
    built on the parameters keeps them.
    """
    with th.no_grad():
        for layer in policy.mlp_extractor.modules():
            if isinstance(layer, th.nn.Linear):
                variance_scaling_(layer.weight, 1.0)
                layer.bias.zero_()
        variance_scaling_(policy.action_net.weight, 0.01)
        policy.action_net.bias.zero_()
        th.nn.init.xavier_uniform_(policy.value_net.weight)
        policy.value_net.bias.zero_()
        if isinstance(getattr(policy, "log_std", None), th.nn.Parameter):
            policy.log_std.zero_()


def normalize_advantages(advantages: NDArray[np.floating]) -> NDArray[np.floating]:
    """ML-Agents' advantage normalisation over the whole buffer: ``(A - mean) / (std + 1e-10)``.

    Args:
        advantages: every advantage of the buffer, any shape (the population std is used).

    Returns:
        A new array of the same shape and dtype.
    """
    advantages = np.asarray(advantages)
    return ((advantages - advantages.mean()) / (advantages.std() + _ADVANTAGE_EPSILON)).astype(
        advantages.dtype, copy=False
    )


def ppo_losses(
    log_prob: Tensor,
    old_log_prob: Tensor,
    advantages: Tensor,
    values: Tensor,
    old_values: Tensor,
    returns: Tensor,
    epsilon: float,
) -> tuple[Tensor, Tensor, Tensor]:
    """ML-Agents' clipped policy and value losses over one minibatch.

    Args:
        log_prob: (B,) log-probability of the taken actions under the current policy (summed
            over action dimensions).
        old_log_prob: (B,) the same under the policy that collected them.
        advantages: (B,) normalised advantages.
        values: (B,) current value estimates.
        old_values: (B,) value estimates at collection.
        returns: (B,) lambda-returns (advantage + old value).
        epsilon: the clip range, for the probability ratio and the value change alike.

    Returns:
        ``(policy_loss, value_loss, clip_fraction)``: ``-mean(min(r A, clip(r, 1 +- eps) A))``,
        ``mean(max((R - V)^2, (R - V_old - clip(V - V_old, +-eps))^2))`` and the share of ratios
        outside ``1 +- eps``.
    """
    ratio = th.exp(log_prob - old_log_prob)
    clipped_ratio = th.clamp(ratio, 1.0 - epsilon, 1.0 + epsilon)
    policy_loss = -th.min(ratio * advantages, clipped_ratio * advantages).mean()
    clipped_values = old_values + th.clamp(values - old_values, -epsilon, epsilon)
    value_loss = th.max((returns - values) ** 2, (returns - clipped_values) ** 2).mean()
    clip_fraction = (th.abs(ratio - 1.0) > epsilon).float().mean()
    return policy_loss, value_loss, clip_fraction


class MLAgentsPPO(PPO):
    """Stable-Baselines3's PPO with the update of ML-Agents' PPO (see the module's table).

    Takes PPO's arguments; ``ent_coef`` is ML-Agents' ``beta`` (per action dimension),
    ``clip_range`` its ``epsilon``. ``vf_coef``, ``max_grad_norm``, ``normalize_advantage``,
    ``clip_range_vf`` and ``target_kl`` are ML-Agents' fixed choices and cannot be passed. Adam's
    epsilon is 1e-8 unless ``policy_kwargs["optimizer_kwargs"]`` says otherwise; a new model's
    weights are ML-Agents' (:func:`init_mlagents_weights`; a loaded one keeps its own).
    """

    def __init__(self, policy: Any, env: Any, **kwargs: Any) -> None:
        fixed = {"vf_coef", "max_grad_norm", "normalize_advantage", "clip_range_vf", "target_kl"}
        passed = sorted(fixed & kwargs.keys())
        if passed:
            raise TypeError(f"MLAgentsPPO fixes {', '.join(passed)} as ML-Agents' PPO does")
        policy_kwargs = dict(kwargs.pop("policy_kwargs", None) or {})
        policy_kwargs.setdefault("optimizer_kwargs", {"eps": ADAM_EPSILON})
        policy_kwargs.setdefault("ortho_init", False)  # init_mlagents_weights replaces it
        super().__init__(
            policy,
            env,
            policy_kwargs=policy_kwargs,
            vf_coef=VALUE_COEFFICIENT,
            max_grad_norm=math.inf,
            normalize_advantage=False,
            **kwargs,
        )

    def _setup_model(self) -> None:
        super()._setup_model()
        init_mlagents_weights(self.policy)  # load() then overwrites them with the saved ones

    def train(self) -> None:
        """One ML-Agents PPO update on the collected rollout: ``n_epochs`` shuffled passes."""
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        epsilon = float(self.clip_range(self._current_progress_remaining))
        beta = float(self.ent_coef)
        buffer = self.rollout_buffer
        buffer.advantages = normalize_advantages(buffer.advantages)
        size = buffer.buffer_size * buffer.n_envs
        batch_size = min(self.batch_size, size)
        action_dim = get_action_dim(self.action_space)
        stats: dict[str, list[float]] = {"policy": [], "value": [], "entropy": [], "clip": []}
        kls: list[float] = []
        for _ in range(self.n_epochs):
            for batch in buffer.get(batch_size):
                if len(batch.advantages) < batch_size:
                    continue  # ML-Agents drops the partial minibatch
                values, log_prob, entropy = self.policy.evaluate_actions(
                    batch.observations, batch.actions
                )
                policy_loss, value_loss, clip_fraction = ppo_losses(
                    log_prob,
                    batch.old_log_prob,
                    batch.advantages,
                    values.flatten(),
                    batch.old_values,
                    batch.returns,
                    epsilon,
                )
                dimension_entropy = entropy.mean() / action_dim
                loss = policy_loss + VALUE_COEFFICIENT * value_loss - beta * dimension_entropy
                self.policy.optimizer.zero_grad()
                loss.backward()
                self.policy.optimizer.step()
                with th.no_grad():
                    log_ratio = log_prob - batch.old_log_prob
                    kls.append(float(th.mean(th.exp(log_ratio) - 1.0 - log_ratio)))
                stats["policy"].append(policy_loss.item())
                stats["value"].append(value_loss.item())
                stats["entropy"].append(dimension_entropy.item())
                stats["clip"].append(clip_fraction.item())
            self._n_updates += 1
        self._record(stats, kls, epsilon, beta)

    def _record(
        self, stats: dict[str, list[float]], kls: list[float], epsilon: float, beta: float
    ) -> None:
        """Logs the update under SB3's ``train/`` names (``entropy``: per dimension)."""
        buffer = self.rollout_buffer
        record = self.logger.record
        record("train/policy_gradient_loss", float(np.mean(stats["policy"])))
        record("train/value_loss", float(np.mean(stats["value"])))
        record("train/entropy", float(np.mean(stats["entropy"])))
        record("train/clip_fraction", float(np.mean(stats["clip"])))
        record("train/approx_kl", float(np.mean(kls)))
        record(
            "train/explained_variance",
            float(explained_variance(buffer.values.flatten(), buffer.returns.flatten())),
        )
        if hasattr(self.policy, "log_std"):
            record("train/std", th.exp(self.policy.log_std).mean().item())
        record("train/n_updates", self._n_updates, exclude="tensorboard")
        record("train/clip_range", epsilon)
        record("train/beta", beta)
