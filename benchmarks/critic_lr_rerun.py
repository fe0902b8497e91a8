"""The five-task rerun of the recommended row with ``critic/NetworkConfig.lr = 0.0007``, HalfCheetah-v5 first.

Where it comes from (``benchmarks/results/cheetah_remedy.md``): with the critic 512 wide, HalfCheetah-v5's
recommended row misses the like-for-like goal (``benchmarks/results/baseline_width.md``: a mean final return of 7,328
over the suite's seeds 0-4 against 7,623 for sb3-contrib's CrossQ at 512). The same-seed check on seeds 10-19 called
the second remedy, a critic learning rate of 7e-4 instead of 1e-3 (about 1/sqrt(fan-in) scaling of Adam's step from
the 256-wide critic; Yang, Hu et al. 2021, "Tensor Programs V"), worth this rerun.

The plan, written in ``cheetah_remedy.py``'s docstring before the same-seed check's last two seeds finished and
before any run here: the recommended row (its suite config, protocol and budget; 512 wide) with that one binding on
the suite's seeds 0-4 of the five tasks, HalfCheetah-v5 first. Seed ``s`` starts as the suite's recommended seed
``s`` does (same start states, same first random steps), so each run has a partner in the shipped row.

- The gate: once the five HalfCheetah-v5 runs are in, if their mean final return is below sb3-contrib's CrossQ at 512
  over the same seeds (``baseline_width.py``'s runs), the rerun stops there and the like-for-like miss stands;
  this script then refuses to train the other tasks.
- Otherwise the other four tasks follow, and the rerun's row replaces the shipped one by ``critic_width.py``'s
  shipping rule: over the five tasks, a higher IQM of normalized final returns and a lowest per-task stability not
  lower. The like-for-like comparison with sb3-contrib's CrossQ at 512 is read again on all five.

    python benchmarks/critic_lr_rerun.py --task HalfCheetah-v5 --seeds 0 1   # ~60-75 CPU minutes a run
    python benchmarks/critic_lr_rerun.py --report                            # the tables over the result files

Writes ``benchmarks/results/critic_lr_rerun/<task stem>/seed_<S>.json`` per run (the suite's record: curve, commit,
machine, load, CPU seconds) and, with ``--report``, ``benchmarks/results/critic_lr_rerun.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from baseline_width import study_path as sb3_path
from common import RunFailed, cpu_kind, trained_line
from critic_width import add_reproduce_arguments, make_out_dir, recorded_run, row_numbers
from suite import RECOMMENDED_ROW, RESULTS, SAMPLE_EFFICIENCY_TASKS, TASKS, result_path, run_polyak

LR_BINDING = "critic/NetworkConfig.lr = 0.0007"
BINDINGS = (LR_BINDING,)  # after the suite protocol's and the width's, so they win
WIDTH = 512  # the shipped recommended row's critic, and sb3-contrib's CrossQ in the like-for-like runs
SEEDS = tuple(range(5))
GATE_TASK = "HalfCheetah-v5"
STUDY = RESULTS / "critic_lr_rerun"
REPORT = RESULTS / "critic_lr_rerun.md"


def rerun_path(task: str, seed: int) -> Path:
    return STUDY / TASKS[task].config_stem / f"seed_{seed}.json"


def finals(paths: dict[int, Path]) -> dict[int, float]:
    """The final returns of those result files (by seed) that exist."""
    return {seed: json.loads(path.read_text())["final_return"] for seed, path in paths.items() if path.exists()}


def rerun_finals(task: str) -> dict[int, float]:
    return finals({seed: rerun_path(task, seed) for seed in SEEDS})


def shipped_finals(task: str) -> dict[int, float]:
    """The suite's recommended row (what ships) on the same seeds."""
    return finals({seed: result_path(RESULTS, task, RECOMMENDED_ROW, seed) for seed in SEEDS})


def sb3_finals(task: str) -> dict[int, float]:
    """sb3-contrib's CrossQ with its critic 512 wide (``baseline_width.py``) on the same seeds."""
    return finals({seed: sb3_path(task, WIDTH, seed) for seed in SEEDS})


def gate(rerun: dict[int, float], sb3: dict[int, float]) -> str:
    """The gate (docstring) on HalfCheetah-v5's final returns by seed: ``passed``, ``failed`` or ``undecided``,
    then the numbers."""
    if len(rerun) < len(SEEDS) or len(sb3) < len(SEEDS):
        text = f"undecided: {len(rerun)} of {len(SEEDS)} rerun seeds run (sb3-contrib {len(sb3)} of {len(SEEDS)})"
        if rerun and len(sb3) == len(SEEDS):
            needed = (sum(sb3.values()) - sum(rerun.values())) / (len(SEEDS) - len(rerun))
            missing = ", ".join(str(seed) for seed in SEEDS if seed not in rerun)
            text += f"; to pass, seeds {missing} must average at least {needed:,.0f}"
        return text
    ours, theirs = statistics.mean(rerun.values()), statistics.mean(sb3.values())
    if ours >= theirs:
        return f"passed: mean final {ours:,.0f} against sb3-contrib's {theirs:,.0f}; the other four tasks follow"
    return (f"failed: mean final {ours:,.0f} against sb3-contrib's {theirs:,.0f} "
            f"({(theirs - ours) / abs(theirs):.1%} behind); the rerun stops here and the like-for-like miss stands")


def gate_verdict() -> str:
    return gate(rerun_finals(GATE_TASK), sb3_finals(GATE_TASK))


def train(task: str, seed: int, out_dir: Path | None = None, force: bool = False) -> None:
    """One suite run of the recommended row with the rerun's critic learning rate; its result file (into ``out_dir``
    when given; ``force``: over an existing one). Tasks after the gate only once it has passed."""
    if task != GATE_TASK and not (verdict := gate_verdict()).startswith("passed"):
        raise RunFailed(f"{task} waits for the {GATE_TASK} gate ({verdict})")
    result = recorded_run(rerun_path(task, seed), task, WIDTH, seed, "critic_lr_rerun",
                          lambda run_dir, width_binding: run_polyak(
                              task, RECOMMENDED_ROW, seed, extra_bindings=(width_binding, *BINDINGS),
                              run_dir=run_dir),
                          out_dir=out_dir, force=force)
    if result is not None:
        print(f"{task} critic lr 7e-4 seed {seed}: final {result['final_return']:.1f}", flush=True)


def mean_text(values: dict[int, float]) -> str:
    return f"{statistics.mean(values.values()):,.0f}" if values else "—"


def task_lines() -> list[str]:
    """Per run its final return beside the shipped row's and sb3-contrib's at 512 on the same seed; per task the
    three means over the seeds the rerun has."""
    lines = ["| task | seed | final return | shipped row, same seed | difference | sb3-contrib CrossQ 512 | CPU min |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    means = ["", "| task | rerun seeds | rerun mean | shipped row's mean, same seeds | sb3-contrib 512's mean, same "
             "seeds | rerun ≥ sb3-contrib |", "| --- | --- | --- | --- | --- | --- |"]
    for task in SAMPLE_EFFICIENCY_TASKS:
        rerun, shipped, sb3 = rerun_finals(task), shipped_finals(task), sb3_finals(task)
        for seed, final in rerun.items():
            cpu = json.loads(rerun_path(task, seed).read_text())["cpu_seconds"] / 60
            partner, theirs = shipped.get(seed), sb3.get(seed)
            lines.append(f"| {task} | {seed} | {final:,.0f} | "
                         + (f"{partner:,.0f} | {final - partner:+,.0f}" if partner is not None else "— | —")
                         + f" | {f'{theirs:,.0f}' if theirs is not None else '—'} | {cpu:.1f} |")
        if rerun:
            same_shipped = {seed: shipped[seed] for seed in rerun if seed in shipped}
            same_sb3 = {seed: sb3[seed] for seed in rerun if seed in sb3}
            above = ("yes" if statistics.mean(rerun.values()) >= statistics.mean(same_sb3.values()) else "no") \
                if same_sb3 else "—"
            means.append(f"| {task} | {len(rerun)} | {mean_text(rerun)} | {mean_text(same_shipped)} | "
                         f"{mean_text(same_sb3)} | {above} |")
    return lines + means


def shipping_rule() -> dict[str, Any] | None:
    """``critic_width.py``'s shipping rule, the shipped row against the rerun's over the five tasks' seeds 0-4; None
    while a run of either is missing."""
    paths = {task: [(result_path(RESULTS, task, RECOMMENDED_ROW, s), rerun_path(task, s)) for s in SEEDS]
             for task in SAMPLE_EFFICIENCY_TASKS}
    if not all(path.exists() for pairs in paths.values() for pair in pairs for path in pair):
        return None
    shipped = row_numbers({task: [json.loads(p.read_text())["eval_returns"] for p, _ in pairs]
                           for task, pairs in paths.items()})
    rerun = row_numbers({task: [json.loads(p.read_text())["eval_returns"] for _, p in pairs]
                         for task, pairs in paths.items()})
    return {"shipped": shipped, "rerun": rerun,
            "ship": rerun["normalized_iqm"] > shipped["normalized_iqm"]
            and rerun["lowest_stability"] >= shipped["lowest_stability"]}


def shipping_lines() -> list[str]:
    verdict = shipping_rule()
    if verdict is None:
        return ["The shipping rule (`critic_width.py`) is read once all 25 rerun runs are in."]
    lines = ["| row | IQM normalized final [95% CI] | lowest per-task stability |", "| --- | --- | --- |"]
    for label, key in (("shipped (critic lr 1e-3)", "shipped"), ("rerun (critic lr 7e-4)", "rerun")):
        row = verdict[key]
        lines.append(f"| {label} | {row['normalized_iqm']:.3f} [{row['ci'][0]:.3f}, {row['ci'][1]:.3f}] | "
                     f"{row['lowest_stability']:.2f} |")
    return [*lines, "", f"Ship the rerun's row: **{'yes' if verdict['ship'] else 'no'}**."]


def report() -> str:
    lines = ["# The recommended row with critic lr 7e-4: the five-task rerun", "",
             "Written by `python benchmarks/critic_lr_rerun.py --report`; the plan and its rules, written before its "
             f"runs, are its docstring. Each run is the suite's recommended run (critic {WIDTH} wide) with "
             f"`{LR_BINDING}`; seeds {SEEDS[0]}-{SEEDS[-1]}.", ""]
    lines += task_lines()
    lines += ["", f"Gate ({GATE_TASK}): {gate_verdict()}.", "", *shipping_lines()]
    done = [json.loads(path.read_text()) for task in SAMPLE_EFFICIENCY_TASKS for seed in SEEDS
            if (path := rerun_path(task, seed)).exists()]
    if done:
        lines += ["", trained_line({run["code_commit"]["commit"][:7] for run in done},
                                   {cpu_kind(run["machine"]) for run in done})]
    text = "\n".join(lines) + "\n"
    REPORT.write_text(text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=SAMPLE_EFFICIENCY_TASKS, default=GATE_TASK,
                        help=f"the task to run (default {GATE_TASK}, the gate; the others wait for it)")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS), choices=SEEDS, metavar="SEED",
                        help=f"seeds to run ({SEEDS[0]}-{SEEDS[-1]}); a done or claimed seed is skipped")
    parser.add_argument("--report", action="store_true", help="only rebuild the report from the result files")
    add_reproduce_arguments(parser, "run directory")
    args = parser.parse_args()
    if not args.report:
        make_out_dir("critic_lr_rerun", args.out_dir)
        try:
            for seed in args.seeds:
                train(args.task, seed, args.out_dir, args.force)
        except RunFailed as error:
            sys.exit(f"critic_lr_rerun: {error}")
    print(report(), end="")


if __name__ == "__main__":
    main()
