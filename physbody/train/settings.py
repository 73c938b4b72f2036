"""Training settings in ML-Agents' config layout, loaded strictly from YAML.

A config file has ML-Agents' shape::

    behaviors:
      CrawlerDynamic:
        trainer_type: ppo
        hyperparameters: {batch_size: 2024, buffer_size: 20240, learning_rate: 0.0003,
                          beta: 0.005, epsilon: 0.2, lambd: 0.95, num_epoch: 3,
                          learning_rate_schedule: linear}
        network_settings: {normalize: true, hidden_units: 512, num_layers: 3}
        reward_signals: {extrinsic: {gamma: 0.995, strength: 1.0}}
        keep_checkpoints: 5
        checkpoint_interval: 500000
        max_steps: 10000000
        time_horizon: 1000
        summary_freq: 30000

Every class here is a frozen attrs class whose defaults are ML-Agents' own (mlagents 0.19
``settings.py``); :func:`default_trainer_settings` gives the per-environment PPO configs of
the spec (sections 1.8 and 2.8). Loading rejects a key the class does not have, naming the key,
the class and where it was found, as ML-Agents' ``strict_to_cls`` does. Change a loaded value
with ``attrs.evolve``, never by mutation.

This module imports attrs only (PyYAML is imported when a file is read), so the command line can
parse settings without the training libraries.
"""

import os
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from attrs import validators as v

__all__ = [
    "BEHAVIOR_NAMES",
    "DEMO_MAX_STEPS",
    "ConfigError",
    "NetworkSettings",
    "PPOSettings",
    "RewardSignalSettings",
    "RewardSignals",
    "RunSettings",
    "SACSettings",
    "TrainOptions",
    "TrainerSettings",
    "behavior_name",
    "default_trainer_settings",
    "load_run_settings",
    "parse_run_settings",
]

#: ML-Agents' behavior name of each environment id.
BEHAVIOR_NAMES: Mapping[str, str] = types.MappingProxyType(
    {
        "Crawler-v0": "CrawlerDynamic",
        "CrawlerStatic-v0": "CrawlerStatic",
        "Walker-v0": "WalkerDynamic",
        "WalkerStatic-v0": "WalkerStatic",
    }
)

#: ``max_steps`` of a run without a config file: a few minutes of PPO with the default settings
#: (80 agents, one worker process per core) on 2 idle CPU cores (measured for Crawler-v0: 607,200
#: steps in 7 min 29 s, 1,366 steps/s). ML-Agents' own values (10M / 20M steps) are what a
#: config file or ``--max-steps`` is for.
DEMO_MAX_STEPS: Mapping[str, int] = types.MappingProxyType(
    {
        "CrawlerDynamic": 600_000,
        "CrawlerStatic": 600_000,
        "WalkerDynamic": 300_000,
        "WalkerStatic": 300_000,
    }
)


class ConfigError(ValueError):
    """A training config that cannot be used; the message names the key and where it is."""


def behavior_name(env_id: str) -> str:
    """ML-Agents' behavior name for ``env_id`` (``"Crawler-v0"`` -> ``"CrawlerDynamic"``).

    Raises:
        ValueError: when ``env_id`` is not one of ``BEHAVIOR_NAMES``.
    """
    try:
        return BEHAVIOR_NAMES[env_id]
    except KeyError:
        raise ValueError(
            f"env id must be one of {', '.join(BEHAVIOR_NAMES)}, got {env_id!r}"
        ) from None


def _between(low: float, high: float, *, include_high: bool = True) -> Any:
    """A validator for ``low <= value <= high`` (or ``< high``)."""
    return [v.ge(low), v.le(high) if include_high else v.lt(high)]


@attrs.frozen(kw_only=True)
class PPOSettings:
    """ML-Agents' PPO ``hyperparameters`` and how each maps onto Stable-Baselines3's PPO.

    Attributes:
        batch_size: samples per gradient step; SB3 ``batch_size``.
        buffer_size: samples collected per policy update; SB3 ``n_steps = buffer_size //
            num_envs``.
        learning_rate: initial Adam learning rate.
        learning_rate_schedule: ``"linear"`` decays the rate to 0 at ``max_steps``,
            ``"constant"`` keeps it.
        beta: entropy bonus; SB3 ``ent_coef``, decayed along ``learning_rate_schedule`` to
            1e-5 as ML-Agents does (``physbody.train.callbacks.EntropySchedule``).
        epsilon: PPO clip range; SB3 ``clip_range``, decayed along ``learning_rate_schedule``
            to 0.1 as ML-Agents does.
        lambd: GAE lambda; SB3 ``gae_lambda``.
        num_epoch: passes over the buffer per update; SB3 ``n_epochs``.
    """

    batch_size: int = attrs.field(default=1024, validator=v.gt(1))
    buffer_size: int = attrs.field(default=10240, validator=v.gt(1))
    learning_rate: float = attrs.field(default=3.0e-4, validator=v.gt(0.0))
    learning_rate_schedule: str = attrs.field(
        default="linear", validator=v.in_(("linear", "constant"))
    )
    beta: float = attrs.field(default=5.0e-3, validator=v.ge(0.0))
    epsilon: float = attrs.field(default=0.2, validator=v.gt(0.0))
    lambd: float = attrs.field(default=0.95, validator=_between(0.0, 1.0))
    num_epoch: int = attrs.field(default=3, validator=v.ge(1))

    def __attrs_post_init__(self) -> None:
        if self.batch_size > self.buffer_size:
            raise ValueError(
                f"batch_size ({self.batch_size}) must not exceed buffer_size ({self.buffer_size})"
            )


@attrs.frozen(kw_only=True)
class SACSettings:
    """ML-Agents' SAC ``hyperparameters`` and how each maps onto Stable-Baselines3's SAC.

    Attributes:
        batch_size: samples per gradient step.
        buffer_size: replay buffer capacity, samples.
        buffer_init_steps: random steps before learning starts; SB3 ``learning_starts``.
        tau: target network update rate.
        steps_per_update: environment steps per gradient step; SB3 ``train_freq`` and
            ``gradient_steps`` are chosen to keep this ratio with ``num_envs`` environments.
        save_replay_buffer: whether checkpoints include the replay buffer (needed for an
            exact resume; large).
        init_entcoef: initial entropy coefficient; SB3 ``ent_coef="auto_<init_entcoef>"``.
        reward_signal_steps_per_update: accepted for ML-Agents compatibility; SB3 has no
            separate reward-signal update, so it has no effect.
        learning_rate: Adam learning rate.
        learning_rate_schedule: ``"constant"`` (ML-Agents' SAC default) or ``"linear"``.
    """

    batch_size: int = attrs.field(default=128, validator=v.gt(1))
    buffer_size: int = attrs.field(default=50_000, validator=v.gt(1))
    buffer_init_steps: int = attrs.field(default=0, validator=v.ge(0))
    tau: float = attrs.field(default=0.005, validator=_between(0.0, 1.0))
    steps_per_update: float = attrs.field(default=1.0, validator=v.gt(0.0))
    save_replay_buffer: bool = attrs.field(default=False, validator=v.instance_of(bool))
    init_entcoef: float = attrs.field(default=1.0, validator=v.gt(0.0))
    reward_signal_steps_per_update: float = attrs.field(default=1.0, validator=v.gt(0.0))
    learning_rate: float = attrs.field(default=3.0e-4, validator=v.gt(0.0))
    learning_rate_schedule: str = attrs.field(
        default="constant", validator=v.in_(("linear", "constant"))
    )


def _no_memory(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None:
        raise ValueError(
            f"{attribute.name} (recurrent networks) is not supported by physbody; "
            f"remove it or set it to null, got {value!r}"
        )


@attrs.frozen(kw_only=True)
class NetworkSettings:
    """ML-Agents' ``network_settings``.

    The policy and value networks are separate multilayer perceptrons with ``num_layers``
    hidden layers of ``hidden_units`` units and swish (SiLU) activations, as ML-Agents builds
    them.

    Attributes:
        normalize: running mean/variance observation normalisation (SB3 ``VecNormalize``,
            clipped to +-5 as in ML-Agents); the exported ONNX model includes it.
        hidden_units: units per hidden layer.
        num_layers: hidden layers.
        vis_encode_type: accepted for ML-Agents compatibility; the observations are vectors, so
            it has no effect.
        memory: must be null: recurrent networks are not supported.
    """

    normalize: bool = attrs.field(default=False, validator=v.instance_of(bool))
    hidden_units: int = attrs.field(default=128, validator=v.ge(1))
    num_layers: int = attrs.field(default=2, validator=v.ge(1))
    vis_encode_type: str = attrs.field(
        default="simple",
        validator=v.in_(("simple", "nature_cnn", "resnet", "match3", "fully_connected")),
    )
    memory: None = attrs.field(default=None, validator=_no_memory)


@attrs.frozen(kw_only=True)
class RewardSignalSettings:
    """One reward signal: discount factor and the scale applied to the environment reward.

    Attributes:
        gamma: discount factor, in [0, 1).
        strength: factor applied to every reward before learning (and in the episode returns
            that are logged).
    """

    gamma: float = attrs.field(default=0.99, validator=_between(0.0, 1.0, include_high=False))
    strength: float = attrs.field(default=1.0, validator=v.instance_of((int, float)))


@attrs.frozen(kw_only=True)
class RewardSignals:
    """ML-Agents' ``reward_signals``; only ``extrinsic`` (the environment reward) exists here."""

    extrinsic: RewardSignalSettings = attrs.field(factory=RewardSignalSettings)


def _default_hyperparameters(self: "TrainerSettings") -> PPOSettings | SACSettings:
    return SACSettings() if self.trainer_type == "sac" else PPOSettings()


@attrs.frozen(kw_only=True)
class TrainerSettings:
    """One behavior's training settings: ML-Agents' per-behavior block.

    Attributes:
        trainer_type: ``"ppo"`` or ``"sac"``.
        hyperparameters: ``PPOSettings`` or ``SACSettings``, matching ``trainer_type``.
        network_settings: network sizes and observation normalisation.
        reward_signals: discount and scale of the environment reward.
        keep_checkpoints: checkpoints kept on disk, the oldest deleted first; <= 0 keeps all.
        checkpoint_interval: environment steps between checkpoints.
        max_steps: environment steps to train for; training stops at the first policy update
            at or past it.
        time_horizon: accepted for ML-Agents compatibility. SB3 bootstraps the value at the end
            of each rollout instead of cutting trajectories, so it has no effect.
        summary_freq: environment steps between summary lines in the log.
        threaded: accepted for ML-Agents compatibility; it has no effect.
    """

    trainer_type: str = attrs.field(default="ppo", validator=v.in_(("ppo", "sac")))
    hyperparameters: PPOSettings | SACSettings = attrs.field(
        default=attrs.Factory(_default_hyperparameters, takes_self=True)
    )
    network_settings: NetworkSettings = attrs.field(factory=NetworkSettings)
    reward_signals: RewardSignals = attrs.field(factory=RewardSignals)
    keep_checkpoints: int = attrs.field(default=5, validator=v.instance_of(int))
    checkpoint_interval: int = attrs.field(default=500_000, validator=v.gt(0))
    max_steps: int = attrs.field(default=500_000, validator=v.gt(0))
    time_horizon: int = attrs.field(default=64, validator=v.gt(0))
    summary_freq: int = attrs.field(default=50_000, validator=v.gt(0))
    threaded: bool = attrs.field(default=True, validator=v.instance_of(bool))

    def __attrs_post_init__(self) -> None:
        expected = SACSettings if self.trainer_type == "sac" else PPOSettings
        if not isinstance(self.hyperparameters, expected):
            raise ValueError(
                f"trainer_type {self.trainer_type!r} needs {expected.__name__} hyperparameters, "
                f"got {type(self.hyperparameters).__name__}"
            )

    def as_dict(self) -> dict[str, Any]:
        """The settings as plain YAML-ready data, in ML-Agents' layout."""
        return attrs.asdict(self, recurse=True)


def _behaviors(value: Mapping[str, TrainerSettings]) -> Mapping[str, TrainerSettings]:
    return types.MappingProxyType(dict(value))


def _check_behaviors(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    for name, settings in value.items():
        if not isinstance(name, str) or not isinstance(settings, TrainerSettings):
            raise TypeError(
                f"behaviors must map names (str) to TrainerSettings, got {name!r}: {settings!r}"
            )


@attrs.frozen(kw_only=True)
class RunSettings:
    """A whole config file: the settings of each behavior, by ML-Agents behavior name.

    Attributes:
        behaviors: read-only mapping from behavior name to its ``TrainerSettings``.
    """

    behaviors: Mapping[str, TrainerSettings] = attrs.field(
        factory=dict, converter=_behaviors, validator=_check_behaviors
    )

    def as_dict(self) -> dict[str, Any]:
        """The settings as plain YAML-ready data, in ML-Agents' layout."""
        return {"behaviors": {name: s.as_dict() for name, s in self.behaviors.items()}}


def default_trainer_settings(behavior: str) -> TrainerSettings:
    """ML-Agents' PPO config for ``behavior``, as in the spec (sections 1.8 and 2.8).

    Args:
        behavior: one of ``BEHAVIOR_NAMES.values()``.

    Returns:
        The release 4-6 ``config/ppo/<behavior>.yaml`` values with ``checkpoint_interval``
        500,000 (ML-Agents' default); ``max_steps`` is ML-Agents' (10M for Crawler, 20M for
        Walker).

    Raises:
        ValueError: for an unknown behavior name.
    """
    if behavior not in BEHAVIOR_NAMES.values():
        raise ValueError(
            f"behavior must be one of {', '.join(BEHAVIOR_NAMES.values())}, got {behavior!r}"
        )
    crawler = behavior.startswith("Crawler")
    return TrainerSettings(
        trainer_type="ppo",
        hyperparameters=PPOSettings(
            batch_size=2024 if crawler else 2048,
            buffer_size=20240 if crawler else 20480,
            learning_rate=3.0e-4,
            learning_rate_schedule="linear",
            beta=0.005,
            epsilon=0.2,
            lambd=0.95,
            num_epoch=3,
        ),
        network_settings=NetworkSettings(normalize=True, hidden_units=512, num_layers=3),
        reward_signals=RewardSignals(extrinsic=RewardSignalSettings(gamma=0.995, strength=1.0)),
        keep_checkpoints=5,
        checkpoint_interval=500_000,
        max_steps=10_000_000 if crawler else 20_000_000,
        time_horizon=1000,
        summary_freq=30_000,
        threaded=True,
    )


# ---------------------------------------------------------------------------------- loading
def _coerce(value: Any, kind: Any, where: str) -> Any:
    """Converts a YAML scalar to ``kind`` (int, float, bool, str), raising ConfigError."""
    if kind is bool or kind is str:
        if not isinstance(value, kind):
            raise ConfigError(f"{where} must be a {kind.__name__}, got {value!r}")
        return value
    if kind is int or kind is float:
        number = value
        if isinstance(value, str):
            # PyYAML reads "3e-4" (no dot) as a string; ML-Agents' cattrs accepts it.
            try:
                number = float(value)
            except ValueError:
                number = None
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise ConfigError(f"{where} must be a number, got {value!r}")
        if kind is float:
            return float(number)
        if float(number).is_integer():
            return int(number)
        raise ConfigError(f"{where} must be an integer, got {value!r}")
    return value


def _structure(cls: type, data: Any, where: str, nested: Mapping[str, type] | None = None) -> Any:
    """Builds ``cls`` from a mapping, rejecting unknown keys and wrapping validator errors."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{where} must be a mapping of {cls.__name__} keys, got {type(data).__name__} {data!r}"
        )
    fields = {field.name: field for field in attrs.fields(cls)}
    unknown = [key for key in data if key not in fields]
    if unknown:
        keys = ", ".join(repr(key) for key in unknown)
        raise ConfigError(
            f"unknown key{'s' if len(unknown) > 1 else ''} {keys} in {cls.__name__} at {where}; "
            f"expected one of: {', '.join(fields)}"
        )
    nested = dict(nested or {})
    kwargs = {}
    for key, value in data.items():
        kind = nested.get(key, fields[key].type)
        if attrs.has(kind):
            kwargs[key] = _structure(kind, value, f"{where}.{key}")
        else:
            kwargs[key] = _coerce(value, kind, f"{where}.{key}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{where} ({cls.__name__}): {error}") from error


def _structure_trainer(data: Any, where: str) -> TrainerSettings:
    trainer_type = data.get("trainer_type", "ppo") if isinstance(data, Mapping) else "ppo"
    hyperparameters = {"ppo": PPOSettings, "sac": SACSettings}.get(trainer_type)
    if hyperparameters is None:
        raise ConfigError(f"{where}.trainer_type must be 'ppo' or 'sac', got {trainer_type!r}")
    return _structure(TrainerSettings, data, where, {"hyperparameters": hyperparameters})


def parse_run_settings(data: Any, source: str = "config") -> RunSettings:
    """Builds ``RunSettings`` from parsed YAML data.

    Args:
        data: the ``yaml.safe_load`` result: a mapping with a ``behaviors`` key.
        source: where the data came from, for error messages (a file name).

    Returns:
        The settings; keys a behavior leaves out take ML-Agents' defaults.

    Raises:
        ConfigError: for an unknown key (the message names it, its class and its path), a
            value of the wrong type, or a value a validator rejects.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{source} must be a mapping with a 'behaviors' key, got {type(data).__name__}"
        )
    unknown = [key for key in data if key != "behaviors"]
    if unknown:
        keys = ", ".join(repr(key) for key in unknown)
        raise ConfigError(
            f"unknown key{'s' if len(unknown) > 1 else ''} {keys} in RunSettings at {source}; "
            "expected one of: behaviors"
        )
    behaviors = data.get("behaviors")
    if not isinstance(behaviors, Mapping) or not behaviors:
        raise ConfigError(
            f"{source}: 'behaviors' must map behavior names to their settings, got {behaviors!r}"
        )
    parsed = {}
    for name, block in behaviors.items():
        if not isinstance(name, str):
            raise ConfigError(f"{source}: behavior names must be strings, got {name!r}")
        parsed[name] = _structure_trainer(block, f"{source}: behaviors.{name}")
    return RunSettings(behaviors=parsed)


def load_run_settings(path: str | Path) -> RunSettings:
    """Reads an ML-Agents style YAML config file with ``yaml.safe_load``.

    Args:
        path: the YAML file.

    Returns:
        The parsed settings.

    Raises:
        FileNotFoundError: when ``path`` does not exist.
        ConfigError: when the file is not valid YAML or holds an unknown key or a bad value.
    """
    import yaml

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path.resolve()}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ConfigError(f"{path} is not valid YAML: {error}") from error
    return parse_run_settings(data, source=str(path))


# ---------------------------------------------------------------------------------- options
def _run_id(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    if not isinstance(value, str) or not value or value in (".", "..") or "/" in value:
        raise ValueError(f"run_id must be a non-empty folder name without '/', got {value!r}")


def _optional_path(value: Any) -> Path | None:
    return None if value is None else Path(value)


@attrs.frozen(kw_only=True)
class TrainOptions:
    """One training run as the command line describes it (``physbody train --help``).

    Attributes:
        config_path: ML-Agents style YAML config; None uses ``default_trainer_settings`` for
            the environment with ``max_steps`` from ``DEMO_MAX_STEPS``. On ``resume`` without
            a config, the run's own ``configuration.yaml`` is used.
        env_id: environment to train; None picks the only known behavior of the config, or
            ``"Crawler-v0"``.
        run_id: run folder name under ``results_dir`` (``mlagents-learn``'s default ``"ppo"``).
        results_dir: folder holding the runs.
        resume: continue the run from its newest checkpoint and its step count.
        force: delete an existing run folder of the same name first.
        seed: seed of the model, the environments and every random generator they use.
        num_envs: agents stepped together: one native vector env (``envs.vector``), split
            over ``num_workers`` processes. 80 by default: each batch step has a fixed cost
            (one policy call, one message per worker), so more agents per step train faster
            (measured on 2 cores, Crawler-v0: 8 agents 850, 16 agents 900, 32 agents 1180,
            64 agents 1200-1560, 80 agents 1190-1320, 128 agents 1370 env steps/s), and 80
            divides both ML-Agents buffer sizes (20240 and 20480) into whole minibatches. The
            PPO update is unchanged: a rollout is ``buffer_size`` steps whatever the number of
            agents.
        num_workers: processes that step the agents' physics; None uses one per CPU core
            (``os.cpu_count()``), at most ``num_envs``. 1 steps them in this process.
        max_steps: override of the behavior's ``max_steps``.
        progress_bar: draw a progress bar on a terminal (stderr).
    """

    config_path: Path | None = attrs.field(default=None, converter=_optional_path)
    env_id: str | None = attrs.field(
        default=None, validator=v.optional(v.in_(tuple(BEHAVIOR_NAMES)))
    )
    run_id: str = attrs.field(default="ppo", validator=_run_id)
    results_dir: Path = attrs.field(default=Path("results"), converter=Path)
    resume: bool = attrs.field(default=False, validator=v.instance_of(bool))
    force: bool = attrs.field(default=False, validator=v.instance_of(bool))
    seed: int = attrs.field(default=0, validator=[v.instance_of(int), v.ge(0)])
    num_envs: int = attrs.field(default=80, validator=[v.instance_of(int), v.ge(1)])
    num_workers: int | None = attrs.field(
        default=None, validator=v.optional([v.instance_of(int), v.ge(1)])
    )
    max_steps: int | None = attrs.field(
        default=None, validator=v.optional([v.instance_of(int), v.gt(0)])
    )
    progress_bar: bool = attrs.field(default=True, validator=v.instance_of(bool))

    def __attrs_post_init__(self) -> None:
        if self.resume and self.force:
            raise ValueError("resume and force exclude each other: pick one")

    @property
    def run_dir(self) -> Path:
        """``results_dir / run_id``."""
        return self.results_dir / self.run_id

    @property
    def worker_count(self) -> int:
        """Processes stepping the agents: ``num_workers``, or one per core, at most ``num_envs``."""
        wanted = self.num_workers if self.num_workers is not None else os.cpu_count() or 1
        return max(1, min(wanted, self.num_envs))
