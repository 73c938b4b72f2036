"""PPO on a physbody environment in the CleanRL style: one file, plain Gymnasium and plain torch.

Run: ``python examples/cleanrl_ppo.py --env-id Crawler-v0 --total-timesteps 1000000`` (needs
torch: ``pip install -c constraints.txt -e ".[examples]"``); ``--help`` lists every setting. The
environments step in a ``gymnasium.vector.SyncVectorEnv`` that resets a finished environment in
the same step (so every stored transition is a real one); observations are normalized by a running
mean, and actions are clipped to the Box(-1, 1) only on their way to the simulator. One line a PPO
iteration reports the returns of the episodes that ended in it.

The algorithm follows CleanRL's ``ppo_continuous_action.py``; the rewards are not normalized
(ML-Agents does not normalize them either). Every random draw (weights, action noise, minibatch
order) comes from one ``torch.Generator`` and the environments' reset seeds, set in one block.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Sequence

import gymnasium as gym
import numpy as np
import torch
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
    num_steps: int = dataclasses.field(
        default=512, metadata={"help": "steps per environment between two updates"}
    )
    learning_rate: float = dataclasses.field(default=3e-4, metadata={"help": "Adam step size"})
    anneal_lr: bool = dataclasses.field(
        default=True, metadata={"help": "decay the learning rate linearly to zero"}
    )
    gamma: float = dataclasses.field(default=0.995, metadata={"help": "discount factor"})
    gae_lambda: float = dataclasses.field(default=0.95, metadata={"help": "GAE lambda"})
    num_minibatches: int = dataclasses.field(default=32, metadata={"help": "minibatches a epoch"})
    update_epochs: int = dataclasses.field(default=10, metadata={"help": "epochs per update"})
    clip_coef: float = dataclasses.field(default=0.2, metadata={"help": "PPO ratio clip"})
    ent_coef: float = dataclasses.field(default=0.0, metadata={"help": "entropy bonus weight"})
    vf_coef: float = dataclasses.field(default=0.5, metadata={"help": "value loss weight"})
    max_grad_norm: float = dataclasses.field(default=0.5, metadata={"help": "gradient clip"})
    hidden_units: int = dataclasses.field(default=256, metadata={"help": "width of both layers"})
    device: str = dataclasses.field(default="cpu", metadata={"help": "torch device, e.g. cuda"})
    torch_threads: int = dataclasses.field(
        default=1, metadata={"help": "CPU threads for torch; 1 is fastest for these small nets"}
    )

    @property
    def batch_size(self) -> int:
        """Transitions per update: ``num_envs * num_steps``."""
        return self.num_envs * self.num_steps

    @property
    def minibatch_size(self) -> int:
        """Transitions per gradient step."""
        return max(1, self.batch_size // self.num_minibatches)

    @property
    def num_iterations(self) -> int:
        """Updates in the run (at least one)."""
        return max(1, self.total_timesteps // self.batch_size)


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """Builds an :class:`Args` from the command line (``None`` reads ``sys.argv``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for field in dataclasses.fields(Args):
        flag = "--" + field.name.replace("_", "-")
        help_text = f"{field.metadata['help']} (default: {field.default})"
        if isinstance(field.default, bool):
            action = argparse.BooleanOptionalAction
            parser.add_argument(flag, action=action, default=field.default, help=help_text)
        else:
            parser.add_argument(
                flag, type=type(field.default), default=field.default, help=help_text
            )
    return Args(**vars(parser.parse_args(argv)))


def make_env(env_id: str) -> gym.Env:
    """One environment: actions clipped to the Box, observations normalized by a running mean."""
    env = gym.wrappers.ClipAction(gym.make(env_id))
    return gym.wrappers.NormalizeObservation(env)


def make_envs(args: Args) -> gym.vector.VectorEnv:
    """``num_envs`` environments that reset in the same step an episode ends."""
    return gym.vector.SyncVectorEnv(
        [lambda: make_env(args.env_id) for _ in range(args.num_envs)],
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
    )


def layer_init(layer: nn.Linear, std: float, generator: torch.Generator) -> nn.Linear:
    """Orthogonal weights with gain ``std`` and zero biases, as in CleanRL."""
    nn.init.orthogonal_(layer.weight, std, generator=generator)
    nn.init.zeros_(layer.bias)
    return layer


class Agent(nn.Module):
    """A Gaussian policy with a state-independent log std and a separate value network."""

    def __init__(self, obs_size: int, action_size: int, hidden: int, generator: torch.Generator):
        super().__init__()

        def mlp(out: int, std: float) -> nn.Sequential:
            return nn.Sequential(
                layer_init(nn.Linear(obs_size, hidden), np.sqrt(2), generator),
                nn.Tanh(),
                layer_init(nn.Linear(hidden, hidden), np.sqrt(2), generator),
                nn.Tanh(),
                layer_init(nn.Linear(hidden, out), std, generator),
            )

        self.critic = mlp(1, 1.0)
        self.actor_mean = mlp(action_size, 0.01)
        self.actor_logstd = nn.Parameter(torch.zeros(1, action_size))

    def get_value(self, obs: torch.Tensor) -> torch.Tensor:
        """The value estimate, shape (batch,)."""
        return self.critic(obs).squeeze(-1)

    def get_action_and_value(
        self,
        obs: torch.Tensor,
        action: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Samples an action (or scores ``action``).

        Args:
            obs: Observations, shape (batch, obs_size).
            action: Actions to score; ``None`` samples new ones with ``generator``.
            generator: The source of the action noise.

        Returns:
            ``(action, log_prob, entropy, value)``.
        """
        mean = self.actor_mean(obs)
        std = self.actor_logstd.expand_as(mean).exp()
        if action is None:
            action = mean + std * torch.randn(mean.shape, generator=generator, device=mean.device)
        dist = torch.distributions.Normal(mean, std)
        return action, dist.log_prob(action).sum(-1), dist.entropy().sum(-1), self.get_value(obs)


def train(args: Args) -> None:
    """Trains PPO for ``args.total_timesteps`` steps, printing one line per iteration."""
    device = torch.device(args.device)
    vec_env = make_envs(args)
    assert isinstance(vec_env.single_action_space, gym.spaces.Box), "continuous actions only"
    obs_size = int(np.prod(vec_env.single_observation_space.shape))
    action_size = int(np.prod(vec_env.single_action_space.shape))

    # Seeding, all in one place: the generator draws the weights, the action noise and the
    # minibatch order; the environments are reset with seeds seed, seed + 1, ...
    generator = torch.Generator().manual_seed(args.seed)
    next_obs_np, _ = vec_env.reset(seed=args.seed)

    agent = Agent(obs_size, action_size, args.hidden_units, generator).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    shape = (args.num_steps, args.num_envs)
    obs = torch.zeros((*shape, obs_size), device=device)
    actions = torch.zeros((*shape, action_size), device=device)
    logprobs = torch.zeros(shape, device=device)
    rewards = torch.zeros(shape, device=device)
    dones = torch.zeros(shape, device=device)  # the episode ended after this step's action
    values = torch.zeros(shape, device=device)

    next_obs = torch.as_tensor(next_obs_np, dtype=torch.float32, device=device)
    episode_return = np.zeros(args.num_envs)
    global_step, start = 0, time.perf_counter()
    for iteration in range(1, args.num_iterations + 1):
        if args.anneal_lr:
            frac = 1.0 - (iteration - 1.0) / args.num_iterations
            optimizer.param_groups[0]["lr"] = frac * args.learning_rate

        finished: list[float] = []
        for step in range(args.num_steps):
            global_step += args.num_envs
            obs[step] = next_obs
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, None, generator)
            actions[step], logprobs[step], values[step] = action, logprob, value

            next_obs_np, reward, terminated, truncated, _ = vec_env.step(action.cpu().numpy())
            done = np.logical_or(terminated, truncated)
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32, device=device)
            dones[step] = torch.as_tensor(done, dtype=torch.float32, device=device)
            next_obs = torch.as_tensor(next_obs_np, dtype=torch.float32, device=device)

            episode_return += reward
            finished.extend(episode_return[done].tolist())
            episode_return[done] = 0.0

        # Generalized advantage estimation. With same-step autoreset the observation after a done
        # step already belongs to the next episode, so nothing flows across it; like CleanRL, a
        # time limit counts as an end (no bootstrap from the final state).
        with torch.no_grad():
            next_value = agent.get_value(next_obs)
            advantages = torch.zeros_like(rewards)
            last_gae = torch.zeros(args.num_envs, device=device)
            for t in reversed(range(args.num_steps)):
                following = next_value if t == args.num_steps - 1 else values[t + 1]
                not_done = 1.0 - dones[t]
                delta = rewards[t] + args.gamma * not_done * following - values[t]
                last_gae = delta + args.gamma * args.gae_lambda * not_done * last_gae
                advantages[t] = last_gae
            returns = advantages + values

        b_obs = obs.reshape(-1, obs_size)
        b_actions = actions.reshape(-1, action_size)
        b_logprobs, b_advantages = logprobs.reshape(-1), advantages.reshape(-1)
        b_returns, b_values = returns.reshape(-1), values.reshape(-1)

        for _epoch in range(args.update_epochs):
            order = torch.randperm(args.batch_size, generator=generator).to(device)
            for mb in order.split(args.minibatch_size):
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb], b_actions[mb]
                )
                ratio = (newlogprob - b_logprobs[mb]).exp()
                mb_adv = b_advantages[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std(unbiased=False) + 1e-8)
                pg_loss = torch.max(
                    -mb_adv * ratio,
                    -mb_adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef),
                ).mean()
                v_change = (newvalue - b_values[mb]).clamp(-args.clip_coef, args.clip_coef)
                v_error = (newvalue - b_returns[mb]) ** 2
                v_error_clipped = (b_values[mb] + v_change - b_returns[mb]) ** 2
                v_loss = 0.5 * torch.max(v_error, v_error_clipped).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss

                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        sps = int(global_step / (time.perf_counter() - start))
        if finished:
            print(
                f"step {global_step}: {len(finished)} episodes, return mean "
                f"{np.mean(finished):.2f} min {np.min(finished):.2f} max {np.max(finished):.2f}"
                f" ({sps} steps/s)"
            )
        else:
            print(f"step {global_step}: no episode ended ({sps} steps/s)")
    vec_env.close()


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
