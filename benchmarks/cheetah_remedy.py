"""Does a width-scaled critic learning rate keep HalfCheetah-v5's recommended row out of its nose-down gait?

Where it comes from (``benchmarks/results/baseline_width.md``): at 512 wide, 5 of the 20 HalfCheetah-v5 runs of
the follow-up ended slow (polyak's recommended row 3 of 10, sb3-contrib's CrossQ 2 of 10), polyak's slow ones
nose down; among the 18 HalfCheetah runs of the suite's 256-wide CrossQ rows (polyak's CrossQ, CrossQ-SAC and the
256-wide recommended row, sb3-contrib's CrossQ) none ended below 6,000. Those counts were read after the runs.

The remedy tried: Adam moves every weight by about its learning rate, so a hidden or output layer twice as wide
moves its unit's pre-activation about twice as far per update (Yang, Hu et al. 2021, "Tensor Programs V": under
muP, Adam's rate for such layers scales as 1/fan-in). The 512-wide critic at 1e-3 thus takes about twice the
256-wide critic's step; ``critic/NetworkConfig.lr = 5e-4`` gives it back the 256-wide step and keeps its width.
Nothing else changes: each run is the suite's ``polyak_recommended`` HalfCheetah-v5 run (its config, protocol and
budget, the shipped averaged actor) with that one binding, and it keeps its checkpoints (every 10,000 env steps)
so the shipped policy's posture is read at each (``cheetah_posture.posture``, 3 episodes), then its run directory
is removed.

Rule, written before any of its runs: a run is slow when its final return is below 6,000 (the five slow follow-up
runs end at or below 5,856 and the other fifteen at or above 6,987). The remedy is worth the full rerun of the
recommended row on the five tasks (``critic_width.py``'s shipping rule) when, over seeds 10-19, its mean final
return is at least sb3-contrib's CrossQ's at 512 over the follow-up's seeds 0-9 (7,767) and at most 1 of its 10
runs is slow. It is dropped as soon as 3 of its runs are slow: it can then no longer beat the row it would replace
(3 slow of 10). With fewer than 10 seeds the report counts, it does not judge. The seeds differ from the
follow-up's, so the comparison is between independent samples, not pairs.

A second remedy, added after the first's verdict ("not worth the rerun": all ten runs level, none slow, but a
mean of 7,533) and before any of its own runs: ``--arm critic_lr_7e-4`` binds ``critic/NetworkConfig.lr = 0.0007``,
about the geometric midpoint of 5e-4 and 1e-3 (1e-3 / sqrt(2), the rate that scales as 1/sqrt(fan-in)). At 5e-4
every run stayed level but climbed slower than the 256-wide critic at 1e-3 (at 50k its ten runs averaged 6,092, the
control's seven level runs of seeds 10-17 6,257); the question is whether a smaller cut keeps the runs level and
gives back the climb. Its rule is the first remedy's, unchanged: worth the five-task rerun when its mean final return
over seeds 10-19 is at least 7,767 with at most 1 slow run, dropped at its third slow run.

A control arm, added while the remedy's first two runs trained and before any result: ``--arm width_256`` runs the
same seeds with the critic 256 wide at 1e-3 (nothing else changed). It is not a candidate (the 512-wide critic is
what lifted Ant-v5 and Humanoid-v5); it asks whether the width is the cause. Its slow count stands beside the
remedy's on the same seeds, and once it has seeds 10-19 the report gives Fisher's exact test (one-sided: more slow
runs at 512) of the follow-up's 512-wide count (5 of 20) against it.

A same-seed check, added after both remedies' verdicts and before any of its runs: those verdicts read each remedy
against sb3-contrib's CrossQ at 512 on other seeds (0-9), so 7,767 stands in for a mean never measured on seeds
10-19. ``baseline_width.py --task HalfCheetah-v5 --seed S`` trains sb3-contrib's CrossQ at 512 (the suite's
``sb3_crossq`` run with only its critic's width changed) on seeds 10-19, the arms' seeds and start states. Its rule:
the candidate is the second remedy, the higher of the two remedies' means (7,634 against 7,533), named now, before
sb3-contrib's runs; the first remedy and the control are reported beside it and not judged. Once sb3-contrib has all
ten seeds, the second remedy becomes worth the five-task rerun when its mean final return over seeds 10-19 is at
least sb3-contrib's over the same seeds with at most 1 of its runs slow (it has 1); otherwise its verdict stands.
The report gives beside it the per-seed differences, rliable's probability of improvement of each arm over
sb3-contrib on those seeds and sb3-contrib's slow count (whether seed 18, which ended between 5,851 and 6,492 in
the three arms here, is hard for sb3-contrib too). With fewer than ten sb3-contrib seeds it counts, it does not
judge.

The rerun, should the same-seed check call for it (written with eight of its ten seeds in, before seeds 18-19
finished and before any rerun run): the recommended row at 512 with ``critic/NetworkConfig.lr = 0.0007`` on the
suite's seeds 0-4 of the five tasks, HalfCheetah-v5 first. The goal it serves is the like-for-like one on
HalfCheetah-v5 (``baseline_width.md``: sb3-contrib's CrossQ at 512 over seeds 0-4, 7,623): if the five HalfCheetah
runs' mean final return is below that, the rerun stops there and the miss stands. Otherwise the other four tasks
follow; the rerun's row replaces the shipped one by ``critic_width.py``'s shipping rule (over the five tasks, a
higher IQM of normalized final returns and a lowest per-task stability not lower), and the like-for-like check is
read again on all five. Its runs and that gate: ``benchmarks/critic_lr_rerun.py``.

    python benchmarks/cheetah_remedy.py --seeds 10 11    # the first remedy, 62-74 CPU minutes a run; two shells share
    python benchmarks/cheetah_remedy.py --arm critic_lr_7e-4 --seeds 12    # the second remedy, 59-71 CPU minutes a run
    python benchmarks/cheetah_remedy.py --arm width_256 --seeds 10 11    # the control, 27-35 CPU minutes a run
    python benchmarks/baseline_width.py --task HalfCheetah-v5 --seed 10    # the same-seed check, 76-102 CPU min a run
    python benchmarks/cheetah_remedy.py --report         # the table over the result files

Writes ``benchmarks/results/cheetah_remedy/<arm>/seed_<S>.json`` per run (the suite's record: curves,
commit, machine, load, CPU seconds; plus the posture rows) and ``benchmarks/results/cheetah_remedy.md``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cheetah_posture import polyak_policies, posture
from common import RunFailed, cpu_kind, trained_line
from critic_width import AVERAGING, add_reproduce_arguments, make_out_dir, recorded_run
from suite import RECOMMENDED_ROW, RESULTS, TASKS, run_polyak
from suite_stats import interval_text, iqm_interval, probability_of_improvement

TASK = "HalfCheetah-v5"
WIDTH = 512  # the recommended row's critic
REMEDY = "critic_lr_5e-4"
MIDPOINT = "critic_lr_7e-4"  # the second remedy
REMEDIES = (REMEDY, MIDPOINT)
CONTROL = "width_256"
ARMS = {REMEDY: (WIDTH, ("critic/NetworkConfig.lr = 0.0005",)),  # arm: critic width, bindings
        MIDPOINT: (WIDTH, ("critic/NetworkConfig.lr = 0.0007",)), CONTROL: (256, ())}
KEEP_CHECKPOINTS = ("TrainerConfig.keep_checkpoints = 10",)  # every 10,000 steps of 100,000: all of them
SEEDS = tuple(range(10, 20))
SLOW_BELOW = 6_000
GOAL_MEAN = 7_767  # sb3-contrib's CrossQ at 512 over the follow-up's seeds 0-9 (baseline_width.md)
MOST_SLOW = 1
DROP_AT_SLOW = 3
READ_AT = 50_000  # the report also gives the return here: "below 5,000 at 50k" flagged every slow follow-up run
POSTURE_EPISODES = 3
STUDY = RESULTS / "cheetah_remedy"
REPORT = RESULTS / "cheetah_remedy.md"
SAME_SEED_CANDIDATE = MIDPOINT  # named before sb3-contrib's runs on these seeds (docstring)
SB3 = "sb3_crossq"
FOLLOW_UP_PICK = "0.0005"  # the follow-up's curves at the rate the recommended row ships


def result_path(arm: str, seed: int) -> Path:
    return STUDY / arm / f"seed_{seed}.json"


def train(arm: str, seed: int, out_dir: Path | None = None, force: bool = False) -> None:
    """One run of the recommended row changed as ``arm`` says, its posture read at each checkpoint; its result file
    (into ``out_dir`` when given; ``force``: over an existing one)."""
    width, bindings = ARMS[arm]

    def train_one(run_dir: Path, width_binding: str) -> dict[str, Any]:
        result = run_polyak(TASK, RECOMMENDED_ROW, seed, run_dir=run_dir,
                            extra_bindings=(width_binding, *bindings, *KEEP_CHECKPOINTS))
        result["posture"] = [{"env_steps": steps, **posture(policy, POSTURE_EPISODES)}
                             for steps, policy in polyak_policies(run_dir)]
        shutil.rmtree(run_dir)
        result["remedy"] = arm
        return result

    result = recorded_run(result_path(arm, seed), TASK, width, seed, f"cheetah_remedy/{arm}", train_one,
                          out_dir=out_dir, force=force)
    if result is not None:
        end = result["posture"][-1]
        print(f"{TASK} {arm} seed {seed}: final {result['final_return']:.1f}, mean |pitch| "
              f"{end['mean_abs_pitch']:.2f} at {end['env_steps']:,}", flush=True)


def return_at(result: dict[str, Any], steps: int) -> float:
    return result["eval_returns"][result["eval_steps"].index(steps)]


def follow_up_finals() -> dict[str, list[float]]:
    """The follow-up's final returns at 512 wide over its seeds: polyak's recommended row (at the shipped rate) and
    sb3-contrib's CrossQ."""
    from baseline_width import study_path

    polyak_runs = [json.loads(path.read_text()) for path in sorted((AVERAGING / TASKS[TASK].config_stem).glob(
        f"w{WIDTH}_seed_*.json"))]
    sb3_paths = [study_path(TASK, WIDTH, run["seed"]) for run in polyak_runs]
    return {"polyak_recommended": [run["averages"][FOLLOW_UP_PICK][-1] for run in polyak_runs],
            "sb3_crossq": [json.loads(path.read_text())["final_return"] for path in sb3_paths if path.exists()]}


def slow_count(finals: Iterable[float]) -> int:
    """How many final returns are below ``SLOW_BELOW`` (the nose-down gait's runs)."""
    return sum(final < SLOW_BELOW for final in finals)


def verdict(finals: list[float]) -> str:
    slow = slow_count(finals)
    if slow >= DROP_AT_SLOW:
        return f"dropped: {slow} slow runs (the rule drops it at {DROP_AT_SLOW})"
    if len(finals) < len(SEEDS):
        return f"undecided: {len(finals)} of {len(SEEDS)} seeds run, {slow} slow"
    if statistics.mean(finals) >= GOAL_MEAN and slow <= MOST_SLOW:
        return "worth the five-task rerun"
    return "not worth the rerun"


def arm_line(name: str, finals: list[float]) -> str:
    slow = slow_count(finals)
    text = f"| {name} | {len(finals)} | {statistics.mean(finals):,.0f} | "
    if len(finals) >= 3:
        iqm, ci = iqm_interval([[final] for final in finals])
        text += f"{iqm:,.0f} {interval_text(ci, 0)}"
    return text + f" | {slow} |"


def arm_runs(arm: str) -> list[dict[str, Any]]:
    return sorted((json.loads(path.read_text()) for path in (STUDY / arm).glob("seed_*.json")),
                  key=lambda run: run["seed"])


def run_line(arm: str, run: dict[str, Any]) -> str:
    curve, pitches = run["eval_returns"], {row["env_steps"]: row["mean_pitch"] for row in run["posture"]}
    return (f"| {arm} | {run['seed']} | {run['final_return']:,.0f} | {return_at(run, READ_AT):,.0f} | "
            f"{max(curve):,.0f} | {statistics.mean(curve[-5:]):,.0f} | "
            f"{pitches.get(READ_AT, float('nan')):.2f} / {run['posture'][-1]['mean_pitch']:.2f} | "
            f"{'yes' if run['final_return'] < SLOW_BELOW else 'no'} | {run['cpu_seconds'] / 60:.1f} |")


def control_test(control: list[float], wide: list[float]) -> str:
    """Fisher's exact test, one-sided, of more slow runs among ``wide`` (512) than ``control`` (256)."""
    from scipy.stats import fisher_exact

    if len(control) < len(SEEDS):
        return f"Control: {len(control)} of {len(SEEDS)} seeds run; the test waits for all of them."
    table = [[slow_count(finals), len(finals) - slow_count(finals)] for finals in (wide, control)]
    p_value = fisher_exact(table, alternative="greater").pvalue
    return (f"Control: {table[0][0]} slow of {len(wide)} at 512 (the follow-up, both arms) against {table[1][0]} of "
            f"{len(control)} at 256; Fisher's exact test, one-sided: p = {p_value:.3f}.")


def same_seed_runs() -> list[dict[str, Any]]:
    """sb3-contrib's CrossQ at 512 (``baseline_width.py``'s runs) on this study's seeds, those that have run."""
    from baseline_width import study_path

    return [json.loads(path.read_text()) for seed in SEEDS if (path := study_path(TASK, WIDTH, seed)).exists()]


def same_seed_verdict(arm: dict[int, float], sb3: dict[int, float]) -> str:
    """The same-seed rule (docstring) for the candidate's final returns ``arm`` against sb3-contrib's ``sb3``, both
    by seed: judged only when both have every seed."""
    missing = [f"{len(runs)} of {len(SEEDS)} {name} seeds run" for name, runs in ((SB3, sb3), ("its", arm))
               if len(runs) < len(SEEDS)]
    if missing:
        return "undecided: " + ", ".join(missing)
    slow = slow_count(arm.values())
    if statistics.mean(arm.values()) >= statistics.mean(sb3.values()) and slow <= MOST_SLOW:
        return "worth the five-task rerun"
    return "its verdict stands (not worth the rerun)"


def same_seed_lines(finals: dict[str, dict[int, float]], sb3: dict[int, float]) -> list[str]:
    """The same-seed check's part of the report: per seed sb3-contrib's final return and each arm's difference from
    it, per arm over the seeds both have the mean difference, the seeds it is higher on and rliable's probability
    of improvement, and the candidate's verdict."""
    head = (f"Same-seed check (docstring): {SB3} at {WIDTH} on seeds {SEEDS[0]}-{SEEDS[-1]}, "
            f"{len(sb3)} of {len(SEEDS)} run")
    if not sb3:
        return ["", head + "."]
    slow = slow_count(sb3.values())
    lines = ["", f"{head}, mean final {statistics.mean(sb3.values()):,.0f}, {slow} slow. Each arm's final return "
             f"minus {SB3}'s on the same seed:", "",
             f"| seed | {SB3} {WIDTH} | " + " | ".join(f"{arm} − {SB3}" for arm in finals) + " |",
             "| --- | --- | " + " | ".join("---" for _ in finals) + " |"]
    for seed, theirs in sorted(sb3.items()):
        cells = [f"{runs[seed] - theirs:+,.0f}" if seed in runs else "—" for runs in finals.values()]
        lines.append(f"| {seed} | {theirs:,.0f} | " + " | ".join(cells) + " |")
    lines += ["", f"| arm | seeds with both | mean difference | higher on | probability of improvement over {SB3} |",
              "| --- | --- | --- | --- | --- |"]
    for arm, runs in finals.items():
        both = [seed for seed in sorted(sb3) if seed in runs]
        if not both:
            continue
        differences = [runs[seed] - sb3[seed] for seed in both]
        rows = {arm: {"final_returns": [runs[seed] for seed in both]},
                SB3: {"final_returns": [sb3[seed] for seed in both]}}
        improvement = probability_of_improvement({"tasks": {TASK: {"rows": rows}}}, arm, SB3, only=[TASK])
        lines.append(f"| {arm} | {len(both)} | {statistics.mean(differences):+,.0f} | "
                     f"{sum(difference > 0 for difference in differences)} of {len(both)} | "
                     f"{improvement['probability']:.2f} {interval_text(improvement['ci'], 2)} |")
    lines += ["", f"Same-seed verdict on {SAME_SEED_CANDIDATE}: "
              f"{same_seed_verdict(finals[SAME_SEED_CANDIDATE], sb3)}."]
    return lines


def report() -> str:
    runs = {arm: arm_runs(arm) for arm in ARMS}
    remedies = " or ".join(f"`{'; '.join(ARMS[arm][1])}` ({arm})" for arm in REMEDIES)
    lines = ["# Width-scaled critic learning rates against HalfCheetah-v5's nose-down gait", "",
             "Written by `python benchmarks/cheetah_remedy.py --report`; the question, the arms and the rules, "
             "written before their runs, are its docstring. The suite's recommended HalfCheetah-v5 run (averaged "
             f"actor) with {remedies}, the remedies, or with the critic "
             f"{ARMS[CONTROL][0]} wide ({CONTROL}, the control); seeds {SEEDS[0]}-{SEEDS[-1]}; slow: final return "
             f"below {SLOW_BELOW:,}. Posture: the shipped policy over {POSTURE_EPISODES} deterministic episodes "
             "(pitch 0 is level, positive nose down).", "",
             f"| arm | seed | final return | at {READ_AT // 1000}k | best evaluation | mean of the last five | "
             f"mean pitch at {READ_AT // 1000}k / end (rad) | slow | CPU min |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    lines += [run_line(arm, run) for arm, arm_list in runs.items() for run in arm_list]
    finals = {arm: [run["final_return"] for run in arm_list] for arm, arm_list in runs.items()}
    follow_up = follow_up_finals()
    lines += ["", "| arm | runs | mean final | IQM [95% bootstrap] | slow |", "| --- | --- | --- | --- | --- |"]
    lines += [arm_line(f"{arm} (seeds {SEEDS[0]}-{SEEDS[-1]})", arm_finals)
              for arm, arm_finals in finals.items() if arm_finals]
    lines += [arm_line(f"{name} at {WIDTH} (the follow-up, seeds 0-9)", arm_finals)
              for name, arm_finals in follow_up.items()]
    lines += [""] + [f"Verdict on {arm}: {verdict(finals[arm]) if finals[arm] else 'no runs yet'}." for arm in REMEDIES]
    lines += ["", control_test(finals[CONTROL], [final for arm_finals in follow_up.values() for final in arm_finals])]
    sb3_runs = same_seed_runs()
    by_seed = {arm: {run["seed"]: run["final_return"] for run in arm_list} for arm, arm_list in runs.items()}
    lines += same_seed_lines(by_seed, {run["seed"]: run["final_return"] for run in sb3_runs})
    done = [run for arm_list in runs.values() for run in arm_list] + sb3_runs
    if done:
        lines += ["", trained_line({run["code_commit"]["commit"][:7] for run in done},
                                   {cpu_kind(run["machine"]) for run in done})]
    text = "\n".join(lines) + "\n"
    REPORT.write_text(text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arm", choices=list(ARMS), default=REMEDY,
                        help=f"{REMEDY}: the first remedy (the default); {MIDPOINT}: the second; {CONTROL}: the "
                             "control")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS), choices=SEEDS, metavar="SEED",
                        help=f"seeds to run ({SEEDS[0]}-{SEEDS[-1]}); a done or claimed seed is skipped")
    parser.add_argument("--report", action="store_true", help="only rebuild the report from the result files")
    add_reproduce_arguments(parser, "run directory")
    args = parser.parse_args()
    if not args.report:
        make_out_dir("cheetah_remedy", args.out_dir)
        try:
            for seed in args.seeds:
                train(args.arm, seed, args.out_dir, args.force)
        except RunFailed as error:
            sys.exit(f"cheetah_remedy: {error}")
    print(report(), end="")


if __name__ == "__main__":
    main()
