"""The README's quick start, timed as a user runs it: ``polyak train --env Pendulum-v1`` (the recommended config)
with a 10,000-step budget, end to end (start-up included), one torch thread (polyak's default).

    python benchmarks/quickstart.py [--seeds 0 1 2] [--steps 10000] [--out benchmarks/results/quickstart_pendulum.json]

The first seed is the command as the README writes it (seed 0); more seeds give the spread. Per seed: wall seconds,
the training seconds from ``summary.json``, every evaluation, and the first evaluation at or above -200 (Pendulum's
usual "solved" line). Writes one JSON file with the machine, the commit and the load averages around each run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import code_commit, load_average, machine_info, read_metrics

THRESHOLD = -200.0
ROOT = Path(__file__).resolve().parent.parent


def timed_run(steps: int, seed: int, workdir: Path) -> dict:
    command = ["polyak", "train", "--env", "Pendulum-v1", "--steps", str(steps)]  # the README's quick start
    if seed != 0:
        command += ["--seed", str(seed)]
    before = load_average()
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "polyak.cli", *command[1:]], cwd=workdir, capture_output=True,
                            text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"), check=False)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"quickstart: {' '.join(command)} failed: {result.stderr.strip().splitlines()[-1:]}")
    run_dir = max((workdir / "runs").iterdir(), key=lambda path: path.stat().st_mtime)
    summary = json.loads((run_dir / "summary.json").read_text())
    evaluations = [{"env_steps": int(row["env_steps"]), "mean_score": round(float(row["score"]), 2)}
                   for row in read_metrics(run_dir) if row["kind"] == "eval"]
    reached = next((e["env_steps"] for e in evaluations if e["mean_score"] >= THRESHOLD), None)
    return {"command": " ".join(command), "seed": seed, "run_dir": run_dir.name, "wall_seconds": round(wall, 1),
            "training_seconds": summary.get("wall_seconds"), "evaluations": evaluations,
            "first_eval_at_or_above_minus_200": reached, "load_average_before": before,
            "load_average_after": load_average()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "quickstart_pendulum.json")
    args = parser.parse_args()
    runs = []
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as workdir:
            runs.append(timed_run(args.steps, seed, Path(workdir)))
        print(json.dumps(runs[-1]), flush=True)
    result = {
        "what": f"The README quick start: polyak train --env Pendulum-v1 (the recommended config) with a "
                f"{args.steps:,}-step budget, timed end to end (start-up included) with one torch thread (polyak's "
                "default) as a user runs it; the first run is the command as written (seed 0), more seeds for the "
                "spread.",
        "threshold": THRESHOLD,
        "runs": runs,
        "reached_threshold": sum(run["first_eval_at_or_above_minus_200"] is not None for run in runs),
        "machine": machine_info(),
        "code_commit": code_commit(),
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({"reached_threshold": result["reached_threshold"], "runs": len(runs)}))


if __name__ == "__main__":
    main()
