"""The ``physbody`` command: ``train``, ``play`` and ``plot``.

A thin shell over importable functions; tests call :func:`main` with an argument list::

    physbody train                                   # PPO on Crawler-v0, about ten minutes
    physbody train config.yaml --run-id walker --env Walker-v0
    physbody train --run-id walker --resume
    physbody train --backend rllib --address auto --num-env-runners 8 --num-envs-per-runner 4
    physbody play results/ppo/CrawlerDynamic.onnx --episodes 3 --video crawler.mp4
    physbody plot results/ppo

``physbody.train`` is imported only when a subcommand runs, so ``import physbody`` and
``physbody --help`` never import torch, Stable-Baselines3, onnx or ray.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

__all__ = ["build_parser", "main"]

_EXTRA_HINT = 'this command needs the training extra: pip install -c constraints.txt -e ".[train]"'
_DISTRIBUTED_HINT = (
    "--backend rllib needs the distributed extra: "
    'pip install -c constraints.txt -e ".[distributed]"'
)


def _positive_int(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``physbody`` command."""
    env_ids = ("Crawler-v0", "CrawlerStatic-v0", "Walker-v0", "WalkerStatic-v0")
    parser = argparse.ArgumentParser(
        prog="physbody",
        description="Train, run and plot policies for the physbody Crawler and Walker "
        "environments (ML-Agents style, Stable-Baselines3 underneath).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    train = commands.add_parser(
        "train",
        help="train a policy (like mlagents-learn)",
        description="Train PPO or SAC on one environment. Checkpoints, their ONNX exports, "
        "run_logs/training_status.json, episodes.csv and TensorBoard logs go to "
        "RESULTS_DIR/RUN_ID; the final policy is RESULTS_DIR/RUN_ID/<behavior>.onnx. "
        "Ctrl-C (or SIGTERM) saves a final checkpoint and stops.",
    )
    train.add_argument(
        "config",
        nargs="?",
        default=None,
        help="ML-Agents style YAML config (behaviors: {CrawlerDynamic: {...}}); default: "
        "ML-Agents' PPO settings for the environment with a ten-minute max_steps",
    )
    train.add_argument(
        "--env",
        dest="env_id",
        choices=env_ids,
        default=None,
        help="environment id (default: the config's only behavior, else Crawler-v0)",
    )
    train.add_argument("--run-id", default="ppo", help="run folder name (default: ppo)")
    train.add_argument(
        "--results-dir", default="results", help="folder of the runs (default: results)"
    )
    mode = train.add_mutually_exclusive_group()
    mode.add_argument(
        "--resume",
        action="store_true",
        help="continue the run from its newest checkpoint and step count",
    )
    mode.add_argument(
        "--force", action="store_true", help="delete an existing run folder of this name first"
    )
    train.add_argument("--seed", type=_non_negative_int, default=0, help="random seed (default 0)")
    train.add_argument(
        "--num-envs",
        type=_positive_int,
        default=8,
        help="environments stepped together (default 8)",
    )
    train.add_argument(
        "--max-steps",
        type=_positive_int,
        default=None,
        help="total environment steps (overrides the config's max_steps)",
    )
    train.add_argument(
        "--backend",
        choices=("sb3", "rllib"),
        default="sb3",
        help="sb3: Stable-Baselines3 in this process (default); rllib: RLlib PPO on Ray, "
        "local or a cluster (needs the distributed extra)",
    )
    scale = train.add_argument_group("rllib backend (--backend rllib)")
    scale.add_argument(
        "--address",
        default=None,
        help="Ray cluster to join: 'auto' (started here with `ray start`), 'HOST:6379', or "
        "'ray://HOST:10001' (Ray Client); default: start a local Ray",
    )
    scale.add_argument(
        "--num-env-runners",
        type=_non_negative_int,
        default=2,
        help="Ray actors stepping environments (default 2; 0 samples in the driver)",
    )
    scale.add_argument(
        "--num-envs-per-runner",
        type=_positive_int,
        default=4,
        help="environments in each env runner (default 4)",
    )
    train.add_argument(
        "--no-progress-bar",
        dest="progress_bar",
        action="store_false",
        help="do not draw the progress bar",
    )

    play = commands.add_parser(
        "play",
        help="run an exported ONNX policy",
        description="Run an exported policy (deterministic actions, onnxruntime) and print each "
        "episode's return; optionally film it (needs the ffmpeg program).",
    )
    play.add_argument("model", help="an .onnx policy written by physbody train")
    play.add_argument(
        "--env",
        dest="env_id",
        choices=env_ids,
        default=None,
        help="environment id (default: the one stored in the model)",
    )
    play.add_argument(
        "--episodes", type=_positive_int, default=5, help="episodes to run (default 5)"
    )
    play.add_argument("--seed", type=_non_negative_int, default=0, help="seed of the first reset")
    play.add_argument(
        "--video",
        default=None,
        help="write the episodes to this video file; the extension (.mp4, .webm, .gif, ...) "
        "picks the format",
    )

    plot = commands.add_parser(
        "plot",
        help="write a PNG learning curve of a run",
        description="Plot the episode returns of RUN_DIR/<behavior>/episodes.csv against "
        "environment steps.",
    )
    plot.add_argument("run_dir", help="a run folder, e.g. results/ppo")
    plot.add_argument(
        "--out", default=None, help="PNG to write (default: RUN_DIR/learning_curve.png)"
    )
    plot.add_argument(
        "--window",
        type=_positive_int,
        default=None,
        help="episodes in the moving mean (default: automatic)",
    )
    return parser


def _train(args: argparse.Namespace) -> int:
    from physbody.train.settings import TrainOptions
    from physbody.train.trainer import train

    options = TrainOptions(
        config_path=args.config,
        env_id=args.env_id,
        run_id=args.run_id,
        results_dir=args.results_dir,
        resume=args.resume,
        force=args.force,
        seed=args.seed,
        num_envs=args.num_envs,
        max_steps=args.max_steps,
        progress_bar=args.progress_bar,
    )
    if args.backend == "rllib":
        from physbody.train.rllib_backend import RayOptions, train_rllib

        result = train_rllib(
            options,
            RayOptions(
                address=args.address,
                num_env_runners=args.num_env_runners,
                num_envs_per_runner=args.num_envs_per_runner,
            ),
        )
    else:
        if args.address is not None:
            raise ValueError("--address needs --backend rllib")
        result = train(options)
    print(
        f"{result.behavior}: {result.steps:,} steps "
        f"({result.steps_per_second:,.0f} steps/s){' - interrupted' if result.interrupted else ''}"
    )
    print(f"final model: {result.final_model}")
    print(f"status:      {result.run_dir / 'run_logs' / 'training_status.json'}")
    return 0


def _play(args: argparse.Namespace) -> int:
    from physbody.train.play import play

    def report(index: int, episode_return: float, length: int) -> None:
        print(f"episode {index + 1}: return {episode_return:.3f} ({length} steps)", flush=True)

    returns = play(
        args.model,
        args.env_id,
        episodes=args.episodes,
        seed=args.seed,
        video=args.video,
        on_episode=report,
    )
    mean = sum(returns) / len(returns)
    print(f"mean return over {len(returns)} episodes: {mean:.3f}")
    if args.video is not None:
        print(f"video: {args.video}")
    return 0


def _plot(args: argparse.Namespace) -> int:
    from physbody.train.plot import plot_run

    print(plot_run(args.run_dir, args.out, window=args.window))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``physbody`` command.

    Args:
        argv: the arguments after the program name; None reads ``sys.argv[1:]``.

    Returns:
        The exit status: 0 on success, 1 on an error (printed to stderr, without a traceback).
        Invalid arguments exit with status 2 through ``argparse``.
    """
    args = build_parser().parse_args(argv)
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    handlers = {"train": _train, "play": _play, "plot": _plot}
    try:
        return handlers[args.command](args)
    except ModuleNotFoundError as error:
        if error.name and error.name.split(".")[0] == "ray":
            print(f"physbody {args.command}: error: {error}; {_DISTRIBUTED_HINT}", file=sys.stderr)
            return 1
        if error.name and error.name.split(".")[0] in (
            "torch",
            "stable_baselines3",
            "onnx",
            "onnxruntime",
            "yaml",
            "tensorboard",
        ):
            print(f"physbody {args.command}: error: {error}; {_EXTRA_HINT}", file=sys.stderr)
            return 1
        raise
    except (OSError, ValueError, RuntimeError) as error:
        print(f"physbody {args.command}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"physbody {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
