"""Like for like at 512 wide: sb3-contrib's CrossQ with the same wider critic as the recommended row's rerun.

The suite's ``sb3_crossq`` row takes polyak's CrossQ widths (256-256; the issue that set the goal asks for sb3-contrib's
CrossQ "with the same widths"), and the goal reads the recommended row against it. The recommended row is being rerun
with a 512-wide critic (``benchmarks/critic_width.py``); if that rerun ships, the goal's comparison with a 256-wide
``sb3_crossq`` credits polyak with what may be the width's. Each run here is a suite run of ``sb3_crossq`` (the
suite's settings, protocol and seed: the same start states) with only its critic's width changed; seed ``s`` is
paired with the suite's ``sb3_crossq`` seed ``s`` at 256 and with the rerun's recommended run of seed ``s`` at the
follow-up's pick (the actor-average rate the rerun ships with).

Rule, written before any of these runs: on a task with the suite's 5 seeds here, the recommended row at 512 meets
the goal against sb3-contrib's CrossQ like for like when its mean final return over those seeds is at least
sb3_crossq's at 512 (the goal's own test, at equal widths); the report gives rliable's probability of improvement
beside it. Ant-v5 and Humanoid-v5 first: there the wider critic lifted the recommended row most, and on Ant-v5 the
256-wide recommended row is behind sb3_crossq. Until a task has its 5 seeds, it is undecided there.

Follow-up, written after the rule's verdict on the suite's seeds (HalfCheetah-v5 missed, 3.9% behind, probability of
improvement 0.56 [0.16, 1.00]) and before any of its runs: is that shortfall more than seed luck? Both 512-wide arms
train HalfCheetah-v5 on seeds 5-9 (sb3_crossq here, the recommended row with ``critic_width.py --taus``, read at the
follow-up's pick). The report gives, beside the verdict and without changing it, the mean final return of each arm
and rliable's probability of improvement over every seed both arms have; with fewer than the ten it says how many.
Each arm's interquartile mean with its 95% bootstrap interval (added after seed 8, before seed 9's runs finished)
stands beside the means: it reads the typical seed, where a slow seed or two move the mean.

Seeds 10-19 on HalfCheetah-v5 belong to ``cheetah_remedy.py``'s same-seed check (its docstring has the rule): they
pair with that study's arms, not with a recommended run here, and this report lists them with no recommended run
beside them.

The comparison leans polyak's way in one respect: the recommended row's actor-average rate was chosen among three on
Ant-v5 seeds 0-1 and Humanoid-v5 seeds 0-2, which are among the seeds compared here; sb3_crossq gets no such choice.

    python benchmarks/baseline_width.py --task Ant-v5 --seed 0     # one run, about 65-100 CPU minutes
    python benchmarks/baseline_width.py --task Ant-v5 --seed 0 --out-dir /tmp/mine   # reproduce a committed run
    python benchmarks/baseline_width.py --report                   # the table over the result files

Writes ``benchmarks/results/baseline_width/<task stem>/sb3_crossq_w<W>_seed_<seed>.json`` and, with ``--report``,
``benchmarks/results/baseline_width.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from common import cpu_kind
from critic_width import (
    BASE_WIDTH,
    add_reproduce_arguments,
    averaging_path,
    curve_at,
    follow_up_pick,
    make_out_dir,
    numbers,
    recorded_run,
)
from suite import (
    BASELINE_ROW,
    RECOMMENDED_ROW,
    RESULTS,
    ROOT,
    SAMPLE_EFFICIENCY_TASKS,
    TASKS,
    result_path,
    run_sb3,
    seeds_asked,
)
from suite_stats import interval_text, iqm_interval, probability_of_improvement

STUDY = RESULTS / "baseline_width"
FIRST_TASKS = ("Ant-v5", "Humanoid-v5")
FOLLOW_UP_TASK, FOLLOW_UP_SEEDS = "HalfCheetah-v5", range(5, 10)


def study_path(task: str, width: int, seed: int) -> Path:
    return STUDY / TASKS[task].config_stem / f"{BASELINE_ROW}_w{width}_seed_{seed}.json"


def train(task: str, width: int, seed: int, out_dir: Path | None = None, force: bool = False) -> None:
    """One suite run of ``sb3_crossq`` with a ``width``-wide critic; its result file with the suite's record
    (commit, machine, load, CPU time), into ``out_dir`` when given (``force``: over an existing one)."""
    result = recorded_run(study_path(task, width, seed), task, width, seed, "baseline_width",
                          lambda run_dir, _binding: run_sb3(task, BASELINE_ROW, seed, critic_width=width,
                                                                   snapshots=run_dir),
                          row=BASELINE_ROW, out_dir=out_dir, force=force)
    if result is not None:
        print(f"{task} {BASELINE_ROW} width {width} seed {seed}: final {result['final_return']:.1f}", flush=True)


def read(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text()) if path.exists() else None


def seed_runs(task: str, width: int, pick: str | None) -> list[dict[str, Any]]:
    """Per seed of this study on ``task``: its run, the suite's 256-wide ``sb3_crossq`` run of the seed and the
    rerun's recommended curve at ``pick`` (None where one is missing)."""
    runs = []
    for path in sorted((STUDY / TASKS[task].config_stem).glob(f"{BASELINE_ROW}_w{width}_seed_*.json")):
        wide = json.loads(path.read_text())
        seed = wide["seed"]
        rerun = read(averaging_path(task, width, seed)) if pick and pick.startswith(f"w{width} ") else None
        recommended = None if rerun is None else {**rerun, "eval_returns": curve_at(rerun, pick)}
        runs.append({"seed": seed, "wide": wide, "base": read(result_path(RESULTS, task, BASELINE_ROW, seed)),
                     "recommended": recommended})
    return sorted(runs, key=lambda run: run["seed"])


def task_verdict(task: str, width: int, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The rule's numbers on one task, over the suite's seeds (0 to 4) that have both a run here and the
    recommended row's: the mean final return of each, rliable's probability of improvement of the recommended row
    over sb3_crossq at ``width`` and, once all of those seeds have both, whether the recommended row's mean is at
    least sb3_crossq's. The 256-wide sb3_crossq mean is over those of the seeds that have one (context only)."""
    asked = seeds_asked(BASELINE_ROW)
    paired = [run for run in runs if run["recommended"] is not None and run["seed"] < asked]
    verdict: dict[str, Any] = {"seeds": len(paired), "asked": asked, "runs": len(runs), "means": None,
                               "improvement": None, "meets_goal": None}
    if not paired:
        return verdict
    finals = {key: [run[key]["eval_returns"][-1] for run in paired if run[key] is not None]
              for key in ("base", "wide", "recommended")}
    verdict["means"] = {key: statistics.mean(values) if values else None for key, values in finals.items()}
    rows = {"recommended": {"final_returns": finals["recommended"]}, "wide": {"final_returns": finals["wide"]}}
    verdict["improvement"] = probability_of_improvement({"tasks": {task: {"rows": rows}}}, "recommended", "wide",
                                                        only=[task])
    if len(paired) == asked:
        verdict["meets_goal"] = verdict["means"]["recommended"] >= verdict["means"]["wide"]
    return verdict


def follow_up(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The follow-up's numbers on its task (module docstring): over every seed with both wide arms, the suite's
    and the follow-up's, the mean and interquartile mean (with its interval) of each arm's final return and
    rliable's probability of improvement; None before any follow-up seed has both."""
    paired = [run for run in runs if run["recommended"] is not None]
    done = [run["seed"] for run in paired if run["seed"] in FOLLOW_UP_SEEDS]
    if not done:
        return None
    finals = {key: [run[key]["eval_returns"][-1] for run in paired] for key in ("wide", "recommended")}
    rows = {key: {"final_returns": values} for key, values in finals.items()}
    improvement = probability_of_improvement({"tasks": {FOLLOW_UP_TASK: {"rows": rows}}}, "recommended", "wide",
                                             only=[FOLLOW_UP_TASK])
    return {"seeds": [run["seed"] for run in paired], "done": done,
            "owed": [seed for seed in FOLLOW_UP_SEEDS if seed not in done],
            "means": {key: statistics.mean(values) for key, values in finals.items()},
            "iqms": {key: iqm_interval([[value] for value in values]) for key, values in finals.items()},
            "improvement": improvement}


def critic_widths(task: str, results: Path = RESULTS) -> tuple[int, int] | None:
    """The critic widths behind the suite's result files of ``task`` (seed 0): the recommended row's (the rerun's
    width once ``critic_width.py --promote`` wrote its runs there, else the 256 its suite runs trained with) and
    sb3_crossq's (as its file records it); None while either file is missing."""
    ours, theirs = (read(result_path(results, task, row, 0)) for row in (RECOMMENDED_ROW, BASELINE_ROW))
    if ours is None or theirs is None:
        return None
    width, source = ours.get("critic_width"), ours.get("from_follow_up", {}).get("file")
    if width is None and source:
        width = (read(ROOT / source) or {}).get("critic_width")
    return width or BASE_WIDTH, max(theirs["settings"]["policy_kwargs"]["net_arch"]["qf"])


def shortfall(means: dict[str, float | None]) -> float:
    """How far the recommended row's mean final return is below sb3_crossq's at the same width, as a fraction of
    sb3_crossq's (0 when it is not below)."""
    wide, ours = means["wide"], means["recommended"]
    return max(0.0, (wide - ours) / abs(wide)) if wide else 0.0


def goal_line(tasks: list[str], results: Path = RESULTS) -> str | None:
    """The line the suite's report adds under its goal when, in its result files, the recommended row's critic is
    wider than sb3_crossq's on some of ``tasks``: per such task, the rule's verdict at equal widths (None when the
    widths are equal, or for result files other than the committed ones, which this study's runs pair with)."""
    if results.resolve() != RESULTS.resolve():
        return None
    wider = {task: widths for task in tasks if (widths := critic_widths(task, results)) and widths[0] > widths[1]}
    if not wider:
        return None
    pick = follow_up_pick()
    parts = []
    for task, (ours, _) in wider.items():
        verdict = task_verdict(task, ours, seed_runs(task, ours, pick))
        means, improvement = verdict["means"], verdict["improvement"]
        if means is None:
            missing = "no runs yet" if not verdict["runs"] else (
                f"{verdict['runs']} runs, none paired with the recommended row's "
                + ("(the rerun's pick is not made)" if pick is None else "rerun"))
            parts.append(f"{task} {missing}")
            continue
        against = f"{means['recommended']:,.0f} against {means['wide']:,.0f}"
        if verdict["meets_goal"] is None:
            parts.append(f"{task} undecided ({verdict['seeds']} of {verdict['asked']} seeds, {against})")
        else:
            how = "at least" if verdict["meets_goal"] else f"{shortfall(means):.1%} behind"
            parts.append(f"{task} {how} sb3_crossq's mean ({against}, probability of improvement "
                         f"{improvement['probability']:.2f} {interval_text(improvement['ci'], 2)})")
    widths = sorted({f"{RECOMMENDED_ROW}'s critic {ours} wide and {BASELINE_ROW}'s {theirs}"
                     for ours, theirs in wider.values()})
    return (f"Not like for like: {', '.join(widths)} (the CrossQ rows' width; sb3-contrib's own default is 1,024). "
            f"Against {BASELINE_ROW} with the same critic (`benchmarks/results/baseline_width.md`, 5 seeds a task): "
            f"{'; '.join(parts)}.")


def report(width: int = 512) -> str:
    pick = follow_up_pick()
    by_task = {task: runs for task in SAMPLE_EFFICIENCY_TASKS if (runs := seed_runs(task, width, pick))}
    if not by_task:
        sys.exit(f"baseline_width: no result files at width {width} yet; run one with --task and --seed")
    lines = [f"# Like for like at {width} wide: sb3-contrib's CrossQ with the recommended row's wider critic", "",
             "Written by `python benchmarks/baseline_width.py --report`. Each run is a suite run of "
             f"{BASELINE_ROW} with only its critic's width changed ({BASE_WIDTH} → {width}); beside it the suite's "
             f"{BASE_WIDTH}-wide {BASELINE_ROW} run of the same seed and the recommended row's {width}-wide rerun of "
             f"the seed at the follow-up's pick ({pick or 'none'}; `benchmarks/results/critic_width.md`). "
             "Final = the last evaluation (100k steps, 10 episodes, the suite's start states); stability = the mean "
             "of the last five evaluations over the best. A run that a sitting's end cut short went on from its last "
             "evaluation's snapshot (`benchmarks/sb3_snapshot.py`); its CPU minutes say where.", "",
             f"| task | seed | {BASELINE_ROW} {BASE_WIDTH}: final, stability | {BASELINE_ROW} {width}: final, "
             f"stability | recommended {width}: final, stability | CPU min ({BASELINE_ROW} {width}) | CPU |",
             "| --- | --- | --- | --- | --- | --- | --- |"]

    def cell(result: dict[str, Any] | None) -> str:
        if result is None:
            return "—"
        n = numbers(result)
        return f"{n['final']:.1f}, {n['stability']:.2f}"

    def cpu_minutes(result: dict[str, Any]) -> str:
        resumed = ", ".join(f"{steps:,}" for steps in result.get("resumed_at_steps", []))
        return f"{result['cpu_seconds'] / 60:.1f}" + (f" (resumed at {resumed} steps)" if resumed else "")

    for task, runs in by_task.items():
        for run in runs:
            lines.append(f"| {task} | {run['seed']} | {cell(run['base'])} | {cell(run['wide'])} | "
                         f"{cell(run['recommended'])} | {cpu_minutes(run['wide'])} | "
                         f"{cpu_kind(run['wide']['machine'])} |")
    lines += ["", "The rule (module docstring): with the suite's seeds on a task, the recommended row at "
              f"{width} meets the goal there like for like when its mean final return is at least "
              f"{BASELINE_ROW}'s at {width}. Means over the suite's seeds that have both a run here and the "
              f"recommended row's (the {BASE_WIDTH}-wide column over those of them that have one); the probability "
              f"that a recommended run beats a {BASELINE_ROW} run at {width} is rliable's, with its 95% bootstrap "
              "interval.",
              "", f"| task | seeds | mean final: {BASELINE_ROW} {BASE_WIDTH} | {BASELINE_ROW} {width} | recommended "
              f"{width} | probability of improvement | recommended at least {BASELINE_ROW} |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for task, runs in by_task.items():
        verdict = task_verdict(task, width, runs)
        if verdict["means"] is None:
            lines.append(f"| {task} | 0 of {verdict['asked']} | — | — | — | — | undecided |")
            continue
        means, improvement = verdict["means"], verdict["improvement"]
        met = {True: "yes", False: f"no ({shortfall(means):.1%} behind)",
               None: f"undecided ({verdict['seeds']} of {verdict['asked']} seeds)"}
        base = "—" if means["base"] is None else f"{means['base']:.1f}"
        lines.append(f"| {task} | {verdict['seeds']} of {verdict['asked']} | {base} | "
                     f"{means['wide']:.1f} | {means['recommended']:.1f} | {improvement['probability']:.2f} "
                     f"{interval_text(improvement['ci'], 2)} | {met[verdict['meets_goal']]} |")
    extra = follow_up(by_task.get(FOLLOW_UP_TASK, []))
    if extra is not None:
        means, improvement = extra["means"], extra["improvement"]
        iqms = {key: f"{point:.1f} {interval_text(ci, 1)}" for key, (point, ci) in extra["iqms"].items()}
        owed = (f"; seed{'s' if len(extra['owed']) > 1 else ''} {', '.join(map(str, extra['owed']))} still owed"
                if extra["owed"] else "")
        lines += ["", f"Follow-up (module docstring; it does not change the verdict above): {FOLLOW_UP_TASK} over "
                  f"the {len(extra['seeds'])} seeds with both {width}-wide arms ({', '.join(map(str, extra['seeds']))}"
                  f"{owed}): mean final return {means['recommended']:.1f} for the recommended row against "
                  f"{means['wide']:.1f} for {BASELINE_ROW}, interquartile mean {iqms['recommended']} against "
                  f"{iqms['wide']}, probability of improvement "
                  f"{improvement['probability']:.2f} {interval_text(improvement['ci'], 2)}."]
    text = "\n".join(lines) + "\n"
    (STUDY.parent / "baseline_width.md").write_text(text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=SAMPLE_EFFICIENCY_TASKS, default="Ant-v5",
                        help=f"{' and '.join(FIRST_TASKS)} first (module docstring); {FOLLOW_UP_TASK} seeds "
                             f"{FOLLOW_UP_SEEDS.start}-{FOLLOW_UP_SEEDS.stop - 1} for the follow-up "
                             "(default: %(default)s)")
    parser.add_argument("--width", type=int, default=512,
                        help=f"{BASELINE_ROW}'s critic width W, (W, W); with --report, the width whose runs the "
                             "table shows (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="the suite's seed to run and pair with (default: %(default)s); a seed whose result file "
                             f"(baseline_width/<task stem>/{BASELINE_ROW}_w<W>_seed_<seed>.json under "
                             "benchmarks/results/) exists is skipped unless --force")
    add_reproduce_arguments(parser, "snapshots")
    parser.add_argument("--report", action="store_true", help="write the table over the result files")
    args = parser.parse_args()
    if args.width <= 0:
        sys.exit(f"baseline_width: --width must be positive, got {args.width}")
    if args.report:
        print(report(args.width))
        return
    single = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    if any(os.environ.get(name) != value for name, value in single.items()):  # as the suite runs sb3_crossq
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **single})
    make_out_dir("baseline_width", args.out_dir)
    train(args.task, args.width, args.seed, args.out_dir, args.force)


if __name__ == "__main__":
    main()
