"""The ``physbody`` command: ``train``, ``play`` and ``plot``.

A thin shell over importable functions; tests call :func:`main` with an argument list::

    physbody train                                   # PPO on Crawler-v0, about ten minutes
    physbody train config.yaml --run-id walker --env Walker-v0
    physbody train --run-id walker --resume
    physbody train --backend rllib --address auto --num-env-runners 8 --num-envs-per-runner 4
    physbody play results/ppo/CrawlerDynamic.onnx --episodes 3 --video crawler.mp4
    physbody play Crawler-v0                         # the trained policy shipped with physbody
    physbody plot results/ppo

``physbody.train`` is imported only when a subcommand runs, so ``import physbody`` and
``physbody --help`` never import torch, Stable-Baselines3, onnx or ray.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from collections.abc import Sequence

__all__ = ["build_parser", "main"]

_EXTRA_HINT = 'this command needs the training extra: pip install -c constraints.txt -e ".[train]"'
_PLAY_HINT = 'physbody play needs the play extra (onnxruntime): pip install "physbody[play]"'
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


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
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
        default=80,
        help="agents stepped together in the native vector env (default 80)",
    )
    train.add_argument(
        "--num-workers",
        type=_positive_int,
        default=None,
        help="processes stepping the agents' physics (default: one per CPU core; 1 steps "
        "them in this process)",
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
    scale.add_argument(
        "--on-env-runner-failure",
        choices=("restart", "ignore", "stop"),
        default="restart",
        help="when an env runner is lost (its process or machine died): restart = go on with "
        "the others while Ray re-creates it where resources allow (default); ignore = go on "
        "without it; stop = stop with a final checkpoint",
    )
    scale.add_argument(
        "--env-runner-probe-timeout",
        type=_positive_float,
        default=30.0,
        metavar="SECONDS",
        help="how long each health probe of a lost env runner waits, once per iteration while "
        "one is lost (default 30, RLlib's)",
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
        "episode's return; optionally film it (imageio-ffmpeg's own ffmpeg, no system program).",
    )
    play.add_argument(
        "model",
        help="an .onnx policy written by physbody train, or an environment id (Crawler-v0) "
        "to play the trained policy shipped with physbody",
    )
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
        help="write the episodes to this video file; the extension picks the format: .mp4, "
        ".m4v, .mov, .mkv (H.264), .webm (VP9) or .gif",
    )

    plot = commands.add_parser(
        "plot",
        help="write a PNG (and SVG) learning curve of a run",
        description="Plot the episode returns of RUN_DIR/<behavior>/episodes.csv against "
        "environment steps (matplotlib): per behavior a moving mean with a shaded band of "
        "one standard deviation, and each episode as a faint dot.",
    )
    plot.add_argument("run_dir", help="a run folder, e.g. results/ppo")
    plot.add_argument(
        "--out",
        default=None,
        help="file to write, .png or .svg (default: RUN_DIR/learning_curve.png)",
    )
    plot.add_argument(
        "--svg", action="store_true", help="also write an SVG beside it (same name, .svg)"
    )
    plot.add_argument(
        "--window",
        type=_positive_int,
        default=None,
        help="episodes in the moving mean and spread (default: automatic)",
    )
    plot.add_argument(
        "--reference",
        type=_finite_float,
        default=None,
        metavar="RETURN",
        help="draw a dashed horizontal line at this return, e.g. ML-Agents' benchmark",
    )
    plot.add_argument(
        "--reference-label",
        default=None,
        metavar="TEXT",
        help="legend entry of the --reference line (default: reference)",
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
        num_workers=args.num_workers,
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
                on_env_runner_failure=args.on_env_runner_failure,
                env_runner_probe_timeout_s=args.env_runner_probe_timeout,
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

    if args.reference_label is not None and args.reference is None:
        raise ValueError("--reference-label needs --reference RETURN")
    out = plot_run(
        args.run_dir,
        args.out,
        window=args.window,
        reference=args.reference,
        reference_label=args.reference_label,
        svg=args.svg,
    )
    print(out)
    if args.svg and out.suffix.lower() != ".svg":
        print(out.with_suffix(".svg"))
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
            "matplotlib",
            "imageio",
            "imageio_ffmpeg",
            "tqdm",
        ):
            hint = _PLAY_HINT if args.command == "play" else _EXTRA_HINT
            print(f"physbody {args.command}: error: {error}; {hint}", file=sys.stderr)
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
