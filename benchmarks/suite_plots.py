"""The benchmark suite's figures (``benchmarks/suite.py``): per task the learning curves with their bootstrap
intervals and the return against wall time, and across tasks the normalized IQMs and performance profiles.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from suite import EVAL_EPISODES, ROWS, SAMPLE_EFFICIENCY_TASKS, TASKS, seeds_text
from suite_stats import CANDIDATE_ROWS, bootstrap, curve_interval, final_matrix, iqm_interval, tasks_with_runs


def plot(suite: dict[str, Any], results: Path) -> None:
    """Per task, each row's mean learning curve over seeds with a shaded 95% bootstrap interval of that mean at every
    evaluation (``curve_interval``), the seed count in the legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    for task, entry in suite["tasks"].items():
        if not entry["rows"]:
            continue
        figure, axes = plt.subplots(figsize=(7, 4.5))
        for row, data in entry["rows"].items():
            length = min(len(r) for r in data["eval_returns"])
            curves = np.array([r[:length] for r in data["eval_returns"]])
            steps = np.array(data["eval_steps"][:length])
            mean, low, high = curve_interval(curves)
            (line,) = axes.plot(steps, mean, label=f"{row} ({seeds_text(len(curves))})")
            axes.fill_between(steps, low, high, alpha=0.2, color=line.get_color(), linewidth=0)
        axes.set(title=f"{task}, {entry['budget']:,} env steps: mean over seeds, shaded 95% bootstrap CI",
                 xlabel="env steps", ylabel=f"evaluation return ({EVAL_EPISODES} episodes)")
        axes.title.set_fontsize(10)
        axes.legend(fontsize=8)
        axes.grid(alpha=0.3)
        figure.tight_layout()
        figure.savefig(results / f"suite_{TASKS[task].config_stem}.png", dpi=100)
        plt.close(figure)


def plot_aggregate(suite: dict[str, Any], results: Path) -> None:
    """suite_aggregate.png, on the tasks where every candidate of the recommendation has runs, for each row with runs
    on all of them: the IQM of normalized final returns with its 95% interval, and the performance profile (the
    fraction of runs whose normalized final return exceeds tau, Agarwal et al. 2021) with its 95% band; both with
    rliable's stratified bootstrap."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    tasks = tasks_with_runs(suite, *CANDIDATE_ROWS)
    if not tasks:
        return
    rows = [row for row in ROWS if tasks_with_runs(suite, row, *CANDIDATE_ROWS) == tasks]
    taus = np.linspace(0.0, 1.25, 51)
    figure, (bars, profiles) = plt.subplots(1, 2, figsize=(11, 4.5))
    for index, row in enumerate(rows):
        matrix = final_matrix(suite, row, tasks, normalize=True)
        iqm, ci = iqm_interval(matrix)
        bars.errorbar([iqm], [index], xerr=[[iqm - ci[0]], [ci[1] - iqm]], fmt="o", capsize=4)
        point, band = bootstrap(matrix, lambda x: np.array([(x > tau).mean() for tau in taus]))
        (line,) = profiles.plot(taus, point, label=f"{row} ({matrix.shape[0]} seeds per task)")
        profiles.fill_between(taus, band[0], band[1], alpha=0.2, color=line.get_color(), linewidth=0)
    bars.set(yticks=range(len(rows)), yticklabels=rows, xlabel="IQM of normalized final return (95% CI)")
    profiles.set(xlabel="normalized final return tau (1 = best published 100k)", ylabel="fraction of runs > tau")
    figure.suptitle(f"100k env steps on {', '.join(tasks)}: normalized by random and best published scores",
                    fontsize=10)
    for axes in (bars, profiles):
        axes.grid(alpha=0.3)
    profiles.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(results / "suite_aggregate.png", dpi=100)
    plt.close(figure)


def eval_minutes(data: dict[str, Any], seed_index: int) -> list[float]:
    """Minutes from a run's start to each of its evaluations: recorded where the run recorded them, otherwise
    (runs before eval times were kept) spread evenly over the run's wall time by env steps."""
    recorded = data["eval_wall_seconds"][seed_index]
    if recorded:
        return [seconds / 60 for seconds in recorded]
    budget = data["eval_steps"][-1]
    return [data["wall_seconds"][seed_index] * steps / budget / 60 for steps in data["eval_steps"]]


def plot_wall_time(suite: dict[str, Any], results: Path) -> None:
    """Return against wall minutes (one torch thread per run) on the sample-efficiency tasks."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    for task in SAMPLE_EFFICIENCY_TASKS:
        entry = suite["tasks"].get(task)
        if not entry or not entry["rows"]:
            continue
        figure, axes = plt.subplots(figsize=(6, 4))
        for row, data in entry["rows"].items():
            length = min(len(r) for r in data["eval_returns"])
            curves = np.array([r[:length] for r in data["eval_returns"]])
            minutes = np.array([eval_minutes(data, i)[:length] for i in range(len(curves))]).mean(axis=0)
            interpolated = any(not recorded for recorded in data["eval_wall_seconds"])
            axes.plot(minutes, curves.mean(axis=0),
                      label=f"{row} ({len(curves)} seeds{', times interpolated' if interpolated else ''})")
        axes.set(title=f"{task}: return against wall time (one torch thread per run)", xlabel="wall minutes",
                 ylabel=f"evaluation return ({EVAL_EPISODES} episodes)")
        axes.legend(fontsize=8)
        axes.grid(alpha=0.3)
        figure.tight_layout()
        figure.savefig(results / f"suite_{TASKS[task].config_stem}_wall.png", dpi=100)
        plt.close(figure)
