"""Draws the README's learning curves of the long runs in ``runs/`` and prints their table.

Run: ``python scripts/render_results.py``. For each benchmark behaviour, every run of it that
has an ``episodes.csv`` is drawn into ``docs/<behaviour>_runs.png`` with ML-Agents' benchmark
mean return as a dashed line, and one Markdown row per run is printed: the steps reached, the
mean return of the last 100 episodes and the wall time on this machine. ``--readme`` also
writes the table into README.md between its two ``runs table`` comment lines. Wall time adds up the
gaps between consecutive episode ends of one process; gaps over five minutes (a run stopped
and resumed later) are left out. After the table, one line per run gives the figures the
README quotes (:func:`run_statistics`): the step at which the 100-episode mean first reached
the benchmark, the mean return of each million steps, and, over the last million steps, the
share of episodes that ran their full 1000 decisions with the mean return of both kinds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import attrs
import numpy as np
from numpy.typing import NDArray

from physbody.train.plot import draw_learning_curves, moving_mean_std, save_figure

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "runs"
DOCS = ROOT / "docs"

#: ML-Agents' benchmark mean return of each behaviour (docs of releases 4-6).
BENCHMARKS = {"CrawlerDynamic": 800.0, "CrawlerStatic": 1600.0, "WalkerDynamic": 700.0}

#: Where each behaviour's legend covers no curve: the Crawlers rise fast, the Walker slowly.
LEGEND_LOCS = {"CrawlerDynamic": "lower right", "CrawlerStatic": "lower right"}

#: Run folder -> its label: what the run's trainer did.
LABELS = {
    "CrawlerDynamic-sb3-clip": "SB3's PPO, actions clipped to ±1, learning rate decay only",
    "CrawlerDynamic-sb3-entropy": "ML-Agents' actions and decays, SB3's update",
    "CrawlerDynamic": "ML-Agents' PPO (actions, decays, update)",
    "CrawlerDynamic-drag": "the same under Unity's drag",
    "CrawlerStatic": "ML-Agents' PPO (actions, decays, update)",
    "CrawlerStatic-drag": "the same under Unity's drag",
    "WalkerDynamic": "ML-Agents' PPO (actions, decays, update)",
    "WalkerDynamic-cut": "the same from 1.40M, checkpoints lost (records only)",
    "WalkerDynamic-cut2": "the same from 1.40M again, checkpoints lost (records only)",
    "WalkerDynamic-drag": "ML-Agents' PPO (actions, decays, update) under Unity's drag",
}

#: A gap between episode ends longer than this (seconds) is a stop, not training.
_STOP = 300.0


def read_records(path: Path) -> NDArray[np.float64]:
    """(n, 4) columns steps, return, length (decisions) and wall_time (s) of an episodes.csv.

    Read at once, so that a file a run is still writing gives columns of one length.
    """
    return np.loadtxt(path, delimiter=",", skiprows=1, usecols=(0, 1, 2, 3), ndmin=2)


def wall_seconds(times: NDArray[np.float64]) -> float:
    """Seconds of training behind episode end times (s), stops between processes left out."""
    gaps = np.diff(np.sort(times))
    return float(gaps[gaps < _STOP].sum())


#: Decisions in a full episode; a shorter one ended on a forbidden floor contact.
FULL_EPISODE = 1000

#: Episodes in the moving mean that is compared with the benchmark (ML-Agents' summaries).
BENCHMARK_WINDOW = 100


@attrs.frozen
class RunStatistics:
    """What the README says of one run, from its episode records.

    Attributes:
        first_at_benchmark: steps at which the mean of the last 100 episodes first reached the
            benchmark (None: never); the first 99 episodes are not counted.
        million_means: (k,) mean return of the episodes ended in each million steps,
            ``[0, 1M)``, ``[1M, 2M)``, ..., the last one as far as the run went (a million with
            no episode end is NaN).
        last_million_mean: mean return of the episodes ended in the last million steps.
        last_million_full: share of the episodes ended in the last million steps that ran
            their full 1000 decisions, in [0, 1].
        last_million_full_mean: their mean return (NaN if there were none).
        last_million_short_mean: the mean return of the others (NaN if there were none).
    """

    first_at_benchmark: float | None
    million_means: NDArray[np.float64]
    last_million_mean: float
    last_million_full: float
    last_million_full_mean: float
    last_million_short_mean: float


def _mean(values: NDArray[np.float64]) -> float:
    return float(values.mean()) if values.size else float("nan")


def run_statistics(
    steps: NDArray[np.float64],
    returns: NDArray[np.float64],
    lengths: NDArray[np.float64],
    benchmark: float,
) -> RunStatistics:
    """Statistics of a run's episodes, each given by the run's step count when it ended.

    Args:
        steps: (n,) total env steps of the run at each episode end, non-decreasing.
        returns: (n,) episode returns.
        lengths: (n,) episode lengths in decisions.
        benchmark: the return compared with the 100-episode moving mean.

    Raises:
        ValueError: when the three arrays differ in shape or hold no episode.
    """
    steps, returns, lengths = (np.asarray(a, dtype=np.float64) for a in (steps, returns, lengths))
    if not steps.shape == returns.shape == lengths.shape or steps.ndim != 1 or steps.size == 0:
        raise ValueError(
            "steps, returns and lengths must be equal, non-empty 1-D arrays, got shapes "
            f"{steps.shape}, {returns.shape} and {lengths.shape}"
        )
    mean, _ = moving_mean_std(returns, BENCHMARK_WINDOW)
    reached = np.flatnonzero(mean[BENCHMARK_WINDOW - 1 :] >= benchmark)
    first = float(steps[reached[0] + BENCHMARK_WINDOW - 1]) if reached.size else None
    million = np.floor(steps / 1e6).astype(np.int64)
    counts = np.bincount(million)
    sums = np.bincount(million, weights=returns)
    with np.errstate(invalid="ignore", divide="ignore"):
        million_means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    last = steps > steps[-1] - 1e6
    full = last & (lengths >= FULL_EPISODE)
    return RunStatistics(
        first_at_benchmark=first,
        million_means=million_means,
        last_million_mean=_mean(returns[last]),
        last_million_full=float(full.sum() / last.sum()),
        last_million_full_mean=_mean(returns[full]),
        last_million_short_mean=_mean(returns[last & ~full]),
    )


def describe(run: str, statistics: RunStatistics, benchmark: float) -> str:
    """One line of a run's statistics, as the README quotes them."""
    first = statistics.first_at_benchmark
    reached = f"at {first / 1e6:.2f}M" if first is not None else "never"
    means = ", ".join(f"{m:.0f}" for m in statistics.million_means)
    return (
        f"runs/{run}: 100-episode mean first >= {benchmark:.0f} {reached}; "
        f"1M-step means: {means}; last 1M: mean {statistics.last_million_mean:.0f}, "
        f"{statistics.last_million_full:.0%} full-length "
        f"episodes (mean {statistics.last_million_full_mean:.0f}), the others mean "
        f"{statistics.last_million_short_mean:.0f}"
    )


#: The README lines between which ``--readme`` writes the table.
_TABLE_START = "<!-- runs table: python scripts/render_results.py --readme -->"
_TABLE_END = "<!-- end of runs table -->"


def write_table(readme: Path, rows: list[str]) -> None:
    """Replaces the lines between the README's two table markers with ``rows``."""
    text = readme.read_text(encoding="utf-8")
    start, end = text.index(_TABLE_START) + len(_TABLE_START), text.index(_TABLE_END)
    readme.write_text(text[:start] + "\n" + "\n".join(rows) + "\n" + text[end:], "utf-8")


def main() -> None:
    """Writes docs/<behaviour>_runs.png per benchmark behaviour and prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", action="store_true", help="write the table into README.md")
    args = parser.parse_args()
    rows = [
        "| behaviour | run | steps | mean return, last 100 episodes | wall time |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines = []
    for behaviour, benchmark in BENCHMARKS.items():
        curves = {}
        for run, label in LABELS.items():
            episodes = RUNS / run / behaviour / "episodes.csv"
            if not episodes.is_file():
                continue
            steps, returns, lengths, times = read_records(episodes).T
            curves[label] = (steps, returns)
            statistics = run_statistics(steps, returns, lengths, benchmark)
            lines.append(describe(run, statistics, benchmark))
            hours = wall_seconds(times) / 3600.0
            rows.append(
                f"| {behaviour} | `runs/{run}`: {label} | {steps[-1] / 1e6:.2f}M "
                f"| {returns[-100:].mean():.0f} | {hours:.1f} h |"
            )
        if not curves:
            continue
        figure = draw_learning_curves(
            curves,
            title=f"{behaviour}: episode returns on 2 cores",
            reference=benchmark,
            reference_label="ML-Agents' benchmark",
            legend_loc=LEGEND_LOCS.get(behaviour, "upper left"),
        )
        path = save_figure(figure, DOCS / f"{behaviour}_runs.png")
        print(f"wrote {path.relative_to(ROOT)}")
    print("\n".join(rows))
    print("\n".join(lines))
    if args.readme:
        write_table(ROOT / "README.md", rows)
        print("wrote the table into README.md")


if __name__ == "__main__":
    main()
