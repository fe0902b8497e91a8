"""The benchmark suite's report (``benchmarks/suite.py --report`` and ``--todo``): suite.json from the run files,
suite.md's tables and sections, the README's table, and the list of runs still missing with their estimated cost.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from baseline_width import goal_line
from common import cpu_kind, machines_by_kind, newest_commit
from suite import (
    BASELINE_ROW,
    DEFAULT_SEEDS_ASKED,
    EVAL_EPISODES,
    PUBLISHED_100K,
    RECOMMENDED_ROW,
    RESULTS,
    ROOT,
    ROWS,
    SAMPLE_EFFICIENCY_TASKS,
    TASKS,
    config_file,
    rows_of,
    runs_to_do,
    seeds_asked,
    seeds_text,
    task_runs_dir,
)
from suite_plots import plot, plot_aggregate, plot_wall_time
from suite_stats import (
    averaged_against_live,
    interval_text,
    iqm_interval,
    probability_of_improvement,
    suite_statistics,
)


def complete_runs(paths: Any, budget: int) -> list[dict[str, Any]]:
    """The run files of ``paths`` whose last evaluation is at ``budget``; each other one is named on stderr and
    left out (a run cut short, or written over by a second run of the same seed)."""
    runs = []
    for path in paths:
        run = json.loads(path.read_text())
        if run["eval_steps"] and run["eval_steps"][-1] == budget:
            runs.append(run)
        else:
            last = run["eval_steps"][-1] if run["eval_steps"] else 0
            print(f"left out of the report: {path} (its last evaluation is at {last:,} env steps, the budget is "
                  f"{budget:,})", file=sys.stderr)
    return runs


def collect(results: Path) -> dict[str, Any]:
    """suite.json from every finished run file under ``results``."""
    tasks: dict[str, Any] = {}
    commits: set[str] = set()
    machines: dict[str, Any] = {}
    every_run: list[dict[str, Any]] = []
    for task, spec in TASKS.items():
        rows: dict[str, Any] = {}
        for row in ROWS:
            runs = sorted(complete_runs(task_runs_dir(results, task).glob(f"{row}_seed_*.json"), spec.budget),
                          key=lambda r: r["seed"])
            if not runs:
                continue
            rows[row] = {
                "seeds": [r["seed"] for r in runs],
                "final_returns": [r["final_return"] for r in runs],
                "eval_steps": runs[0]["eval_steps"],
                "eval_returns": [r["eval_returns"] for r in runs],
                "env_steps_per_s": [r["env_steps_per_s"] for r in runs],
                "env_steps_per_cpu_s": [r.get("env_steps_per_cpu_s") for r in runs],
                "wall_seconds": [r["wall_seconds"] for r in runs],
                "cpu_seconds": [r.get("cpu_seconds") for r in runs],
                "eval_wall_seconds": [r.get("eval_wall_seconds") for r in runs],
                "code_commits": [r["code_commit"]["commit"] for r in runs],
                "load_average_before": [r["load_average"]["before"] for r in runs],
                "cpu_kinds": [cpu_kind(r["machine"]) for r in runs],
                "settings": runs[0]["settings"],
                **({"live_eval_returns": [r["live_eval_returns"] for r in runs]}
                   if all("live_eval_returns" in r for r in runs) else {}),
            }
            commits.update(r["code_commit"]["commit"] for r in runs)
            every_run.extend(runs)
            machines.update(machines_by_kind(runs))
        tasks[task] = {"budget": spec.budget, "eval_every": spec.eval_every, "rows": rows}
    return {"benchmark": "suite", "tasks": tasks, "machine": dict(sorted(machines.items())),
            "code_commit": newest_commit(every_run), "run_code_commits": sorted(commits), "eval_protocol": (
                f"deterministic policy, {EVAL_EPISODES} episodes per evaluation, new start states per evaluation "
                "from a seeded stream; final return = mean of the last evaluation")}

def efficiency_table(suite: dict[str, Any]) -> str:
    """The sample-efficiency issue's view of HalfCheetah and Hopper: each row's mean final return as a multiple of
    sb3_td3's (same env steps), the mean of each seed's last five evaluations (a policy that swings between
    evaluations, as on Hopper, makes the final one a draw), and its cost in wall and CPU minutes per run (medians
    over seeds)."""
    lines = ["| task | row | mean final return | × sb3_td3 | mean of the last 5 evaluations | wall minutes per run "
             "| CPU minutes per run | final return per wall minute | CPU |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for task in SAMPLE_EFFICIENCY_TASKS:
        rows = suite["tasks"].get(task, {}).get("rows", {})
        baseline = statistics.mean(rows["sb3_td3"]["final_returns"]) if "sb3_td3" in rows else None
        for row, data in rows.items():
            final = statistics.mean(data["final_returns"])
            wall = statistics.median(data["wall_seconds"]) / 60
            cpu = [x for x in data["cpu_seconds"] if x is not None]
            last_five = statistics.mean(statistics.mean(curve[-5:]) for curve in data["eval_returns"])
            cells = [task, f"{row} ({seeds_text(len(data['seeds']))})", f"{final:.1f}",
                     f"{final / baseline:.2f}" if baseline else "", f"{last_five:.1f}", f"{wall:.1f}",
                     f"{statistics.median(cpu) / 60:.1f}" if cpu else "", f"{final / wall:.0f}",
                     ", ".join(sorted(set(data["cpu_kinds"])))]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def speeds_by_cpu(data: dict[str, Any]) -> dict[str, float]:
    """Median env steps per CPU second (wall second where CPU time was not recorded) per kind of CPU: rates from
    different CPUs are never pooled (one core of the AMD AVX2 machine multiplies at about a third of the AVX512
    ones' rate)."""
    groups: dict[str, list[float]] = {}
    for kind, per_cpu, per_wall in zip(data["cpu_kinds"], data["env_steps_per_cpu_s"], data["env_steps_per_s"],
                                       strict=True):
        groups.setdefault(kind, []).append(per_cpu if per_cpu is not None else per_wall)
    return {kind: statistics.median(rates) for kind, rates in groups.items()}


def speed_cell(row: str, data: dict[str, Any]) -> str:
    timed = "" if all(x is not None for x in data["env_steps_per_cpu_s"]) else " (wall)"
    by_cpu = speeds_by_cpu(data)
    named = [f"{rate:.0f}" + ("" if kind == "unrecorded" else f" on {kind}") for kind, rate in by_cpu.items()]
    return f"{row} " + ", ".join(named) + timed


def markdown_table(suite: dict[str, Any]) -> str:
    """suite.md's first table (also docs/benchmarks.md's): mean ± std of the final return over seeds, and median env
    steps per CPU second per row and kind of CPU, per task and row."""
    lines = ["| task | budget | " + " | ".join(ROWS) + " | env steps per CPU second (median over seeds, per CPU) |",
             "| --- | --- | " + " | ".join("---" for _ in ROWS) + " | --- |"]
    for task, entry in suite["tasks"].items():
        cells, speeds = [], []
        for row in ROWS:
            if row not in rows_of(task):
                cells.append("")
                continue
            data = entry["rows"].get(row)
            if data is None:
                cells.append("not run yet")
                continue
            finals = data["final_returns"]
            spread = f" ± {statistics.stdev(finals):.1f}" if len(finals) > 1 else ""  # no spread from one seed
            cells.append(f"{statistics.mean(finals):.1f}{spread} ({seeds_text(len(finals))})")
            speeds.append(speed_cell(row, data))
        lines.append(f"| {task} | {entry['budget'] // 1000}k | " + " | ".join(cells) + " | " + "; ".join(speeds) + " |")
    return "\n".join(lines) + "\n"

def percent(fraction: float) -> str:
    """A relative difference as a signed percentage, with a decimal under 1% (so +0.3% does not read as a tie)."""
    return f"{fraction * 100:+.1f}%" if abs(fraction) < 0.01 else f"{fraction * 100:+.0f}%"


def statistics_markdown(stats: dict[str, Any]) -> str:
    """suite.md's statistics section: the per-task table, a line per task with the published figures and gaps, the
    normalized IQMs and the probability of improvement."""
    settings = stats["bootstrap"]
    lines = [
        "## Statistics of the final return on the locomotion tasks (100k env steps)", "",
        f"The score is the final return (each seed's last evaluation: the policy a user gets). IQM: {stats['iqm']}. "
        f"Intervals: rliable's {settings['method']}, {settings['reps']:,} resamples, "
        f"{settings['confidence']:.0%} level, numpy's global RNG seeded with {settings['numpy_global_seed']}. "
        "Best evaluation: mean over seeds of each seed's highest evaluation. Rows short of the seeds the issue asks "
        f"({seeds_asked(RECOMMENDED_ROW)} for {RECOMMENDED_ROW} and {BASELINE_ROW}, {DEFAULT_SEEDS_ASKED} for the "
        "others) say so.", "",
        f"| task | row | seeds | mean final return | IQM final return [{settings['confidence']:.0%} CI] "
        "| best evaluation | mean of the last 5 evaluations |",
        "| --- | --- | --- | --- | --- | --- | --- |"]
    for task, entry in stats["tasks"].items():
        for row, data in entry["rows"].items():
            seeds = f"{data['seeds']}" if data["seeds"] >= data["seeds_asked"] else \
                f"{data['seeds']} of {data['seeds_asked']}"
            lines.append(f"| {task} | {row} | {seeds} | {data['mean_final_return']:.1f} | "
                         f"{data['iqm_final_return']:.1f} {interval_text(data['iqm_ci'], 1)} | "
                         f"{data['best_evaluation']:.1f} | {data['mean_last_five_evaluations']:.1f} |")
        if not entry["rows"]:
            lines.append(f"| {task} | no runs yet | | | | | |")
            continue
        for row in entry["rows_without_runs"]:
            lines.append(f"| {task} | {row} | 0 of {seeds_asked(row)} | not run yet | | | |")
    lines += ["", "Published 100k figures (Gymnasium v4, so about) and the best polyak row by mean final return:", ""]
    for task, entry in stats["tasks"].items():
        published, best = entry["published_100k"], entry["best_polyak_row"]
        figures = (f"CrossQ paper {published['crossq_paper']:,}, MR.Q {published['mrq']:,}, best published "
                   f"{published['best']:,} ({published['best_method']})")
        if best is None:
            lines.append(f"- {task}: no polyak runs yet; {figures}.")
        else:
            lines.append(f"- {task}: {best['row']} {best['mean_final_return']:.1f} "
                         f"({seeds_text(entry['rows'][best['row']]['seeds'])}): "
                         f"{percent(best['vs_crossq_paper'])} vs the CrossQ paper, "
                         f"{percent(best['vs_best_published'])} vs the best published, "
                         f"{percent(best['vs_mrq'])} vs MR.Q; {figures}.")
    normalization = stats["normalization"]
    lines += ["", f"Across tasks: normalized score = {normalization['formula']}, random-policy scores from "
              f"{normalization['random_scores_source']}: "
              + ", ".join(f"{task} {score:g}" for task, score in normalization["random_scores"].items())
              + f". Each row's IQM pools its normalized final returns over the tasks where it has at least "
              f"{DEFAULT_SEEDS_ASKED} seeds (all the tasks it has runs on while it has that many on none; listed: "
              "IQMs over different tasks do not compare), the same number of seeds per task (the lowest seed "
              "numbers); the probability of improvement and the recommendation choose their tasks the same way.",
              "", f"| row | tasks | seeds per task | IQM normalized score [{settings['confidence']:.0%} CI] |",
              "| --- | --- | --- | --- |"]
    for row, data in stats["normalized_iqm"].items():
        lines.append(f"| {row} | {', '.join(data['tasks'])} | {data['seeds_per_task']} | {data['iqm']:.3f} "
                     f"{interval_text(data['ci'], 3)} |")
    poi = stats["probability_of_improvement"]
    if poi["probability"] is None:
        lines += ["", f"Probability of improvement of {poi['row']} over {poi['over']}: no task has runs of both."]
    else:
        seeds = ", ".join(f"{row} {count}" for row, count in poi["seeds_per_task"].items())
        lines += ["", f"Probability of improvement of {poi['row']} (the recommended row) over {poi['over']} "
                  f"(rliable, final returns): {poi['probability']:.2f} "
                  f"{interval_text(poi['ci'], 2)}, on {', '.join(poi['tasks'])} (seeds per task: {seeds})."]
    return "\n".join(lines + recommendation_markdown(stats["recommendation"])
                     + averaged_against_live_markdown(stats["averaged_against_live"])) + "\n"


def averaged_wins(runs: list[dict[str, Any]]) -> tuple[int, int]:
    """Of the paired runs, how many the averaged actor ended higher on and how many it had the higher mean of the
    last five evaluations on."""
    return (sum(run["final"] > run["live_final"] for run in runs),
            sum(run["last5"] > run["live_last5"] for run in runs))


def averaged_against_live_markdown(runs: list[dict[str, Any]]) -> list[str]:
    """suite.md's section comparing the shipped row's two policies run by run."""
    lines = ["", f"## The averaged actor against the live actor, per {RECOMMENDED_ROW} run", "",
             f"Each {RECOMMENDED_ROW} run evaluates its averaged actor (`AgentConfig.actor_average`) and its live "
             "actor on the same start states. Stability: the mean of the last five evaluations over the best.", ""]
    if not runs:
        return [*lines, "No run yet."]
    lines += ["| task | seed | final: averaged, live | last five: averaged, live | stability: averaged, live |",
              "| --- | --- | --- | --- | --- |"]
    for run in runs:
        stability = ", ".join("n/a" if run[key] is None else f"{run[key]:.2f}"
                              for key in ("stability", "live_stability"))
        lines.append(f"| {run['task']} | {run['seed']} | {run['final']:,.1f}, {run['live_final']:,.1f} | "
                     f"{run['last5']:,.1f}, {run['live_last5']:,.1f} | {stability} |")
    higher, steadier = averaged_wins(runs)
    return [*lines, "", f"The averaged actor ended higher on {higher} of {len(runs)} runs and had the higher mean of "
                        f"the last five evaluations on {steadier} of {len(runs)}."]


def recommended_critic_text() -> str:
    """The shipped recommended row's critic widths, read from its suite config (e.g. "512-512"), so the report's
    prose follows the config when the width changes."""
    from polyak.ginconf import build_configs_from_gin, parse_gin

    parse_gin(config_file(SAMPLE_EFFICIENCY_TASKS[0], "recommended"), [])
    return "-".join(str(width) for width in build_configs_from_gin().critic.hidden_sizes)


def recommendation_markdown(rule: dict[str, Any]) -> list[str]:
    """suite.md's lines on the rule that picks the recommended row, its table and its pick."""
    lines = ["", "## Choosing the recommended row", "",
             f"The rule: among {', '.join(rule['candidates'])}, on the tasks where all of them have runs, the highest "
             "IQM of normalized final returns. Its final policies must then keep what they reached: stability (mean "
             "over seeds of the mean of the last five evaluations divided by the best evaluation) at least "
             f"{rule['stability_floor']:g} on every task. {BASELINE_ROW} is listed for reference, not as a candidate.",
             ""]
    if not rule["tasks"]:
        return [*lines, "No task has runs of every candidate yet."]
    lines += [f"| row | seeds per task | IQM normalized score [95% CI] on {', '.join(rule['tasks'])} | stability per "
              "task | lowest | CPU minutes per 100k steps (median) |", "| --- | --- | --- | --- | --- | --- |"]
    for row, data in rule["rows"].items():
        per_task = ", ".join("n/a" if x is None else f"{x:.2f}" for x in data["stability"].values())
        lowest = "n/a" if data["lowest_stability"] is None else f"{data['lowest_stability']:.2f}"
        cpu = "" if data["cpu_minutes_per_100k"] is None else f"{data['cpu_minutes_per_100k']:.1f}"
        name = row if data["candidate"] else f"{row} (shipped)" if row == RECOMMENDED_ROW else f"{row} (reference)"
        lines.append(f"| {name} | {data['seeds_per_task']} | {data['normalized_iqm']:.3f} "
                     f"{interval_text(data['ci'], 3)} | {per_task} | {lowest} | {cpu} |")
    pick = rule["pick"]
    stability = ("its final policies keep what they reached" if rule["pick_is_stable"] else
                 f"but its final policies still fall from their best (stability below {rule['stability_floor']:g})")
    verdict = (f"The rule picks **{pick}** on {', '.join(rule['tasks'])}, {stability}. The shipped recommended row, "
               f"{RECOMMENDED_ROW}, is polyak_crossq_sac with critic layers of {recommended_critic_text()} units, "
               "evaluated and shipped through its averaged actor (`AgentConfig.actor_average`; why: "
               "benchmarks/results/critic_width.md)")
    if rule.get("shipped_is_stable") is None:
        verdict += "; it has no runs on all of these tasks yet."
    else:
        verdict += (f": its final policies {'keep' if rule['shipped_is_stable'] else 'still fall from'} what they "
                    f"reached (lowest stability {rule['rows'][RECOMMENDED_ROW]['lowest_stability']:.2f}).")
    return [*lines, "", verdict]


README_ROWS = (RECOMMENDED_ROW, BASELINE_ROW, "polyak_crossq_sac", "polyak_crossq", "polyak_td7", "polyak_sac",
               "polyak_td3", "sb3_td3")
README_BEGIN = "<!-- suite table: written by python benchmarks/suite.py --report from benchmarks/results/suite.json -->"
README_END = "<!-- end of the suite table -->"
DOCS_PAGE = ROOT / "docs" / "benchmarks.md"
DOCS_BEGIN = "<!-- suite results: written by python benchmarks/suite.py --report (suite.md's first table) -->"
DOCS_END = "<!-- end of the suite results -->"


def readme_table(suite: dict[str, Any]) -> str:
    """The README's table of the five locomotion tasks at 100k env steps: per task and row the mean final return and
    its seeds (the recommended row also its IQM with the IQM's 95% interval), then the CrossQ paper's and the best
    published 100k figures; a row without runs on a task shows a dash."""
    header = ["task", *(f"{row} (recommended)" if row == RECOMMENDED_ROW else row for row in README_ROWS),
              "CrossQ paper", "best published"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for task in SAMPLE_EFFICIENCY_TASKS:
        rows = suite["tasks"].get(task, {}).get("rows", {})
        cells = [task]
        for row in README_ROWS:
            if row not in rows:
                cells.append("–")
                continue
            finals = rows[row]["final_returns"]
            cell = f"{statistics.mean(finals):,.0f} ({len(finals)})"
            if row == RECOMMENDED_ROW:
                iqm, (low, high) = iqm_interval([[x] for x in finals])
                cell += f"; IQM {iqm:,.0f} [{low:,.0f}, {high:,.0f}]"
            cells.append(cell)
        published = PUBLISHED_100K[task]
        cells += [f"{published.crossq_paper:,}", f"{published.best:,} ({published.best_method})"]
        lines.append("| " + " | ".join(cells) + " |")
    poi = probability_of_improvement(suite, RECOMMENDED_ROW, BASELINE_ROW)
    if poi["probability"] is not None:
        seeds = ", ".join(f"{count} of {row}" for row, count in poi["seeds_per_task"].items())
        lines += ["", f"Probability that a {RECOMMENDED_ROW} run beats a {BASELINE_ROW} run (rliable's probability "
                  f"of improvement, final returns): {poi['probability']:.2f} {interval_text(poi['ci'], 2)} on "
                  f"{', '.join(poi['tasks'])} ({seeds} seeds per task)."]
    return "\n".join(lines + readme_standing(suite))


def readme_standing(suite: dict[str, Any], results: Path = RESULTS) -> list[str]:
    """The README's lines under its table on the frontier issue's goal (the recommended row's mean final return at
    least sb3_crossq's on every task and the CrossQ paper's on at least four), the distance to the best published
    100k figures, and how often the averaged actor beat the live one; tasks without runs of the recommended row are
    left out."""
    lines, behind, below, distances, tasks = [], [], [], [], []
    for task in SAMPLE_EFFICIENCY_TASKS:
        rows = suite["tasks"].get(task, {}).get("rows", {})
        if RECOMMENDED_ROW not in rows:
            continue
        tasks.append(task)
        ours = rows[RECOMMENDED_ROW]["final_returns"]
        mean, published = statistics.mean(ours), PUBLISHED_100K[task]
        theirs = rows.get(BASELINE_ROW, {}).get("final_returns")
        if theirs and mean < statistics.mean(theirs):
            iqms = [iqm_interval([[x] for x in finals])[0] for finals in (ours, theirs)]
            poi = probability_of_improvement(suite, RECOMMENDED_ROW, BASELINE_ROW, only=[task])
            behind.append(f"{task}, {mean:,.0f} against {statistics.mean(theirs):,.0f}, "
                          f"IQM {iqms[0]:,.0f} against {iqms[1]:,.0f}, probability of improvement there "
                          f"{poi['probability']:.2f} {interval_text(poi['ci'], 2)}")
        if mean < published.crossq_paper:
            below.append(f"{task} {percent(mean / published.crossq_paper - 1)}")
        distances.append(f"{task} {percent(mean / published.best - 1)}")
    if not tasks:
        return lines
    with_baseline = [t for t in tasks if suite["tasks"][t]["rows"].get(BASELINE_ROW)]
    lines += ["", f"Goal: {RECOMMENDED_ROW}'s mean final return at least {BASELINE_ROW}'s on every task and at "
              f"least the CrossQ paper's on four of the five. Met against {BASELINE_ROW} on "
              f"{len(with_baseline) - len(behind)} of {len(with_baseline)}"
              + (f" (behind on {'; '.join(behind)})" if behind else "")
              + f", against the CrossQ paper on {len(tasks) - len(below)} of {len(tasks)}"
              + (f" (below on {', '.join(below)})" if below else "")
              + f". Distance to the best published 100k figure: {', '.join(distances)}."]
    like_for_like = goal_line(with_baseline, results)
    lines += [like_for_like] if like_for_like else []
    runs = averaged_against_live(suite)
    if runs:
        higher, steadier = averaged_wins(runs)
        lines += ["", f"The averaged actor against the live actor of the same {RECOMMENDED_ROW} runs: it ended higher "
                  f"on {higher} of {len(runs)} and had the higher mean of the last five evaluations on {steadier} of "
                  f"{len(runs)} (each run: `benchmarks/results/suite.md`)."]
    return lines


def write_block(path: Path, begin: str, end: str, block: str) -> bool:
    """Replace the text between the markers ``begin`` and ``end`` of ``path`` with ``block``; False (and nothing
    written) when the file lacks either marker."""
    text = path.read_text()
    if begin not in text or end not in text:
        return False
    before, rest = text.split(begin, 1)
    after = rest.split(end, 1)[1]
    path.write_text(f"{before}{begin}\n{block.strip()}\n{end}{after}")
    return True


def write_readme_table(suite: dict[str, Any], readme: Path) -> bool:
    """The README's block between README_BEGIN and README_END: ``readme_table``."""
    return write_block(readme, README_BEGIN, README_END, readme_table(suite))


def report(results: Path) -> dict[str, Any]:
    """suite.json, suite.md and the plots under ``results`` from its run files; the README's table too when they
    are the committed results."""
    suite = collect(results)
    suite["statistics"] = suite_statistics(suite)
    (results / "suite.json").write_text(json.dumps(suite, indent=1) + "\n")
    goal = readme_standing(suite, results)
    (results / "suite.md").write_text(markdown_table(suite) + "\n" + efficiency_table(suite) + "\n"
                                      + statistics_markdown(suite["statistics"])
                                      + ("\n## The goal\n" + "\n".join(goal) + "\n" if goal else ""))
    plot(suite, results)
    plot_wall_time(suite, results)
    plot_aggregate(suite, results)
    # the committed results: keep the README's table and the docs' copy of suite.md's table in step
    if results == RESULTS:
        write_readme_table(suite, ROOT / "README.md")
        write_block(DOCS_PAGE, DOCS_BEGIN, DOCS_END, markdown_table(suite))
    print(markdown_table(suite))
    return suite


def missing_runs(suite: dict[str, Any], results: Path,
                 asked: tuple[list[str], list[str], list[int] | None] | None = None,
                 committed: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The runs still to do: by default the frontier issue's on the locomotion tasks (the seeds each row is asked
    for, ``default_seeds``), or those of ``asked`` (tasks, rows, seeds: None for each row's default seeds); each
    with an estimate of its CPU minutes: the median of the row's finished runs on that task, else on any task of
    its kind (locomotion or not), from ``suite`` or else from ``committed`` (the committed results' suite), else
    None."""
    def cpu_minutes(row: str, tasks: list[str]) -> list[float]:
        for source in (suite, committed or {}):
            found = [seconds / 60 for task in tasks for seconds in
                     source.get("tasks", {}).get(task, {}).get("rows", {}).get(row, {}).get("cpu_seconds", [])
                     if seconds]
            if found:
                return found
        return []

    tasks, rows, seeds = asked if asked is not None else (list(SAMPLE_EFFICIENCY_TASKS), None, None)
    missing = []
    for task, row, seed in runs_to_do(results, tasks, rows or list(ROWS), seeds):
        kind = [t for t in TASKS if (t in SAMPLE_EFFICIENCY_TASKS) == (task in SAMPLE_EFFICIENCY_TASKS)]
        estimate = cpu_minutes(row, [task]) or cpu_minutes(row, kind)
        missing.append({"task": task, "row": row, "seed": seed,
                        "cpu_minutes": statistics.median(estimate) if estimate else None})
    return missing


def todo_text(missing: list[dict[str, Any]]) -> str:
    """``--todo``'s table: per task and row the missing seeds and their estimated CPU minutes, then the total."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in missing:
        groups.setdefault((run["task"], run["row"]), []).append(run)
    lines = ["| task | row | missing seeds | estimated CPU minutes each |", "| --- | --- | --- | --- |"]
    for (task, row), runs in groups.items():
        estimate = runs[0]["cpu_minutes"]
        lines.append(f"| {task} | {row} | {' '.join(str(r['seed']) for r in runs)} | "
                     f"{'unknown' if estimate is None else f'{estimate:.0f}'} |")
    known = [r["cpu_minutes"] for r in missing if r["cpu_minutes"] is not None]
    unknown = len(missing) - len(known)
    count = f"{len(missing)} run{'' if len(missing) == 1 else 's'}"
    lines += ["", f"{count} missing: about {sum(known) / 60:.1f} CPU hours for {len(known)} of them"
              + (f", {unknown} without an estimate (no finished run of their row yet)" if unknown else "") + "."]
    return "\n".join(lines)
