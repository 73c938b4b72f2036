"""Gymnasium environments built on physbody: ML-Agents' Crawler and Walker on PyBullet.

Importing this package registers the ids in ``ENV_IDS`` with string entry points, so the
simulator is only loaded when an environment is made::

    import gymnasium as gym
    import envs

    env = gym.make("Crawler-v0")            # or gym.make("envs:Crawler-v0") without the import
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

__all__ = ["ENV_IDS", "MAX_EPISODE_STEPS"]

#: Decisions per episode: ML-Agents' MaxStep 5000 physics steps / DecisionPeriod 5.
MAX_EPISODE_STEPS = 1000

_SPECS = {
    "Crawler-v0": ("envs.crawler:CrawlerEnv", {"dynamic_target": True}),
    "CrawlerStatic-v0": ("envs.crawler:CrawlerEnv", {"dynamic_target": False}),
    "Walker-v0": ("envs.walker:WalkerEnv", {"dynamic_target": True}),
    "WalkerStatic-v0": ("envs.walker:WalkerEnv", {"dynamic_target": False}),
}

#: Every registered environment id.
ENV_IDS: tuple[str, ...] = tuple(_SPECS)

for _env_id, (_entry_point, _kwargs) in _SPECS.items():
    if _env_id not in registry:
        register(
            id=_env_id,
            entry_point=_entry_point,
            max_episode_steps=MAX_EPISODE_STEPS,
            kwargs=_kwargs,
        )
