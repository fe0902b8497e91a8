"""Learning curves from run directories: per-run scores, and mean ± std over seeds of one config; a second panel
with the evaluation scores (metrics.csv's eval rows) when the runs evaluated.

Runs belong to one config when their config.json files are equal except for the seed and naming; the seed is
the run's own (``TrainerConfig.seed``), so two runs of one seed count once, with a warning.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from polyak.errors import ConfigError, PolyakError
from polyak.run_dir import RunDir

_SEED_LINE = re.compile(r"^TrainerConfig\.(seed|run_name|runs_root|progress_bar)\s*=.*$", re.MULTILINE)


_NOT_THE_CONFIG = ("seed", "run_name", "runs_root", "progress_bar", "wandb_project")
DEFAULT_NAME = "curves.png"


def default_plot_path(run_dirs: list[Path]) -> Path:
    """``polyak plot``'s ``--out`` when none is given: ``curves.png`` in the run directory for one run, in the
    current directory for several."""
    return run_dirs[0] / DEFAULT_NAME if len(run_dirs) == 1 else Path(DEFAULT_NAME)


@dataclass
class RunCurve:
    name: str
    group: str
    episodes: np.ndarray
    scores: np.ndarray
    window_means: np.ndarray
    seed: int | None = None
    eval_steps: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    eval_scores: np.ndarray = field(default_factory=lambda: np.zeros(0))


def _config_and_seed(run_dir: Path) -> tuple[str, int | None]:
    """The run's config without seed and naming (runs equal in it belong together), and its seed."""
    directory = RunDir(run_dir)
    if directory.config_json.is_file():
        try:
            config = json.loads(directory.config_json.read_text())
            trainer = config.get("trainer", {})
            seed = trainer.get("seed")
            config["trainer"] = {k: v for k, v in trainer.items() if k not in _NOT_THE_CONFIG}
            return json.dumps(config, sort_keys=True), (int(seed) if seed is not None else None)
        except (ValueError, AttributeError, TypeError):
            pass  # a damaged config.json: group by config.gin as runs without one
    text = directory.config_text()
    found = re.search(r"^TrainerConfig\.seed\s*=\s*(\d+)", text, re.MULTILINE)
    return _SEED_LINE.sub("", text).strip(), (int(found.group(1)) if found else None)


def _group_key(run_dir: Path) -> str:
    """Runs whose configs are equal except for seed and naming belong together."""
    return _config_and_seed(run_dir)[0]


def _number(field: str) -> float:
    """A score field of metrics.csv: empty when the value was NaN."""
    return float(field) if field else math.nan


def read_run(run_dir: Path) -> RunCurve:
    metrics = RunDir(run_dir).metrics
    if not metrics.is_file():
        raise PolyakError(f"{run_dir} has no metrics.csv (is it a polyak run directory?)")
    episodes, scores, windows, eval_steps, eval_scores = [], [], [], [], []
    rows, cut_short = RunDir(run_dir).metrics_rows()
    for row in rows:
        if row.get("kind") == "episode":
            episodes.append(int(row["episode"]))
            scores.append(_number(row["score"]))
            windows.append(_number(row["window_mean"]))
        elif row.get("kind") == "eval":
            eval_steps.append(int(row["env_steps"]))
            eval_scores.append(_number(row["score"]))
    if cut_short:
        _warn(f"{run_dir}: skipped the last row of metrics.csv, which is cut short (the run was killed while "
              "writing it, or is writing it now)")
    if not episodes and not eval_steps:
        raise PolyakError(f"{run_dir} has no finished episodes or evaluations to plot yet")
    group, seed = _config_and_seed(run_dir)
    return RunCurve(run_dir.name, group, np.array(episodes), np.array(scores), np.array(windows), seed,
                    np.array(eval_steps, dtype=np.int64), np.array(eval_scores))


def group_runs(curves: list[RunCurve]) -> tuple[list[list[RunCurve]], list[str]]:
    """Curves grouped by config, one run per seed (the first given); a warning for each run left out."""
    groups: dict[str, list[RunCurve]] = defaultdict(list)
    warnings = []
    for curve in curves:
        members = groups[curve.group]
        twin = next((m for m in members if curve.seed is not None and m.seed == curve.seed), None)
        if twin is not None:
            warnings.append(f"{curve.name} and {twin.name} are runs of one config with the same seed "
                            f"({curve.seed}); counting it once (plotting {twin.name})")
            continue
        members.append(curve)
    return list(groups.values()), warnings


def _warn(text: str) -> None:
    print(f"polyak: warning: {text}", file=sys.stderr, flush=True)


def _label(curves: list[RunCurve], index: int) -> str:
    names = sorted(c.name for c in curves)
    common = re.sub(r"_seed_\d+(_\d+)?$", "", names[0]) if names else f"config {index}"
    return f"{common} ({len(curves)} seeds)" if len(curves) > 1 else names[0] if names else f"config {index}"


def _mean_band(axis, x: np.ndarray, ys: list[np.ndarray], colour: str, label: str) -> None:
    """Mean ± std of equally long curves ``ys`` over ``x``."""
    stacked = np.stack(ys)
    mean, std = stacked.mean(axis=0), stacked.std(axis=0)
    axis.plot(x, mean, color=colour, linewidth=2.4, label=label)
    axis.fill_between(x, mean - std, mean + std, color=colour, alpha=0.25, linewidth=0)


def _plot_episodes(axis, members: list[RunCurve], colour: str, label: str) -> None:
    members = [c for c in members if len(c.episodes)]  # a run on an env without a time limit may have none
    if not members:
        return
    for curve in members:
        axis.plot(curve.episodes, curve.scores, color=colour, alpha=0.15, linewidth=0.8)
        if len(members) > 1:
            axis.plot(curve.episodes, curve.window_means, color=colour, alpha=0.55, linewidth=1.0)
    if len(members) == 1:
        axis.plot(members[0].episodes, members[0].window_means, color=colour, linewidth=2.2,
                  label=f"{label}: window mean")
        return
    length = min(len(c.window_means) for c in members)
    _mean_band(axis, members[0].episodes[:length], [c.window_means[:length] for c in members], colour,
               f"{label}: window mean per seed, and mean ± std")


def _plot_evaluations(axis, members: list[RunCurve], colour: str, label: str) -> None:
    evaluated = [c for c in members if len(c.eval_steps)]
    for curve in evaluated:
        axis.plot(curve.eval_steps, curve.eval_scores, color=colour, alpha=0.45 if len(evaluated) > 1 else 1.0,
                  linewidth=1.0 if len(evaluated) > 1 else 2.2, marker="o", markersize=2.5,
                  label=None if len(evaluated) > 1 else f"{label}: evaluation mean")
    if len(evaluated) > 1:
        common = sorted(set.intersection(*(set(c.eval_steps.tolist()) for c in evaluated)))
        if common:
            ys = [np.array([c.eval_scores[list(c.eval_steps).index(step)] for step in common]) for c in evaluated]
            _mean_band(axis, np.array(common), ys, colour, f"{label}: evaluation mean ± std over seeds")


def _image_path(out: Path) -> Path:
    """``out`` as the file matplotlib will write: ``.png`` added when it has no suffix; a directory or a format
    matplotlib cannot write is refused before any run is read."""
    from matplotlib.backend_bases import FigureCanvasBase

    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name such as {out / 'curves.png'}")
    if not out.suffix:
        return out.with_name(out.name + ".png")
    formats = FigureCanvasBase.get_supported_filetypes()
    if out.suffix[1:].lower() not in formats:
        raise ConfigError(f"--out must end in one of {', '.join('.' + f for f in sorted(formats))}, "
                          f"got {out.name!r}")
    return out


def plot_runs(run_dirs: list[Path], out: Path, threshold: float | None = None, title: str | None = None,
              warn: Callable[[str], None] = _warn) -> Path:
    """One PNG: thin per-episode scores, thick window means, a mean ± std band per group of seeds; beside it
    the evaluation scores over env steps when any run evaluated. Runs repeating a seed of their config are
    left out, each with a ``warn`` line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = _image_path(out)
    groups, warnings = group_runs([read_run(d) for d in run_dirs])
    for text in warnings:
        warn(text)
    with_evals = any(len(c.eval_steps) for members in groups for c in members)
    figure, axes = plt.subplots(1, 2 if with_evals else 1, figsize=(15 if with_evals else 9, 5.5), dpi=110,
                                squeeze=False)
    episodes_axis = axes[0][0]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, members in enumerate(groups):
        colour, label = colours[index % len(colours)], _label(members, index)
        _plot_episodes(episodes_axis, members, colour, label)
        if with_evals:
            _plot_evaluations(axes[0][1], members, colour, label)
    for axis in axes[0]:
        if threshold is not None:
            axis.axhline(threshold, color="black", linestyle="--", linewidth=1.2, label=f"solved at {threshold:g}")
        axis.grid(alpha=0.3)
        if axis.get_legend_handles_labels()[0]:
            axis.legend(loc="best", fontsize=9)
    if not any(len(c.episodes) for members in groups for c in members):
        episodes_axis.text(0.5, 0.5, "no finished episodes yet\n(an env without a time limit?)",
                           ha="center", va="center", transform=episodes_axis.transAxes)
    episodes_axis.set_xlabel("episode")
    episodes_axis.set_ylabel("score (faint: per episode; solid: moving window mean)")
    episodes_axis.set_title(title or "polyak learning curves")
    if with_evals:
        axes[0][1].set_xlabel("env steps")
        axes[0][1].set_ylabel("evaluation score (greedy policy, mean over eval episodes)")
        axes[0][1].set_title("evaluations")
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out)
    plt.close(figure)
    return out
