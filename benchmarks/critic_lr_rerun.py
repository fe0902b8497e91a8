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
    python benchmarks/critic_lr_rerun.py --promote   # once the rule says ship and the configs carry the rate

Writes ``benchmarks/results/critic_lr_rerun/<task stem>/seed_<S>.json`` per run (the suite's record: curve, commit,
machine, load, CPU seconds) and, with ``--report``, ``benchmarks/results/critic_lr_rerun.md``. ``--promote`` writes
the 25 runs as the suite's ``polyak_recommended`` result files, keeping the files they replace under
``benchmarks/results/critic_lr_rerun_partners/`` (the report and the rule keep pairing each run with them); it refuses,
writing nothing, while a run is owed, while the rule says keep, or while the shipped configs' critic is not this
one (``critic/NetworkConfig.lr = 0.0007`` at 512 wide, in ``configs/recommended.gin`` and the five suite configs).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

from baseline_width import study_path as sb3_path
from common import RunFailed, cpu_kind, trained_line
from critic_width import add_reproduce_arguments, make_out_dir, recorded_run, row_numbers
from suite import (
    RECOMMENDED_ROW,
    RESULTS,
    ROOT,
    SAMPLE_EFFICIENCY_TASKS,
    TASKS,
    config_file,
    recommended_config_mismatches,
    result_path,
    run_polyak,
    write_result,
)

LR = 0.0007
LR_BINDING = f"critic/NetworkConfig.lr = {LR}"
BINDINGS = (LR_BINDING,)  # after the suite protocol's and the width's, so they win
WIDTH = 512  # the shipped recommended row's critic, and sb3-contrib's CrossQ in the like-for-like runs
SEEDS = tuple(range(5))
GATE_TASK = "HalfCheetah-v5"
STUDY = RESULTS / "critic_lr_rerun"
REPORT = RESULTS / "critic_lr_rerun.md"
PARTNERS = RESULTS / "critic_lr_rerun_partners"  # --promote keeps here the suite files it replaces (critic lr 1e-3)


def rerun_path(task: str, seed: int) -> Path:
    return STUDY / TASKS[task].config_stem / f"seed_{seed}.json"


def kept_path(task: str, seed: int) -> Path:
    return PARTNERS / TASKS[task].config_stem / f"{RECOMMENDED_ROW}_seed_{seed}.json"


def shipped_path(task: str, seed: int) -> Path:
    """The run a rerun run of ``seed`` is paired with: the suite's recommended file, or the copy ``--promote`` kept
    of it before the suite's row became the rerun's."""
    kept = kept_path(task, seed)
    return kept if kept.exists() else result_path(RESULTS, task, RECOMMENDED_ROW, seed)


def finals(paths: dict[int, Path]) -> dict[int, float]:
    """The final returns of those result files (by seed) that exist."""
    return {seed: json.loads(path.read_text())["final_return"] for seed, path in paths.items() if path.exists()}


def rerun_finals(task: str) -> dict[int, float]:
    return finals({seed: rerun_path(task, seed) for seed in SEEDS})


def shipped_finals(task: str) -> dict[int, float]:
    """The recommended row the rerun would replace (critic lr 1e-3) on the same seeds."""
    return finals({seed: shipped_path(task, seed) for seed in SEEDS})


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
    paths = {task: [(shipped_path(task, s), rerun_path(task, s)) for s in SEEDS]
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


def shipped_mismatches() -> list[str]:
    """How ``configs/recommended.gin`` and the five suite configs of the recommended row differ from the critic the
    rerun trained (512 wide, learning rate 7e-4)."""
    return recommended_config_mismatches(
        {"critic width": (WIDTH, WIDTH), "critic lr": LR},
        lambda configs: {"critic width": tuple(configs.critic.hidden_sizes), "critic lr": configs.critic.lr},
        ROOT, config_file)


def promoted(run: dict[str, Any], source: Path) -> dict[str, Any]:
    """A rerun run as the suite's result file of the recommended row: the same record, without the bindings of the
    width and learning rate its config carries."""
    protocol = [b for b in run["settings"]["gin_params"]
                if b not in BINDINGS and not b.startswith("critic/NetworkConfig.hidden_sizes")]
    return {**run, "env_steps_per_s": round(run["budget"] / run["wall_seconds"], 2),
            "settings": {**run["settings"], "gin_params": protocol},
            "from_rerun": {"file": str(source.relative_to(ROOT)),
                           "note": f"a critic_lr_rerun.py run: the recommended config with `{LR_BINDING}`, "
                                   "which the config carries since this promotion"}}


def promote() -> list[Path]:
    """The rerun's end when the rule says ship (module docstring): each run as the suite's recommended result file
    of its task and seed, the replaced file kept first. Refused (one line, nothing written) otherwise."""
    owed = [f"{task} seed {seed}" for task in SAMPLE_EFFICIENCY_TASKS for seed in SEEDS
            if not rerun_path(task, seed).exists()]
    if owed:
        sys.exit(f"critic_lr_rerun: the rerun still owes {len(owed)} runs ({', '.join(owed)}); nothing promoted")
    verdict = shipping_rule()
    if verdict is None:  # a shipped row's file is missing
        sys.exit("critic_lr_rerun: a run of the shipped row is missing (python benchmarks/suite.py --todo); "
                 "nothing promoted")
    if not verdict["ship"]:
        shipped, rerun = verdict["shipped"], verdict["rerun"]
        sys.exit(f"critic_lr_rerun: the shipping rule keeps critic lr 1e-3 (IQM {shipped['normalized_iqm']:.3f} "
                 f"against {rerun['normalized_iqm']:.3f}, lowest stability {shipped['lowest_stability']:.2f} "
                 f"against {rerun['lowest_stability']:.2f}); nothing promoted")
    if mismatches := shipped_mismatches():
        sys.exit("critic_lr_rerun: the shipped configs are not the rerun's yet; " + "; ".join(mismatches))
    written = []
    for task in SAMPLE_EFFICIENCY_TASKS:
        for seed in SEEDS:
            path, kept = result_path(RESULTS, task, RECOMMENDED_ROW, seed), kept_path(task, seed)
            if not kept.exists():  # a second --promote finds the lr 1e-3 run kept already
                kept.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, kept.with_suffix(".tmp"))
                kept.with_suffix(".tmp").replace(kept)
            source = rerun_path(task, seed)
            write_result(path, promoted(json.loads(source.read_text()), source))
            written.append(path)
    return written


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
    parser.add_argument("--promote", action="store_true",
                        help="write the 25 runs as the suite's recommended row (once the rule says ship)")
    add_reproduce_arguments(parser, "run directory")
    args = parser.parse_args()
    if args.promote:
        written = promote()
        print(f"critic_lr_rerun: {len(written)} result files of {RECOMMENDED_ROW} written; rebuild the suite's "
              "report: python benchmarks/suite.py --report")
        return
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
