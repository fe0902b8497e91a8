"""DDPG on Pendulum-v1 for several seeds: env steps until the deterministic evaluation mean >= -200.

Usage: python benchmarks/pendulum.py [--config configs/pendulum.gin] [--seeds 0 1 2 3 4] [--jobs 2] [--workers N]
       [--gin-param BINDING ...] [--out benchmarks/results/pendulum.json]
Each seed runs `polyak train --config configs/pendulum.gin --seed S` in its own process with one torch
thread; ``--jobs`` processes run at once; ``--workers N`` trains with Ape-X and N rollout workers instead.
The last stdout line is the JSON result.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import code_commit, load_average, machine_info, read_metrics, train_run

THRESHOLD = -200.0
ROOT = Path(__file__).resolve().parent.parent


def one_seed(config: str, seed: int, workdir: Path, bindings: list[str], workers: int | None) -> dict:
    run_dir = workdir / f"seed_{seed}"
    summary = train_run(config, seed, run_dir, bindings, threads=1,
                        extra_args=("--workers", str(workers)) if workers else ())
    evals = [(int(row["env_steps"]), float(row["score"])) for row in read_metrics(run_dir) if row["kind"] == "eval"]
    reached = next((steps for steps, score in evals if score >= THRESHOLD), None)
    return {
        "seed": seed,
        "steps_to_threshold": reached,
        "final_eval": evals[-1][1] if evals else None,
        "best_eval": max(score for _, score in evals) if evals else None,
        "wall_seconds": summary["wall_seconds"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "pendulum.gin"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--workers", type=int, default=None, help="train with Ape-X and this many rollout workers")
    parser.add_argument("--gin-param", action="append", default=[])
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "pendulum.json"))
    args = parser.parse_args()

    started, load_before = time.perf_counter(), load_average()
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        seeds = list(pool.map(lambda s: one_seed(args.config, s, Path(tmp), args.gin_param, args.workers),
                              args.seeds))
    reached = [s["steps_to_threshold"] for s in seeds if s["steps_to_threshold"] is not None]
    result = {
        "benchmark": "pendulum",
        "threshold": THRESHOLD,
        "settings": {"config": Path(args.config).name, "gin_params": args.gin_param, "jobs": args.jobs,
                     "apex_workers": args.workers, "torch_threads_per_run": 1, "max_env_steps": 20000},
        "machine": machine_info(),
        "code_commit": code_commit(),
        "load_average": {"before": load_before, "after": load_average()},
        "evaluation": "deterministic, TrainerConfig.eval_episodes episodes on new start states at every evaluation",
        "seeds": seeds,
        "seeds_reaching_threshold": len(reached),
        "median_steps_to_threshold": statistics.median(reached) if reached else None,
        "total_wall_seconds": round(time.perf_counter() - started, 1),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
