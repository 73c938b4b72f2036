"""Training settings: ML-Agents layout, strict loading, defaults, options."""

from __future__ import annotations

import attrs
import pytest

from physbody.train.settings import (
    BEHAVIOR_NAMES,
    DEMO_MAX_STEPS,
    ConfigError,
    NetworkSettings,
    PPOSettings,
    RunSettings,
    SACSettings,
    TrainerSettings,
    TrainOptions,
    behavior_name,
    default_trainer_settings,
    load_run_settings,
    parse_run_settings,
)

yaml = pytest.importorskip("yaml")

# ML-Agents' release 4-6 config/ppo/CrawlerDynamic.yaml, as the spec (section 1.8) gives it.
ML_AGENTS_CRAWLER = """\
behaviors:
  CrawlerDynamic:
    trainer_type: ppo
    hyperparameters:
      batch_size: 2024
      buffer_size: 20240
      learning_rate: 0.0003
      beta: 0.005
      epsilon: 0.2
      lambd: 0.95
      num_epoch: 3
      learning_rate_schedule: linear
    network_settings:
      normalize: true
      hidden_units: 512
      num_layers: 3
      vis_encode_type: simple
    reward_signals:
      extrinsic:
        gamma: 0.995
        strength: 1.0
    keep_checkpoints: 5
    max_steps: 10000000
    time_horizon: 1000
    summary_freq: 30000
    threaded: true
"""


def _load(tmp_path, text):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return load_run_settings(path)


def test_ml_agents_config_loads_and_equals_the_built_in_default(tmp_path):
    settings = _load(tmp_path, ML_AGENTS_CRAWLER)
    assert list(settings.behaviors) == ["CrawlerDynamic"]
    assert settings.behaviors["CrawlerDynamic"] == default_trainer_settings("CrawlerDynamic")


def test_built_in_defaults_follow_the_spec():
    crawler = default_trainer_settings("CrawlerStatic")
    walker = default_trainer_settings("WalkerDynamic")
    assert (crawler.hyperparameters.batch_size, crawler.hyperparameters.buffer_size) == (
        2024,
        20240,
    )
    assert (walker.hyperparameters.batch_size, walker.hyperparameters.buffer_size) == (
        2048,
        20480,
    )
    assert (crawler.max_steps, walker.max_steps) == (10_000_000, 20_000_000)
    for settings in (crawler, walker):
        assert settings.network_settings == NetworkSettings(
            normalize=True, hidden_units=512, num_layers=3
        )
        assert settings.reward_signals.extrinsic.gamma == 0.995
        assert settings.checkpoint_interval == 500_000 and settings.keep_checkpoints == 5
    assert set(DEMO_MAX_STEPS) == set(BEHAVIOR_NAMES.values())
    with pytest.raises(ValueError, match="behavior must be one of"):
        default_trainer_settings("Hopper")


def test_missing_keys_take_ml_agents_defaults(tmp_path):
    settings = _load(tmp_path, "behaviors:\n  WalkerStatic:\n    trainer_type: sac\n")
    walker = settings.behaviors["WalkerStatic"]
    assert walker.hyperparameters == SACSettings()
    assert walker.network_settings == NetworkSettings()
    assert (walker.keep_checkpoints, walker.checkpoint_interval, walker.max_steps) == (
        5,
        500_000,
        500_000,
    )
    ppo = _load(tmp_path, "behaviors:\n  X: {}\n").behaviors["X"]
    assert ppo.trainer_type == "ppo" and ppo.hyperparameters == PPOSettings()


@pytest.mark.parametrize(
    ("text", "key", "cls"),
    [
        ("behaviors: {}\nenv_settings: {}\n", "'env_settings'", "RunSettings"),
        ("behaviors:\n  CrawlerDynamic:\n    max_step: 5\n", "'max_step'", "TrainerSettings"),
        (
            "behaviors:\n  CrawlerDynamic:\n    hyperparameters: {bta: 0.1}\n",
            "'bta'",
            "PPOSettings",
        ),
        (
            "behaviors:\n  C:\n    trainer_type: sac\n    hyperparameters: {beta: 0.1}\n",
            "'beta'",
            "SACSettings",
        ),
        (
            "behaviors:\n  C:\n    network_settings: {hidden_unit: 5}\n",
            "'hidden_unit'",
            "NetworkSettings",
        ),
        ("behaviors:\n  C:\n    reward_signals: {curiosity: {}}\n", "'curiosity'", "RewardSignals"),
        (
            "behaviors:\n  C:\n    reward_signals: {extrinsic: {gama: 0.9}}\n",
            "'gama'",
            "RewardSignalSettings",
        ),
    ],
)
def test_unknown_keys_are_errors_naming_key_and_class(tmp_path, text, key, cls):
    with pytest.raises(ConfigError) as error:
        _load(tmp_path, text)
    message = str(error.value)
    assert key in message and cls in message, message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("behaviors:\n  C:\n    max_steps: lots\n", "behaviors.C.max_steps must be a number"),
        ("behaviors:\n  C:\n    max_steps: 1.5\n", "max_steps must be an integer"),
        ("behaviors:\n  C:\n    threaded: 1\n", "behaviors.C.threaded must be a bool"),
        ("behaviors:\n  C:\n    trainer_type: poca\n", "trainer_type must be 'ppo' or 'sac'"),
        ("behaviors:\n  C:\n    hyperparameters: {batch_size: 0}\n", "batch_size"),
        (
            "behaviors:\n  C:\n    hyperparameters: {batch_size: 64, buffer_size: 32}\n",
            "must not exceed buffer_size",
        ),
        ("behaviors:\n  C:\n    network_settings: {memory: {memory_size: 8}}\n", "memory"),
        ("behaviors:\n  C:\n    reward_signals: {extrinsic: {gamma: 1.0}}\n", "gamma"),
        ("behaviors:\n  C:\n    hyperparameters: 3\n", "hyperparameters must be a mapping"),
        ("behaviors: []\n", "'behaviors' must map behavior names"),
        ("[1, 2]\n", "must be a mapping with a 'behaviors' key"),
        ("behaviors: {C: {\n", "is not valid YAML"),
    ],
)
def test_bad_values_are_errors_naming_the_key(tmp_path, text, fragment):
    with pytest.raises(ConfigError) as error:
        _load(tmp_path, text)
    assert fragment in str(error.value), str(error.value)
    assert str(tmp_path / "config.yaml") in str(error.value)


def test_yaml_scalars_are_coerced(tmp_path):
    text = "behaviors:\n  C:\n    hyperparameters: {learning_rate: 3e-4, batch_size: 64.0}\n"
    hyperparameters = _load(tmp_path, text).behaviors["C"].hyperparameters
    assert hyperparameters.learning_rate == 3e-4 and isinstance(hyperparameters.batch_size, int)


def test_missing_config_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="config file not found"):
        load_run_settings(tmp_path / "nope.yaml")


def test_settings_are_frozen_and_round_trip(tmp_path):
    settings = _load(tmp_path, ML_AGENTS_CRAWLER)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        settings.behaviors["CrawlerDynamic"].max_steps = 5
    with pytest.raises(TypeError):
        settings.behaviors["X"] = TrainerSettings()
    again = parse_run_settings(yaml.safe_load(yaml.safe_dump(settings.as_dict())))
    assert again == settings
    assert isinstance(RunSettings(behaviors={}).behaviors, type(settings.behaviors))


def test_trainer_settings_check_hyperparameters_type():
    with pytest.raises(ValueError, match="needs SACSettings"):
        TrainerSettings(trainer_type="sac", hyperparameters=PPOSettings())
    assert isinstance(TrainerSettings(trainer_type="sac").hyperparameters, SACSettings)


def test_behavior_names():
    assert behavior_name("Crawler-v0") == "CrawlerDynamic"
    assert behavior_name("WalkerStatic-v0") == "WalkerStatic"
    with pytest.raises(ValueError, match="env id must be one of"):
        behavior_name("Pendulum-v1")


def test_train_options():
    options = TrainOptions(run_id="a", results_dir="out")
    assert options.run_dir.as_posix() == "out/a"
    with pytest.raises(ValueError, match="exclude each other"):
        TrainOptions(resume=True, force=True)
    with pytest.raises(ValueError, match="run_id"):
        TrainOptions(run_id="a/b")
    with pytest.raises(ValueError, match="env_id"):
        TrainOptions(env_id="Hopper-v4")
    with pytest.raises(ValueError, match="num_envs"):
        TrainOptions(num_envs=0)
