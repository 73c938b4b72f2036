"""PPO on a physbody environment with TorchRL: ``GymEnv``, a collector, GAE and ``ClipPPOLoss``.

Run: ``python examples/torchrl_gymenv.py --env-id Crawler-v0 --total-timesteps 1000000`` (needs
the examples extra: ``pip install -c constraints.txt -e ".[examples]"``); ``--help`` lists every
setting. ``import envs`` registers the ids, so ``torchrl.envs.GymEnv("Crawler-v0")`` builds the
Gymnasium environment and exposes it as a TensorDict environment; ``VecNormV2`` normalizes the
observations and ``RewardSum`` keeps each episode's return. One line a collected batch reports
the returns of the episodes that ended in it.

The loop is TorchRL's PPO tutorial: per batch, ``update_epochs`` passes of GAE and clipped-PPO
minibatch steps. TorchRL samples actions and minibatches from torch's global generator, so the
seeding block sets it (and the environment's seed) once.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence

import torch
from tensordict.nn import NormalParamExtractor, TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.data import LazyTensorStorage, ReplayBuffer, SamplerWithoutReplacement
from torchrl.envs import Compose, EnvBase, GymEnv, RewardSum, TransformedEnv, VecNormV2
from torchrl.modules import ProbabilisticActor, TanhNormal, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import envs  # noqa: F401  (registers Crawler-v0, CrawlerStatic-v0, Walker-v0, WalkerStatic-v0)


@dataclasses.dataclass(frozen=True)
class Args:
    """The settings; each field is a ``--flag`` of the same name with dashes."""

    env_id: str = dataclasses.field(default="Crawler-v0", metadata={"help": "environment id"})
    seed: int = dataclasses.field(default=1, metadata={"help": "seed of the whole run"})
    total_timesteps: int = dataclasses.field(
        default=1_000_000, metadata={"help": "environment steps in the run"}
    )
    frames_per_batch: int = dataclasses.field(
        default=2048, metadata={"help": "steps collected between two updates"}
    )
    minibatch_size: int = dataclasses.field(
        default=64, metadata={"help": "steps per gradient step"}
    )
    update_epochs: int = dataclasses.field(default=10, metadata={"help": "epochs per update"})
    learning_rate: float = dataclasses.field(default=3e-4, metadata={"help": "Adam step size"})
    gamma: float = dataclasses.field(default=0.995, metadata={"help": "discount factor"})
    gae_lambda: float = dataclasses.field(default=0.95, metadata={"help": "GAE lambda"})
    clip_coef: float = dataclasses.field(default=0.2, metadata={"help": "PPO ratio clip"})
    ent_coef: float = dataclasses.field(default=1e-4, metadata={"help": "entropy bonus weight"})
    vf_coef: float = dataclasses.field(default=0.5, metadata={"help": "value loss weight"})
    max_grad_norm: float = dataclasses.field(default=0.5, metadata={"help": "gradient clip"})
    hidden_units: int = dataclasses.field(default=256, metadata={"help": "width of both layers"})
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


def make_env(env_id: str) -> TransformedEnv:
    """The Gymnasium environment as a TorchRL env, with normalized observations and returns."""
    return TransformedEnv(
        GymEnv(env_id),
        Compose(VecNormV2(in_keys=["observation"]), RewardSum()),
    )


def make_actor_critic(env: EnvBase, hidden: int) -> tuple[ProbabilisticActor, ValueOperator]:
    """A tanh-Gaussian policy and a value network, both two hidden layers of ``hidden`` units."""
    obs_size = env.observation_spec["observation"].shape[-1]
    action_spec = env.action_spec

    def mlp(out: int) -> nn.Sequential:
        return nn.Sequential(
            nn.Linear(obs_size, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, out),
        )

    actor = ProbabilisticActor(
        TensorDictModule(
            nn.Sequential(mlp(2 * action_spec.shape[-1]), NormalParamExtractor()),
            in_keys=["observation"],
            out_keys=["loc", "scale"],
        ),
        spec=action_spec,
        in_keys=["loc", "scale"],
        distribution_class=TanhNormal,
        distribution_kwargs={"low": action_spec.space.low, "high": action_spec.space.high},
        return_log_prob=True,
    )
    critic = ValueOperator(mlp(1), in_keys=["observation"])
    return actor, critic


def train(args: Args) -> None:
    """Trains PPO for ``args.total_timesteps`` steps, printing one line per collected batch."""
    env = make_env(args.env_id)

    # Seeding, all in one place: the environment's first reset, then torch's global generator,
    # which draws the weights, the action noise and the minibatch order.
    env.set_seed(args.seed)
    torch.manual_seed(args.seed)

    actor, critic = make_actor_critic(env, args.hidden_units)
    frames_per_batch = min(args.frames_per_batch, args.total_timesteps)
    collector = Collector(
        env,
        actor,
        frames_per_batch=frames_per_batch,
        total_frames=args.total_timesteps,
        auto_register_policy_transforms=False,  # a feed-forward policy needs no extra transform
    )
    buffer = ReplayBuffer(
        storage=LazyTensorStorage(frames_per_batch),
        sampler=SamplerWithoutReplacement(),
        batch_size=args.minibatch_size,
    )
    advantage = GAE(gamma=args.gamma, lmbda=args.gae_lambda, value_network=critic, average_gae=True)
    loss_module = ClipPPOLoss(
        actor_network=actor,
        critic_network=critic,
        clip_epsilon=args.clip_coef,
        entropy_coeff=args.ent_coef,
        critic_coeff=args.vf_coef,
        loss_critic_type="l2",
    )
    optimizer = torch.optim.Adam(loss_module.parameters(), lr=args.learning_rate)

    steps = 0
    for data in collector:
        steps += data.numel()
        for _epoch in range(args.update_epochs):
            advantage(data)  # recomputed with the current critic before each pass
            buffer.extend(data.reshape(-1))
            for _ in range(max(1, frames_per_batch // args.minibatch_size)):
                losses = loss_module(buffer.sample())
                loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(loss_module.parameters(), args.max_grad_norm)
                optimizer.step()

        done = data["next", "done"].squeeze(-1)
        finished = data["next", "episode_reward"][done].flatten()
        if finished.numel():
            print(
                f"step {steps}: {finished.numel()} episodes, return mean "
                f"{finished.mean():.2f} min {finished.min():.2f} max {finished.max():.2f}"
            )
        else:
            print(f"step {steps}: no episode ended")
    collector.shutdown()
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
