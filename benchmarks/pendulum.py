"""DDPG on Pendulum-v1 for several seeds: env steps until the deterministic evaluation mean >= -200.

Usage: python benchmarks/pendulum.py [--config configs/pendulum.gin] [--seeds 0 1 2 3 4] [--jobs 2] [--workers N]
       [--gin-param BINDING ...] [--out benchmarks/results/pendulum.json]
Each seed runs `polyak train --config configs/pendulum.gin --seed S` in its own process with one torch
thread; ``--jobs`` processes run at once; ``--workers N`` trains with Ape-X and N rollout workers instead.
The config and the bindings are checked before any run starts (a mistake is one line naming it); a run that fails
shows polyak's own message. The result records the budget the runs trained with (their ``config.json``) and the
config as given (relative to the repository when inside it). The last stdout line is the JSON result.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import RunFailed, code_commit, load_average, machine_info, read_metrics, train_run

from polyak.errors import PolyakError

THRESHOLD = -200.0
ROOT = Path(__file__).resolve().parent.parent
QUIET = ("TrainerConfig.progress_bar = False",)  # before the user's bindings: the runs' stderr is shown, bars not


def recorded_config(config: str) -> str:
    """The config as the result names it: its path relative to the repository root when the file is inside it
    (``configs/pendulum.gin``, ``my/pendulum.gin``), else ``config`` as given (a file elsewhere, or a shipped
    config's name when polyak is installed outside the repository)."""
    from polyak.ginconf import resolve_config

    path = resolve_config(config)
    shipped = (ROOT / "configs").resolve()
    if path.resolve().is_relative_to(shipped):  # a shipped config by name or by path: as configs/ names it
        return (Path("configs") / path.resolve().relative_to(shipped)).as_posix()
    for candidate in (Path(os.path.abspath(path)), path.resolve()):  # a path through a link as given, first
        if candidate.is_relative_to(ROOT):
            return candidate.relative_to(ROOT).as_posix()
    return config


def check_plan(config: str, bindings: list[str], seed: int, workers: int | None, workdir: Path) -> None:
    """What ``polyak train`` would refuse before training (a bad config, binding, env id or budget), refused here
    once, as polyak's one line, before any run starts."""
    from polyak.planning import plan_run

    try:
        plan_run(config, [*QUIET, *bindings], run_dir=workdir / f"seed_{seed}", seed=seed, workers=workers)
    except PolyakError as error:
        sys.exit(f"pendulum: {error}")


def run_budget(run_dir: Path) -> int:
    """The env-step budget a finished run trained with, as its ``config.json`` records it."""
    from polyak.run_dir import RunDir

    return RunDir(run_dir).configs().trainer.max_env_steps


def settings(config: str, gin_params: list[str], jobs: int, workers: int | None, seeds: list[dict]) -> dict:
    """The result's ``settings``: the budget is the runs' own (one number; a list if the runs differed)."""
    budgets = sorted({seed["max_env_steps"] for seed in seeds})
    return {"config": recorded_config(config), "gin_params": gin_params, "jobs": jobs, "apex_workers": workers,
            "torch_threads_per_run": 1, "max_env_steps": budgets[0] if len(budgets) == 1 else budgets}


def one_seed(config: str, seed: int, workdir: Path, bindings: list[str], workers: int | None) -> dict:
    run_dir = workdir / f"seed_{seed}"
    summary = train_run(config, seed, run_dir, [*QUIET, *bindings], threads=1,
                        extra_args=("--workers", str(workers)) if workers else (), show_errors=True)
    evals = [(int(row["env_steps"]), float(row["score"])) for row in read_metrics(run_dir) if row["kind"] == "eval"]
    reached = next((steps for steps, score in evals if score >= THRESHOLD), None)
    return {
        "seed": seed,
        "steps_to_threshold": reached,
        "final_eval": evals[-1][1] if evals else None,
        "best_eval": max(score for _, score in evals) if evals else None,
        "wall_seconds": summary["wall_seconds"],
        "max_env_steps": run_budget(run_dir),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "pendulum.gin"),
                        help="a .gin file or a shipped config's name (default: configs/pendulum.gin); the result "
                             "records its path relative to the repository when inside it, else as given")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4], help="default: 0 1 2 3 4")
    parser.add_argument("--jobs", type=int, default=2, help="runs at once, one torch thread each (default: 2)")
    parser.add_argument("--workers", type=int, default=None, help="train with Ape-X and this many rollout workers")
    parser.add_argument("--gin-param", action="append", default=[], metavar="BINDING",
                        help="a gin binding on top of the config, e.g. TrainerConfig.max_env_steps=3000 (repeatable)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "pendulum.json"),
                        help="where the JSON result goes (default: benchmarks/results/pendulum.json)")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")

    started, load_before = time.perf_counter(), load_average()
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            check_plan(args.config, args.gin_param, seed, args.workers, Path(tmp))
        try:
            with ThreadPoolExecutor(args.jobs) as pool:
                seeds = list(pool.map(lambda s: one_seed(args.config, s, Path(tmp), args.gin_param, args.workers),
                                      args.seeds))
        except RunFailed as error:
            sys.exit(f"pendulum: {error}")
    reached = [s["steps_to_threshold"] for s in seeds if s["steps_to_threshold"] is not None]
    result = {
        "benchmark": "pendulum",
        "threshold": THRESHOLD,
        "settings": settings(args.config, args.gin_param, args.jobs, args.workers, seeds),
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
