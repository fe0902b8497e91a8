"""DDPG on UnityReacher-v0 (20 arms) with configs/unity_reacher.gin for several seeds.

Usage: python benchmarks/unity_reacher.py [--seeds 0 1 2 3 4] [--jobs 2] [--gin-param B ...] [--out F] [--note T]
Each seed runs `polyak train --config configs/unity_reacher.gin --seed S` in its own process with one
torch thread, ``--jobs`` at a time; training stops when the 100-episode mean reaches 30. Writes
benchmarks/results/unity_reacher.json and unity_reacher.png (the learning curves); the last stdout
line is the JSON result.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import RunFailed, code_commit, load_average, machine_info, train_run

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "unity_reacher.gin"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--gin-param", action="append", default=[])
    parser.add_argument("--workdir", default=str(ROOT / "runs" / "bench_unity_reacher"))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "unity_reacher.json"))
    parser.add_argument("--note", help="free text stored with the result (why this run was made)")
    args = parser.parse_args()

    workdir = Path(args.workdir)
    if workdir.exists():
        shutil.rmtree(workdir)
    started = time.perf_counter()

    def one_seed(seed: int) -> dict:
        load_before = load_average()
        summary = train_run(args.config, seed, workdir / f"unity_reacher_seed_{seed}", args.gin_param, threads=1)
        return {"load_average": {"before": load_before, "after": load_average()},
                "seed": seed, "episodes_to_solve": summary["episodes_to_solve"],
                "best_window_mean": summary["best_window_mean"], "final_window_mean": summary["final_window_mean"],
                "best_eval": summary["best_eval"], "episodes": summary["episodes"],
                "wall_seconds": summary["wall_seconds"]}

    with ThreadPoolExecutor(args.jobs) as pool:
        seeds = list(pool.map(one_seed, args.seeds))

    from polyak.plot import plot_runs

    plot = Path(args.out).with_suffix(".png")
    plot_runs(sorted(workdir.iterdir()), plot, threshold=30.0,
              title=f"UnityReacher-v0, 20 arms, {Path(args.config).name}, {len(seeds)} seeds")
    solved = [s["episodes_to_solve"] for s in seeds if s["episodes_to_solve"] is not None]
    result = {
        "benchmark": "unity_reacher",
        "settings": {"config": Path(args.config).name, "gin_params": args.gin_param, "jobs": args.jobs,
                     "torch_threads_per_run": 1, "solve_rule": "100-episode mean of the 20-arm mean score >= 30"},
        "machine": machine_info(),
        "seeds": seeds,
        "solved_seeds": len(solved),
        "median_episodes_to_solve": statistics.median(solved) if len(solved) == len(seeds) else None,
        "median_wall_seconds": statistics.median(s["wall_seconds"] for s in seeds),
        "total_wall_seconds": round(time.perf_counter() - started, 1),
        "plot": plot.name,
        "code": code_commit(),
    }
    if args.note:
        result["note"] = args.note
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    try:
        main()
    except RunFailed as error:
        sys.exit(f"unity_reacher: {error}")
