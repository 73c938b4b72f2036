"""Draws the README's learning curves of the long runs in ``runs/`` and prints their table.

Run: ``python scripts/render_results.py``. For each benchmark behaviour, every run of it that
has an ``episodes.csv`` is drawn into ``docs/<behaviour>_runs.png`` with ML-Agents' benchmark
mean return as a dashed line, and one Markdown row per run is printed: the steps reached, the
mean return of the last 100 episodes and the wall time on this machine. ``--readme`` also
writes the table into README.md between its two ``runs table`` comment lines. Wall time adds up the
gaps between consecutive episode ends of one process; gaps over five minutes (a run stopped
and resumed later) are left out.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from physbody.train.plot import draw_learning_curves, read_episodes, save_figure

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


def wall_seconds(path: Path) -> float:
    """Seconds of training behind an ``episodes.csv``, stops between processes left out."""
    times = np.loadtxt(path, delimiter=",", skiprows=1, usecols=3, ndmin=1)
    gaps = np.diff(np.sort(times))
    return float(gaps[gaps < _STOP].sum())


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
    for behaviour, benchmark in BENCHMARKS.items():
        curves = {}
        for run, label in LABELS.items():
            episodes = RUNS / run / behaviour / "episodes.csv"
            if not episodes.is_file():
                continue
            steps, returns = read_episodes(episodes)
            curves[label] = (steps, returns)
            hours = wall_seconds(episodes) / 3600.0
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
    if args.readme:
        write_table(ROOT / "README.md", rows)
        print("wrote the table into README.md")


if __name__ == "__main__":
    main()
