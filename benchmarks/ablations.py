"""Ablations: Pendulum-v1 and UnityReacher-v0 with one switch changed at a time, 3 seeds each.

Usage: python benchmarks/ablations.py [--quick] [--envs pendulum reacher] [--seeds 0 1 2] [--jobs 2]
       [--pendulum-steps 10000] [--reacher-episodes 30] [--out benchmarks/results/ablations.json]

Each run is `polyak train --config <base> --seed S --gin-param ...` in its own process with one torch
thread, ``--jobs`` at a time. Bases: configs/pendulum.gin (DDPG, Gaussian noise) and
configs/unity_reacher_plain_ddpg.gin (the DDPG Reacher report's DDPG, OU noise). Switches: exploration noise
(Gaussian / OU / adaptive parameter noise with a LayerNorm actor / NoisyNet), start steps, learn interval (same
updates-per-step ratio, batched), LayerNorm, the TD3 tricks (all, and each alone), n-step 1/3/5,
uniform vs prioritized replay. Pendulum is scored by its deterministic evaluations, Reacher by its
20-arm episode scores. Writes the JSON result and a PNG grid of learning curves (mean ± std over
seeds, one panel per env and switch group) next to it; the last stdout line is the JSON result.

The default budget (10,000 Pendulum steps, 30 Reacher episodes, 3 seeds, 2 jobs) is sized to finish
in under 2 hours on 2 cores; ``--quick`` (1 seed, tiny networks, 2,000 steps / 1 episode) in minutes,
printing its result and writing nothing unless ``--out`` is given. The committed Reacher result
(``ablations_reacher.json``: 8 variants, 20 episodes) came from ``--envs reacher --reacher-episodes 20
--variants noise_gaussian noise_parameter noise_noisynet layer_norm td3 n_step_3 prioritized
--out benchmarks/results/ablations_reacher.json``; Pendulum's from ``--envs pendulum``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import shutil
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from common import RunFailed, code_commit, load_average, machine_info, train_run

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Variant:
    name: str
    group: str
    bindings: tuple[str, ...] = ()


@dataclass
class Task:
    key: str
    config: str
    curve_kind: str  # 'eval' (deterministic evaluations) or 'episode' (training episode scores)
    threshold: float
    budget: list[str] = field(default_factory=list)
    quick: list[str] = field(default_factory=list)
    variants: list[Variant] = field(default_factory=list)


def _shared_variants(noise_baseline: str, start_steps: tuple[str, int], learn: tuple[int, int],
                     td3_singles: bool = True) -> list[Variant]:
    """The switches both tasks ablate, each as a change from the task's base config.

    ``td3_singles`` adds each TD3 trick alone next to all three together.
    """
    noise_alternatives = {
        "gaussian": ["NoiseConfig.kind='gaussian'", "NoiseConfig.sigma=0.1"],
        "ou": ["NoiseConfig.kind='ou'", "NoiseConfig.sigma=0.2", "NoiseConfig.ou_theta=0.15"],
    }
    variants = [Variant("baseline", "baseline")]
    other = "ou" if noise_baseline == "gaussian" else "gaussian"
    variants += [
        Variant(f"noise_{other}", "noise", tuple(noise_alternatives[other])),
        Variant("noise_parameter", "noise", ("NoiseConfig.kind='parameter'", "NoiseConfig.sigma=0.1",
                                             "actor/NetworkConfig.layer_norm=True",
                                             "actor/NetworkConfig.hidden_batchnorm=False")),
        Variant("noise_noisynet", "noise", ("NoiseConfig.kind='none'", "actor/NetworkConfig.noisy=True")),
        Variant(start_steps[0], "start_steps", (f"TrainerConfig.start_steps={start_steps[1]}",)),
        Variant(f"learn_every_{learn[0]}x{learn[1]}", "learn_interval",
                (f"TrainerConfig.learn_every={learn[0]}", f"TrainerConfig.learn_steps={learn[1]}")),
        # LayerNorm in both networks (replacing the Reacher actor's hidden BatchNorm: one or the other).
        Variant("layer_norm", "layer_norm", ("actor/NetworkConfig.layer_norm=True",
                                             "critic/NetworkConfig.layer_norm=True",
                                             "actor/NetworkConfig.hidden_batchnorm=False")),
        Variant("td3", "td3", ("AgentConfig.n_critics=2", "AgentConfig.policy_delay=2",
                               "AgentConfig.target_policy_noise=0.2")),
    ]
    if td3_singles:
        variants += [
            Variant("twin_critics", "td3", ("AgentConfig.n_critics=2",)),
            Variant("policy_delay", "td3", ("AgentConfig.policy_delay=2",)),
            Variant("target_smoothing", "td3", ("AgentConfig.target_policy_noise=0.2",)),
        ]
    variants += [
        Variant("n_step_3", "n_step", ("ReplayConfig.n_step=3",)),
        Variant("n_step_5", "n_step", ("ReplayConfig.n_step=5",)),
        Variant("prioritized", "replay", ("ReplayConfig.sampler='prioritized'",)),
    ]
    return variants


def tasks(pendulum_steps: int, reacher_episodes: int) -> dict[str, Task]:
    return {
        "pendulum": Task(
            "pendulum", str(ROOT / "configs" / "pendulum.gin"), "eval", -200.0,
            budget=[f"TrainerConfig.max_env_steps={pendulum_steps}"],
            quick=["TrainerConfig.max_env_steps=2000", "TrainerConfig.start_steps=500",
                   "TrainerConfig.eval_interval=500", "TrainerConfig.eval_episodes=1",
                   "actor/NetworkConfig.hidden_sizes=(32, 32)", "critic/NetworkConfig.hidden_sizes=(32, 32)",
                   "AgentConfig.batch_size=64",
                   "ReplayConfig.min_size=200"],
            variants=_shared_variants("gaussian", ("start_steps_0", 0), (10, 10)),
        ),
        "reacher": Task(
            "reacher", str(ROOT / "configs" / "unity_reacher_plain_ddpg.gin"), "episode", 30.0,
            budget=[f"TrainerConfig.max_episodes={reacher_episodes}", "TrainerConfig.eval_interval=None",
                    "TrainerConfig.checkpoint_interval=None"],
            quick=["TrainerConfig.max_episodes=1", "TrainerConfig.eval_interval=None",
                   "TrainerConfig.checkpoint_interval=None", "actor/NetworkConfig.hidden_sizes=(32, 32)",
                   "critic/NetworkConfig.hidden_sizes=(32, 32)", "AgentConfig.batch_size=64",
                   "TrainerConfig.learn_every=50"],
            # Reacher runs cost ~25x a Pendulum run: the TD3 tricks are ablated together only (Pendulum has each alone).
            variants=_shared_variants("ou", ("start_steps_20000", 20000), (40, 20), td3_singles=False),
        ),
    }


def read_curve(run_dir: Path, kind: str) -> list[tuple[int, float]]:
    with open(run_dir / "metrics.csv", newline="") as handle:
        return [(int(r["env_steps"]), float(r["score"])) for r in csv.DictReader(handle) if r["kind"] == kind]


def one_run(task: Task, variant: Variant, seed: int, workdir: Path, quick: bool) -> dict[str, Any]:
    run_dir = workdir / task.key / variant.name / f"seed_{seed}"
    bindings = (task.quick if quick else task.budget) + list(variant.bindings)
    try:
        summary = train_run(task.config, seed, run_dir, bindings, threads=1)
    except RunFailed as error:
        return {"seed": seed, "error": str(error)}
    curve = read_curve(run_dir, task.curve_kind)
    scores = [score for _, score in curve]
    tail = scores[-max(1, len(scores) // 5):] if scores else []
    reached = next((steps for steps, score in curve if score >= task.threshold), None)
    return {
        "seed": seed,
        "final": scores[-1] if scores else None,
        "tail_mean": float(np.mean(tail)) if tail else None,  # mean of the last fifth of the curve
        "best": max(scores) if scores else None,
        "steps_to_threshold": reached,
        "env_steps": summary["env_steps"],
        "wall_seconds": summary["wall_seconds"],
        "curve": curve,
    }


def _mean_std(values: list[float]) -> tuple[float | None, float | None]:
    values = [v for v in values if v is not None and math.isfinite(v)]
    if not values:
        return None, None
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def summarise(task: Task, runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out = {}
    for variant in task.variants:
        seeds = runs[variant.name]
        mean, std = _mean_std([s.get("tail_mean") for s in seeds])
        out[variant.name] = {
            "group": variant.group, "bindings": list(variant.bindings), "tail_mean": mean, "tail_std": std,
            "seeds": [{k: v for k, v in s.items() if k != "curve"} for s in seeds],
        }
    return out


def plot_grid(all_tasks: list[Task], runs: dict[str, dict[str, list[dict[str, Any]]]], out: Path) -> None:
    """One panel per (task, switch group): the baseline and that group's variants, mean ± std over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [g for g in dict.fromkeys(v.group for t in all_tasks for v in t.variants) if g != "baseline"]
    fig, axes = plt.subplots(len(all_tasks), len(groups), figsize=(3.2 * len(groups), 2.8 * len(all_tasks)),
                             squeeze=False)
    for row, task in enumerate(all_tasks):
        for col, group in enumerate(groups):
            ax = axes[row][col]
            for variant in task.variants:
                if variant.group not in (group, "baseline"):
                    continue
                curves = [s["curve"] for s in runs[task.key][variant.name] if s.get("curve")]
                if not curves:
                    continue
                grid = np.unique(np.concatenate([[x for x, _ in c] for c in curves]))
                ys = np.stack([np.interp(grid, [x for x, _ in c], [y for _, y in c]) for c in curves])
                mean, std = ys.mean(axis=0), ys.std(axis=0)
                style = {"color": "black", "linestyle": "--"} if variant.group == "baseline" else {}
                marker = "o" if len(grid) < 3 else None  # a one-point curve still shows
                line, = ax.plot(grid, mean, label=variant.name, linewidth=1.2, marker=marker, markersize=3,
                                **style)
                ax.fill_between(grid, mean - std, mean + std, alpha=0.15, color=line.get_color())
            top = ax.get_ylim()[1]
            if top >= task.threshold / 2:  # a far-off solve line would flatten every curve
                ax.axhline(task.threshold, color="grey", linewidth=0.6, linestyle=":")
            ax.set_title(f"{task.key}: {group}" + ("" if top >= task.threshold / 2 else
                                                   f" (solve line {task.threshold:g} off-scale)"), fontsize=9)
            ax.tick_params(labelsize=7)
            ax.legend(fontsize=6, loc="lower right")
            if col == 0:
                ax.set_ylabel("eval score" if task.curve_kind == "eval" else "episode score", fontsize=8)
            if row == len(all_tasks) - 1:
                ax.set_xlabel("env steps", fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 seed, tiny networks and budgets: minutes")
    parser.add_argument("--envs", nargs="+", choices=["pendulum", "reacher"], default=["pendulum", "reacher"])
    parser.add_argument("--seeds", type=int, nargs="+", default=None, help="default: 0 1 2 (quick: 0)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--pendulum-steps", type=int, default=10_000)
    parser.add_argument("--reacher-episodes", type=int, default=30)
    parser.add_argument("--variants", nargs="+", metavar="NAME",
                        help="run only these variants (the baseline always runs), e.g. noise_parameter td3")
    parser.add_argument("--workdir", help="keep the run directories here (default: a temporary directory)")
    parser.add_argument("--out", default=None,
                        help="the JSON result (a PNG beside it); default: benchmarks/results/ablations.json, and "
                             "with --quick nothing is written (the result is printed)")
    args = parser.parse_args()
    seeds = args.seeds if args.seeds is not None else ([0] if args.quick else [0, 1, 2])

    chosen = [tasks(args.pendulum_steps, args.reacher_episodes)[key] for key in args.envs]
    if args.variants:
        known = {v.name for task in chosen for v in task.variants}
        unknown = sorted(set(args.variants) - known)
        if unknown:
            parser.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        for task in chosen:
            task.variants = [v for v in task.variants if v.name == "baseline" or v.name in args.variants]
    started, load_before, commit = time.perf_counter(), load_average(), code_commit()
    temporary = None
    if args.workdir:
        workdir = Path(args.workdir)
        if workdir.exists():
            shutil.rmtree(workdir)
    else:
        temporary = tempfile.TemporaryDirectory()
        workdir = Path(temporary.name)
    jobs = [(task, variant, seed) for task in chosen for variant in task.variants for seed in seeds]
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda job: one_run(*job, workdir, args.quick), jobs))
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {t.key: {v.name: [] for v in t.variants} for t in chosen}
    for (task, variant, _), result in zip(jobs, results, strict=True):
        runs[task.key][variant.name].append(result)

    out = Path(args.out) if args.out else None if args.quick else ROOT / "benchmarks" / "results" / "ablations.json"
    plot = out.with_suffix(".png") if out else None
    if plot:
        plot_grid(chosen, runs, plot)
    if temporary is not None:
        temporary.cleanup()
    result = {
        "benchmark": "ablations",
        "settings": {
            "quick": args.quick, "seeds": seeds,
            "variants": {t.key: [v.name for v in t.variants] for t in chosen},
            "jobs": args.jobs, "torch_threads_per_run": 1,
            "bases": {t.key: Path(t.config).name for t in chosen},
            "budgets": {t.key: t.quick if args.quick else t.budget for t in chosen},
            "score": {"pendulum": "mean of the last fifth of the deterministic evaluations",
                      "reacher": "mean of the last fifth of the 20-arm episode scores"},
        },
        "machine": machine_info(),
        "code_commit": commit,
        "load_average": {"before": load_before, "after": load_average()},
        "results": {t.key: summarise(t, runs[t.key]) for t in chosen},
        "failed_runs": sum("error" in r for r in results),
        "total_wall_seconds": round(time.perf_counter() - started, 1),
        "plot": plot.name if plot else None,
    }
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
