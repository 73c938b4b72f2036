"""Native vector envs: spaces, autoreset, truncation, independence, seeding, equivalence, guards."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref

import gymnasium as gym
import numpy as np
import pybullet
import pytest
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

import envs
from envs.processes import ProcessVectorEnv
from envs.rewards import RewardNaNError
from envs.scene import platform_offsets
from envs.vector import LocomotionVectorEnv, agent_seeds

SIZES = {"Crawler-v0": (142, 20), "CrawlerStatic-v0": (142, 20), "Walker-v0": (248, 39)}
SIZES["WalkerStatic-v0"] = SIZES["Walker-v0"]


def _make(env_id: str, num_envs: int, **kwargs) -> VectorEnv:
    return gym.make_vec(
        env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs
    )


def _actions(env: VectorEnv, count: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, (count, *env.action_space.shape)).astype(np.float32)


def _crash(env: VectorEnv, agent: int) -> None:
    """Lays agent ``agent``'s root on its floor: a forbidden contact at the next step."""
    unwrapped = env.unwrapped
    body = unwrapped.agents[agent]
    position = body.offset + (0.0, 0.0, 0.45)  # the Crawler's 0.5 m sphere touches at z 0.5
    pybullet.resetBasePositionAndOrientation(
        body.robot, position, (0, 0, 0, 1), physicsClientId=unwrapped.client
    )


@pytest.mark.parametrize("env_id", envs.ENV_IDS)
def test_make_vec_gives_a_native_vector_env_with_batched_spaces(env_id):
    obs_size, action_size = SIZES[env_id]
    env = _make(env_id, 3)
    assert isinstance(env, VectorEnv) and isinstance(env.unwrapped, LocomotionVectorEnv)
    assert env.spec.id == env_id and env.num_envs == 3
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.single_observation_space == gym.make(env_id).observation_space
    assert env.observation_space == batch_space(env.single_observation_space, 3)
    assert env.observation_space.shape == (3, obs_size)
    assert env.action_space == gym.spaces.Box(-1.0, 1.0, (3, action_size), np.float32)
    obs, infos = env.reset(seed=0)
    assert obs.shape == (3, obs_size) and obs.dtype == np.float32
    assert env.observation_space.contains(obs)
    assert infos["root_position"].shape == (3, 3) and infos["_root_position"].all()
    obs, rewards, terminated, truncated, infos = env.step(env.action_space.sample())
    assert obs.shape == (3, obs_size) and env.observation_space.contains(obs)
    assert rewards.shape == (3,) and rewards.dtype == np.float64
    assert terminated.dtype == truncated.dtype == np.bool_
    for name in env.unwrapped.REWARD_TERMS:
        assert infos[f"reward_{name}"].shape == (3,)
    total = sum(infos[f"reward_{name}"] for name in env.unwrapped.REWARD_TERMS)
    np.testing.assert_array_equal(
        np.where(infos["_reward_ground_contact"], total, rewards), rewards
    )
    env.close()


def test_make_vec_defaults_to_the_native_form():
    env = gym.make_vec("Walker-v0", num_envs=2)
    assert isinstance(env.unwrapped, LocomotionVectorEnv)
    assert env.unwrapped.max_episode_steps == envs.MAX_EPISODE_STEPS
    env.close()


def test_one_step_simulation_per_physics_step_for_all_agents(monkeypatch):
    env = _make("Crawler-v0", 4)
    env.reset(seed=0)
    calls = []
    step = pybullet.stepSimulation
    monkeypatch.setattr(pybullet, "stepSimulation", lambda **kw: calls.append(1) or step(**kw))
    env.step(np.zeros(env.action_space.shape, dtype=np.float32))
    assert len(calls) == 5  # frame_skip, not frame_skip x num_envs
    env.close()


def test_observations_are_written_into_one_preallocated_array():
    env = _make("Crawler-v0", 3, copy=False)
    first, _ = env.reset(seed=0)
    second, *_ = env.step(np.zeros(env.action_space.shape))
    assert second is first and first.flags.c_contiguous and first.dtype == np.float32
    copying = _make("Crawler-v0", 3)
    a, _ = copying.reset(seed=0)
    b, *_ = copying.step(np.zeros(copying.action_space.shape))
    assert a is not b
    env.close()
    copying.close()


def test_platforms_are_apart_and_one_agent_sits_at_the_origin():
    env = _make("Crawler-v0", 9)
    offsets = np.array([agent.offset for agent in env.unwrapped.agents])
    np.testing.assert_array_equal(offsets, platform_offsets(env.unwrapped._scene, 9))
    distances = np.linalg.norm(offsets[:, None] - offsets[None], axis=-1)
    assert distances[~np.eye(9, dtype=bool)].min() > 101.0  # a walled 100 m platform each
    np.testing.assert_array_equal(offsets[4], 0.0)
    env.close()
    static = platform_offsets(_make("CrawlerStatic-v0", 1).unwrapped._scene, 4)
    assert np.all(static[:, 0] == 0.0) and np.all(np.diff(static[:, 1]) > 52.0)  # side by side


def test_an_ended_episode_resets_in_the_same_step():
    env = _make("Crawler-v0", 3)
    env.reset(seed=1)
    env.step(np.zeros(env.action_space.shape))
    _crash(env, 1)
    obs, rewards, terminated, truncated, infos = env.step(np.zeros(env.action_space.shape))
    assert terminated.tolist() == [False, True, False] and not truncated.any()
    assert rewards[1] == -1.0
    assert infos["_final_obs"].tolist() == [False, True, False]
    assert infos["final_obs"][0] is None and infos["final_obs"][1].shape == (142,)
    assert infos["_final_info"].tolist() == [False, True, False]
    final = infos["final_info"]
    assert final["reward_ground_contact"][1] == -1.0 and final["_reward_ground_contact"][1]
    # The last observation of the old episode is not the first of the new one.
    assert not np.array_equal(infos["final_obs"][1], obs[1])
    # At the top level agent 1 describes its new episode: at rest at its spawn point.
    agent = env.unwrapped.agents[1]
    np.testing.assert_allclose(infos["root_position"][1], agent.spawn - agent.offset, atol=0.05)
    assert infos["target_touches"][1] == 0 and infos["_root_position"].all()
    assert infos["_reward_ground_contact"].tolist() == [True, False, True]
    obs_next, *_ = env.step(np.zeros(env.action_space.shape))  # it runs on
    assert np.all(np.isfinite(obs_next))
    env.close()


def test_truncation_is_counted_per_agent():
    env = _make("Crawler-v0", 3, max_episode_steps=4)
    env.reset(seed=0)
    zeros = np.zeros(env.action_space.shape)
    for _ in range(2):
        assert not env.step(zeros)[3].any()
    env.reset(options={"reset_mask": np.array([True, False, False])})
    truncated = [env.step(zeros)[3].tolist() for _ in range(4)]
    assert truncated == [[False] * 3, [False, True, True], [False] * 3, [True, False, False]]
    env.close()


def test_truncation_at_the_real_limit_of_1000_steps():
    env = _make("Crawler-v0", 2)  # make_vec passes the id's max_episode_steps
    env.reset(seed=0)
    zeros = np.zeros(env.action_space.shape)  # a limp Crawler lies down without a fall
    for step in range(1, 1001):
        if step == 500:
            env.reset(options={"reset_mask": np.array([True, False])})
        _, _, terminated, truncated, infos = env.step(zeros)
        assert not terminated.any()
        if step < 1000:
            assert not truncated.any()
    assert truncated.tolist() == [False, True]
    assert infos["_final_obs"].tolist() == [False, True]
    env.close()


def test_resetting_or_crashing_one_agent_leaves_the_others_unchanged():
    first, second = _make("Walker-v0", 4), _make("Walker-v0", 4)
    first.reset(seed=2)
    second.reset(seed=2)
    actions = _actions(first, 30, seed=5)
    for action in actions[:5]:
        a, b = first.step(action), second.step(action)
        np.testing.assert_array_equal(a[0], b[0])
    reset_obs, reset_infos = second.reset(options={"reset_mask": np.array([0, 0, 1, 0], bool)})
    assert reset_infos["_root_position"].tolist() == [False, False, True, False]
    others = [0, 1, 3]
    np.testing.assert_array_equal(reset_obs[others], a[0][others])
    _crash(second, 1)
    kept = [0, 3]
    for action in actions[5:]:
        a, b = first.step(action), second.step(action)
        # Bit-identical: PyBullet solves each agent's island on its own.
        np.testing.assert_array_equal(a[0][kept], b[0][kept])
        np.testing.assert_array_equal(a[1][kept], b[1][kept])
        np.testing.assert_array_equal(a[2][kept], b[2][kept])
    first.close()
    second.close()


def _rollout(env: VectorEnv, seed, actions: np.ndarray) -> list:
    out = [env.reset(seed=seed)]
    out += [env.step(action) for action in actions]
    return out


def _assert_same(first: list, second: list) -> None:
    for a, b in zip(first, second, strict=True):
        for x, y in zip(a[:-1], b[:-1], strict=True):
            np.testing.assert_array_equal(x, y)
        assert a[-1].keys() == b[-1].keys()
        for key in a[-1]:
            if isinstance(a[-1][key], dict):
                continue
            if a[-1][key].dtype == object:
                for u, v in zip(a[-1][key], b[-1][key], strict=True):
                    np.testing.assert_array_equal(u, v)
            else:
                np.testing.assert_array_equal(a[-1][key], b[-1][key], err_msg=key)


def test_same_seed_and_actions_reproduce_the_batch():
    env, other = _make("Walker-v0", 3), _make("Walker-v0", 3)
    actions = _actions(env, 25, seed=1)
    first = _rollout(env, 11, actions)
    assert any(step[2].any() for step in first[1:])  # with autoresets on the way
    _rollout(other, 3, actions[:7])  # a used env must not remember its past
    _assert_same(first, _rollout(other, 11, actions))
    obs = first[0][0]
    assert not np.array_equal(obs[0], obs[1])  # every agent has its own seed
    different = other.reset(seed=12)[0]
    assert not np.array_equal(different, obs)
    env.close()
    other.close()


def test_agent_seeds_come_from_the_batch_seed():
    seeds = agent_seeds(7, 4)
    assert len(set(seeds)) == 4 and seeds[:2] == agent_seeds(7, 2)
    env = _make("Crawler-v0", 4)
    by_int, _ = env.reset(seed=7)
    by_list, _ = env.reset(seed=seeds)
    np.testing.assert_array_equal(by_int, by_list)
    with pytest.raises(ValueError, match="one per agent"):
        env.reset(seed=seeds[:3])
    with pytest.raises(ValueError, match="non-negative"):
        agent_seeds(-1, 2)
    env.close()


@pytest.mark.parametrize("env_id", ["Crawler-v0", "Walker-v0"])
def test_each_agent_behaves_as_the_single_env(env_id):
    """Agent k of a 9-agent world against a single env with agent k's seed and actions.

    How close and why, as measured: the agent whose platform is at the origin (k = 4 of a
    3 x 3 grid) is bit-identical to the single env, since PyBullet solves each agent's island
    on its own. The others differ by rounding only: PyBullet reports link frames
    (``getLinkStates``) in float32 at their absolute position, ~1e-5 m at the ~160 m of a
    platform offset, and the physics rounds at that offset too. Until an agent's first floor
    contact (the fall and the touchdown) observations agree to 1e-4 and rewards to 1e-6;
    from then on the rounding decides contacts (a Walker's foot landing can touch at one
    physics step in one world and the next in the other) and contacts amplify it chaotically,
    as they would between any two runs of a chaotic system.
    """
    seed, count, steps = 21, 9, 25
    vector = _make(env_id, count)
    singles = [gym.make(env_id) for _ in range(count)]
    actions = _actions(vector, steps, seed=3)
    batch_obs, _ = vector.reset(seed=seed)
    for k, single in enumerate(singles):
        obs, _ = single.reset(seed=agent_seeds(seed, count)[k])
        np.testing.assert_allclose(batch_obs[k], obs, atol=1e-4)
    np.testing.assert_array_equal(batch_obs[4], singles[4].unwrapped._observe())
    running, landed = [True] * count, [False] * count
    contacts = singles[0].unwrapped.observation_layout["ground_contacts"]
    for action in actions:
        batch_obs, rewards, terminated, _, infos = vector.step(action)
        for k, single in enumerate(singles):
            if not running[k]:
                continue
            obs, reward, ended, _, info = single.step(action[k])
            final = infos["final_obs"][k] if terminated[k] else batch_obs[k]
            if k == 4:
                np.testing.assert_array_equal(final, obs)
                assert rewards[k] == reward and terminated[k] == ended
                terms = infos["final_info"] if terminated[k] else infos
                for name in single.unwrapped.REWARD_TERMS:
                    assert terms[f"reward_{name}"][k] == info[f"reward_{name}"]
            elif not landed[k]:
                np.testing.assert_allclose(final, obs, atol=1e-4)
                assert rewards[k] == pytest.approx(reward, abs=1e-6)
                assert terminated[k] == ended
            running[k] = not ended
            landed[k] = landed[k] or bool(obs[contacts].any())
    vector.close()
    for single in singles:
        single.close()


def test_nan_in_one_agents_reward_names_the_agent_and_the_env_recovers():
    env = _make("Crawler-v0", 3)
    env.reset(seed=0)
    unwrapped = env.unwrapped
    terms = unwrapped._reward_terms

    def poisoned(records, steps):
        records["root_velocity"][:, 2] = np.nan  # agent 2: every agent runs on
        return terms(records, steps)

    unwrapped._reward_terms = poisoned
    with pytest.raises(RewardNaNError) as error:
        env.step(np.zeros(env.action_space.shape))
    message = str(error.value)
    assert message.startswith("agent 2: NaN in movingTowardsDot.")
    assert " body.velocity: [[nan, nan, nan]" in message
    del unwrapped._reward_terms
    obs, rewards, *_ = env.step(np.zeros(env.action_space.shape))
    assert np.all(np.isfinite(obs)) and np.all(np.isfinite(rewards))
    env.close()


def test_bad_actions_and_calls_raise_clear_errors():
    env = _make("Crawler-v0", 4)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros((4, 20)))
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(4, 20\), got shape \(4, 19\)"):
        env.step(np.zeros((4, 19)))
    with pytest.raises(ValueError, match=r"shape \(4, 20\), got shape \(20,\)"):
        env.step(np.zeros(20))
    bad = np.zeros((4, 20))
    bad[1, [3, 7]] = (np.nan, np.inf)
    bad[3, 0] = -np.inf
    with pytest.raises(ValueError, match=r"agent 1 at indices \[3, 7\].*agent 3 at indices \[0\]"):
        env.step(bad)
    with pytest.raises(ValueError, match="numeric"):
        env.step([["a"] * 20] * 4)
    with pytest.raises(TypeError, match="reset_mask"):
        env.reset(options={"reset_mask": [True] * 4})
    with pytest.raises(ValueError, match="at least one"):
        env.reset(options={"reset_mask": np.zeros(4, dtype=bool)})
    obs, *_ = env.step(np.full((4, 20), 5.0))  # finite values are clipped, as in one env
    assert np.all(np.isfinite(obs))
    env.close()
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.reset(seed=0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"num_envs": 0}, ValueError, "num_envs"),
        ({"max_episode_steps": 0}, ValueError, "max_episode_steps"),
        ({"render_mode": "human"}, ValueError, "human"),
        ({"bogus": 1}, TypeError, "bogus"),
        ({"num_workers": 0}, ValueError, "num_workers"),
    ],
)
def test_bad_constructor_arguments(kwargs, error, match):
    kwargs = {"num_envs": 2, **kwargs}
    with pytest.raises(error, match=match):
        gym.make_vec("Crawler-v0", vectorization_mode="vector_entry_point", **kwargs)


def test_rgb_array_renders_one_frame_per_agent():
    env = _make("Walker-v0", 2, render_mode="rgb_array", width=64, height=48)
    env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 2 and all(f.shape == (48, 64, 3) for f in frames)
    assert all(f.std() > 10.0 for f in frames)
    env.close()


def test_two_processes_behave_as_one_native_env():
    split = _make("Crawler-v0", 4, num_workers=2, max_episode_steps=6)
    native = _make("Crawler-v0", 4, max_episode_steps=6)
    assert isinstance(split, ProcessVectorEnv)
    assert split.observation_space == native.observation_space
    assert split.action_space == native.action_space
    assert split.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    a, info_a = split.reset(seed=4)
    b, info_b = native.reset(seed=4)
    np.testing.assert_allclose(a, b, atol=1e-4)  # the same agent seeds; other platform offsets
    assert info_a.keys() == info_b.keys()
    actions = _actions(native, 6, seed=2) * 0.2  # a Crawler that does not fall in 6 steps
    for action in actions:
        a, b = split.step(action), native.step(action)
        np.testing.assert_allclose(a[0], b[0], atol=1e-4)
        np.testing.assert_array_equal(a[2], b[2])
        np.testing.assert_array_equal(a[3], b[3])
        assert a[4].keys() == b[4].keys()
        assert a[4]["root_position"].shape == (4, 3)
    assert a[3].all() and a[4]["_final_obs"].all()  # everyone truncated at step 6
    for key, value in a[4]["final_info"].items():
        np.testing.assert_allclose(value, b[4]["final_info"][key], atol=1e-4, err_msg=key)
    mask = np.array([False, False, True, False])
    _, partial = split.reset(options={"reset_mask": mask})
    assert partial["_root_position"].tolist() == mask.tolist()
    bad = np.zeros((4, 20))
    bad[3, 5] = np.nan
    with pytest.raises(ValueError, match=r"agent 3 at indices \[5\]"):
        split.step(bad)
    split.close()
    split.close()
    native.close()


def test_workers_ignore_group_signals_and_an_unclosed_env_still_exits():
    """Workers outlive a SIGTERM to the group; the exit hook closes an env left open."""
    code = (
        "import os, signal, gymnasium as gym, envs\n"
        "env = gym.make_vec('Crawler-v0', num_envs=2, num_workers=2)\n"
        "env.reset(seed=0)\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "os.killpg(0, signal.SIGTERM)\n"
        "env.step(env.action_space.sample())\n"  # the workers are still there
        "print(*(process.pid for process in env._processes))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )
    assert done.returncode == 0, done.stderr
    pids = [int(word) for word in done.stdout.split()]
    assert len(pids) == 2
    for pid in pids:  # ended and reaped by the exit hook
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_closing_an_env_releases_its_exit_hook_and_keeps_the_others():
    """The exit hook of a closed env is unregistered (freed), the open envs' hooks stay."""
    made = [gym.make_vec("Crawler-v0", num_envs=2, num_workers=2) for _ in range(3)]
    hooks = [weakref.ref(env._exit_hook) for env in made]
    made[1].close()
    made[1].close()
    del made[1]
    gc.collect()
    assert hooks[1]() is None  # atexit no longer holds it
    assert hooks[0]() is not None and hooks[2]() is not None
    for env in made:  # the others still run, and close as usual
        env.reset(seed=0)
        env.step(env.action_space.sample())
        env.close()
    del made, env
    gc.collect()
    assert all(hook() is None for hook in hooks)


def test_stable_baselines3_ppo_trains_on_the_native_env():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    from physbody.train.native_vec_env import NativeVecEnv, make_native_vec_env

    venv = make_native_vec_env("Crawler-v0", num_envs=4, max_episode_steps=20)
    assert isinstance(venv, NativeVecEnv)
    venv.seed(0)
    obs = venv.reset()
    assert obs.shape == (4, 142)
    _, rewards, dones, infos = venv.step(np.zeros((4, 20), dtype=np.float32))
    assert (
        rewards.dtype == np.float32 and dones.shape == (4,) and "reward_facing_target" in infos[0]
    )
    model = PPO("MlpPolicy", VecMonitor(venv), n_steps=32, batch_size=64, n_epochs=1, seed=0)
    model.learn(256)
    assert model.num_timesteps >= 256
    assert len(model.ep_info_buffer) > 0  # episodes ended (truncated at 20) and were counted
    venv.close()


def test_sb3_infos_carry_the_terminal_observation():
    pytest.importorskip("stable_baselines3")
    from physbody.train.native_vec_env import NativeVecEnv

    venv = NativeVecEnv(_make("Crawler-v0", 2, max_episode_steps=2))
    venv.reset()
    zeros = np.zeros((2, 20), dtype=np.float32)
    venv.step(zeros)
    obs, _, dones, infos = venv.step(zeros)
    assert dones.all()
    for i in range(2):
        assert infos[i]["TimeLimit.truncated"] is True
        assert infos[i]["terminal_observation"].shape == (142,)
        assert not np.array_equal(infos[i]["terminal_observation"], obs[i])
        assert "reward_move_towards_target" in infos[i]
    venv.close()


def test_importing_envs_does_not_import_training_libraries():
    code = (
        "import sys, gymnasium as gym, envs, envs.vector, envs.crawler, envs.walker\n"
        "gym.make_vec('Crawler-v0', num_envs=2).close()\n"
        "heavy = {'torch', 'stable_baselines3'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
