"""Does the final policy keep what an earlier evaluation reached? CrossQ's TD3 mode against its SAC mode.

Reads the suite's InvertedPendulum-v5 runs of the stability rows (``benchmarks/suite.py``: polyak_crossq, the
authors' deterministic TD3 mode; polyak_crossq_sac and sb3_crossq, the SAC mode) and reports per run the best and
the final evaluation (the task's maximum return is 1,000: 1 per step for 1,000 steps), and for polyak's runs two
diagnostics of the final policy and critic:

* actor saturation: the share of action dimensions at |a| >= 0.99 while the final policy plays 5 episodes (a tanh
  actor pinned at its bounds has no gradient to recover with);
* critic scale: ``train/q_mean`` (TensorBoard) at the end against 1 / (1 - gamma) = 100, the discounted value of
  never falling; far above it is critic divergence.

    python benchmarks/stability.py            # after `python benchmarks/suite.py --only InvertedPendulum-v5 ...`

Prints one JSON object as its last line and writes benchmarks/results/stability_invertedpendulum.{json,md}. Run
directories are not committed: on a checkout without them, a run's diagnostics and the probes come from the committed
report (a suite run's only while its result file is from the same commit), so rebuilding the report loses nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np
from common import code_commit, load_average, machine_info
from suite import RESULTS, ROOT, TASKS, suite_run_dir

TASK, MAXIMUM, GAMMA = "InvertedPendulum-v5", 1000.0, 0.99
STEM = TASKS[TASK].config_stem
ROWS = ("polyak_crossq", "polyak_crossq_sac", "sb3_crossq")
AT_MAX, COLLAPSED = 0.99, 0.05  # "at the maximum": >= 99% of it; "collapsed": below 5% of the run's best


def run_files(row: str) -> list[dict[str, Any]]:
    paths = sorted((RESULTS / "suite" / STEM).glob(f"{row}_seed_*.json"))
    return sorted((json.loads(p.read_text()) for p in paths), key=lambda r: r["seed"])


def final_policy_diagnostics(row: str, seed: int, run_dir: Path | None = None, task: str = TASK,
                             maximum: float = MAXIMUM) -> dict[str, Any] | None:
    """Saturation of the final policy and the critic's scale, from the polyak run directory (None: not kept)."""
    run_dir = run_dir or suite_run_dir(task, row, seed)
    if not run_dir.is_dir():
        return None
    from polyak.envs import make_env
    from polyak.playback import load_policy_from_run
    from polyak.run_dir import RunDir

    policy = load_policy_from_run(run_dir, RunDir(run_dir).newest_checkpoint())
    env = make_env(task, 1)
    actions, lengths = [], []
    try:
        for episode in range(5):
            obs, _ = env.reset(seed=10_000 + episode)
            length, done = 0, False
            while not done and length < 1000:
                action = policy(obs)
                actions.append(np.abs(action))
                obs, _, terminated, truncated, _ = env.step(action)
                length, done = length + 1, bool(terminated.any() or truncated.any())
            lengths.append(length)
    finally:
        env.close()
    return {"saturated_share": round(float((np.concatenate(actions) >= 0.99).mean()), 4),
            "episode_lengths": lengths, **critic_scale(run_dir)}


def critic_scale(run_dir: Path) -> dict[str, Any]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir / "tb"), size_guidance={"scalars": 0}).Reload()
    if "train/q_mean" not in events.Tags()["scalars"]:
        return {}
    values = [event.value for event in events.Scalars("train/q_mean")]
    return {"q_mean_final": round(values[-1], 2), "q_mean_max": round(max(values), 2),
            "q_never_falling": round(1 / (1 - GAMMA), 2)}


# Probes outside the suite: the shipped crossq / crossq_sac configs with only the env changed (the protocol),
# trained by `polyak train --config suite/ALGO --seed S --run-dir runs/stability/idp_ALGO_seed_S --gin-param
# "TrainerConfig.env_id='InvertedDoublePendulum-v5'" --gin-param TrainerConfig.max_env_steps=30000 --gin-param
# TrainerConfig.eval_interval=1000 --gin-param TrainerConfig.eval_episodes=10`.
# its maximum: ~9.36 per step alive for 1,000 steps, so never falling is worth ~9.36 / (1 - 0.99) ~ 936 discounted
PROBES = {"InvertedDoublePendulum-v5": ("idp", 9359.9)}
PROBES_TRAINED_AT = "e09f4b6 (2026-11-25, Intel Xeon 2 cores shared with 2-4 other runs)"  # the run dirs are not kept


def probe_runs() -> dict[str, Any]:
    """The probe runs found under runs/stability: evaluation curves and final-policy diagnostics."""
    import csv

    probes: dict[str, Any] = {}
    for task, (prefix, maximum) in PROBES.items():
        for run_dir in sorted((ROOT / "runs" / "stability").glob(f"{prefix}_*_seed_*")):
            if not (run_dir / "summary.json").is_file():
                continue
            with open(run_dir / "metrics.csv", newline="") as handle:
                rows = [r for r in csv.DictReader(handle) if r["kind"] == "eval"]
            evals = [(int(r["env_steps"]), float(r["score"])) for r in rows]
            best, final = max(score for _, score in evals), evals[-1][1]
            at_max = [step for step, score in evals if score >= AT_MAX * maximum]
            first_max = at_max[0] if at_max else None
            after = [score for step, score in evals if first_max is not None and step > first_max]
            config = json.loads((run_dir / "config.json").read_text())
            probes[run_dir.name] = {
                "task": task, "algorithm": config["agent"]["algorithm"], "seed": config["trainer"]["seed"],
                "max_env_steps": config["trainer"]["max_env_steps"], "maximum_return": maximum,
                "eval_steps": [step for step, _ in evals], "eval_returns": [score for _, score in evals],
                "best_eval": best, "final_eval": final, "first_at_max": first_max,
                "evaluations_after_first_max": len(after),
                "at_max_after_first_max": sum(score >= AT_MAX * maximum for score in after),
                "below_10pct_after_first_max": sum(score < 0.1 * maximum for score in after),
                "diagnostics": final_policy_diagnostics("", 0, run_dir, task, maximum),
            }
    return probes


def summarize() -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for row in ROWS:
        runs = run_files(row)
        if not runs:
            continue
        seeds = []
        for run in runs:
            best, final = max(run["eval_returns"]), run["final_return"]
            entry = {"seed": run["seed"], "best_eval": best, "final_eval": final,
                     "reached_max": best >= AT_MAX * MAXIMUM, "ended_at_max": final >= AT_MAX * MAXIMUM,
                     "collapsed": final < COLLAPSED * best, "last_five_mean": statistics.mean(run["eval_returns"][-5:]),
                     "code_commit": run["code_commit"]["commit"]}
            if row.startswith("polyak_"):
                entry["diagnostics"] = final_policy_diagnostics(row, run["seed"])
            seeds.append(entry)
        rows[row] = {"runs": seeds, "reached_max": sum(s["reached_max"] for s in seeds),
                     "ended_at_max": sum(s["ended_at_max"] for s in seeds),
                     "collapsed": sum(s["collapsed"] for s in seeds), "seeds": len(seeds)}
    return {"benchmark": "stability", "task": TASK, "maximum_return": MAXIMUM, "rows": rows, "probes": probe_runs(),
            "probes_trained_at": PROBES_TRAINED_AT,
            "definitions": {"ended_at_max": f"final evaluation >= {AT_MAX:.0%} of {MAXIMUM:.0f}",
                            "collapsed": f"final evaluation < {COLLAPSED:.0%} of the run's best evaluation"},
            "code_commit": code_commit(), "machine": machine_info(), "load_average": load_average()}


def markdown(report: dict[str, Any]) -> str:
    lines = [f"# Stability on {report['task']} (maximum return {report['maximum_return']:.0f})", "",
             "| row | seed | best eval | final eval | last 5 mean | saturated actions | final q_mean (never falling: "
             "100) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for row, data in report["rows"].items():
        for run in data["runs"]:
            diagnostics = run.get("diagnostics") or {}
            saturated = diagnostics.get("saturated_share")
            lines.append(f"| {row} | {run['seed']} | {run['best_eval']:.1f} | {run['final_eval']:.1f} | "
                         f"{run['last_five_mean']:.1f} | {'' if saturated is None else f'{saturated:.1%}'} | "
                         f"{diagnostics.get('q_mean_final', '')} |")
    lines += ["", "| row | seeds | reached the maximum | ended at the maximum | collapsed |", "| --- | --- | --- | --- "
              "| --- |"]
    lines += [f"| {row} | {d['seeds']} | {d['reached_max']} | {d['ended_at_max']} | {d['collapsed']} |"
              for row, d in report["rows"].items()]
    if report["probes"]:
        lines += ["", "## Probes: the shipped configs with only the env changed", "",
                  "| run | task | algorithm | best eval | final eval | first at the maximum | at the maximum after it "
                  "| below 10% after it | saturated actions (final policy) | final q_mean (never falling: ~936) |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for name, probe in report["probes"].items():
            diagnostics = probe["diagnostics"] or {}
            after = probe["evaluations_after_first_max"]
            lines.append(f"| {name} | {probe['task']} | {probe['algorithm']} | {probe['best_eval']:.1f} | "
                         f"{probe['final_eval']:.1f} | {probe['first_at_max']} | {probe['at_max_after_first_max']} of "
                         f"{after} | {probe['below_10pct_after_first_max']} of {after} | "
                         f"{diagnostics.get('saturated_share', 0):.1%} | {diagnostics.get('q_mean_final', '')} |")
    return "\n".join(lines) + "\n"


def keep_earlier_measurements(report: dict[str, Any], earlier: dict[str, Any]) -> None:
    """Fill what this checkout could not measure (its run directories are gone) from the earlier report."""
    for row, data in report["rows"].items():
        earlier_runs = {run["seed"]: run for run in earlier.get("rows", {}).get(row, {}).get("runs", [])}
        for run in data["runs"]:
            before = earlier_runs.get(run["seed"], {})
            if run.get("diagnostics", ...) is None and before.get("code_commit") == run["code_commit"]:
                run["diagnostics"] = before.get("diagnostics")
    for name, probe in earlier.get("probes", {}).items():
        report["probes"].setdefault(name, probe)


def measured(report: dict[str, Any]) -> dict[str, Any]:
    """A report less the commit, machine and load of the process that wrote it."""
    return {key: value for key, value in report.items() if key not in ("code_commit", "machine", "load_average")}


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    path = RESULTS / "stability_invertedpendulum.json"
    report = summarize()
    earlier = json.loads(path.read_text()) if path.is_file() else {}
    keep_earlier_measurements(report, earlier)
    if measured(report) != measured(earlier):  # else only this run's commit, machine and load would change
        path.write_text(json.dumps(report, indent=1) + "\n")
        (RESULTS / "stability_invertedpendulum.md").write_text(markdown(report))
    print(markdown(report))
    print(json.dumps({row: {k: v for k, v in data.items() if k != "runs"} for row, data in report["rows"].items()}))


if __name__ == "__main__":
    main()
