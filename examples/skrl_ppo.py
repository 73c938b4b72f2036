"""PPO on a physbody environment with skrl's own agent, memory and ``SequentialTrainer``.

Run: ``python examples/skrl_ppo.py --env-id Crawler-v0 --total-timesteps 1000000`` (needs the
examples extra: ``pip install -c constraints.txt -e ".[examples]"``); ``--help`` lists every
setting. The environments step in a ``gymnasium.vector.SyncVectorEnv`` that resets a finished
environment in the same step, which is what skrl's trainer expects of a vector env; skrl's
``wrap_env`` turns it into torch tensors, and skrl's ``RunningStandardScaler`` normalizes the
observations and the value targets. After each update one line reports the returns of the
episodes that ended since the previous one.

skrl draws its action noise and minibatch order from torch's global generator and seeds the
environments' first reset from ``skrl.config.torch.key``, so the seeding block sets both once.
Nothing is written to disk: skrl's TensorBoard logs and checkpoints are switched off.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import skrl
import torch
from skrl.agents.torch.ppo import PPO, PPO_CFG
from skrl.envs.wrappers.torch import wrap_env
from skrl.memories.torch import RandomMemory
from skrl.models.torch import DeterministicMixin, GaussianMixin, Model
from skrl.resources.preprocessors.torch import RunningStandardScaler
from skrl.trainers.torch import SequentialTrainer
from torch import nn

import envs  # noqa: F401  (registers Crawler-v0, CrawlerStatic-v0, Walker-v0, WalkerStatic-v0)


@dataclasses.dataclass(frozen=True)
class Args:
    """The settings; each field is a ``--flag`` of the same name with dashes."""

    env_id: str = dataclasses.field(default="Crawler-v0", metadata={"help": "environment id"})
    seed: int = dataclasses.field(default=1, metadata={"help": "seed of the whole run"})
    total_timesteps: int = dataclasses.field(
        default=1_000_000, metadata={"help": "environment steps over all environments"}
    )
    num_envs: int = dataclasses.field(default=4, metadata={"help": "environments stepped together"})
    rollouts: int = dataclasses.field(
        default=512, metadata={"help": "steps per environment between two updates"}
    )
    learning_epochs: int = dataclasses.field(default=10, metadata={"help": "epochs per update"})
    mini_batches: int = dataclasses.field(default=32, metadata={"help": "minibatches a epoch"})
    learning_rate: float = dataclasses.field(default=3e-4, metadata={"help": "Adam step size"})
    gamma: float = dataclasses.field(default=0.995, metadata={"help": "discount factor"})
    gae_lambda: float = dataclasses.field(default=0.95, metadata={"help": "GAE lambda"})
    clip_coef: float = dataclasses.field(default=0.2, metadata={"help": "PPO ratio clip"})
    ent_coef: float = dataclasses.field(default=0.0, metadata={"help": "entropy bonus weight"})
    vf_coef: float = dataclasses.field(default=0.5, metadata={"help": "value loss weight"})
    max_grad_norm: float = dataclasses.field(default=0.5, metadata={"help": "gradient clip"})
    hidden_units: int = dataclasses.field(default=256, metadata={"help": "width of both layers"})
    device: str = dataclasses.field(default="cpu", metadata={"help": "torch device, e.g. cuda"})
    torch_threads: int = dataclasses.field(
        default=1, metadata={"help": "CPU threads for torch; 1 is fastest for these small nets"}
    )


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """Builds an :class:`Args` from the command line (``None`` reads ``sys.argv``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for field in dataclasses.fields(Args):
        flag = "--" + field.name.replace("_", "-")
        help_text = f"{field.metadata['help']} (default: {field.default})"
        parser.add_argument(flag, type=type(field.default), default=field.default, help=help_text)
    return Args(**vars(parser.parse_args(argv)))


def make_env(env_id: str) -> gym.Env:
    """One environment; actions are clipped to the Box only on their way to the simulator."""
    return gym.wrappers.ClipAction(gym.make(env_id))


def mlp(inputs: int, hidden: int, outputs: int) -> nn.Sequential:
    """Two tanh hidden layers of ``hidden`` units."""
    return nn.Sequential(
        nn.Linear(inputs, hidden),
        nn.Tanh(),
        nn.Linear(hidden, hidden),
        nn.Tanh(),
        nn.Linear(hidden, outputs),
    )


class Policy(GaussianMixin, Model):
    """A Gaussian policy with a state-independent log std (skrl's mixin does the sampling)."""

    def __init__(
        self, observation_space: gym.Space, action_space: gym.Space, device: str, hidden: int
    ):
        Model.__init__(
            self, observation_space=observation_space, action_space=action_space, device=device
        )
        GaussianMixin.__init__(self, clip_actions=False)
        self.net = mlp(self.num_observations, hidden, self.num_actions)
        self.log_std = nn.Parameter(torch.zeros(self.num_actions))

    def compute(
        self, inputs: dict[str, Any], role: str = ""
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """The action means and the log std, as skrl's ``GaussianMixin`` expects."""
        return self.net(inputs["observations"]), {"log_std": self.log_std}


class Value(DeterministicMixin, Model):
    """The state-value network."""

    def __init__(self, observation_space: gym.Space, device: str, hidden: int):
        Model.__init__(self, observation_space=observation_space, device=device)
        DeterministicMixin.__init__(self)
        self.net = mlp(self.num_observations, hidden, 1)

    def compute(
        self, inputs: dict[str, Any], role: str = ""
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """The value estimate, shape (batch, 1)."""
        return self.net(inputs["observations"]), {}


class ReportingPPO(PPO):
    """skrl's PPO that also prints, after each update, the returns of the episodes that ended."""

    def init(self, *, trainer_cfg: Any = None) -> None:
        """Initializes the agent and the per-environment return counters."""
        super().init(trainer_cfg=trainer_cfg)
        self._episode_return: torch.Tensor | None = None
        self._finished: list[float] = []

    def record_transition(self, **kwargs: Any) -> None:
        """Records the transition (skrl's PPO) and adds its rewards to the running returns."""
        rewards = kwargs["rewards"].flatten()
        if self._episode_return is None:
            self._episode_return = torch.zeros_like(rewards)
        self._episode_return += rewards
        done = (kwargs["terminated"] | kwargs["truncated"]).flatten()
        self._finished.extend(self._episode_return[done].tolist())
        self._episode_return[done] = 0.0
        super().record_transition(**kwargs)

    def post_interaction(self, *, timestep: int, timesteps: int) -> None:
        """Updates every ``rollouts`` steps (skrl's PPO), then prints the finished episodes."""
        super().post_interaction(timestep=timestep, timesteps=timesteps)
        if self._rollout % self.cfg.rollouts == 0:
            steps = (timestep + 1) * len(self._episode_return)
            if self._finished:
                print(
                    f"step {steps}: {len(self._finished)} episodes, return mean "
                    f"{np.mean(self._finished):.2f} min {np.min(self._finished):.2f} "
                    f"max {np.max(self._finished):.2f}"
                )
            else:
                print(f"step {steps}: no episode ended")
            self._finished.clear()


def train(args: Args) -> None:
    """Trains PPO for ``args.total_timesteps`` steps with skrl's sequential trainer."""
    # Seeding, all in one place: skrl seeds the environments' first reset from its config key,
    # and its models and memory draw from torch's global generator.
    skrl.config.torch.key = args.seed
    torch.manual_seed(args.seed)

    vec_env = gym.vector.SyncVectorEnv(
        [lambda: make_env(args.env_id) for _ in range(args.num_envs)],
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
    )
    env = wrap_env(vec_env, wrapper="gymnasium", verbose=False)
    models = {
        "policy": Policy(env.observation_space, env.action_space, args.device, args.hidden_units),
        "value": Value(env.observation_space, args.device, args.hidden_units),
    }
    memory = RandomMemory(memory_size=args.rollouts, num_envs=env.num_envs, device=args.device)
    cfg = PPO_CFG(
        rollouts=args.rollouts,
        learning_epochs=args.learning_epochs,
        mini_batches=args.mini_batches,
        discount_factor=args.gamma,
        gae_lambda=args.gae_lambda,
        learning_rate=args.learning_rate,
        observation_preprocessor=RunningStandardScaler,
        observation_preprocessor_kwargs={"size": env.observation_space, "device": args.device},
        value_preprocessor=RunningStandardScaler,
        value_preprocessor_kwargs={"size": 1, "device": args.device},
        grad_norm_clip=args.max_grad_norm,
        ratio_clip=args.clip_coef,
        value_clip=args.clip_coef,
        entropy_loss_scale=args.ent_coef,
        value_loss_scale=args.vf_coef,
        experiment={"write_interval": 0, "checkpoint_interval": 0},
    )
    agent = ReportingPPO(
        models=models,
        memory=memory,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=args.device,
        cfg=cfg,
    )
    trainer = SequentialTrainer(
        env=env,
        agents=agent,
        cfg={
            "timesteps": max(1, args.total_timesteps // args.num_envs),
            "headless": True,
            "disable_progressbar": True,
            "close_environment_at_exit": False,
        },
    )
    trainer.train()
    env.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Parses ``argv`` (``None``: the command line), trains, and returns the exit code."""
    args = parse_args(argv)
    threads = torch.get_num_threads()
    torch.set_num_threads(args.torch_threads)
    try:
        train(args)
    finally:
        torch.set_num_threads(threads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
