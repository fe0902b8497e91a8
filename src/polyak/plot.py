"""Learning curves from run directories: per-run scores, and mean ± std over seeds of one config."""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from polyak.errors import PolyakError
from polyak.run_dir import RunDir

_SEED_LINE = re.compile(r"^TrainerConfig\.(seed|run_name|runs_root|progress_bar)\s*=.*$", re.MULTILINE)


@dataclass
class RunCurve:
    name: str
    group: str
    episodes: np.ndarray
    scores: np.ndarray
    window_means: np.ndarray


def _group_key(run_dir: Path) -> str:
    """Runs whose operative configs are equal except for seed and naming belong together."""
    return _SEED_LINE.sub("", RunDir(run_dir).config_text()).strip()


def read_run(run_dir: Path) -> RunCurve:
    metrics = RunDir(run_dir).metrics
    if not metrics.is_file():
        raise PolyakError(f"{run_dir} has no metrics.csv (is it a polyak run directory?)")
    episodes, scores, windows = [], [], []
    with open(metrics, newline="") as handle:
        for row in csv.DictReader(handle):
            if row.get("kind") == "episode":
                episodes.append(int(row["episode"]))
                scores.append(float(row["score"]))
                windows.append(float(row["window_mean"]))
    if not episodes:
        raise PolyakError(f"{run_dir} has no finished episodes to plot")
    return RunCurve(run_dir.name, _group_key(run_dir), np.array(episodes), np.array(scores), np.array(windows))


def _label(curves: list[RunCurve], index: int) -> str:
    names = sorted(c.name for c in curves)
    common = re.sub(r"_seed_\d+(_\d+)?$", "", names[0])
    return f"{common} ({len(curves)} seeds)" if len(curves) > 1 else names[0] if names else f"config {index}"


def plot_runs(run_dirs: list[Path], out: Path, threshold: float | None = None, title: str | None = None) -> Path:
    """One PNG: thin per-episode scores, thick window means; a mean ± std band per group of seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = [read_run(d) for d in run_dirs]
    groups: dict[str, list[RunCurve]] = defaultdict(list)
    for curve in curves:
        groups[curve.group].append(curve)

    figure, axis = plt.subplots(figsize=(9, 5.5), dpi=110)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, members in enumerate(groups.values()):
        colour = colours[index % len(colours)]
        label = _label(members, index)
        for curve in members:
            axis.plot(curve.episodes, curve.scores, color=colour, alpha=0.15, linewidth=0.8)
            if len(members) > 1:
                axis.plot(curve.episodes, curve.window_means, color=colour, alpha=0.55, linewidth=1.0)
        if len(members) == 1:
            curve = members[0]
            axis.plot(curve.episodes, curve.window_means, color=colour, linewidth=2.2, label=f"{label}: window mean")
            continue
        length = min(len(c.window_means) for c in members)
        stacked = np.stack([c.window_means[:length] for c in members])
        x = members[0].episodes[:length]
        mean, std = stacked.mean(axis=0), stacked.std(axis=0)
        axis.plot(x, mean, color=colour, linewidth=2.4, label=f"{label}: window mean per seed, and mean ± std")
        axis.fill_between(x, mean - std, mean + std, color=colour, alpha=0.25, linewidth=0)
    if threshold is not None:
        axis.axhline(threshold, color="black", linestyle="--", linewidth=1.2, label=f"solved at {threshold:g}")
    axis.set_xlabel("episode")
    axis.set_ylabel("score (faint: per episode; solid: moving window mean)")
    axis.set_title(title or "polyak learning curves")
    axis.grid(alpha=0.3)
    axis.legend(loc="best", fontsize=9)
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out)
    plt.close(figure)
    return out
