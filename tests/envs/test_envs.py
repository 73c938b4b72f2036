"""The four environments: checkers, spaces, determinism, rewards, guards and bad input."""

from __future__ import annotations

import math
import pickle
import re
import warnings

import attrs
import gymnasium as gym
import numpy as np
import pybullet as p
import pytest
from gymnasium.utils.env_checker import check_env

import envs
from envs.rewards import RewardNaNError
from physbody import PhysicsSensorSettings

SIZES = {  # (observation, action) with the default sensor settings
    "Crawler-v0": (142, 20),
    "CrawlerStatic-v0": (142, 20),
    "Walker-v0": (248, 39),
    "WalkerStatic-v0": (248, 39),
}


@pytest.fixture(params=envs.ENV_IDS)
def env(request):
    environment = gym.make(request.param)
    yield environment
    environment.close()


def _actions(env: gym.Env, count: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, (count, *env.action_space.shape)).astype(np.float32)


def _rollout(env: gym.Env, seed: int | None, actions: np.ndarray):
    observations, rewards, infos = [], [], []
    obs, info = env.reset(seed=seed)
    observations.append(obs)
    infos.append(info)
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        observations.append(obs)
        rewards.append(reward)
        infos.append(info)
        if terminated or truncated:
            break
    return observations, rewards, infos


def _assert_same_infos(first: list[dict], second: list[dict]) -> None:
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        assert a.keys() == b.keys()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_ids_registered_with_string_entry_points():
    assert envs.ENV_IDS == ("Crawler-v0", "CrawlerStatic-v0", "Walker-v0", "WalkerStatic-v0")
    for env_id in envs.ENV_IDS:
        spec = gym.spec(env_id)
        assert isinstance(spec.entry_point, str)
        assert spec.max_episode_steps == envs.MAX_EPISODE_STEPS == 1000


def test_module_prefixed_id():
    env = gym.make("envs:Crawler-v0")
    assert env.spec.id == "Crawler-v0"
    env.close()


@pytest.mark.parametrize("env_id", envs.ENV_IDS)
def test_gymnasium_check_env_passes_without_warnings(env_id):
    env = gym.make(env_id).unwrapped
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=True)
    env.close()
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("env_id", envs.ENV_IDS)
def test_stable_baselines3_check_env_passes_without_warnings(env_id):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = gym.make(env_id).unwrapped
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_checker.check_env(env, warn=True)
    env.close()
    assert [str(w.message) for w in caught] == []


def test_spaces_and_layout(env):
    obs_size, action_size = SIZES[env.spec.id]
    assert env.observation_space.shape == (obs_size,)
    assert env.observation_space.dtype == np.float32
    assert env.action_space == gym.spaces.Box(-1.0, 1.0, (action_size,), np.float32)
    covered = np.zeros(obs_size, dtype=int)
    for where in env.unwrapped.observation_layout.values():
        covered[where] += 1
    assert np.all(covered == 1)
    obs, _ = env.reset(seed=0)
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)


def test_layout_follows_sensor_settings():
    settings = PhysicsSensorSettings(model_space_translations=True, model_space_rotations=True)
    env = gym.make("Crawler-v0", sensor_settings=settings)
    layout = env.unwrapped.observation_layout
    assert layout["sensor/model_space/Body"] == slice(0, 7)
    assert env.observation_space.shape == (9 * 7 + 25,)
    assert not any(name.startswith("sensor/local_space") for name in layout)
    env.close()


def test_metadata_is_per_instance(env):
    assert env.unwrapped.metadata["render_fps"] == 15  # 1 / (5 * 1/75 s)
    assert env.unwrapped.dt == pytest.approx(5 / 75)
    assert type(env.unwrapped).metadata["render_fps"] == 15
    slower = gym.make(env.spec.id, frame_skip=3)
    assert slower.unwrapped.metadata["render_fps"] == 25
    assert env.unwrapped.metadata["render_fps"] == 15
    slower.close()


def test_same_seed_and_actions_reproduce_everything(env):
    actions = _actions(env, 40, seed=1)
    other = gym.make(env.spec.id)
    first = _rollout(env, 123, actions)
    _rollout(other, 7, actions[:15])  # a used env must not remember its past
    second = _rollout(other, 123, actions)
    other.close()
    np.testing.assert_array_equal(np.array(first[0]), np.array(second[0]))
    assert first[1] == second[1]
    _assert_same_infos(first[2], second[2])


def test_reset_without_seed_continues_the_seeded_stream(env):
    other = gym.make(env.spec.id)
    env.reset(seed=5)
    other.reset(seed=5)
    first_obs, first_info = env.reset()
    second_obs, second_info = other.reset()
    other.close()
    np.testing.assert_array_equal(first_obs, second_obs)
    _assert_same_infos([first_info], [second_info])


def test_reward_is_exact_sum_of_terms(env):
    reward_keys = [f"reward_{name}" for name in env.unwrapped.REWARD_TERMS]
    _, info = env.reset(seed=0)
    assert set(info).isdisjoint(reward_keys)
    for action in _actions(env, 100, seed=2):
        _, reward, terminated, truncated, info = env.step(action)
        assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
        assert truncated is False
        total = 0.0
        for key in reward_keys:
            total += info[key]
        assert reward == total
        if terminated:
            env.reset()


def test_reset_and_step_share_non_reward_info_keys(env):
    _, reset_info = env.reset(seed=0)
    _, _, _, _, step_info = env.step(env.action_space.sample())
    assert set(step_info) - set(reset_info) == {
        f"reward_{name}" for name in env.unwrapped.REWARD_TERMS
    }


def test_forbidden_ground_contact_terminates_with_minus_one():
    env = gym.make("Crawler-v0")
    env.reset(seed=0)
    robot, client = env.unwrapped.robot, env.unwrapped.client
    # Lay the Body on the floor: its 0.5 m sphere touches at z = 0.5.
    p.resetBasePositionAndOrientation(robot, (0, 0, 0.45), (0, 0, 0, 1), physicsClientId=client)
    _, reward, terminated, _, info = env.step(np.zeros(20, dtype=np.float32))
    assert terminated and reward == -1.0
    assert info["reward_ground_contact"] == -1.0
    assert info["reward_move_towards_target"] == 0.0 and info["reward_facing_target"] == 0.0
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(20, dtype=np.float32))
    env.close()


def test_walker_feet_may_touch_the_floor():
    env = gym.make("Walker-v0")
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(np.zeros(39, dtype=np.float32))
    for _ in range(3):  # falls 0.25 m and lands on its feet
        _, _, terminated, _, info = env.step(np.zeros(39, dtype=np.float32))
    layout = env.unwrapped.observation_layout
    obs = env.unwrapped._observe()
    contacts = dict(zip(env.unwrapped.BODY.part_names, obs[layout["ground_contacts"]], strict=True))
    assert contacts["footL"] == 1.0 and contacts["footR"] == 1.0
    assert not terminated and info["reward_ground_contact"] == 0.0
    env.close()


def test_touching_the_dynamic_target_pays_one_and_respawns_it():
    env = gym.make("Crawler-v0")
    env.reset(seed=0)
    unwrapped = env.unwrapped
    targets, client = unwrapped.targets, unwrapped.client
    for _ in range(15):  # land first: a target dropped on a falling body never reaches it
        env.step(np.zeros(20, dtype=np.float32))
    body_position = p.getBasePositionAndOrientation(unwrapped.robot, physicsClientId=client)[0]
    drop = (body_position[0], body_position[1], body_position[2] + 1.2)
    p.resetBasePositionAndOrientation(
        int(targets.body_ids[0]), drop, (0, 0, 0, 1), physicsClientId=client
    )
    touched = 0.0
    for _ in range(5):
        _, _, _, _, info = env.step(np.zeros(20, dtype=np.float32))
        touched += info["reward_target_touch"]
        if touched:
            break
    assert touched == 1.0
    assert info["target_touches"] == 1
    assert np.linalg.norm(np.subtract(targets.position[0, :2], drop[:2])) > 0.1
    env.close()


def test_static_targets_are_far_ahead():
    crawler = gym.make("CrawlerStatic-v0")
    walker = gym.make("WalkerStatic-v0")
    assert crawler.reset(seed=0)[1]["distance_to_target"] == pytest.approx(1375.0)
    assert walker.reset(seed=0)[1]["distance_to_target"] == pytest.approx(1800.0)
    crawler.close()
    walker.close()


def test_nan_in_a_reward_term_raises_with_its_inputs():
    env = gym.make("Crawler-v0")
    env.reset(seed=0)
    unwrapped = env.unwrapped
    terms = unwrapped._reward_terms

    def poisoned(records, steps):
        records["root_velocity"][:] = np.nan
        return terms(records, steps)

    unwrapped._reward_terms = poisoned
    with pytest.raises(RewardNaNError) as error:
        env.step(np.zeros(20, dtype=np.float32))
    message = str(error.value)
    assert message.startswith("NaN in movingTowardsDot.")
    assert " orientationCube.transform.forward: [[" in message
    assert " body.velocity: [[nan, nan, nan]" in message
    assert " maximumWalkingSpeed: 999.0" in message
    assert isinstance(error.value, ValueError)
    del unwrapped._reward_terms  # the env steps normally afterwards
    env.step(np.zeros(20, dtype=np.float32))
    env.close()


def test_step_inside_step_raises_and_env_recovers():
    env = gym.make("Walker-v0")
    env.reset(seed=0)
    unwrapped = env.unwrapped
    terms = unwrapped._reward_terms
    action = np.zeros(39, dtype=np.float32)

    def reentrant(records, steps):
        unwrapped.step(action)
        return terms(records, steps)

    unwrapped._reward_terms = reentrant
    with pytest.raises(RuntimeError, match="inside env.step"):
        env.step(action)
    del unwrapped._reward_terms
    obs, reward, *_ = env.step(action)
    assert np.all(np.isfinite(obs)) and np.isfinite(reward)
    env.close()


def test_bad_actions_raise_clear_errors():
    env = gym.make("Crawler-v0").unwrapped
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(20, dtype=np.float32))
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(20,\), got shape \(19,\)"):
        env.step(np.zeros(19, dtype=np.float32))
    bad = np.zeros(20, dtype=np.float32)
    bad[[3, 7]] = (np.nan, np.inf)
    with pytest.raises(ValueError, match=r"indices \[3, 7\]"):
        env.step(bad)
    with pytest.raises(ValueError, match="numeric"):
        env.step(["a"] * 20)
    env.close()


def test_out_of_range_actions_are_clipped():
    first = gym.make("Crawler-v0")
    second = gym.make("Crawler-v0")
    actions = _actions(first, 10, seed=3)
    first.reset(seed=1)
    second.reset(seed=1)
    for action in actions:
        a = first.step(np.clip(action * 4.0, -1.0, 1.0))
        b = second.step(action * 4.0)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1] == b[1]
    first.close()
    second.close()


@pytest.mark.filterwarnings("ignore:.*render_mode.*:UserWarning")  # gym.make's own warning
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"bogus": 1}, TypeError, "bogus"),
        ({"render_mode": "ascii"}, ValueError, "ascii"),
        ({"frame_skip": 0}, ValueError, "frame_skip"),
        ({"sensor_settings": {"model_space_translations": True}}, TypeError, "sensor_settings"),
        ({"urdf": "/nonexistent/crawler.urdf"}, FileNotFoundError, "nonexistent"),
        ({"width": -5}, ValueError, "width"),
    ],
)
def test_bad_constructor_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        gym.make("Crawler-v0", **kwargs)


@pytest.mark.parametrize("name", ["drag", "joint_spring", "joint_damper", "joint_max_force"])
@pytest.mark.parametrize("value", [-0.05, math.nan, math.inf, "0.05", None, True])
def test_a_rate_that_is_not_finite_and_non_negative_is_refused_naming_it(name, value):
    message = f"{name} must be a finite number >= 0, got " + re.escape(repr(value))
    with pytest.raises(ValueError, match=message):
        gym.make("Crawler-v0", **{name: value})


def test_close_twice_and_use_after_close():
    env = gym.make("Walker-v0")
    env.reset(seed=0)
    env.close()
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.unwrapped.reset(seed=0)


def test_two_envs_do_not_share_a_world():
    a = gym.make("Crawler-v0")
    b = gym.make("Crawler-v0")
    assert a.unwrapped.client != b.unwrapped.client
    obs_a, _ = a.reset(seed=0)
    b.reset(seed=0)
    for action in _actions(b, 5):
        b.step(action)
    np.testing.assert_array_equal(a.unwrapped._observe(), obs_a)
    a.close()
    b.close()


def test_pickle_rebuilds_an_equivalent_env():
    settings = attrs.evolve(PhysicsSensorSettings.default(), local_space_linear_velocity=True)
    env = gym.make("Walker-v0", sensor_settings=settings, head_height_weight=0.01).unwrapped
    clone = pickle.loads(pickle.dumps(env))
    assert clone.client != env.client
    assert clone.observation_space == env.observation_space
    obs_a, _ = env.reset(seed=9)
    obs_b, _ = clone.reset(seed=9)
    np.testing.assert_array_equal(obs_a, obs_b)
    env.close()
    clone.close()


@pytest.mark.parametrize("env_id", ["Crawler-v0", "Walker-v0"])
def test_rgb_array_frame_is_not_blank(env_id):
    env = gym.make(env_id, render_mode="rgb_array", width=160, height=120)
    env.reset(seed=0)
    frame = env.render()
    env.close()
    assert frame.shape == (120, 160, 3) and frame.dtype == np.uint8
    # The agent's colours, the floor and the sky: many distinct colours, not one fill.
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 50
    assert frame.std() > 10.0


@pytest.mark.parametrize("env_id", envs.ENV_IDS)
def test_ten_thousand_random_steps_stay_finite(env_id):
    env = gym.make(env_id)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    low, high = env.action_space.low, env.action_space.high
    episodes = 0
    for _ in range(10_000):
        obs, reward, terminated, truncated, _ = env.step(rng.uniform(low, high).astype(np.float32))
        assert np.all(np.isfinite(obs)) and np.isfinite(reward)
        if terminated or truncated:
            env.reset()
            episodes += 1
    env.close()
    assert episodes >= 1
