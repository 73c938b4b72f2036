"""Gymnasium environments built on physbody: ML-Agents' Crawler and Walker on PyBullet.

Importing this package registers the ids in ``ENV_IDS`` with string entry points, so the
simulator is only loaded when an environment is made::

    import gymnasium as gym
    import envs

    env = gym.make("Crawler-v0")            # or gym.make("envs:Crawler-v0") without the import
    batch = gym.make_vec("Crawler-v0", num_envs=16)  # 16 agents in one world (envs.vector)
    batch = gym.make_vec("Crawler-v0", num_envs=16, num_workers=2)  # the same on two cores
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

__all__ = ["ENV_IDS", "MAX_EPISODE_STEPS"]

#: Decisions per episode: ML-Agents' MaxStep 5000 physics steps / DecisionPeriod 5.
MAX_EPISODE_STEPS = 1000

_CRAWLER = ("envs.crawler:CrawlerEnv", "envs.crawler:make_crawler_vector_env")
_WALKER = ("envs.walker:WalkerEnv", "envs.walker:make_walker_vector_env")
_SPECS = {
    "Crawler-v0": (*_CRAWLER, {"dynamic_target": True}),
    "CrawlerStatic-v0": (*_CRAWLER, {"dynamic_target": False}),
    "Walker-v0": (*_WALKER, {"dynamic_target": True}),
    "WalkerStatic-v0": (*_WALKER, {"dynamic_target": False}),
}

#: Every registered environment id.
ENV_IDS: tuple[str, ...] = tuple(_SPECS)

for _env_id, (_entry_point, _vector_entry_point, _kwargs) in _SPECS.items():
    if _env_id not in registry:
        register(
            id=_env_id,
            entry_point=_entry_point,
            vector_entry_point=_vector_entry_point,
            max_episode_steps=MAX_EPISODE_STEPS,
            kwargs=_kwargs,
        )
