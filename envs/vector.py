"""Native vector environments: N agents in one PyBullet world, and that world on several cores.

``gym.make_vec(env_id, num_envs=N)`` (or ``vectorization_mode="vector_entry_point"``) builds
a :class:`LocomotionVectorEnv` subclass (``CrawlerVectorEnv``, ``WalkerVectorEnv``) for every
id in ``envs.ENV_IDS``: N agents on separate platforms of one world, one ``stepSimulation`` per
physics step for all of them, observations written straight into one (N, obs_size) float32
array. Each agent runs the same per-agent code as the single env (``envs.agents``).

``gym.make_vec(env_id, num_envs=N, num_workers=2)`` splits the agents over two processes
(``envs.processes.ProcessVectorEnv``), each running a native vector env of about N / 2 agents, and
presents them as one ``VectorEnv`` with the same spaces, autoreset and infos: a way to use
both cores of a two-core machine with one pipe round trip per batch step.

Autoreset: **same step** (``AutoresetMode.SAME_STEP``, in ``metadata["autoreset_mode"]``).
When agent k's episode ends (``terminated[k] or truncated[k]``), ``step`` resets it at once
and returns its new episode's first observation; the last observation of the ended episode
is ``infos["final_obs"][k]`` and its step info ``infos["final_info"]`` (masks
``infos["_final_obs"]``, ``infos["_final_info"]``), as Gymnasium's SyncVectorEnv does in that
mode. No step is wasted on a reset, and Stable-Baselines3's convention (the reset observation
plus ``terminal_observation``) maps onto it directly.

Infos follow Gymnasium's vector layout: ``infos[key]`` is an array over agents and
``infos["_" + key]`` a boolean mask of the agents that have it. Every step has each agent's
``root_position`` (N, 3) and ``target_position`` (N, 3) (metres, in the agent's platform
frame: world minus its platform offset, as in a single env), ``distance_to_target`` (N,),
``target_touches`` (N,) and every reward term ``reward_<name>`` (N,); for an agent reset in
that step the first four describe its new episode and its reward terms are in
``final_info`` (mask False at top level), again as SyncVectorEnv lays them out.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.typing import NDArray

from envs.agents import LocomotionAgents
from envs.joint_drive import validate_actions

__all__ = [
    "LocomotionVectorEnv",
    "agent_seeds",
    "make_vector_env",
    "reset_mask",
    "seed_list",
]

#: Info keys that describe an agent's state (the same from ``reset`` and ``step``).
STATE_INFO_KEYS = ("root_position", "target_position", "distance_to_target", "target_touches")


def agent_seeds(seed: int, num_agents: int) -> list[int]:
    """Each agent's own seed, derived from one batch seed.

    Agent k's seed comes from ``np.random.SeedSequence(seed).spawn(...)[k]``: independent
    streams, and agent k's seed does not depend on ``num_agents``. Seeding a single env with
    ``agent_seeds(s, n)[k]`` reproduces agent k of a vector env reset with ``seed=s``.

    Args:
        seed: the batch seed, an int >= 0.
        num_agents: how many seeds, >= 0.

    Returns:
        ``num_agents`` ints in [0, 2**64).

    Raises:
        ValueError: if ``seed`` is not a non-negative int.
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    children = np.random.SeedSequence(int(seed)).spawn(num_agents)
    return [int(child.generate_state(1, dtype=np.uint64)[0]) for child in children]


def seed_list(seed: int | Sequence[int | None] | None, num_agents: int) -> list[int | None]:
    """Per-agent seeds from ``reset(seed=...)``: None, a batch seed, or one per agent."""
    if seed is None:
        return [None] * num_agents
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
        return list(agent_seeds(int(seed), num_agents))
    if isinstance(seed, Sequence) and not isinstance(seed, str):
        if len(seed) != num_agents:
            raise ValueError(
                f"a list of seeds must have one per agent ({num_agents}), got {len(seed)}"
            )
        return list(seed)
    raise TypeError(f"seed must be None, an int or a list of {num_agents} ints, got {seed!r}")


def reset_mask(options: dict[str, Any] | None, num_agents: int) -> NDArray[np.bool_] | None:
    """``options["reset_mask"]`` checked as SyncVectorEnv checks it, or None."""
    if not options or "reset_mask" not in options:
        return None
    mask = options["reset_mask"]
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"options['reset_mask'] must be a numpy array, got {type(mask)}")
    if mask.shape != (num_agents,):
        raise ValueError(f"options['reset_mask'] must have shape ({num_agents},), got {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"options['reset_mask'] must have dtype bool, got {mask.dtype}")
    if not mask.any():
        raise ValueError(f"options['reset_mask'] must reset at least one agent, got {mask}")
    return mask


class LocomotionVectorEnv(LocomotionAgents, VectorEnv):
    """N agents of one locomotion task in one PyBullet world, as a Gymnasium ``VectorEnv``.

    Subclasses add the task (``CrawlerVectorEnv``, ``WalkerVectorEnv``). Spaces:
    ``observation_space`` is a Box (num_envs, obs_size) float32 and ``action_space`` a Box
    (num_envs, action_size) float32 in [-1, 1]; ``single_*`` are the single env's. Each
    agent's episode ends on its own: ``terminated[k]`` on a forbidden ground contact,
    ``truncated[k]`` after ``max_episode_steps`` of its own decisions (as ``TimeLimit`` does
    for the single env, so both can be True). See the module docstring for autoreset and
    infos.

    Seeding: ``reset(seed=s)`` gives agent k the seed ``agent_seeds(s, num_envs)[k]``;
    ``reset(seed=[s0, s1, ...])`` gives them explicitly. All of agent k's randomness (start
    yaw, target respawns) comes from its own generator, so the same seed and the same
    actions reproduce the whole batch. ``reset(options={"reset_mask": mask})`` resets only
    the agents in ``mask``; the others are not touched.

    Per agent the env behaves as the single env: same code for action clipping,
    observation, reward terms and termination, and PyBullet solves each agent's island on
    its own, so the agent whose platform is at the origin (the middle of an odd grid) is
    bit-identical to a single env. The others differ by rounding at their platform offset:
    PyBullet reports link frames (``getLinkStates``) in float32 at their absolute position,
    about 1e-5 m at 160 m, and the physics rounds there too; contacts amplify that over many
    steps, as between any two runs of a chaotic system.

    Args:
        num_envs: number of agents, >= 1.
        max_episode_steps: decisions per episode before truncation, per agent; None never
            truncates.
        copy: return a copy of the observation buffer from ``reset`` and ``step`` (True), or
            the buffer itself, overwritten by the next call (False).
        **task_kwargs: the single env's arguments (``dynamic_target``, the reward weights,
            ``frame_skip``, ``sensor_settings``, ``urdf``, the joint drive, ``render_mode``,
            ``width``, ``height``), turned into the world's by the task's
            ``_configure_task``; ``render_mode`` is None or "rgb_array" (``render()``
            returns one frame per agent).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["rgb_array"],
        "render_fps": 15,
        "autoreset_mode": AutoresetMode.SAME_STEP,
    }

    def __init__(
        self,
        num_envs: int,
        *,
        max_episode_steps: int | None = 1000,
        copy: bool = True,
        **task_kwargs: Any,
    ) -> None:
        if max_episode_steps is not None and (
            isinstance(max_episode_steps, bool)
            or not isinstance(max_episode_steps, int)
            or max_episode_steps < 1
        ):
            raise ValueError(
                f"max_episode_steps must be a positive int or None, got {max_episode_steps!r}"
            )
        self._build_agents(num_agents=num_envs, **self._configure_task(**task_kwargs))
        self._offsets = np.array([agent.offset for agent in self._agents])
        self.num_envs = num_envs
        self.single_observation_space = self._agent_observation_space
        self.single_action_space = self._agent_action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._max_episode_steps = max_episode_steps
        self._copy = bool(copy)
        self._elapsed = np.zeros(num_envs, dtype=np.int64)
        self._rngs: list[np.random.Generator | None] = [None] * num_envs
        self._started = False
        #: Added to agent indices in error messages (a worker of ProcessVectorEnv sets it).
        self._agent_index_offset = 0

    @property
    def max_episode_steps(self) -> int | None:
        """Decisions per episode before an agent is truncated (None: never)."""
        return self._max_episode_steps

    # ------------------------------------------------------------------------ gymnasium
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Starts a new episode for every agent, or for those in ``options["reset_mask"]``.

        Args:
            seed: None (keep each agent's generator; unseeded agents get a random seed), an
                int batch seed (agent k gets ``agent_seeds(seed, num_envs)[k]``) or a list of
                one int-or-None per agent.
            options: optional ``{"reset_mask": (num_envs,) bool array}``; other keys are
                ignored.

        Returns:
            ``(observations (num_envs, obs_size) float32, infos)``; with a reset mask the
            infos hold the reset agents only (see the module docstring).
        """
        self._check_open()
        seeds = seed_list(seed, self.num_envs)
        mask = reset_mask(options, self.num_envs)
        if mask is None:
            mask = np.ones(self.num_envs, dtype=bool)
        elif not self._started:
            raise RuntimeError("the first reset() must reset every agent (no reset_mask)")
        if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
            super().reset(seed=int(seed))
        agents = np.flatnonzero(mask).tolist()
        for i in agents:
            if seeds[i] is not None or self._rngs[i] is None:
                self._rngs[i] = seeding.np_random(seeds[i])[0]
        self._reset_agents(agents)
        self._elapsed[agents] = 0
        self._started = True
        infos = self._state_infos(mask)
        return self._observations(), infos

    def step(
        self, actions: NDArray[np.float32]
    ) -> tuple[
        NDArray[np.float32], NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_], dict
    ]:
        """Holds each agent's action for ``frame_skip`` physics steps; autoresets ended agents.

        Finite actions outside [-1, 1] are clipped to it, as in the single env.

        Args:
            actions: (num_envs, action_size) actions.

        Returns:
            ``(observations (num_envs, obs_size) float32, rewards (num_envs,) float64,
            terminated (num_envs,) bool, truncated (num_envs,) bool, infos)``.

        Raises:
            ValueError: for actions of the wrong shape (naming both shapes) or with
                non-finite values (naming each agent and index).
            RuntimeError: before ``reset()``, after ``close()``, or from inside a step.
            RewardNaNError: when an agent's reward term comes out NaN (naming the agent).
                Agents whose episode ended in an interrupted step start a new one at the next.
        """
        if self._in_step:
            raise RuntimeError("env.step() was called from inside env.step(); that is not allowed")
        self._check_open()
        if not self._started:
            raise RuntimeError("call reset() before step()")
        clipped = validate_actions(actions, self.action_space.shape)
        stale = np.flatnonzero(self._needs_reset).tolist()
        if stale:  # an exception interrupted the step that ended these agents' episodes
            self._reset_agents(stale)
            self._elapsed[stale] = 0
        self._in_step = True
        try:
            rewards, terminated, terms = self._step_agents(clipped)
        finally:
            self._in_step = False
        self._elapsed += 1
        if self._max_episode_steps is None:
            truncated = np.zeros(self.num_envs, dtype=bool)
        else:
            truncated = self._elapsed >= self._max_episode_steps
        everyone = np.ones(self.num_envs, dtype=bool)
        infos = self._state_infos(everyone)
        for name in self.REWARD_TERMS:
            infos[f"reward_{name}"] = terms[name]
            infos[f"_reward_{name}"] = everyone.copy()
        done = terminated | truncated
        if done.any():
            self._autoreset(done, infos)
        return self._observations(), rewards, terminated, truncated, infos

    def _autoreset(self, done: NDArray[np.bool_], infos: dict[str, Any]) -> None:
        """Moves the ended agents' step results into ``final_*`` and starts their next episode."""
        ended = np.flatnonzero(done).tolist()
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i in ended:
            final_obs[i] = self._obs[i].copy()
        final_info: dict[str, Any] = {}
        for key, values in infos.items():
            if key.startswith("_"):
                final_info[key] = done.copy()
            else:
                kept = np.zeros_like(values)
                kept[done] = values[done]
                final_info[key] = kept
        self._reset_agents(ended)
        self._elapsed[ended] = 0
        fresh = self._state_infos(done)
        for key in STATE_INFO_KEYS:
            infos[key][done] = fresh[key][done]
        for name in self.REWARD_TERMS:
            infos[f"reward_{name}"][done] = 0.0
            infos[f"_reward_{name}"][done] = False
        infos["final_obs"], infos["_final_obs"] = final_obs, done.copy()
        infos["final_info"], infos["_final_info"] = final_info, done.copy()

    def _state_infos(self, mask: NDArray[np.bool_]) -> dict[str, Any]:
        """The state info keys of the agents in ``mask`` (zeros elsewhere) and their masks."""
        n = self.num_envs
        root = np.zeros((n, 3))
        target = np.zeros((n, 3))
        touches = np.zeros(n, dtype=np.int64)
        agents = np.flatnonzero(mask)
        offsets = self._offsets[agents]
        root[agents] = self._cubes.position[agents] - offsets
        target[agents] = self.targets.position[agents] - offsets
        touches[agents] = self.target_touches[agents]
        horizontal = (target - root)[:, :2]
        distance = np.sqrt(np.einsum("ij,ij->i", horizontal, horizontal))
        values = (root, target, distance, touches)
        infos: dict[str, Any] = {}
        for key, value in zip(STATE_INFO_KEYS, values, strict=True):
            infos[key] = value
            infos[f"_{key}"] = mask.copy()
        return infos

    def _observations(self) -> NDArray[np.float32]:
        return self._obs.copy() if self._copy else self._obs

    def _rng(self, agent: int) -> np.random.Generator:
        rng = self._rngs[agent]
        if rng is None:  # only before the first reset, which seeds every agent
            raise RuntimeError("call reset() before step()")
        return rng

    def _error_prefix(self, agent: int) -> str:
        return f"agent {agent + self._agent_index_offset}: "

    def render(self) -> tuple[NDArray[np.uint8], ...] | None:
        """One (H, W, 3) uint8 frame per agent, its camera following it (``rgb_array``)."""
        self._check_open()
        if self.render_mode != "rgb_array":
            return None
        return tuple(self._render_agent(i) for i in range(self.num_envs))

    def close_extras(self, **kwargs: Any) -> None:
        """Disconnects the world's PyBullet client; ``close()`` is safe to call twice."""
        self._disconnect()


def make_vector_env(
    vector_class: Callable[..., VectorEnv],
    num_envs: int,
    *,
    num_workers: int = 1,
    context: str | None = None,
    **kwargs: Any,
) -> VectorEnv:
    """A native vector env of ``num_envs`` agents, in one process or split over several.

    This is what the ids' ``vector_entry_point`` calls, so
    ``gym.make_vec(env_id, num_envs=N, num_workers=2)`` runs the batch on two cores.

    Args:
        vector_class: a :class:`LocomotionVectorEnv` subclass, called as
            ``vector_class(n, **kwargs)``.
        num_envs: total number of agents.
        num_workers: processes; 1 builds the env in this process, more builds a
            :class:`ProcessVectorEnv` with about ``num_envs / num_workers`` agents each.
        context: multiprocessing start method for the workers (None: the platform default).
        **kwargs: the env's arguments (``max_episode_steps``, ``dynamic_target``, ...).
    """
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
        raise ValueError(f"num_workers must be a positive int, got {num_workers!r}")
    if num_workers == 1:
        return vector_class(num_envs, **kwargs)
    from envs.processes import ProcessVectorEnv  # imports this module: a lazy import

    factory = functools.partial(vector_class, **kwargs)
    return ProcessVectorEnv(factory, num_envs, num_workers=num_workers, context=context)
