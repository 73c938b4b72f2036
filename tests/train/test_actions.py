"""ML-Agents' Gaussian PPO actions: clipped to +-3 and divided by 3 on the way to the env."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import gymnasium as gym  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv  # noqa: E402

from physbody.train.export import export_onnx  # noqa: E402
from physbody.train.inference import OnnxPolicy  # noqa: E402
from physbody.train.native_vec_env import MLAgentsGaussianActions  # noqa: E402


class _Recorder(gym.Env):
    """Two actions in [-1, 1]; remembers the last one it was given."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)

    def __init__(self) -> None:
        self.last = None

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(3, np.float32), {}

    def step(self, action):
        self.last = np.array(action)
        return np.zeros(3, np.float32), 0.0, False, False, {}


def test_actions_are_clipped_to_three_then_divided_by_three():
    venv = MLAgentsGaussianActions(DummyVecEnv([_Recorder, _Recorder]))
    assert venv.action_space == gym.spaces.Box(-3.0, 3.0, (2,), np.float32)
    venv.reset()
    venv.step(np.array([[1.5, -6.0], [3.0, 0.3]]))
    recorders = venv.venv.envs
    np.testing.assert_allclose(recorders[0].last, [0.5, -1.0])
    np.testing.assert_allclose(recorders[1].last, [1.0, 0.1])


def test_other_action_spaces_are_refused():
    class Wide(_Recorder):
        action_space = gym.spaces.Box(-2.0, 2.0, (2,), np.float32)

    with pytest.raises(ValueError, match=r"Box\(-1, 1\)"):
        MLAgentsGaussianActions(DummyVecEnv([Wide]))


def test_exported_policy_gives_the_env_actions(tmp_path):
    venv = MLAgentsGaussianActions(DummyVecEnv([_Recorder]))
    model = PPO("MlpPolicy", venv, n_steps=16, batch_size=16, seed=0, device="cpu",
                policy_kwargs={"net_arch": [8]})  # fmt: skip
    import torch

    with torch.no_grad():  # means well beyond +-1 and +-3, so both clips matter
        model.policy.action_net.bias += torch.tensor([2.0, -5.0])
    policy = OnnxPolicy(export_onnx(model, tmp_path / "p.onnx", action_scale=1.0 / 3.0))
    obs = np.random.default_rng(0).uniform(-1, 1, (32, 3)).astype(np.float32)
    predicted, _ = model.predict(obs, deterministic=True)  # clipped to [-3, 3] by SB3
    np.testing.assert_allclose(policy(obs), predicted / 3.0, atol=1e-6)
    assert np.abs(policy(obs)).max() <= 1.0 and np.isclose(np.abs(policy(obs)).max(), 1.0)
    with pytest.raises(ValueError, match="action_scale must be > 0"):
        export_onnx(model, tmp_path / "bad.onnx", action_scale=0.0)


def test_ml_agents_schedules_decay_linearly_to_their_floors():
    from physbody.train.trainer import BETA_FINAL, EPSILON_FINAL, DecaySchedule

    epsilon = DecaySchedule(initial=0.2, kind="linear", final=EPSILON_FINAL)
    assert [epsilon(p) for p in (1.0, 0.5, 0.0, -0.1)] == pytest.approx([0.2, 0.15, 0.1, 0.1])
    beta = DecaySchedule(initial=0.005, kind="linear", final=BETA_FINAL)
    assert beta(0.25) == pytest.approx(0.25 * (0.005 - 1e-5) + 1e-5)
    assert DecaySchedule(initial=3e-4, kind="constant")(0.1) == 3e-4
    with pytest.raises(ValueError):
        DecaySchedule(initial=1.0, kind="cosine")


def test_ppo_clip_range_and_entropy_follow_the_schedules():
    from physbody.train.callbacks import EntropySchedule
    from physbody.train.settings import default_trainer_settings
    from physbody.train.trainer import BETA_FINAL, DecaySchedule, build_model

    settings = default_trainer_settings("CrawlerDynamic")
    hp = settings.hyperparameters
    venv = MLAgentsGaussianActions(DummyVecEnv([_Recorder]))
    model = build_model(settings, venv, seed=0)
    assert model.clip_range(1.0) == pytest.approx(hp.epsilon)
    assert model.clip_range(0.0) == pytest.approx(0.1)
    beta = DecaySchedule(initial=hp.beta, kind="linear", final=BETA_FINAL)
    callback = EntropySchedule(beta, max_steps=1000)
    callback.init_callback(model)
    model.num_timesteps = 750
    callback.on_rollout_end()
    assert model.ent_coef == pytest.approx(0.25 * (hp.beta - BETA_FINAL) + BETA_FINAL)
