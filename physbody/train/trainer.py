"""``physbody train``: Stable-Baselines3 PPO or SAC on a physbody environment, ML-Agents style.

One call of :func:`train` is one ``mlagents-learn`` run for one behavior::

    from physbody.train.settings import TrainOptions
    from physbody.train.trainer import train

    result = train(TrainOptions(env_id="Crawler-v0", run_id="demo", max_steps=20_000))
    print(result.final_model)     # results/demo/CrawlerDynamic.onnx

How ML-Agents' settings map onto SB3 is documented on the classes of ``settings.py``. The
environments (``num_envs`` copies, stepped in this process with ``DummyVecEnv``) are wrapped in
``VecMonitor`` (episode returns) and, when ``network_settings.normalize`` is on, in
``VecNormalize`` (observations only, clipped to +-5 as ML-Agents does). Checkpoints, the status
file and the final model follow ``checkpoints.py`` and ``layout.py``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from physbody.train.checkpoints import CheckpointManager, CheckpointRecord
from physbody.train.files import atomic_copy, atomic_output, atomic_write_text
from physbody.train.layout import RunLayout
from physbody.train.settings import (
    BEHAVIOR_NAMES,
    DEMO_MAX_STEPS,
    PPOSettings,
    RunSettings,
    SACSettings,
    TrainerSettings,
    TrainOptions,
    behavior_name,
    default_trainer_settings,
    load_run_settings,
)

__all__ = [
    "DecaySchedule",
    "TrainResult",
    "build_model",
    "make_vec_env",
    "resolve_settings",
    "train",
]

logger = logging.getLogger(__name__)

#: ML-Agents clips normalised observations to +-5.
_OBS_CLIP = 5.0
#: Where ML-Agents' linear schedules end: epsilon at 0.1, beta at 1e-5.
EPSILON_FINAL = 0.1
BETA_FINAL = 1e-5


@attrs.frozen(kw_only=True)
class DecaySchedule:
    """An ML-Agents schedule as an SB3 schedule of ``progress_remaining`` (1 at step 0 -> 0).

    ML-Agents' ``learning_rate_schedule`` drives three values of its PPO: the learning rate
    (down to 1e-10), the clip range epsilon (down to 0.1) and the entropy bonus beta (down to
    1e-5). ``"linear"`` is TensorFlow's polynomial decay of power 1 over ``max_steps``:
    ``(initial - final) * progress_remaining + final``, then ``final``; ``"constant"`` keeps
    ``initial``.

    Attributes:
        initial: the value at step 0.
        kind: ``"linear"`` or ``"constant"``.
        final: the value at ``max_steps`` and after.
    """

    initial: float
    kind: str = attrs.field(
        default="linear", validator=attrs.validators.in_(("linear", "constant"))
    )
    final: float = 1e-10

    def __call__(self, progress_remaining: float) -> float:
        """The value when ``progress_remaining`` of training is left."""
        if self.kind == "constant":
            return self.initial
        progress = min(max(progress_remaining, 0.0), 1.0)
        return (self.initial - self.final) * progress + self.final


@attrs.frozen(kw_only=True)
class TrainResult:
    """What a call of :func:`train` did.

    Attributes:
        env_id: the environment trained on.
        behavior: its ML-Agents behavior name.
        run_dir: ``<results>/<run-id>``.
        final_model: ``<results>/<run-id>/<behavior>.onnx``.
        start_steps: step count at the start (0, or the resumed checkpoint's).
        steps: step count at the end.
        seconds: wall-clock seconds spent in ``learn()``.
        interrupted: whether SIGINT or SIGTERM ended training early.
    """

    env_id: str
    behavior: str
    run_dir: Path
    final_model: Path
    start_steps: int
    steps: int
    seconds: float
    interrupted: bool

    @property
    def steps_per_second(self) -> float:
        """Training throughput: environment steps per second of ``learn()``."""
        return (self.steps - self.start_steps) / self.seconds if self.seconds > 0 else 0.0


# ------------------------------------------------------------------------------- settings
def resolve_settings(options: TrainOptions) -> tuple[str, str, TrainerSettings]:
    """The environment, behavior name and settings a run uses.

    The config file is ``options.config_path``, or on ``resume`` the run's own
    ``configuration.yaml`` when it exists. A behavior of the file that matches no environment, or
    an environment whose behavior the file lacks, is logged as a warning listing the names
    found; the latter trains with the built-in settings, as without a config. Without a config
    the built-in settings are ML-Agents' PPO config with ``max_steps`` from ``DEMO_MAX_STEPS``.
    ``options.max_steps`` overrides ``max_steps`` in every case.

    Returns:
        ``(env_id, behavior, settings)``.

    Raises:
        ConfigError: for a bad config file.
    """
    config_path = options.config_path
    resumed_config = options.run_dir / "configuration.yaml"
    if config_path is None and options.resume and resumed_config.is_file():
        config_path = resumed_config
    run_settings: RunSettings | None = None
    if config_path is not None:
        run_settings = load_run_settings(config_path)
    known = tuple(BEHAVIOR_NAMES.values())
    env_id = options.env_id
    if env_id is None:
        named = [name for name in (run_settings.behaviors if run_settings else ()) if name in known]
        by_behavior = {b: e for e, b in BEHAVIOR_NAMES.items()}
        env_id = by_behavior[named[0]] if len(named) == 1 else "Crawler-v0"
    behavior = behavior_name(env_id)
    settings: TrainerSettings | None = None
    if run_settings is not None:
        found = ", ".join(run_settings.behaviors)
        unmatched = [name for name in run_settings.behaviors if name not in known]
        if unmatched:
            logger.warning(
                "Behavior(s) %s in %s match no environment (found: %s; known: %s).",
                ", ".join(unmatched),
                config_path,
                found,
                ", ".join(known),
            )
        settings = run_settings.behaviors.get(behavior)
        if settings is None:
            logger.warning(
                "Behavior %s of %s not found in %s (found: %s); training with the built-in "
                "settings.",
                behavior,
                env_id,
                config_path,
                found,
            )
    if settings is None:
        settings = attrs.evolve(
            default_trainer_settings(behavior), max_steps=DEMO_MAX_STEPS[behavior]
        )
    if options.max_steps is not None:
        settings = attrs.evolve(settings, max_steps=options.max_steps)
    return env_id, behavior, settings


# ------------------------------------------------------------------------------- building
def make_vec_env(
    env_id: str, settings: TrainerSettings, num_envs: int, num_workers: int = 1
) -> Any:
    """``num_envs`` agents of ``env_id`` in the native vector env, wrapped in ``VecMonitor``.

    The agents are split over ``num_workers`` processes, each stepping one PyBullet world
    with one ``stepSimulation`` per physics step for its agents (see ``envs.vector``). PPO's
    Gaussian actions reach them as ML-Agents sends them: clipped to +-3 and divided by 3
    (``MLAgentsGaussianActions``). The extrinsic reward's ``strength`` scales the rewards.
    Observation normalisation is added by the caller (fresh or loaded ``VecNormalize``).
    """
    from stable_baselines3.common.vec_env import VecMonitor

    from physbody.train.native_vec_env import (
        MLAgentsGaussianActions,
        ScaledReward,
        make_native_vec_env,
    )

    venv = make_native_vec_env(env_id, num_envs, num_workers=num_workers)
    if settings.trainer_type == "ppo":  # SAC squashes with tanh, as ML-Agents' SAC does
        venv = MLAgentsGaussianActions(venv)
    strength = float(settings.reward_signals.extrinsic.strength)
    if strength != 1.0:
        venv = ScaledReward(venv, strength)
    return VecMonitor(venv)


def _normalize(venv: Any, settings: TrainerSettings) -> Any:
    from stable_baselines3.common.vec_env import VecNormalize

    return VecNormalize(
        venv,
        norm_obs=True,
        norm_reward=False,
        clip_obs=_OBS_CLIP,
        gamma=settings.reward_signals.extrinsic.gamma,
    )


def build_model(settings: TrainerSettings, venv: Any, *, seed: int) -> Any:
    """A fresh SB3 PPO or SAC model for ``settings`` on ``venv``.

    Args:
        settings: the behavior's settings.
        venv: the (normalised) vector environment.
        seed: seed of torch, numpy, Python's ``random`` and the environments (SB3 sets all).

    Returns:
        :class:`~physbody.train.mlagents_ppo.MLAgentsPPO` (SB3's PPO with ML-Agents' update)
        or ``stable_baselines3.SAC``.
    """
    from stable_baselines3 import SAC
    from torch import nn

    from physbody.train.mlagents_ppo import MLAgentsPPO

    network = settings.network_settings
    hidden = [network.hidden_units] * network.num_layers
    gamma = settings.reward_signals.extrinsic.gamma
    hp = settings.hyperparameters
    schedule = DecaySchedule(initial=hp.learning_rate, kind=hp.learning_rate_schedule)
    num_envs = venv.num_envs
    if isinstance(hp, PPOSettings):
        return MLAgentsPPO(
            "MlpPolicy",
            venv,
            learning_rate=schedule,
            n_steps=max(2, hp.buffer_size // num_envs),
            batch_size=hp.batch_size,
            n_epochs=hp.num_epoch,
            gamma=gamma,
            gae_lambda=hp.lambd,
            clip_range=DecaySchedule(
                initial=hp.epsilon, kind=hp.learning_rate_schedule, final=EPSILON_FINAL
            ),
            ent_coef=hp.beta,  # per action dimension; decayed by EntropySchedule (train())
            policy_kwargs={"net_arch": {"pi": hidden, "vf": hidden}, "activation_fn": nn.SiLU},
            seed=seed,
            device="cpu",
            verbose=0,
        )
    return SAC(  # TrainerSettings guarantees SACSettings here
        "MlpPolicy",
        venv,
        learning_rate=schedule,
        buffer_size=hp.buffer_size,
        learning_starts=hp.buffer_init_steps,
        batch_size=hp.batch_size,
        tau=hp.tau,
        gamma=gamma,
        train_freq=max(1, round(hp.steps_per_update / num_envs)),
        gradient_steps=max(1, round(num_envs / hp.steps_per_update)),
        ent_coef=f"auto_{hp.init_entcoef}",
        policy_kwargs={"net_arch": hidden, "activation_fn": nn.SiLU},
        seed=seed,
        device="cpu",
        verbose=0,
    )


def _configure_logger(model: Any, folder: Path) -> None:
    """TensorBoard logs in ``folder`` (a warning, and no logs, without tensorboard)."""
    from stable_baselines3.common.logger import configure

    formats = ["tensorboard"]
    if importlib.util.find_spec("tensorboard") is None:
        logger.warning("tensorboard is not installed: no TensorBoard logs for this run.")
        formats = []
    model.set_logger(configure(str(folder), formats))


def _action_scale(settings: TrainerSettings) -> float:
    """What the exported policy multiplies the model's actions by to give the env's."""
    from physbody.train.native_vec_env import MLAgentsGaussianActions

    return 1.0 / MLAgentsGaussianActions.SPREAD if settings.trainer_type == "ppo" else 1.0


# ------------------------------------------------------------------------------- checkpoints
class _Checkpointer:
    """Writes checkpoints (SB3 zip, VecNormalize stats, ONNX) and records them."""

    def __init__(
        self,
        model: Any,
        layout: RunLayout,
        manager: CheckpointManager,
        env_id: str,
        settings: TrainerSettings,
        reward: Callable[[], float | None],
    ) -> None:
        self._model = model
        self._layout = layout
        self._manager = manager
        self._env_id = env_id
        self._settings = settings
        self._reward = reward

    def save(self, step: int) -> CheckpointRecord:
        from physbody.train.export import ObsNormalization, export_onnx

        latest = self._manager.latest_checkpoint()
        if latest is not None and latest.steps == step:
            return latest
        layout, model = self._layout, self._model
        with (
            atomic_output(layout.checkpoint(step, ".zip")) as temporary,
            open(temporary, "wb") as file,
        ):
            model.save(file)
        normalization = None
        vec_normalize = model.get_vec_normalize_env()
        if vec_normalize is not None:
            with atomic_output(layout.checkpoint(step, ".pkl")) as temporary:
                vec_normalize.save(str(temporary))
            normalization = ObsNormalization.from_vec_normalize(vec_normalize)
        hp = self._settings.hyperparameters
        if isinstance(hp, SACSettings) and hp.save_replay_buffer:
            with (
                atomic_output(layout.checkpoint(step, ".replay.pkl")) as temporary,
                open(temporary, "wb") as file,
            ):
                model.save_replay_buffer(file)
        onnx_path = export_onnx(
            model,
            layout.checkpoint(step, ".onnx"),
            obs_normalization=normalization,
            action_scale=_action_scale(self._settings),
            metadata={
                "env_id": self._env_id,
                "behavior": layout.behavior,
                "steps": step,
                "trainer_type": self._settings.trainer_type,
            },
        )
        record = CheckpointRecord(
            steps=step,
            file_path=str(onnx_path),
            reward=self._reward(),
            creation_time=time.time(),
        )
        removed = self._manager.add_checkpoint(record)
        logger.info(
            "Checkpoint at step %d: %s%s",
            step,
            onnx_path,
            f" (removed step {', '.join(str(r.steps) for r in removed)})" if removed else "",
        )
        return record

    def finish(self, step: int) -> CheckpointRecord:
        record = self.save(step)
        atomic_copy(record.file_path, self._layout.final_model)
        final = attrs.evolve(record, file_path=str(self._layout.final_model))
        self._manager.track_final_checkpoint(final)
        logger.info("Final model at step %d: %s", step, self._layout.final_model)
        return final


# ------------------------------------------------------------------------------- the run
def _prepare_run_dir(options: TrainOptions) -> None:
    run_dir = options.run_dir
    if options.resume:
        if not run_dir.is_dir():
            raise FileNotFoundError(f"cannot resume: run folder {run_dir} does not exist")
        return
    if run_dir.exists():
        if not options.force:
            raise FileExistsError(
                f"run folder {run_dir} already exists: pass --resume to continue it, --force to "
                "overwrite it, or choose another --run-id"
            )
        is_run = (run_dir / "run_logs").is_dir() or (run_dir / "configuration.yaml").is_file()
        if run_dir.is_dir() and (is_run or not any(run_dir.iterdir())):
            shutil.rmtree(run_dir)
        else:
            raise FileExistsError(
                f"--force refuses to delete {run_dir}: it does not look like a physbody run "
                "folder (no run_logs/ or configuration.yaml)"
            )
    run_dir.mkdir(parents=True)


def _resume_step(layout: RunLayout, manager: CheckpointManager) -> int:
    latest = manager.latest_step()
    if latest is not None and layout.checkpoint(latest, ".zip").is_file():
        return latest
    on_disk = layout.saved_steps()
    if not on_disk:
        raise FileNotFoundError(
            f"cannot resume {layout.run_dir}: no checkpoint ({layout.behavior}-<step>.zip) in "
            f"{layout.behavior_dir}"
        )
    if latest is not None:
        logger.warning(
            "Checkpoint of step %d recorded in %s is missing; resuming from step %d on disk.",
            latest,
            layout.status_path,
            on_disk[-1],
        )
    return on_disk[-1]


def _load_model(
    layout: RunLayout, step: int, settings: TrainerSettings, venv: Any, seed: int
) -> Any:
    from stable_baselines3 import SAC
    from stable_baselines3.common.vec_env import VecNormalize

    from physbody.train.mlagents_ppo import MLAgentsPPO

    if settings.network_settings.normalize:
        stats = layout.checkpoint(step, ".pkl")
        if stats.is_file():
            venv = VecNormalize.load(str(stats), venv)
            venv.training = True
        else:
            logger.warning("No observation statistics at %s: starting them afresh.", stats)
            venv = _normalize(venv, settings)
    algorithm = SAC if settings.trainer_type == "sac" else MLAgentsPPO
    model = algorithm.load(layout.checkpoint(step, ".zip"), env=venv, device="cpu")
    replay = layout.checkpoint(step, ".replay.pkl")
    if settings.trainer_type == "sac" and replay.is_file():
        model.load_replay_buffer(replay)
    model.set_random_seed(seed + step)
    return model


def _progress_callbacks(enabled: bool, total_steps: int) -> tuple[list[Any], bool]:
    """(extra callbacks, SB3 progress_bar flag): a tqdm bar from the run's start step.

    SB3's own bar is not used: it counts from 0 on a resumed run and needs rich as well.
    """
    from physbody.train.callbacks import TqdmProgressBar

    if not enabled:
        return [], False
    return [TqdmProgressBar(total_steps)], False


def train(options: TrainOptions) -> TrainResult:
    """Trains one behavior as ``physbody train`` does; see the module docstring.

    A new run needs a free run folder (or ``force``); ``resume`` continues from the newest
    checkpoint with its step count and the recorded checkpoints. Every
    ``checkpoint_interval`` steps a checkpoint is written and recorded; at the end, on
    SIGINT/SIGTERM, or when training raises, one more is taken and copied to
    ``<results>/<run-id>/<behavior>.onnx`` as the final model.

    Args:
        options: the run's options.

    Returns:
        What was done, with the training throughput.

    Raises:
        ConfigError: for a bad config file.
        FileExistsError: when the run folder exists without ``resume`` or ``force``.
        FileNotFoundError: on ``resume`` without a run folder or a checkpoint in it.
        TrainingStatusError: on ``resume`` with an incompatible status file.
    """
    import yaml

    from physbody.train.callbacks import (
        EntropySchedule,
        EpisodeTracker,
        PeriodicCheckpoint,
        StopOnRequest,
        TorchThreadsPerPhase,
        stop_on_signals,
        truncate_episode_log,
    )

    env_id, behavior, settings = resolve_settings(options)
    _prepare_run_dir(options)
    layout = RunLayout(results_dir=options.results_dir, run_id=options.run_id, behavior=behavior)
    layout.behavior_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(
        layout.config_path,
        yaml.safe_dump(RunSettings(behaviors={behavior: settings}).as_dict(), sort_keys=False),
    )
    keep = settings.keep_checkpoints
    venv = make_vec_env(env_id, settings, options.num_envs, options.worker_count)
    try:
        if options.resume:
            manager = CheckpointManager.restore(
                layout.status_path, behavior, layout.behavior_dir, max_to_keep=keep
            )
            start = _resume_step(layout, manager)
            model = _load_model(layout, start, settings, venv, options.seed)
            truncate_episode_log(layout.episodes_csv, start)
        else:
            manager = CheckpointManager(
                layout.status_path, behavior, layout.behavior_dir, max_to_keep=keep
            )
            manager.save()
            if settings.network_settings.normalize:
                venv = _normalize(venv, settings)
            model = build_model(settings, venv, seed=options.seed)
            start = 0
        venv = model.get_env()
        _configure_logger(model, layout.behavior_dir)
        tracker = EpisodeTracker(layout.episodes_csv, behavior, settings.summary_freq)
        checkpointer = _Checkpointer(
            model, layout, manager, env_id, settings, tracker.mean_return_since_update
        )
        stop = threading.Event()
        remaining = settings.max_steps - start
        extra, sb3_bar = _progress_callbacks(options.progress_bar, settings.max_steps)
        callbacks = [
            tracker,
            PeriodicCheckpoint(settings.checkpoint_interval, checkpointer.save),
            StopOnRequest(stop),
            TorchThreadsPerPhase(os.cpu_count() or 1),
            *extra,
        ]
        hp = settings.hyperparameters
        if isinstance(hp, PPOSettings):
            beta = DecaySchedule(initial=hp.beta, kind=hp.learning_rate_schedule, final=BETA_FINAL)
            callbacks.append(EntropySchedule(beta, settings.max_steps))
        logger.info(
            "Training %s (%s, %s) from step %d to %d in %s",
            behavior,
            env_id,
            settings.trainer_type,
            start,
            settings.max_steps,
            layout.run_dir,
        )
        began = time.monotonic()
        try:
            if remaining > 0:
                with stop_on_signals(stop):
                    model.learn(
                        total_timesteps=remaining,
                        callback=callbacks,
                        reset_num_timesteps=False,
                        progress_bar=sb3_bar,
                    )
            else:
                logger.info("Step %d already reaches max_steps %d.", start, settings.max_steps)
        finally:
            seconds = time.monotonic() - began
            final = checkpointer.finish(model.num_timesteps)
    finally:
        venv.close()
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
