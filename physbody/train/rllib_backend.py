"""``physbody train --backend rllib``: RLlib PPO on a local or remote Ray cluster.

The same config file, results layout, checkpoint records, ``keep_checkpoints`` pruning, ONNX
export and ``training_status.json`` as the Stable-Baselines3 backend (:mod:`.trainer`), so
``physbody play`` and ``physbody plot`` work on either::

    from physbody.train.rllib_backend import RayOptions, train_rllib
    from physbody.train.settings import TrainOptions

    result = train_rllib(
        TrainOptions(env_id="Crawler-v0", run_id="ray", max_steps=100_000),
        RayOptions(address=None, num_env_runners=2, num_envs_per_runner=4),
    )

How ML-Agents' PPO settings map onto RLlib's ``PPOConfig`` (new API stack):
``buffer_size`` -> ``train_batch_size_per_learner``, ``batch_size`` -> ``minibatch_size``,
``num_epoch`` -> ``num_epochs``, ``beta`` -> ``entropy_coeff``, ``epsilon`` -> ``clip_param``,
``lambd`` -> ``lambda_``, a linear ``learning_rate_schedule`` -> a piecewise ``lr`` schedule
ending at ``max_steps``; ``network_settings`` -> separate actor and critic MLPs with SiLU
activations; ``normalize`` -> RLlib's ``MeanStdFilter`` connector, clipped to +-5 as ML-Agents
does (baked into the ONNX export). Only ``trainer_type: ppo`` is supported.

Files of a run (beside those of :mod:`.layout`): each checkpoint is
``<behavior>/<behavior>-<step>.onnx`` plus the RLlib checkpoint folder
``<behavior>/<behavior>-<step>.rllib`` (what ``--resume`` restores). ``episodes.csv`` gets one
row per training iteration in which episodes ended: their mean return and length.

The environments are registered with Ray under their Gymnasium ids
(:func:`register_ray_envs`): each env runner, local or on another machine, imports ``envs``
and calls ``gym.make`` itself, so no PyBullet state is pickled. Every node of a cluster needs
physbody installed with the ``distributed`` extra.

Ray is imported only when a function here runs: ``import physbody.train.rllib_backend`` does
not import it.
"""

from __future__ import annotations

import csv
import io
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from physbody.train.checkpoints import CheckpointManager, CheckpointRecord
from physbody.train.files import atomic_copy, atomic_write_text
from physbody.train.layout import RunLayout
from physbody.train.settings import (
    BEHAVIOR_NAMES,
    PPOSettings,
    RunSettings,
    TrainerSettings,
    TrainOptions,
)

__all__ = [
    "CHECKPOINT_SUFFIX",
    "ENV_RUNNER_FAILURE_MODES",
    "RayOptions",
    "build_algorithm",
    "export_rllib_onnx",
    "make_env",
    "register_ray_envs",
    "train_rllib",
]

logger = logging.getLogger(__name__)

#: Suffix of an RLlib checkpoint folder in the behavior folder.
CHECKPOINT_SUFFIX = ".rllib"
#: ML-Agents clips normalised observations to +-5.
_OBS_CLIP = 5.0
#: RLlib's MeanStdFilter divides by ``std + SMALL_NUMBER``.
_SMALL_NUMBER = 1e-8
_EPISODE_COLUMNS = ("steps", "return", "length", "wall_time")
#: Consecutive iterations without a sampled step after which a run stops.
_MAX_EMPTY_ITERATIONS = 3
#: Values of :attr:`RayOptions.on_env_runner_failure`.
ENV_RUNNER_FAILURE_MODES = ("restart", "ignore", "stop")


def _optional_address(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not value):
        raise ValueError(f"address must be None, 'auto' or 'ray://host:port', got {value!r}")


@attrs.frozen(kw_only=True)
class RayOptions:
    """Where and how wide RLlib runs.

    Attributes:
        address: None starts a local Ray in this process (``num_cpus`` from the machine);
            ``"auto"`` joins the cluster started on this machine with ``ray start``;
            ``"ray://host:10001"`` joins a remote cluster through Ray Client; ``"host:6379"``
            joins as a driver on a cluster node. When Ray is already initialised (e.g. by a
            test), it is used as it is and left running.
        num_env_runners: remote env runner actors, each stepping its own environments;
            0 samples in the driver.
        num_envs_per_runner: environments per env runner (a Gymnasium vector env).
        num_cpus: CPUs of a local Ray; None lets Ray count the machine's. Ignored with an
            address.
        on_env_runner_failure: what a lost env runner (its process died, or its machine left
            the cluster) does to the run. ``"restart"`` (RLlib's default): training goes on
            with the healthy env runners while Ray re-creates the lost ones wherever resources
            allow (RLlib's ``restart_failed_env_runners=True``); ``"ignore"``: training goes
            on with the healthy ones and the lost ones stay lost
            (``ignore_env_runner_failures=True``); ``"stop"``: the run stops at once. In every
            mode a run whose iterations sample nothing three times in a row (no healthy env
            runner) stops; a stop writes a final checkpoint and the status file, and
            ``--resume`` continues from it.
        env_runner_probe_timeout_s: seconds each health probe of a lost env runner waits
            (RLlib's ``env_runner_health_probe_timeout_s``); a probe runs after every iteration
            while one is lost.
    """

    address: str | None = attrs.field(default=None, validator=_optional_address)
    num_env_runners: int = attrs.field(
        default=2, validator=[attrs.validators.instance_of(int), attrs.validators.ge(0)]
    )
    num_envs_per_runner: int = attrs.field(
        default=4, validator=[attrs.validators.instance_of(int), attrs.validators.ge(1)]
    )
    num_cpus: int | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(
            [attrs.validators.instance_of(int), attrs.validators.ge(1)]
        ),
    )
    on_env_runner_failure: str = attrs.field(
        default="restart", validator=attrs.validators.in_(ENV_RUNNER_FAILURE_MODES)
    )
    env_runner_probe_timeout_s: float = attrs.field(
        default=30.0, converter=float, validator=attrs.validators.gt(0.0)
    )


# ------------------------------------------------------------------------------- environments
def make_env(config: Any) -> Any:
    """Ray's env creator: one environment built from its id, inside the env runner.

    Args:
        config: RLlib's ``EnvContext`` (a dict) with ``env_id`` and optionally
            ``reward_strength`` (the reward scale of ``reward_signals.extrinsic.strength``).

    Returns:
        ``gym.make(env_id)``, with the reward scaled when the strength is not 1.
    """
    import gymnasium as gym

    import envs  # noqa: F401  (registers the ids)

    env = gym.make(config["env_id"])
    strength = float(config.get("reward_strength", 1.0))
    if strength != 1.0:
        env = gym.wrappers.TransformReward(env, lambda reward: strength * reward)
    return env


def register_ray_envs() -> None:
    """Registers every physbody id (``Crawler-v0``, ...) with Ray's env registry."""
    from ray.tune.registry import register_env

    for env_id in BEHAVIOR_NAMES:
        register_env(env_id, make_env)


# ------------------------------------------------------------------------------- algorithm
def _check_ppo(settings: TrainerSettings) -> PPOSettings:
    hp = settings.hyperparameters
    if settings.trainer_type != "ppo" or not isinstance(hp, PPOSettings):
        raise ValueError(
            f"the rllib backend trains trainer_type 'ppo' only, got {settings.trainer_type!r}; "
            "use --backend sb3 for SAC"
        )
    return hp


def build_algorithm(
    env_id: str, settings: TrainerSettings, ray_options: RayOptions, *, seed: int
) -> Any:
    """An RLlib PPO ``Algorithm`` for ``settings`` (Ray must be initialised).

    Args:
        env_id: a physbody environment id (registered with :func:`register_ray_envs`).
        settings: the behavior's settings (``trainer_type: ppo``).
        ray_options: env runners, environments per runner and what a lost env runner does.
        seed: seed of the networks and the environments.

    Returns:
        The built algorithm.

    Raises:
        ValueError: for a SAC config.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    hp = _check_ppo(settings)
    network = settings.network_settings
    if hp.learning_rate_schedule == "linear":
        lr: Any = [[0, hp.learning_rate], [settings.max_steps, 1e-10]]
    else:
        lr = hp.learning_rate
    connector = None
    if network.normalize:
        connector = _mean_std_filter
    config = (
        PPOConfig()
        .environment(
            env_id,
            env_config={
                "env_id": env_id,
                "reward_strength": float(settings.reward_signals.extrinsic.strength),
            },
        )
        .env_runners(
            num_env_runners=ray_options.num_env_runners,
            num_envs_per_env_runner=ray_options.num_envs_per_runner,
            env_to_module_connector=connector,
        )
        .training(
            lr=lr,
            gamma=settings.reward_signals.extrinsic.gamma,
            lambda_=hp.lambd,
            clip_param=hp.epsilon,
            entropy_coeff=hp.beta,
            num_epochs=hp.num_epoch,
            minibatch_size=hp.batch_size,
            train_batch_size_per_learner=hp.buffer_size,
        )
        .rl_module(
            model_config=DefaultModelConfig(
                fcnet_hiddens=[network.hidden_units] * network.num_layers,
                fcnet_activation="silu",
                vf_share_layers=False,
            )
        )
        .fault_tolerance(
            restart_failed_env_runners=ray_options.on_env_runner_failure == "restart",
            ignore_env_runner_failures=ray_options.on_env_runner_failure == "ignore",
            env_runner_health_probe_timeout_s=ray_options.env_runner_probe_timeout_s,
        )
        .debugging(seed=seed)
    )
    return config.build_algo()


def _mean_std_filter(*args: Any) -> Any:
    """The env-to-module connector of ``normalize: true`` (module level, so it pickles)."""
    from ray.rllib.connectors.env_to_module import MeanStdFilter

    return MeanStdFilter(clip_by_value=_OBS_CLIP)


# ------------------------------------------------------------------------------- ONNX export
def _find_filter_state(state: Any) -> dict[str, Any] | None:
    """The single-agent MeanStdFilter state inside an env-to-module connector state."""
    if isinstance(state, dict):
        if "running_stats" in state and "clip_by_value" in state:
            return state
        for value in state.values():
            found = _find_filter_state(value)
            if found is not None:
                return found
    return None


def _obs_normalization(algorithm: Any) -> Any:
    """The MeanStdFilter statistics of ``algorithm`` as an ``ObsNormalization``, or None."""
    from ray.rllib.utils.filter import RunningStat

    from physbody.train.export import ObsNormalization

    state = algorithm.get_state(components=["env_runner"], not_components=["env_runner/rl_module"])
    connector_state = state.get("env_runner", {}).get("env_to_module_connector")
    filter_state = _find_filter_state(connector_state)
    if filter_state is None:
        return None
    stats = filter_state["running_stats"]
    if len(stats) != 1:
        raise ValueError(f"expected one observation filter, got {len(stats)}")
    running = RunningStat.from_state(stats[0])
    mean = np.asarray(running.mean, dtype=np.float64)
    if not filter_state.get("de_mean_to_zero", True):
        mean = np.zeros_like(mean)
    std = np.asarray(running.std, dtype=np.float64)
    divisor = std + _SMALL_NUMBER if filter_state.get("de_std_to_one", True) else np.ones_like(std)
    clip = filter_state.get("clip_by_value") or np.inf
    # ObsNormalization divides by sqrt(var + epsilon): var = divisor**2, epsilon 0 gives
    # RLlib's (obs - mean) / (std + 1e-8).
    return ObsNormalization(mean=mean, var=divisor**2, epsilon=0.0, clip=float(clip))


def _actor_layers(module: Any, action_size: int) -> list[tuple[str, Any]]:
    """The deterministic actor of RLlib's default PPO torch module as exportable layers."""
    from torch import nn

    from physbody.train.export import _layers

    encoder = module.encoder
    actor = getattr(encoder, "actor_encoder", None) or getattr(encoder, "encoder", None)
    if actor is None:
        raise ValueError(f"cannot export {type(module).__name__}: no actor encoder found")
    leaves = [m for part in (actor, module.pi) for m in part.modules() if not list(m.children())]
    layers = _layers(leaves, f"{type(module).__name__} actor")
    kind, last = layers[-1]
    if kind != "linear" or last.out_features != 2 * action_size:
        raise ValueError(
            f"cannot export: the policy head must output {2 * action_size} Gaussian parameters "
            f"(means, log stds), got {getattr(last, 'out_features', kind)}"
        )
    # RLlib's deterministic action is the mean: the first half of the head's outputs.
    mean_head = nn.Linear(last.in_features, action_size)
    with __import__("torch").no_grad():
        mean_head.weight.copy_(last.weight[:action_size])
        mean_head.bias.copy_(last.bias[:action_size])
    layers[-1] = ("linear", mean_head)
    return layers


def export_rllib_onnx(
    algorithm: Any, path: str | Path, *, metadata: dict[str, Any] | None = None
) -> Path:
    """Writes the algorithm's deterministic policy to ``path`` as ONNX, atomically.

    The graph is the one :mod:`.export` writes for Stable-Baselines3 (input ``obs``, output
    ``actions``): the MeanStdFilter (when used), the actor MLP and the Gaussian means, clipped
    to the action bounds as RLlib's action normalisation does for a [-1, 1] Box.

    Args:
        algorithm: an RLlib PPO algorithm with the default torch module.
        path: the ``.onnx`` file.
        metadata: string properties stored in the model (``env_id``, ``behavior``, ...).

    Returns:
        ``path`` as a ``Path``.

    Raises:
        ValueError: for a module or action space this exporter does not support.
    """
    from physbody.train.export import mlp_graph, write_onnx

    module = algorithm.get_module()
    observation_space, action_space = module.observation_space, module.action_space
    # The module sees the filtered space; the env's raw one has the same shape.
    if not np.allclose(action_space.low, -1.0) or not np.allclose(action_space.high, 1.0):
        raise ValueError(
            f"cannot export: RLlib rescales actions unless the Box is [-1, 1], got "
            f"[{action_space.low.min()}, {action_space.high.max()}]"
        )
    action_size = int(np.prod(action_space.shape))
    proto = mlp_graph(
        _actor_layers(module, action_size),
        "clip",
        obs_size=int(np.prod(observation_space.shape)),
        action_space=action_space,
        obs_normalization=_obs_normalization(algorithm),
        metadata=metadata,
    )
    return write_onnx(proto, path)


# ------------------------------------------------------------------------------- the run
def _init_ray(ray_options: RayOptions) -> bool:
    """Starts or joins Ray; True when this call started it (and so must shut it down)."""
    if ray_options.address is not None:
        _enable_token_auth_if_available()  # read by Ray when it is imported
    import ray

    if ray.is_initialized():
        return False
    if ray_options.address is None:
        ray.init(address="local", num_cpus=ray_options.num_cpus, include_dashboard=False)
    else:
        ray.init(address=ray_options.address)
    return True


def _enable_token_auth_if_available() -> None:
    """Sets ``RAY_AUTH_MODE=token`` to join a cluster when a Ray token is at hand.

    ``ray start`` enables token authentication when a token exists (``RAY_AUTH_TOKEN``,
    ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``), but a driver joining with
    ``ray.init(address=...)`` does not, and is refused. An explicit ``RAY_AUTH_MODE`` wins.
    """
    if "RAY_AUTH_MODE" in os.environ:
        return
    token_path = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if (
        os.environ.get("RAY_AUTH_TOKEN")
        or (token_path and Path(token_path).is_file())
        or (Path.home() / ".ray" / "auth_token").is_file()
    ):
        logger.info("Joining Ray with token authentication (set RAY_AUTH_MODE to override).")
        os.environ["RAY_AUTH_MODE"] = "token"


def _append_episodes(path: Path, row: tuple[int, float, float, float]) -> None:
    new = not path.is_file() or path.stat().st_size == 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        if new:
            writer.writerow(_EPISODE_COLUMNS)
        writer.writerow(row)


def _truncate_episodes(path: Path, max_step: int) -> None:
    """Drops rows of ``episodes.csv`` past ``max_step`` (on a resume from that step)."""
    if not path.is_file():
        return
    with open(path, newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file))
    kept = rows[:1] + [row for row in rows[1:] if row and int(float(row[0])) <= max_step]
    if len(kept) != len(rows):
        buffer = io.StringIO()
        csv.writer(buffer).writerows(kept)
        atomic_write_text(path, buffer.getvalue())


class _RLlibCheckpointer:
    """Writes checkpoints (RLlib folder + ONNX) and records them, as the SB3 backend does."""

    def __init__(
        self,
        algorithm: Any,
        layout: RunLayout,
        manager: CheckpointManager,
        env_id: str,
    ) -> None:
        self._algorithm = algorithm
        self._layout = layout
        self._manager = manager
        self._env_id = env_id

    def save(self, step: int, reward: float | None) -> CheckpointRecord:
        latest = self._manager.latest_checkpoint()
        if latest is not None and latest.steps == step:
            return latest
        layout = self._layout
        folder = layout.checkpoint(step, CHECKPOINT_SUFFIX)
        self._algorithm.save_to_path(str(folder.resolve()))
        onnx_path = export_rllib_onnx(
            self._algorithm,
            layout.checkpoint(step, ".onnx"),
            metadata={
                "env_id": self._env_id,
                "behavior": layout.behavior,
                "steps": step,
                "trainer_type": "ppo",
                "backend": "rllib",
            },
        )
        record = CheckpointRecord(
            steps=step, file_path=str(onnx_path), reward=reward, creation_time=time.time()
        )
        removed = self._manager.add_checkpoint(record)
        logger.info(
            "Checkpoint at step %d: %s%s",
            step,
            onnx_path,
            f" (removed step {', '.join(str(r.steps) for r in removed)})" if removed else "",
        )
        return record

    def finish(self, step: int, reward: float | None) -> CheckpointRecord:
        record = self.save(step, reward)
        atomic_copy(record.file_path, self._layout.final_model)
        final = attrs.evolve(record, file_path=str(self._layout.final_model))
        self._manager.track_final_checkpoint(final)
        logger.info("Final model at step %d: %s", step, self._layout.final_model)
        return final


def _resume_step(layout: RunLayout, manager: CheckpointManager) -> int:
    for record in reversed(manager.checkpoints):
        if layout.checkpoint(record.steps, CHECKPOINT_SUFFIX).is_dir():
            return record.steps
    raise FileNotFoundError(
        f"cannot resume {layout.run_dir} with the rllib backend: no RLlib checkpoint "
        f"({layout.behavior}-<step>{CHECKPOINT_SUFFIX}) of a recorded step in "
        f"{layout.behavior_dir}"
    )


def _train_iteration(algorithm: Any, step: int) -> dict[str, Any]:
    """One ``algorithm.train()``; a Ray failure becomes a ``RuntimeError`` naming the step."""
    from ray.exceptions import RayError

    try:
        return algorithm.train()
    except RayError as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise RuntimeError(
            f"Ray failed during the iteration after step {step} ({type(error).__name__}: "
            f"{first_line}); a final checkpoint is saved: --resume continues the run"
        ) from error


class _RunnerHealth:
    """Logs when remote env runners are lost or come back (RLlib's fault tolerance)."""

    def __init__(self, total: int, mode: str) -> None:
        self._total = total
        self._mode = mode
        self._healthy = total

    def update(self, algorithm: Any, step: int) -> int:
        """The healthy remote env runners now; a change from the last call is logged."""
        if self._total == 0:
            return 0
        healthy = int(algorithm.env_runner_group.num_healthy_remote_env_runners())
        if healthy < self._healthy:
            logger.warning(
                "Step %d: %d of %d env runners are healthy; training goes on with them%s.",
                step,
                healthy,
                self._total,
                " while Ray restarts the lost ones where resources allow"
                if self._mode == "restart"
                else "",
            )
        elif healthy > self._healthy:
            logger.info(
                "Step %d: %d of %d env runners are healthy again.", step, healthy, self._total
            )
        self._healthy = healthy
        return healthy


def _iteration_metrics(result: dict[str, Any]) -> tuple[int, float | None, float | None, int]:
    """(env steps sampled, mean return, mean length, episodes) of one ``train()`` result."""
    runners = result.get("env_runners", {})
    steps = int(runners.get("num_env_steps_sampled", 0) or 0)
    episodes = int(runners.get("num_episodes", 0) or 0)
    mean_return = runners.get("episode_return_mean")
    mean_length = runners.get("episode_len_mean")
    if episodes == 0 or mean_return is None or not np.isfinite(mean_return):
        return steps, None, None, episodes
    return steps, float(mean_return), float(mean_length or 0.0), episodes


def train_rllib(options: TrainOptions, ray_options: RayOptions | None = None) -> Any:
    """Trains one behavior with RLlib PPO as ``physbody train --backend rllib`` does.

    The run folder, the status file, checkpoints every ``checkpoint_interval`` steps (pruned
    to ``keep_checkpoints``) and the final model follow the SB3 backend; training stops at the
    first iteration at or past ``max_steps``, or on SIGINT/SIGTERM (after a final checkpoint).

    Args:
        options: the run's options (``num_envs`` and ``progress_bar`` are not used: see
            ``ray_options``).
        ray_options: where Ray runs and how many env runners it uses; None uses the defaults.

    Returns:
        A :class:`physbody.train.trainer.TrainResult`.

    Raises:
        ConfigError: for a bad config file.
        ValueError: for a SAC config.
        FileExistsError: when the run folder exists without ``resume`` or ``force``.
        FileNotFoundError: on ``resume`` without a run folder or an RLlib checkpoint in it.
    """
    from physbody.train.trainer import resolve_settings

    ray_options = ray_options or RayOptions()
    env_id, behavior, settings = resolve_settings(options)
    _check_ppo(settings)
    if options.resume and not options.run_dir.is_dir():
        raise FileNotFoundError(f"cannot resume: run folder {options.run_dir} does not exist")
    if not options.resume and not options.force and options.run_dir.exists():
        raise FileExistsError(
            f"run folder {options.run_dir} already exists: pass --resume to continue it, --force "
            "to overwrite it, or choose another --run-id"
        )
    # Ray first: a cluster that cannot be joined leaves no half-made run folder behind.
    started_ray = _init_ray(ray_options)
    import ray

    try:
        return _train(options, ray_options, env_id, behavior, settings)
    finally:
        if started_ray:
            ray.shutdown()


def _train(
    options: TrainOptions,
    ray_options: RayOptions,
    env_id: str,
    behavior: str,
    settings: TrainerSettings,
) -> Any:
    """The body of :func:`train_rllib`, once Ray runs."""
    import yaml

    from physbody.train.stopping import next_save_step, stop_on_signals
    from physbody.train.trainer import TrainResult, _prepare_run_dir

    _prepare_run_dir(options)
    layout = RunLayout(results_dir=options.results_dir, run_id=options.run_id, behavior=behavior)
    layout.behavior_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(
        layout.config_path,
        yaml.safe_dump(RunSettings(behaviors={behavior: settings}).as_dict(), sort_keys=False),
    )
    keep = settings.keep_checkpoints
    if options.resume:
        manager = CheckpointManager.restore(
            layout.status_path, behavior, layout.behavior_dir, max_to_keep=keep
        )
        start = _resume_step(layout, manager)
        _truncate_episodes(layout.episodes_csv, start)
    else:
        manager = CheckpointManager(
            layout.status_path, behavior, layout.behavior_dir, max_to_keep=keep
        )
        manager.save()
        start = 0
    algorithm = None
    try:
        # Registered in this driver; Ray ships the creator to every env runner by reference.
        register_ray_envs()
        algorithm = build_algorithm(env_id, settings, ray_options, seed=options.seed)
        if options.resume:
            algorithm.restore_from_path(str(layout.checkpoint(start, CHECKPOINT_SUFFIX).resolve()))
        checkpointer = _RLlibCheckpointer(algorithm, layout, manager, env_id)
        logger.info(
            "Training %s (%s, ppo, rllib: %d env runners x %d envs, Ray at %s) from step %d to "
            "%d in %s",
            behavior,
            env_id,
            ray_options.num_env_runners,
            ray_options.num_envs_per_runner,
            ray_options.address or "a local instance",
            start,
            settings.max_steps,
            layout.run_dir,
        )
        stop = threading.Event()
        health = _RunnerHealth(ray_options.num_env_runners, ray_options.on_env_runner_failure)
        empty = 0
        step = start
        reward: float | None = None
        next_save = next_save_step(step, settings.checkpoint_interval)
        next_summary = next_save_step(step, settings.summary_freq)
        began = time.monotonic()
        try:
            with stop_on_signals(stop):
                while step < settings.max_steps and not stop.is_set():
                    sampled, mean_return, mean_length, episodes = _iteration_metrics(
                        _train_iteration(algorithm, step)
                    )
                    healthy = health.update(algorithm, step)
                    if sampled <= 0:
                        empty += 1
                        if empty >= _MAX_EMPTY_ITERATIONS:
                            raise RuntimeError(
                                f"{empty} RLlib iterations in a row sampled no environment step "
                                f"at step {step} ({healthy} of {ray_options.num_env_runners} env "
                                "runners healthy); a final checkpoint is saved: --resume "
                                "continues the run"
                            )
                        logger.warning(
                            "Step %d: an RLlib iteration sampled no environment step (%d of %d "
                            "env runners healthy; starting or restarting runners can take "
                            "RLlib's sample timeout); trying again (%d of %d).",
                            step,
                            healthy,
                            ray_options.num_env_runners,
                            empty,
                            _MAX_EMPTY_ITERATIONS - 1,
                        )
                        continue
                    empty = 0
                    step += sampled
                    if mean_return is not None:
                        reward = mean_return
                        _append_episodes(
                            layout.episodes_csv,
                            (step, mean_return, mean_length or 0.0, time.time()),
                        )
                    if step >= next_summary:
                        logger.info(
                            "%s. Step: %d. Time Elapsed: %.3f s. Mean Reward: %s (%d episodes)",
                            behavior,
                            step,
                            time.monotonic() - began,
                            "n/a" if reward is None else f"{reward:.3f}",
                            episodes,
                        )
                        next_summary = next_save_step(step, settings.summary_freq)
                    if step >= next_save and step < settings.max_steps:
                        checkpointer.save(step, reward)
                        next_save = next_save_step(step, settings.checkpoint_interval)
        finally:
            seconds = time.monotonic() - began
            final = checkpointer.finish(step, reward)
    finally:
        if algorithm is not None:
            algorithm.stop()
    return TrainResult(
        env_id=env_id,
        behavior=behavior,
        run_dir=layout.run_dir,
        final_model=Path(final.file_path),
        start_steps=start,
        steps=final.steps,
        seconds=seconds,
        interrupted=stop.is_set(),
    )
