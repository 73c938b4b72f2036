"""ML-Agents' PPO update (mlagents 0.18): losses, advantage normalisation, one full update."""

from __future__ import annotations

import copy
import math

import gymnasium as gym
import numpy as np
import pytest

th = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from stable_baselines3.common.vec_env import DummyVecEnv  # noqa: E402

import envs  # noqa: E402,F401
from physbody.train.mlagents_ppo import (  # noqa: E402
    ADAM_EPSILON,
    MLAgentsPPO,
    normalize_advantages,
    ppo_losses,
)


def _tensors(*arrays):
    return [th.tensor(a, dtype=th.float32) for a in arrays]


def test_value_loss_takes_the_larger_of_the_clipped_and_unclipped_errors():
    # returns, old values, new values; epsilon 0.2 clips the change of the first sample to 0.2
    returns, old, new = _tensors([1.0, 1.0, -1.0], [0.0, 0.0, 0.0], [0.5, 0.1, 0.5])
    zeros = th.zeros(3)
    _, value_loss, _ = ppo_losses(zeros, zeros, zeros, new, old, returns, 0.2)
    # max(0.5^2, 0.8^2), max(0.9^2, 0.9^2), max(1.5^2, 1.2^2)
    assert value_loss.item() == pytest.approx((0.64 + 0.81 + 2.25) / 3, rel=1e-6)


def test_policy_loss_and_clip_fraction():
    log_ratio = np.array([0.5, -0.5, 0.0])
    advantages = np.array([1.0, 1.0, -2.0])
    log_prob, old_log_prob, adv = _tensors(log_ratio, np.zeros(3), advantages)
    zeros = th.zeros(3)
    policy_loss, _, clip_fraction = ppo_losses(
        log_prob, old_log_prob, adv, zeros, zeros, zeros, epsilon=0.2
    )
    ratio = np.exp(log_ratio)
    expected = -np.mean([min(ratio[0], 1.2) * 1.0, min(ratio[1], 0.8) * 1.0, -2.0])
    assert policy_loss.item() == pytest.approx(expected, rel=1e-6)
    assert clip_fraction.item() == pytest.approx(2 / 3)


def test_advantages_are_normalised_once_over_the_whole_buffer():
    advantages = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    normalised = normalize_advantages(advantages)
    assert normalised.dtype == np.float32 and normalised.shape == (2, 2)
    expected = (advantages - 2.5) / (math.sqrt(1.25) + 1e-10)
    np.testing.assert_allclose(normalised, expected, rtol=1e-6)


def test_ml_agents_fixed_choices_cannot_be_overridden():
    venv = DummyVecEnv([lambda: gym.make("Pendulum-v1")])
    with pytest.raises(TypeError, match="max_grad_norm, vf_coef"):
        MLAgentsPPO("MlpPolicy", venv, vf_coef=1.0, max_grad_norm=0.5)
    venv.close()


def _model(n_steps: int, batch_size: int, n_epochs: int, ent_coef: float) -> MLAgentsPPO:
    venv = DummyVecEnv([lambda: gym.make("Crawler-v0")])
    return MLAgentsPPO(
        "MlpPolicy",
        venv,
        n_steps=n_steps,
        batch_size=batch_size,
        n_epochs=n_epochs,
        ent_coef=ent_coef,
        learning_rate=1e-3,
        clip_range=0.2,
        policy_kwargs={"net_arch": {"pi": [16], "vf": [16]}},
        seed=3,
        device="cpu",
    )


def test_one_update_is_ml_agents_update_computed_by_hand():
    model = _model(n_steps=64, batch_size=64, n_epochs=1, ent_coef=0.3)
    assert model.policy.optimizer.defaults["eps"] == ADAM_EPSILON
    before = copy.deepcopy(model.policy)
    model.learn(total_timesteps=64)  # one rollout, one update on one 64-sample minibatch
    buffer = model.rollout_buffer  # flattened by the update; returns and values as collected

    obs = th.as_tensor(buffer.observations)
    actions = th.as_tensor(buffer.actions)
    old_values = th.as_tensor(buffer.values).flatten()
    returns = th.as_tensor(buffer.returns).flatten()
    old_log_prob = th.as_tensor(buffer.log_probs).flatten()
    raw = (returns - old_values).numpy()
    advantages = th.as_tensor((raw - raw.mean()) / (raw.std() + 1e-10))

    values, log_prob, _ = before.evaluate_actions(obs, actions)
    values = values.flatten()
    ratio = th.exp(log_prob - old_log_prob)
    policy_loss = -th.mean(th.minimum(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages))
    clipped = old_values + (values - old_values).clamp(-0.2, 0.2)
    value_loss = th.mean(th.maximum((returns - values) ** 2, (returns - clipped) ** 2))
    # entropy of one action dimension of a diagonal Gaussian: 0.5 log(2 pi e) + log sigma
    entropy = th.mean(0.5 * math.log(2 * math.pi * math.e) + before.log_std)
    loss = policy_loss + 0.5 * value_loss - 0.3 * entropy
    optimizer = th.optim.Adam(before.parameters(), lr=1e-3, eps=1e-8)
    optimizer.zero_grad()
    loss.backward()
    grad_norm = th.sqrt(sum((p.grad**2).sum() for p in before.parameters()))
    assert grad_norm > 0.5, "the check must be one that SB3's clipping to 0.5 would change"
    optimizer.step()

    for (name, expected), actual in zip(
        before.named_parameters(), model.policy.parameters(), strict=True
    ):
        np.testing.assert_allclose(
            actual.detach().numpy(), expected.detach().numpy(), atol=1e-6, err_msg=name
        )
    model.get_env().close()


@pytest.mark.filterwarnings("ignore:You have specified a mini-batch size")
def test_a_partial_minibatch_is_dropped_as_ml_agents_does():
    model = _model(n_steps=48, batch_size=32, n_epochs=2, ent_coef=0.0)
    steps = []
    optimizer_step = model.policy.optimizer.step

    def counting_step(*args, **kwargs):
        steps.append(1)
        return optimizer_step(*args, **kwargs)

    model.policy.optimizer.step = counting_step
    model.learn(total_timesteps=48)
    assert len(steps) == 2  # one full minibatch of 32 per epoch; SB3 would also use the 16 left
    model.get_env().close()


def test_a_new_model_starts_from_ml_agents_initial_weights():
    venv = DummyVecEnv([lambda: gym.make("Crawler-v0")])
    model = MLAgentsPPO(
        "MlpPolicy",
        venv,
        n_steps=64,
        batch_size=64,
        policy_kwargs={"net_arch": {"pi": [512, 512], "vf": [512, 512]}},
        seed=0,
        device="cpu",
    )
    policy = model.policy
    first, second = (layer.weight for layer in policy.mlp_extractor.policy_net[::2])
    # variance_scaling(1.0): standard deviation sqrt(1 / fan_in), truncated at 2 / 0.8796 of it
    for weight, fan_in in ((first, 142), (second, 512)):
        values = weight.detach().numpy()
        assert values.std() == pytest.approx(math.sqrt(1.0 / fan_in), rel=0.02)
        assert np.abs(values).max() <= 2.0 * math.sqrt(1.0 / fan_in) / 0.8796257 + 1e-7
    means = policy.action_net.weight.detach().numpy()  # variance_scaling(0.01)
    assert means.std() == pytest.approx(math.sqrt(0.01 / 512), rel=0.05)
    value = policy.value_net.weight.detach().numpy()  # Glorot-uniform, fan 512 + 1
    bound = math.sqrt(6.0 / (512 + 1))
    assert np.abs(value).max() <= bound and value.std() == pytest.approx(
        bound / math.sqrt(3), rel=0.15
    )
    biases = [layer.bias for layer in policy.modules() if isinstance(layer, th.nn.Linear)]
    assert all(float(bias.detach().abs().max()) == 0.0 for bias in biases)
    assert float(policy.log_std.detach().abs().max()) == 0.0
    venv.close()
