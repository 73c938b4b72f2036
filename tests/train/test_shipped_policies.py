"""The trained policies shipped in ``envs/assets/policies``: each walks, with onnxruntime only."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import envs
from physbody.cli import main
from physbody.train.play import shipped_policies, shipped_policy

pytest.importorskip("onnxruntime")

#: Decisions played per check: 300 of the episode's 1000.
STEPS = 300


def _returns(env_id: str, act, seed: int) -> float:
    """Sum of rewards over STEPS decisions from ``reset(seed)``, resetting after an episode end."""
    env = gym.make(env_id)
    env.action_space.seed(seed)
    try:
        obs, _ = env.reset(seed=seed)
        total = 0.0
        for _ in range(STEPS):
            obs, reward, terminated, truncated, _ = env.step(act(env, obs))
            total += float(reward)
            if terminated or truncated:
                obs, _ = env.reset()
        return total
    finally:
        env.close()


@pytest.mark.parametrize(
    ("env_id", "behaviour"),
    [
        ("Crawler-v0", "CrawlerDynamic"),
        ("CrawlerStatic-v0", "CrawlerStatic"),
        ("Walker-v0", "WalkerDynamic"),
    ],
)
def test_the_trained_policies_are_shipped_under_their_behaviour_names(env_id, behaviour):
    shipped = shipped_policies()
    assert env_id in shipped
    assert shipped[env_id].name == f"{behaviour}.onnx"
    assert set(shipped) <= set(envs.ENV_IDS)


@pytest.mark.parametrize("env_id", list(shipped_policies()))
def test_each_shipped_policy_returns_far_more_than_random_actions(env_id):
    from physbody.train.inference import OnnxPolicy

    policy = OnnxPolicy(shipped_policy(env_id))
    assert policy.metadata["env_id"] == env_id
    for seed in (0, 1):
        trained = _returns(env_id, lambda env, obs: policy(obs), seed)
        random = _returns(env_id, lambda env, obs: env.action_space.sample(), seed)
        # A trained policy earns about 0.6-0.9 per decision here (the head-to-target speed
        # match times the facing match); random actions earn about 0 in total.
        assert trained > 100.0, (env_id, seed, trained)
        assert trained > random + 100.0, (env_id, seed, trained, random)


def test_play_an_env_id_from_the_command_line_without_torch():
    # The shipped policy runs as ML-Agents' examples do: onnxruntime, no torch or SB3.
    blocker = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'stable_baselines3', 'onnx'):\n"
        "            raise ImportError(f'blocked {name}')\n"
        "sys.meta_path.insert(0, Block())\n"
        "from physbody.cli import main\n"
        "sys.exit(main(['play', 'Crawler-v0', '--episodes', '1']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", blocker], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    mean = result.stdout.strip().splitlines()[-1]
    assert mean.startswith("mean return over 1 episodes: ")
    assert float(mean.rsplit(" ", 1)[1]) > 100.0


def test_playing_an_env_id_without_a_shipped_policy_names_the_ones_shipped(capsys):
    missing = [env_id for env_id in envs.ENV_IDS if env_id not in shipped_policies()]
    if not missing:
        pytest.skip("every environment has a shipped policy")
    assert main(["play", missing[0]]) == 1
    err = capsys.readouterr().err
    assert f"no trained policy is shipped for {missing[0]}" in err
    assert "Crawler-v0" in err


def test_shipped_policy_rejects_unknown_ids():
    with pytest.raises(ValueError, match="unknown environment 'Hopper-v4'"):
        shipped_policy("Hopper-v4")


def test_an_existing_file_named_like_an_env_id_is_played_as_a_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "Crawler-v0").write_bytes(np.arange(8, dtype=np.uint8).tobytes())
    assert main(["play", "Crawler-v0"]) == 1
    assert "is not an ONNX policy" in capsys.readouterr().err
