"""ONNX export: onnxruntime actions equal SB3's deterministic actions."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import gymnasium as gym  # noqa: E402
from stable_baselines3 import PPO, SAC  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize  # noqa: E402
from torch import nn  # noqa: E402

import envs  # noqa: E402, F401
from physbody.train.export import ObsNormalization, export_onnx, policy_graph  # noqa: E402
from physbody.train.inference import OnnxPolicy  # noqa: E402


def _vec_normalize(env_id: str, rng: np.random.Generator) -> VecNormalize:
    venv = VecNormalize(
        DummyVecEnv([lambda: gym.make(env_id)]), norm_obs=True, norm_reward=False, clip_obs=5.0
    )
    size = venv.observation_space.shape[0]
    venv.obs_rms.mean = rng.normal(0.0, 2.0, size)
    venv.obs_rms.var = rng.uniform(0.05, 9.0, size)
    return venv


def _random_obs(rng: np.random.Generator, size: int) -> np.ndarray:
    return rng.normal(0.0, 4.0, (64, size)).astype(np.float32)


@pytest.mark.parametrize(
    ("algorithm", "env_id", "activation"),
    [(PPO, "Crawler-v0", nn.SiLU), (PPO, "Walker-v0", nn.Tanh), (SAC, "Crawler-v0", nn.ReLU)],
)
def test_onnx_actions_equal_sb3_deterministic_actions(tmp_path, algorithm, env_id, activation):
    rng = np.random.default_rng(0)
    venv = _vec_normalize(env_id, rng)
    kwargs = (
        {
            "n_steps": 64,
            "batch_size": 32,
            "policy_kwargs": {"net_arch": {"pi": [32, 32], "vf": [8]}},
        }
        if algorithm is PPO
        else {"buffer_size": 100, "policy_kwargs": {"net_arch": [32, 32]}}
    )
    kwargs["policy_kwargs"]["activation_fn"] = activation
    model = algorithm("MlpPolicy", venv, seed=1, device="cpu", **kwargs)
    # Move the weights away from their initial values so that every layer matters.
    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for parameter in model.policy.parameters():
            parameter += 0.3 * torch.randn(parameter.shape, generator=generator)
    path = export_onnx(
        model,
        tmp_path / "policy.onnx",
        obs_normalization=ObsNormalization.from_vec_normalize(venv),
        metadata={"env_id": env_id, "steps": 7},
    )
    policy = OnnxPolicy(path)
    obs = _random_obs(rng, venv.observation_space.shape[0])
    expected, _ = model.predict(venv.normalize_obs(obs), deterministic=True)
    actions = policy(obs)
    assert actions.shape == expected.shape == (64, venv.action_space.shape[0])
    np.testing.assert_allclose(actions, expected, atol=1e-5, rtol=0)
    np.testing.assert_allclose(policy(obs[3]), expected[3], atol=1e-5, rtol=0)
    assert policy.metadata["env_id"] == env_id and policy.metadata["steps"] == "7"
    venv.close()


def test_export_without_normalisation_and_errors(tmp_path):
    rng = np.random.default_rng(1)
    env = gym.make("Crawler-v0")
    model = PPO(
        "MlpPolicy",
        env,
        n_steps=64,
        batch_size=32,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [16]},
    )
    obs = _random_obs(rng, 142)
    policy = OnnxPolicy(export_onnx(model, tmp_path / "plain.onnx"))
    expected, _ = model.predict(obs, deterministic=True)
    np.testing.assert_allclose(policy(obs), expected, atol=1e-5, rtol=0)
    assert np.abs(expected).max() <= 1.0

    with pytest.raises(ValueError, match="observations must have shape"):
        policy(np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="obs_normalization has 3 entries"):
        policy_graph(model, obs_normalization=ObsNormalization(mean=np.zeros(3), var=np.ones(3)))
    with pytest.raises(FileNotFoundError, match="ONNX model not found"):
        OnnxPolicy(tmp_path / "missing.onnx")
    env.close()


def test_obs_normalization_matches_vec_normalize():
    rng = np.random.default_rng(2)
    venv = _vec_normalize("Crawler-v0", rng)
    obs = _random_obs(rng, 142)
    stats = ObsNormalization.from_vec_normalize(venv)
    np.testing.assert_allclose(stats.apply(obs), venv.normalize_obs(obs), atol=1e-6)
    assert stats.clip == 5.0
    venv.close()
