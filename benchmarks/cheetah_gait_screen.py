"""Does the recommended row's 512-wide critic make HalfCheetah-v5's nose-down gait likelier than a 256-wide one?

At 512 wide, three HalfCheetah runs are known to have gone nose down or onto their back early and climbed slowly
after: the recommended row's seed 3 (by its curve), a screening run of seed 7 and sb3-contrib's CrossQ seed 0
(``cheetah_posture.py``); among thirteen 256-wide CrossQ runs of the suite none has that curve. This screen trains the
recommended config (``configs/suite/halfcheetah_recommended.gin``) on fresh seeds to 15,000 env steps with the
critic 512 or 256 wide, nothing else changed (the same averaged actor is measured), and reads the shipped policy's
posture at each 5,000-step checkpoint.

Rule, written before its runs: a run is in the gait when its policy's mean absolute torso pitch at 15,000 steps is
above 0.5 rad (the level runs measured so far stay at or below 0.19 there, the nose-down ones at or above 0.68); the
report counts such runs per width over seeds 10-19 and gives Fisher's exact test (one-sided: more at 512). Fewer
than that, it is a count, not a test.

  python benchmarks/cheetah_gait_screen.py [--widths 512 256] [--seeds 10 ... 19]   # two shells share the work
  python benchmarks/cheetah_gait_screen.py --report

Writes ``benchmarks/results/cheetah_gait_screen/w<W>_seed_<S>.json`` per run (the posture rows, the run's own
evaluations, CPU seconds, commit, machine and load) and, with ``--report`` or after its runs,
``benchmarks/results/cheetah_gait_screen.md``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from cheetah_posture import polyak_policies, posture, run_evaluations
from common import RunFailed, claimed, code_commit, load_average, machine_info, train_run, trained_line
from suite import CONFIGS, RESULTS, ROOT, cpu_seconds

STUDY = RESULTS / "cheetah_gait_screen"
REPORT = RESULTS / "cheetah_gait_screen.md"
RUNS = ROOT / "runs" / "cheetah_gait_screen"  # each run's directory, removed once its posture is read
CONFIG = CONFIGS / "halfcheetah_recommended.gin"
STEPS = 15_000
CHECKPOINT_EVERY = 5_000
GAIT_PITCH = 0.5  # rad: the rule's threshold on the mean absolute pitch at STEPS
WIDTHS = (512, 256)
SEEDS = tuple(range(10, 20))
POSTURE_EPISODES = 3


def result_path(width: int, seed: int) -> Path:
    return STUDY / f"w{width}_seed_{seed}.json"


def bindings(width: int) -> list[str]:
    return [f"critic/NetworkConfig.hidden_sizes = ({width}, {width})",
            f"TrainerConfig.max_env_steps = {STEPS}",
            f"TrainerConfig.checkpoint_interval = {CHECKPOINT_EVERY}",
            "TrainerConfig.keep_checkpoints = 10",
            "TrainerConfig.progress_bar = False"]


def screen_run(width: int, seed: int) -> dict[str, Any]:
    """Train one run to ``STEPS`` and measure its posture at each checkpoint; its result record."""
    run_dir = RUNS / f"w{width}_seed_{seed}"
    load_before, commit, cpu_before = load_average(), code_commit(), cpu_seconds()
    started = time.perf_counter()
    train_run(str(CONFIG), seed, run_dir, bindings(width), threads=1)
    rows = [{"env_steps": steps, **posture(policy, POSTURE_EPISODES)} for steps, policy in polyak_policies(run_dir)]
    evaluations = run_evaluations(run_dir)
    shutil.rmtree(run_dir)
    final = rows[-1]
    return {"width": width, "seed": seed, "env_steps": STEPS, "config": str(CONFIG.relative_to(ROOT)),
            "bindings": bindings(width), "rows": rows, "run_evaluations": evaluations,
            "mean_abs_pitch_at_end": final["mean_abs_pitch"], "in_gait": final["mean_abs_pitch"] > GAIT_PITCH,
            "cpu_seconds": round(cpu_seconds() - cpu_before, 1),
            "wall_seconds": round(time.perf_counter() - started, 1),
            "code_commit": commit, "machine": machine_info(), "load_average": [load_before, load_average()]}


def run_all(widths: list[int], seeds: list[int]) -> None:
    for seed in seeds:  # seed-major, so a sitting cut short leaves both widths with about as many runs
        for width in widths:
            path = result_path(width, seed)
            with claimed(path) as mine:
                if not mine or path.exists():
                    continue
                result = screen_run(width, seed)
                path.write_text(json.dumps(result, indent=1) + "\n")
                print(f"width {width} seed {seed}: mean |pitch| {result['mean_abs_pitch_at_end']:.2f} at {STEPS}, "
                      f"in the gait: {result['in_gait']}", flush=True)


def report() -> str:
    from scipy.stats import fisher_exact

    results = [json.loads(path.read_text()) for path in sorted(STUDY.glob("w*_seed_*.json"))]
    lines = ["# HalfCheetah-v5's nose-down gait at two critic widths", "",
             "Written by `python benchmarks/cheetah_gait_screen.py --report` (the question and the rule are its "
             f"docstring). The recommended config to {STEPS:,} env steps, the critic 512 or 256 wide; the shipped "
             f"policy's posture over {POSTURE_EPISODES} deterministic episodes per checkpoint. In the gait: mean "
             f"|pitch| above {GAIT_PITCH} rad at {STEPS:,} steps.", "",
             "| width | seed | return at 5k / 10k / 15k | mean pitch at 5k / 10k / 15k (rad) | on its back at 15k "
             "| in the gait | CPU min |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for result in sorted(results, key=lambda r: (-r["width"], r["seed"])):
        rows = result["rows"]
        returns = " / ".join(f"{round(row['return']):,}" for row in rows)
        pitches = " / ".join(f"{row['mean_pitch']:.2f}" for row in rows)
        lines.append(f"| {result['width']} | {result['seed']} | {returns} | {pitches} | "
                     f"{rows[-1]['flipped_share']:.0%} | {'yes' if result['in_gait'] else 'no'} | "
                     f"{result['cpu_seconds'] / 60:.1f} |")
    counts = {width: [r["in_gait"] for r in results if r["width"] == width] for width in WIDTHS}
    lines += ["", "| width | runs | in the gait |", "| --- | --- | --- |"]
    lines += [f"| {width} | {len(gaits)} | {sum(gaits)} |" for width, gaits in counts.items()]
    wide, narrow = counts[512], counts[256]
    if len(wide) == len(narrow) == len(SEEDS):
        table = [[sum(wide), len(wide) - sum(wide)], [sum(narrow), len(narrow) - sum(narrow)]]
        p_value = fisher_exact(table, alternative="greater").pvalue
        lines += ["", f"Fisher's exact test, one-sided (more runs in the gait at 512): p = {p_value:.3f}."]
    else:
        lines += ["", f"Not yet a test: the rule asks for seeds {SEEDS[0]}-{SEEDS[-1]} at both widths."]
    if results:
        lines += ["", trained_line({r["code_commit"]["commit"][:7] for r in results},
                                   {r["machine"]["cpu"] + " " + r["machine"].get("cpu_isa", "") for r in results})]
    text = "\n".join(lines) + "\n"
    REPORT.write_text(text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", type=int, nargs="+", default=list(WIDTHS), choices=WIDTHS)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--report", action="store_true", help="only rebuild the report from the result files")
    args = parser.parse_args()
    if not args.report:
        try:
            run_all(args.widths, args.seeds)
        except RunFailed as error:
            sys.exit(f"cheetah_gait_screen: {error}")
    print(report(), end="")


if __name__ == "__main__":
    main()
