"""The suite's ablations: the DDPG write-up's list of switches, one at a time, on its DDPG (issue 16, point 5).

Usage:
  python benchmarks/suite_ablations.py [--only TASK ...] [--variants NAME ...] [--seeds 0 1 2] [--jobs 2]
  python benchmarks/suite_ablations.py --report   # only rebuild suite_ablations.json, .md and the plots
  python benchmarks/suite_ablations.py --only Hopper-v5 --variants ou --out-dir DIR   # reproduce one into DIR
  python benchmarks/suite_ablations.py --only Hopper-v5 --variants ou --force   # re-run over the committed result

The DDPG write-up (its section "Ablations studies and other detailed experiments") plans: the noise method
(Gaussian with its std, Ornstein-Uhlenbeck, parameter-space noise, target-policy noising), the start steps, the
update interval, and layer normalisation for the actor (and, its TODO, for the value function). Each variant is
a list of gin bindings applied on top of the suite's DDPG config for the task, so it changes exactly what it
names:

* MountainCarContinuous-v0: ``configs/suite/mountaincar_ddpg.gin``, 50,000 env steps, every variant below.
* Hopper-v5: ``configs/suite/hopper_ddpg.gin`` cut to 50,000 env steps (``TrainerConfig.max_env_steps``),
  the three noise types (Gaussian is the baseline) and the layer-norm variants.

The base (``configs/suite/ddpg.gin``): 256-256 ReLU actor and critic, Gaussian action noise sigma 0.1, 5,000
uniform random start steps with learning from 5,000 stored transitions, one update per env step, Polyak
tau 0.005 after every update, no target-policy smoothing, no normalisation.

================== ======================================================= ============================================
variant            bindings                                                what and why
================== ======================================================= ============================================
baseline           (none)                                                  the suite's DDPG (Gaussian sigma 0.1); on
                                                                           MountainCar it repeats the suite's
                                                                           ``polyak_ddpg`` row (``--report`` compares)
gaussian_sigma_0.3 ``NoiseConfig.sigma=0.3``                               Gaussian std: 3x larger (the write-up:
                                                                           "sigma ... in the neighborhood of 0.2")
ou                 ``NoiseConfig.kind='ou'``, ``sigma=0.2``,               OU as OpenAI Baselines' ``ou_0.2`` (the
                   ``ou_theta=0.15``, ``ou_mu=0.0``, ``ou_dt=0.01``        write-up takes its noise helpers from
                                                                           Baselines): stationary std ~0.37, but a
                                                                           slow walk from 0 at each episode start
                                                                           (std ~0.02 sqrt(t) for t << 670 steps)
parameter          ``NoiseConfig.kind='parameter'``, ``sigma=0.2``,        adaptive parameter noise as Baselines'
                   ``param_target_distance=0.2``,                          ``adaptive-param_0.2`` (adapt x1.01 every
                   ``actor/NetworkConfig.layer_norm=True``                 50 steps: polyak's defaults), with the
                                                                           LayerNorm actor the paper uses; compare
                                                                           with ``layer_norm_actor`` to separate them
no_noise           ``NoiseConfig.kind='none'``                             no exploration noise after the start steps
target_smoothing   ``AgentConfig.target_policy_noise=0.2``,                TD3's target-policy smoothing alone (the
                   ``AgentConfig.target_noise_clip=0.5``                   write-up's "target mus noising")
start_steps_1000   ``TrainerConfig.start_steps=1000``,                     fewer uniform random steps; learning
                   ``ReplayConfig.min_size=1000``                          still starts when they end
start_steps_10000  ``TrainerConfig.start_steps=10000``,                    more uniform random steps (same rule)
                   ``ReplayConfig.min_size=10000``
update_every_50    ``TrainerConfig.learn_every=50``,                       "update interval" read as the update
                   ``TrainerConfig.learn_steps=50``                        schedule: collect 50 steps, then 50
                                                                           updates (same updates per step)
target_every_2     ``AgentConfig.target_update_every=2``                   "update interval" read as the write-up's
                                                                           ``target-update-interval`` argument:
                                                                           Polyak step every 2nd update
layer_norm_actor   ``actor/NetworkConfig.layer_norm=True``                 LayerNorm after each hidden layer, actor
layer_norm_critic  ``critic/NetworkConfig.layer_norm=True``                the write-up's TODO: in the critic
================== ======================================================= ============================================

Hopper-v5 runs ``baseline``, ``ou``, ``parameter``, ``layer_norm_actor`` and ``layer_norm_critic``.

Protocol (``benchmarks/suite.py``'s, whose helpers this imports): the trainer's deterministic evaluation of 10
episodes every 5,000 env steps on new seeded start states; the final return is the mean of the last evaluation.
Checkpoints are off (a run cut short is started again, so they would only cost time and disk). Each finished
(task, variant, seed) is written at once to ``<out-dir>/suite_ablations/<task stem>/<variant>_seed_<s>.json`` (with
the commit, the polyak source it imported and the machine load) and a re-run skips it. Every run trains in its
own process with one torch thread; ``--jobs`` run at a time.

``--report`` writes ``<out-dir>/suite_ablations.json``, one PNG per task (``suite_ablations_<task>.png``: a panel
per switch, each with the baseline, mean ± std over seeds) and ``suite_ablations.md``, a README table. With 3
seeds per arm an exact permutation test on the final returns can never give less than p = 0.10 (two-sided: 2 of
the 20 ways to split 6 runs into 3 + 3 are as extreme as a complete separation), so the table says only which
variants separate completely from the baseline, which overlap, and, on MountainCar, how many seeds reach 90
(the task's solved score; its outcomes are mostly bimodal, solved or stuck near 0).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import (
    RunFailed,
    claim_holder,
    claimed,
    code_commit,
    load_average,
    machine_info,
    machines_by_kind,
    newest_commit,
    not_offered,
    read_metrics,
    run_jobs,
    train_run,
)
from suite import EVAL_EPISODES, RESULTS, ROOT, TASKS, config_file, positive_int, result_path

SOLVED = {"MountainCarContinuous-v0": 90.0}
"""Solved scores where the task defines one (Gymnasium's reward threshold)."""


@dataclass(frozen=True)
class Variant:
    name: str
    group: str
    bindings: tuple[str, ...]
    summary: str


VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("baseline", "baseline", (), "the suite's DDPG: Gaussian noise sigma 0.1"),
    Variant("gaussian_sigma_0.3", "noise", ("NoiseConfig.sigma=0.3",), "Gaussian noise sigma 0.3"),
    Variant("ou", "noise", ("NoiseConfig.kind='ou'", "NoiseConfig.sigma=0.2", "NoiseConfig.ou_theta=0.15",
                            "NoiseConfig.ou_mu=0.0", "NoiseConfig.ou_dt=0.01"),
            "Ornstein-Uhlenbeck noise, Baselines' ou_0.2 (theta 0.15, dt 0.01)"),
    Variant("parameter", "noise", ("NoiseConfig.kind='parameter'", "NoiseConfig.sigma=0.2",
                                   "NoiseConfig.param_target_distance=0.2", "actor/NetworkConfig.layer_norm=True"),
            "adaptive parameter noise (0.2) with a LayerNorm actor"),
    Variant("no_noise", "noise", ("NoiseConfig.kind='none'",), "no exploration noise"),
    Variant("target_smoothing", "target smoothing",
            ("AgentConfig.target_policy_noise=0.2", "AgentConfig.target_noise_clip=0.5"),
            "target-policy smoothing (0.2, clip 0.5)"),
    Variant("start_steps_1000", "start steps", ("TrainerConfig.start_steps=1000", "ReplayConfig.min_size=1000"),
            "1,000 random start steps (5,000 in the baseline)"),
    Variant("start_steps_10000", "start steps", ("TrainerConfig.start_steps=10000", "ReplayConfig.min_size=10000"),
            "10,000 random start steps"),
    Variant("update_every_50", "update interval", ("TrainerConfig.learn_every=50", "TrainerConfig.learn_steps=50"),
            "50 env steps, then 50 updates"),
    Variant("target_every_2", "update interval", ("AgentConfig.target_update_every=2",),
            "Polyak target update every 2nd update"),
    Variant("layer_norm_actor", "layer norm", ("actor/NetworkConfig.layer_norm=True",), "LayerNorm in the actor"),
    Variant("layer_norm_critic", "layer norm", ("critic/NetworkConfig.layer_norm=True",),
            "LayerNorm in the critic"),
)}


@dataclass(frozen=True)
class AblationTask:
    budget: int
    variants: tuple[str, ...]


ABLATIONS: dict[str, AblationTask] = {
    "MountainCarContinuous-v0": AblationTask(50_000, tuple(VARIANTS)),
    "Hopper-v5": AblationTask(50_000, ("baseline", "ou", "parameter", "layer_norm_actor", "layer_norm_critic")),
}


def stem(task: str) -> str:
    return TASKS[task].config_stem


def run_file(out_dir: Path, task: str, variant: str, seed: int) -> Path:
    return out_dir / "suite_ablations" / stem(task) / f"{variant}_seed_{seed}.json"


def runs_root(out_dir: Path) -> Path:
    """Run directories: ``runs/suite_ablations`` for the real results, beside the smoke output otherwise."""
    return ROOT / "runs" / "suite_ablations" if out_dir.resolve() == RESULTS.resolve() else out_dir / "runs"


def bindings_for(task: str, variant: str, max_env_steps: int | None) -> list[str]:
    """The suite's protocol, then (smoke only) a tiny budget, then the variant: later bindings win."""
    spec = TASKS[task]
    bindings = [f"TrainerConfig.max_env_steps = {ABLATIONS[task].budget}",
                f"TrainerConfig.eval_interval = {spec.eval_every}", f"TrainerConfig.eval_episodes = {EVAL_EPISODES}",
                "TrainerConfig.checkpoint_interval = None", "TrainerConfig.progress_bar = False"]
    if max_env_steps is not None:  # smoke: a few hundred steps that still learn and evaluate once
        half = max(1, max_env_steps // 2)
        bindings += [f"TrainerConfig.max_env_steps = {max_env_steps}", f"TrainerConfig.eval_interval = {max_env_steps}",
                     "TrainerConfig.eval_episodes = 1", f"TrainerConfig.start_steps = {half}",
                     f"ReplayConfig.min_size = {half}"]
    return bindings + list(VARIANTS[variant].bindings)


# ---------------------------------------------------------------------------------------------- one run
def polyak_source() -> dict[str, Any]:
    """Where the imported polyak lives and its commit (it may come from PYTHONPATH, not this checkout)."""
    import polyak

    path = Path(polyak.__file__).resolve().parent

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=path, capture_output=True, text=True, check=False).stdout.strip()

    where = "this checkout" if path.is_relative_to(ROOT) else "another checkout (PYTHONPATH)"  # no machine paths
    return {"location": where, "commit": git("rev-parse", "HEAD") or None,
            "modified": bool(git("status", "--porcelain", "."))}


def run_one(task: str, variant: str, seed: int, out_dir: Path, max_env_steps: int | None,
            force: bool = False) -> None:
    """Train one (task, variant, seed) unless another runner has claimed it (then it is skipped, not started
    again over the other's run directory); writes the result file. One already there is kept, or with ``force``
    replaced when the new run finishes."""
    path = run_file(out_dir, task, variant, seed)
    with claimed(path) as mine:
        if not mine:
            print(f"{task} {variant} seed {seed}: {claim_holder(path)} is training it; skipped", flush=True)
        elif force or not path.exists():
            _train_and_write(task, variant, seed, out_dir, max_env_steps, path)


def _train_and_write(task: str, variant: str, seed: int, out_dir: Path, max_env_steps: int | None,
                     path: Path) -> None:
    """``polyak train`` on the task's suite config with the variant's bindings; writes the result file."""
    import torch

    torch.set_num_threads(1)
    load_before = load_average()
    commit, source = code_commit(), polyak_source()  # at the start: commits may land while it trains
    config = config_file(task, "ddpg")
    run_dir = runs_root(out_dir) / stem(task) / f"{variant}_seed_{seed}"
    bindings = bindings_for(task, variant, max_env_steps)
    summary = train_run(str(config), seed, run_dir, bindings, threads=1, show_errors=True)
    evals = [(int(r["env_steps"]), float(r["score"])) for r in read_metrics(run_dir) if r["kind"] == "eval"]
    budget = max_env_steps or ABLATIONS[task].budget
    result = {
        "task": task, "variant": variant, "group": VARIANTS[variant].group, "seed": seed, "budget": budget,
        "eval_episodes": EVAL_EPISODES if max_env_steps is None else 1,
        "eval_steps": [s for s, _ in evals], "eval_returns": [r for _, r in evals],
        "final_return": evals[-1][1], "wall_seconds": summary["wall_seconds"],
        "env_steps_per_s": round(budget / summary["wall_seconds"], 2),
        "settings": {"config": str(config.relative_to(ROOT)), "gin_params": bindings,
                     "variant_bindings": list(VARIANTS[variant].bindings)},
        "code_commit": commit, "polyak_source": source, "machine": machine_info(),
        "load_average": {"before": load_before, "after": load_average()},
        "finished": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(result, indent=1) + "\n")
    temporary.replace(path)
    print(f"{task} {variant} seed {seed}: final {result['final_return']:.1f}, "
          f"{result['env_steps_per_s']} env steps/s", flush=True)


# ---------------------------------------------------------------------------------------------- statistics
def permutation_p(a: list[float], b: list[float]) -> float:
    """Exact two-sided permutation test of the difference of means (every split of the pooled runs)."""
    pooled = a + b
    observed = abs(statistics.mean(a) - statistics.mean(b))
    splits = list(itertools.combinations(range(len(pooled)), len(a)))
    extreme = 0
    for chosen in splits:
        first = [pooled[i] for i in chosen]
        second = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        extreme += abs(statistics.mean(first) - statistics.mean(second)) >= observed - 1e-12
    return extreme / len(splits)


def min_permutation_p(n_a: int, n_b: int) -> float:
    """The smallest p :func:`permutation_p` can give with these sizes (two splits are as extreme as the data)."""
    from math import comb

    return min(1.0, 2 / comb(n_a + n_b, n_a))


def compare(variant: list[float], baseline: list[float], solved: float | None) -> dict[str, Any]:
    """What the seeds can say about a variant against the baseline (final returns, one per seed)."""
    entry: dict[str, Any] = {"mean_difference": statistics.mean(variant) - statistics.mean(baseline)}
    if len(variant) < 2 or len(baseline) < 2:
        entry["verdict"] = "too few seeds to compare"
        return entry
    p = permutation_p(variant, baseline)
    floor = min_permutation_p(len(variant), len(baseline))
    entry.update({"permutation_p": round(p, 4), "smallest_possible_p": round(floor, 4)})
    if min(variant) > max(baseline):
        entry["verdict"] = f"every seed above every baseline seed (p = {p:.2f}, the smallest {len(variant)} " \
                           f"against {len(baseline)} seeds can give)"
    elif max(variant) < min(baseline):
        entry["verdict"] = f"every seed below every baseline seed (p = {p:.2f}, the smallest {len(variant)} " \
                           f"against {len(baseline)} seeds can give)"
    else:
        entry["verdict"] = f"seeds overlap with the baseline's: not told apart (p = {p:.2f})"
    if solved is not None:
        entry["solved_seeds"] = sum(r >= solved for r in variant)
        entry["baseline_solved_seeds"] = sum(r >= solved for r in baseline)
    return entry


# ---------------------------------------------------------------------------------------------- report
def suite_reference(task: str, seeds: list[int], eval_steps: list[int], curves: list[list[float]]) -> dict[str, Any]:
    """The baseline against the suite's own polyak_ddpg runs of the same config and seeds (prefix of the curve)."""
    matches: dict[str, Any] = {}
    for seed, curve in zip(seeds, curves, strict=True):
        path = result_path(RESULTS, task, "polyak_ddpg", seed)
        if not path.exists():
            continue
        other = json.loads(path.read_text())
        steps = [s for s in eval_steps if s in other["eval_steps"]]
        mine = [curve[eval_steps.index(s)] for s in steps]
        theirs = [other["eval_returns"][other["eval_steps"].index(s)] for s in steps]
        matches[str(seed)] = {"compared_evaluations": len(steps), "identical": mine == theirs,
                              "max_abs_difference": max((abs(x - y) for x, y in zip(mine, theirs, strict=True)),
                                                        default=None)}
    return matches


def collect(out_dir: Path) -> dict[str, Any]:
    tasks: dict[str, Any] = {}
    commits: set[str] = set()
    machines: dict[str, Any] = {}
    every_run: list[dict[str, Any]] = []
    for task, ablation in ABLATIONS.items():
        variants: dict[str, Any] = {}
        folder = out_dir / "suite_ablations" / stem(task)
        for name in ablation.variants:
            runs = sorted((json.loads(p.read_text()) for p in folder.glob(f"{name}_seed_*.json")),
                          key=lambda r: r["seed"])
            if not runs:
                continue
            finals = [r["final_return"] for r in runs]
            variants[name] = {
                "group": VARIANTS[name].group, "summary": VARIANTS[name].summary,
                "bindings": list(VARIANTS[name].bindings), "seeds": [r["seed"] for r in runs],
                "final_returns": finals, "final_mean": statistics.mean(finals),
                "final_std": statistics.stdev(finals) if len(finals) > 1 else 0.0,
                "mean_eval_returns": [statistics.mean(r["eval_returns"]) for r in runs],
                "eval_steps": runs[0]["eval_steps"], "eval_returns": [r["eval_returns"] for r in runs],
                "env_steps_per_s": [r["env_steps_per_s"] for r in runs],
                "code_commits": [r["code_commit"]["commit"] for r in runs],
                "polyak_sources": sorted({f"{r['polyak_source']['location']}@{r['polyak_source']['commit']}"
                                          for r in runs}),
                "load_average_before": [r["load_average"]["before"] for r in runs],
                "budgets": sorted({r["budget"] for r in runs}),
            }
            commits.update(r["code_commit"]["commit"] for r in runs)
            every_run.extend(runs)
            machines.update(machines_by_kind(runs))
        baseline = variants.get("baseline")
        if baseline is not None:
            for name, data in variants.items():
                if name != "baseline":
                    data["against_baseline"] = compare(data["final_returns"], baseline["final_returns"],
                                                       SOLVED.get(task))
            baseline["against_suite_polyak_ddpg"] = suite_reference(task, baseline["seeds"], baseline["eval_steps"],
                                                                    baseline["eval_returns"])
        budgets = sorted({b for data in variants.values() for b in data["budgets"]}) or [ablation.budget]
        tasks[task] = {"budget": budgets[-1] if len(budgets) == 1 else budgets, "eval_every": TASKS[task].eval_every,
                       "solved_score": SOLVED.get(task), "variants": variants}
    return {"benchmark": "suite_ablations", "tasks": tasks, "machine": dict(sorted(machines.items())),
            "code_commit": newest_commit(every_run), "run_code_commits": sorted(commits), "eval_protocol": (
                f"deterministic policy, {EVAL_EPISODES} episodes per evaluation, new start states per evaluation "
                "from a seeded stream; final return = mean of the last evaluation"),
            "statistics": ("exact two-sided permutation test of the difference of mean final returns against "
                           "the baseline; with 3 seeds per arm p cannot go below 0.10")}


def markdown(result: dict[str, Any]) -> str:
    """The README table: per task and variant, final return, difference and what the seeds can tell."""
    lines: list[str] = []
    for task, entry in result["tasks"].items():
        if not entry["variants"]:
            continue
        solved = entry["solved_score"]
        budget = entry["budget"]
        budget_text = f"{budget:,}" if isinstance(budget, int) else " / ".join(f"{b:,}" for b in budget)
        lines += [f"**{task}**, {budget_text} env steps, final return (last evaluation) per seed:", ""]
        header = "| variant | change | final return, mean ± std | seeds | Δ vs baseline |"
        rule = "|---|---|---|---|---|"
        if solved is not None:
            header += f" seeds ≥ {solved:g} |"
            rule += "---|"
        lines += [header + " what 3 seeds can tell |", rule + "---|"]
        for name, data in entry["variants"].items():
            seeds = ", ".join(f"{r:.1f}" for r in data["final_returns"])
            row = f"| {name} | {data['summary']} | {data['final_mean']:.1f} ± {data['final_std']:.1f} | {seeds} |"
            versus = data.get("against_baseline")
            row += " — |" if versus is None else f" {versus['mean_difference']:+.1f} |"
            if solved is not None:
                row += f" {sum(r >= solved for r in data['final_returns'])}/{len(data['final_returns'])} |"
            verdict = "(the reference)" if name == "baseline" else "no baseline runs yet"
            row += f" {verdict if versus is None else versus['verdict']} |"
            lines.append(row)
        lines.append("")
    lines.append("With 3 seeds per arm no comparison reaches p < 0.10 (exact permutation test): a complete "
                 "separation is a hint to re-run with more seeds, an overlap says the switch's effect is smaller "
                 "than the seed-to-seed spread at this budget, not that it has none.")
    return "\n".join(lines) + "\n"


def plot(result: dict[str, Any], out_dir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    for task, entry in result["tasks"].items():
        variants = entry["variants"]
        groups = list(dict.fromkeys(d["group"] for d in variants.values() if d["group"] != "baseline"))
        if not groups:
            continue
        columns = min(3, len(groups))
        rows = -(-len(groups) // columns)
        figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.6 * rows), squeeze=False, sharey=True)
        for axis, group in zip(axes.flat, groups, strict=False):
            names = (["baseline"] if "baseline" in variants else []) + [
                n for n, d in variants.items() if d["group"] == group]
            for name in names:
                data = variants[name]
                length = min(len(r) for r in data["eval_returns"])
                curves = np.array([r[:length] for r in data["eval_returns"]])
                steps = np.array(data["eval_steps"][:length])
                mean, std = curves.mean(axis=0), curves.std(axis=0)
                style = {"color": "black", "linestyle": "--"} if name == "baseline" else {}
                (line,) = axis.plot(steps, mean, label=f"{name} ({len(curves)})", **style)
                axis.fill_between(steps, mean - std, mean + std, alpha=0.15, color=line.get_color())
            if entry["solved_score"] is not None:
                axis.axhline(entry["solved_score"], color="grey", linewidth=0.8, linestyle=":")
            axis.set(title=group, xlabel="env steps")
            axis.legend(fontsize=8)
            axis.grid(alpha=0.3)
        for axis in axes.flat[len(groups):]:
            axis.set_visible(False)
        for axis in axes[:, 0]:
            axis.set_ylabel(f"evaluation return ({EVAL_EPISODES} ep.)")
        budget = entry["budget"]
        budget_text = f"{budget:,}" if isinstance(budget, int) else " / ".join(f"{b:,}" for b in budget)
        figure.suptitle(f"{task}, {budget_text} env steps: ablations of the suite's DDPG (mean ± std over seeds)")
        figure.tight_layout()
        figure.savefig(out_dir / f"suite_ablations_{stem(task)}.png", dpi=100)
        plt.close(figure)


def report(out_dir: Path) -> dict[str, Any]:
    result = collect(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "suite_ablations.json").write_text(json.dumps(result, indent=1) + "\n")
    table = markdown(result)
    (out_dir / "suite_ablations.md").write_text(table)
    plot(result, out_dir)
    print(table, flush=True)
    return result


# ---------------------------------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(ABLATIONS), default=list(ABLATIONS), metavar="TASK")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS), metavar="NAME",
                        help="run only these (each task runs those of them it has)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--jobs", type=positive_int, default=2)
    parser.add_argument("--report", action="store_true", help="only rebuild the JSON, the table and the plots")
    parser.add_argument("--out-dir", type=Path, default=RESULTS,
                        help="where results go (default: benchmarks/results; run dirs then go to runs/)")
    parser.add_argument("--force", action="store_true",
                        help="also re-run what already has a result file (replaced when the new run finishes)")
    parser.add_argument("--max-env-steps", type=int, help=argparse.SUPPRESS)  # smoke runs, never into results
    parser.add_argument("--one", nargs=3, metavar=("TASK", "VARIANT", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    out_dir: Path = args.out_dir.resolve()
    if args.max_env_steps is not None and out_dir == RESULTS.resolve():
        parser.error("--max-env-steps is for smoke runs: give an --out-dir outside benchmarks/results")
    if args.one:
        try:
            run_one(args.one[0], args.one[1], int(args.one[2]), out_dir, args.max_env_steps, args.force)
        except RunFailed as error:
            print(f"suite_ablations: {error}", file=sys.stderr, flush=True)
            sys.exit(1)
        return
    if not args.report:
        offered = {task: ablation.variants for task, ablation in ABLATIONS.items()}
        missing = not_offered(args.variants, args.only, offered)
        if len(missing) == len(args.variants):
            parser.error("; ".join(f"{name} is not a variant of {', '.join(args.only)} (it runs on {', '.join(on)})"
                                   for name, on in missing.items()))
        for name in missing:
            print(f"suite_ablations: {name} is not a variant of {', '.join(args.only)}; skipped", file=sys.stderr)
        todo = [(task, variant, seed) for task in args.only for variant in ABLATIONS[task].variants
                if variant in args.variants for seed in args.seeds
                if args.force or not run_file(out_dir, task, variant, seed).exists()]
        extra = ["--out-dir", str(out_dir), *(["--force"] if args.force else [])]
        if args.max_env_steps is not None:
            extra += ["--max-env-steps", str(args.max_env_steps)]
        if not todo:
            print("suite_ablations: every asked run has its result file already (--force runs them again)")
        failed = run_jobs(__file__, todo, args.jobs, extra)
        if not todo or len(failed) == len(todo):
            sys.exit(1 if failed else 0)
        report(out_dir)
        sys.exit(1 if failed else 0)
    report(out_dir)


if __name__ == "__main__":
    main()
