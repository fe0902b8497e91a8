"""The benchmark suite's statistics (``benchmarks/suite.py``): rliable's bootstrap intervals, IQMs, normalized scores,
probability of improvement, the stability ratio and the rule that picks the recommended row, for suite.json.

rliable and numpy are imported inside these functions: a training job does not need the bench extra's rliable.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from suite import (
    BASELINE_ROW,
    DEFAULT_SEEDS_ASKED,
    PUBLISHED_100K,
    RANDOM_SCORES,
    RANDOM_SCORES_SOURCE,
    RECOMMENDED_ROW,
    ROWS,
    SAMPLE_EFFICIENCY_TASKS,
    rows_of,
    seeds_asked,
)

# The rule that picks the recommended row from the measured rows (``recommendation``): among these candidates, on
# the locomotion tasks where all have runs, the highest IQM of normalized final returns. Stability is then a
# requirement on the pick, not a filter (a row that stays at a low best is not better for it): on every task the
# mean over seeds of (mean of the last five evaluations / best evaluation) must be at least STABILITY_FLOOR, else
# the report says the pick still falls from its best.
CANDIDATE_ROWS = ("polyak_td3", "polyak_td7", "polyak_crossq", "polyak_crossq_sac")
STABILITY_FLOOR = 0.8
BOOTSTRAP_REPS = 2_000
CONFIDENCE = 0.95
BOOTSTRAP_SEED = 0  # numpy's global RNG is seeded with it before each estimate: the report is reproducible


def bootstrap(scores: Any, func: Callable[..., Any]) -> tuple[Any, Any]:
    """rliable's stratified percentile bootstrap of ``func`` over runs: ``scores`` is a (runs x tasks x ...) array,
    or a list of them resampled independently; returns the point estimate and the (2 x ...) interval. rliable draws
    its resamples from numpy's global RNG (the ``random_state`` it takes does not reach them), so that RNG is seeded
    with BOOTSTRAP_SEED just before and restored after: the same runs always give the same interval."""
    import numpy as np
    from rliable import library

    saved = np.random.get_state()
    np.random.seed(BOOTSTRAP_SEED)
    try:
        points, intervals = library.get_interval_estimates({"x": scores}, func, method="percentile",
                                                           reps=BOOTSTRAP_REPS, confidence_interval_size=CONFIDENCE)
    finally:
        np.random.set_state(saved)
    return np.asarray(points["x"]), np.asarray(intervals["x"])


def interval_text(ci: list[float], digits: int) -> str:
    """A bootstrap interval as the reports write it: ``[low, high]`` to ``digits`` decimals."""
    return f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def iqm_interval(scores: Any) -> tuple[float, list[float]]:
    """The interquartile mean of a (runs x tasks) array, rliable's ``aggregate_iqm`` (scipy's ``trim_mean`` cutting
    25% of the pooled values at each end: the plain mean of 3 values, the mean of the middle 3 of 5), and its 95%
    stratified bootstrap interval."""
    import numpy as np
    from rliable import metrics

    point, interval = bootstrap(np.asarray(scores, dtype=float), lambda x: np.array([metrics.aggregate_iqm(x)]))
    return float(point[0]), [float(interval[0, 0]), float(interval[1, 0])]


def curve_interval(curves: Any) -> tuple[Any, Any, Any]:
    """The mean learning curve of a (seeds x evaluations) array and, at each evaluation, the 95% percentile bootstrap
    interval of that mean over seeds (rliable resamples the seeds at each evaluation independently)."""
    import numpy as np

    array = np.asarray(curves, dtype=float)
    point, interval = bootstrap(array[:, None, :], lambda x: x.mean(axis=0)[0])
    return point, interval[0], interval[1]


def row_statistics(row: str, data: dict[str, Any]) -> dict[str, Any]:
    """One row on one task: seeds (and the seeds asked), mean and IQM of the final returns with the IQM's interval,
    the best evaluation (mean over seeds of each seed's highest) and the mean of each seed's last five evaluations.
    Users get the final policy, so the final return is the score; the other two show how much it swings."""
    finals = [float(x) for x in data["final_returns"]]
    iqm, ci = iqm_interval([[x] for x in finals])
    return {"seeds": len(finals), "seeds_asked": seeds_asked(row), "mean_final_return": statistics.mean(finals),
            "iqm_final_return": iqm, "iqm_ci": ci,
            "best_evaluation": statistics.mean(max(curve) for curve in data["eval_returns"]),
            "mean_last_five_evaluations": statistics.mean(statistics.mean(c[-5:]) for c in data["eval_returns"])}


def task_statistics(task: str, entry: dict[str, Any]) -> dict[str, Any]:
    """A locomotion task's rows (those with runs), the rows without runs yet, the published 100k figures and how far
    the best polyak row (by mean final return) is from them (relative: 0.1 = 10% above)."""
    rows = {row: row_statistics(row, entry["rows"][row]) for row in rows_of(task) if row in entry["rows"]}
    published = PUBLISHED_100K[task]
    result: dict[str, Any] = {"rows": rows, "rows_without_runs": [r for r in rows_of(task) if r not in rows],
                              "published_100k": {"best": published.best, "best_method": published.best_method,
                                                 "crossq_paper": published.crossq_paper, "mrq": published.mrq},
                              "best_polyak_row": None}
    polyak_rows = [row for row in rows if row.startswith("polyak_")]
    if polyak_rows:
        best = max(polyak_rows, key=lambda row: rows[row]["mean_final_return"])
        score = rows[best]["mean_final_return"]
        result["best_polyak_row"] = {
            "row": best, "mean_final_return": score, "vs_crossq_paper": score / published.crossq_paper - 1,
            "vs_best_published": score / published.best - 1, "vs_mrq": score / published.mrq - 1}
    return result


def normalized_score(task: str, score: float) -> float:
    """(score - random-policy score) / (best published 100k score - random-policy score): 0 is a random policy,
    1 the best published figure."""
    random = RANDOM_SCORES[task]
    return (score - random) / (PUBLISHED_100K[task].best - random)


def final_matrix(suite: dict[str, Any], row: str, tasks: list[str], normalize: bool) -> Any:
    """The row's final returns as a (seeds x tasks) array: the lowest ``k`` seed numbers on each task, ``k`` the
    fewest seeds the row has on any of them (rliable's bootstrap needs as many runs on every task, and every task
    then weighs the same)."""
    import numpy as np

    per_task = [suite["tasks"][task]["rows"][row]["final_returns"] for task in tasks]  # collect() sorts by seed
    count = min(len(finals) for finals in per_task)
    return np.array([[normalized_score(task, x) if normalize else x for x in finals[:count]]
                     for task, finals in zip(tasks, per_task, strict=True)]).T


def tasks_with_runs(suite: dict[str, Any], *rows: str) -> list[str]:
    """The locomotion tasks the cross-task statistics of ``rows`` use: those on which every one of them has at least
    DEFAULT_SEEDS_ASKED seeds, or, while no task has that many, those on which every one has runs. A task where a
    row has one seed would otherwise cut every task to one seed (``final_matrix`` takes as many on each)."""
    def seeds(task: str, row: str) -> int:
        return len(suite["tasks"].get(task, {}).get("rows", {}).get(row, {}).get("final_returns", []))

    with_runs = [task for task in SAMPLE_EFFICIENCY_TASKS if all(seeds(task, row) for row in rows)]
    enough = [task for task in with_runs if all(seeds(task, row) >= DEFAULT_SEEDS_ASKED for row in rows)]
    return enough or with_runs


def normalized_iqm(suite: dict[str, Any], row: str) -> dict[str, Any]:
    """The IQM of the row's normalized final returns pooled over the locomotion tasks it has runs on (named in
    ``tasks``: rows on different tasks do not compare), with its stratified bootstrap interval."""
    tasks = tasks_with_runs(suite, row)
    if not tasks:
        return {"tasks": [], "seeds_per_task": 0, "iqm": None, "ci": None}
    matrix = final_matrix(suite, row, tasks, normalize=True)
    iqm, ci = iqm_interval(matrix)
    return {"tasks": tasks, "seeds_per_task": int(matrix.shape[0]), "iqm": iqm, "ci": ci}


def probability_of_improvement(suite: dict[str, Any], row: str, over: str,
                               only: list[str] | None = None) -> dict[str, Any]:
    """rliable's probability of improvement of ``row`` over ``over`` (per task the probability that a run of one
    beats a run of the other, Mann-Whitney, averaged over tasks) with its bootstrap interval (the runs of both rows
    resampled independently), on the locomotion tasks where both rows have runs (named in ``tasks``), or on those of
    ``only`` where both have runs."""
    import numpy as np
    from rliable import metrics

    tasks = tasks_with_runs(suite, row, over) if only is None else [
        task for task in only if all(suite["tasks"].get(task, {}).get("rows", {}).get(name) for name in (row, over))]
    result: dict[str, Any] = {"row": row, "over": over, "tasks": tasks, "seeds_per_task": {}, "probability": None,
                              "ci": None}
    if not tasks:
        return result
    mine, theirs = (final_matrix(suite, name, tasks, normalize=False) for name in (row, over))
    point, interval = bootstrap([mine, theirs], lambda x, y: np.array([metrics.probability_of_improvement(x, y)]))
    result.update(seeds_per_task={row: int(mine.shape[0]), over: int(theirs.shape[0])},
                  probability=float(point[0]), ci=[float(interval[0, 0]), float(interval[1, 0])])
    return result


def stability_ratio(eval_returns: list[list[float]]) -> float | None:
    """Mean over seeds of (mean of the seed's last five evaluations / its best evaluation): 1.0 when every seed ends
    at its best, lower the more the final policies fell from what they reached; None when a best is not positive."""
    ratios = [statistics.mean(curve[-5:]) / max(curve) for curve in eval_returns if max(curve) > 0]
    return statistics.mean(ratios) if len(ratios) == len(eval_returns) else None


def recommendation(suite: dict[str, Any]) -> dict[str, Any]:
    """The rule behind the recommended row (``CANDIDATE_ROWS``, ``STABILITY_FLOOR``): per candidate, on the tasks
    where every candidate has runs, the IQM of its normalized final returns with its interval, the stability ratio
    per task and its lowest, and the median CPU minutes per 100k env steps; ``pick`` is the candidate with the highest
    IQM (None when no task has runs of all), ``pick_is_stable`` whether its lowest stability reaches the floor. The
    shipped recommended row (the pick through its averaged actor; ``shipped_is_stable``, None without runs there) and
    the baseline row are listed beside them when they have runs on those tasks, not as candidates."""
    tasks = tasks_with_runs(suite, *CANDIDATE_ROWS)
    result: dict[str, Any] = {"candidates": list(CANDIDATE_ROWS), "stability_floor": STABILITY_FLOOR,
                              "tasks": tasks, "rows": {}, "pick": None, "pick_is_stable": None}
    if not tasks:
        return result
    def runs_everywhere(row: str) -> bool:
        return all(row in suite["tasks"][task]["rows"] for task in tasks)

    listed = [*CANDIDATE_ROWS, *(row for row in (RECOMMENDED_ROW, BASELINE_ROW)
                                 if row not in CANDIDATE_ROWS and runs_everywhere(row))]
    for row in listed:
        matrix = final_matrix(suite, row, tasks, normalize=True)
        iqm, ci = iqm_interval(matrix)
        count = int(matrix.shape[0])  # the seeds the IQM has on every task: the stability is over the same runs
        per_task = {task: stability_ratio(suite["tasks"][task]["rows"][row]["eval_returns"][:count]) for task in tasks}
        known = [x for x in per_task.values() if x is not None]
        cpu_minutes = [seconds / 60 * 100_000 / suite["tasks"][task]["budget"] for task in tasks
                       for seconds in suite["tasks"][task]["rows"][row]["cpu_seconds"] if seconds is not None]
        result["rows"][row] = {
            "seeds_per_task": count, "normalized_iqm": iqm, "ci": ci, "stability": per_task,
            "lowest_stability": min(known) if len(known) == len(per_task) else None,
            "cpu_minutes_per_100k": statistics.median(cpu_minutes) if cpu_minutes else None,
            "candidate": row in CANDIDATE_ROWS}
    pick = max(CANDIDATE_ROWS, key=lambda row: result["rows"][row]["normalized_iqm"])
    result["pick"] = pick
    result["pick_is_stable"] = (result["rows"][pick]["lowest_stability"] or 0) >= STABILITY_FLOOR
    shipped = result["rows"].get(RECOMMENDED_ROW)
    result["shipped_is_stable"] = None if shipped is None else (shipped["lowest_stability"] or 0) >= STABILITY_FLOOR
    return result


def suite_statistics(suite: dict[str, Any]) -> dict[str, Any]:
    """suite.json's ``statistics``: per locomotion task and row the final-return statistics, the published figures
    and gaps; across tasks each row's IQM of normalized scores and the recommended row's probability of improvement
    over the baseline; the bootstrap settings."""
    empty: dict[str, Any] = {"rows": {}}
    return {
        "bootstrap": {"library": "rliable", "method": "stratified percentile bootstrap over runs",
                      "reps": BOOTSTRAP_REPS, "confidence": CONFIDENCE, "numpy_global_seed": BOOTSTRAP_SEED},
        "score": "final return: each seed's last evaluation (the policy a user gets)",
        "iqm": "rliable aggregate_iqm: scipy trim_mean cutting 25% at each end (3 values: their mean)",
        "normalization": {"formula": "(final return - random) / (best published 100k - random)",
                          "random_scores": RANDOM_SCORES, "random_scores_source": RANDOM_SCORES_SOURCE},
        "recommended_row": RECOMMENDED_ROW, "baseline_row": BASELINE_ROW,
        "seeds_asked": {row: seeds_asked(row) for row in ROWS},
        "tasks": {task: task_statistics(task, suite["tasks"].get(task, empty)) for task in SAMPLE_EFFICIENCY_TASKS},
        "normalized_iqm": {row: normalized_iqm(suite, row) for row in ROWS if tasks_with_runs(suite, row)},
        "probability_of_improvement": probability_of_improvement(suite, RECOMMENDED_ROW, BASELINE_ROW),
        "recommendation": recommendation(suite),
        "averaged_against_live": averaged_against_live(suite),
    }


def averaged_against_live(suite: dict[str, Any]) -> list[dict[str, Any]]:
    """Per run of ``RECOMMENDED_ROW`` that scored both policies: the final return, the mean of the last five
    evaluations and the stability of its averaged actor and of its live actor (the same training, the same start
    states), task by task in seed order."""
    runs = []
    for task, entry in suite["tasks"].items():
        data = entry["rows"].get(RECOMMENDED_ROW, {})
        for seed, curve, live in zip(data.get("seeds", []), data.get("eval_returns", []),
                                     data.get("live_eval_returns", []), strict=False):
            runs.append({"task": task, "seed": seed, **{
                f"{prefix}{name}": value for prefix, values in (("", curve), ("live_", live)) for name, value in (
                    ("final", values[-1]), ("last5", statistics.mean(values[-5:])),
                    ("stability", stability_ratio([values])))}})
    return runs
