"""Would an average of recent actor weights end runs steadier than the live actor? Paired, on one training run.

CrossQ has no target networks, so the policy a user gets is the live actor of the last update, and in the SAC
mode (the recommended config) its evaluations on Hopper-v5 swing between ~1,000 and ~3,300 from one evaluation to
the next; on Walker2d-v5 seed 1 the final evaluation fell from 3,053 to 556. This trains one suite run (the suite's
config and protocol, ``benchmarks/suite.py``) and keeps beside it exponential moving averages of the actor's
weights and BatchRenorm statistics, ``avg <- avg + tau (actor - avg)`` after each actor update, one per ``tau``.
At every evaluation each average plays the same 10 start states as the live actor. The averages never act in the
training env and draw no random numbers, so training is the same run as the suite's (its live curve must equal
the suite's result file for that seed at the same code; the result file says whether it does).

Decision rule, written before any run: over the seeds run, an average is worth shipping when its mean stability
(mean of the last five evaluations over the best, per seed) is above the live actor's on every task tried and its
mean final return is not below the live actor's; among those, the one with the highest mean final return.

    python benchmarks/actor_average.py --task Hopper-v5 --seed 0     # one run, ~20 CPU minutes
    python benchmarks/actor_average.py --report                      # the table over the result files

Writes ``benchmarks/results/actor_average/<task stem>_seed_<seed>.json`` and, with ``--report``,
``benchmarks/results/actor_average.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from common import RunFailed, code_commit, cpu_kind, load_average, machine_info, read_metrics, require_whole_run
from suite import EVAL_EPISODES, TASKS, config_file, cpu_seconds
from suite_stats import stability_ratio

from polyak.averaging import ActorAverage

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "actor_average"
TAUS = (0.01, 0.002, 0.0005)  # per actor update: horizons of 100, 500 and 2,000 actor updates (x3 env steps)
ROW = "polyak_crossq_sac"


def greedy(average: ActorAverage) -> Callable[[np.ndarray], np.ndarray]:
    """The averaged actor as an acting policy for the evaluator."""
    @torch.no_grad()
    def act(obs: np.ndarray) -> np.ndarray:
        return average.actor(torch.as_tensor(obs, dtype=torch.float32)).numpy().astype(np.float64)

    return act


def train(task: str, seed: int, taus: tuple[float, ...], budget: int | None = None, *, row: str = ROW,
          extra_bindings: tuple[str, ...] = (), run_dir: Path | None = None) -> dict[str, Any]:
    """One suite run of ``row`` (``budget`` env steps, the suite's by default: fewer only to try the script) with
    the averages evaluated beside the policy the row evaluates (``eval_returns``: ``ROW``'s live actor; the
    recommended row's own averaged actor, its live actor then in ``live_eval_returns``). ``extra_bindings`` (a
    study's change, e.g. ``benchmarks/critic_width.py``) go after the protocol's."""
    from polyak.planning import open_trainer, plan_run
    from polyak.threads import set_threads

    spec = TASKS[task]
    run_dir = run_dir or ROOT / "runs" / "actor_average" / f"{spec.config_stem}_seed_{seed}"
    if run_dir.exists():
        import shutil

        shutil.rmtree(run_dir)
    bindings = [f"TrainerConfig.max_env_steps = {budget or spec.budget}",
                f"TrainerConfig.eval_interval = {min(spec.eval_every, budget or spec.eval_every)}",
                f"TrainerConfig.eval_episodes = {EVAL_EPISODES}", "TrainerConfig.progress_bar = False",
                *extra_bindings]
    config = config_file(task, row.removeprefix("polyak_"))
    plan = plan_run(str(config), bindings, run_dir=run_dir, seed=seed)
    set_threads(plan.configs.trainer.threads)
    averages: list[ActorAverage] = []
    scores: dict[float, list[float]] = {tau: [] for tau in taus}
    holder: dict[str, Any] = {}

    def on_evaluation(env_steps: int, score: float) -> None:
        trainer = holder["trainer"]
        index = len(trainer.progress.eval_scores) - 1  # the live actor's start states
        for average in averages:
            scores[average.rate].append(trainer.evaluator.evaluate(greedy(average), index))
        print(f"{env_steps}: evaluated {score:.1f}, "
              + ", ".join(f"tau {a.rate:g} {scores[a.rate][-1]:.1f}" for a in averages), flush=True)

    trainer, _ = open_trainer(plan, on_evaluation)
    holder["trainer"] = trainer
    assert trainer.normalizer is None, "the averages act on raw observations"
    learner = trainer.learner
    averages.extend(ActorAverage(learner.actor, tau) for tau in taus)
    live_update = learner.update

    def update(batch: Any) -> Any:
        actor_updates = learner.actor_updates
        result = live_update(batch)
        if learner.actor_updates > actor_updates:
            for average in averages:
                average.update(learner.actor, learner.actor_updates)
        return result

    learner.update = update
    started = time.time()
    require_whole_run(trainer.run(), run_dir)
    metrics = read_metrics(run_dir)
    evals = [(int(r["env_steps"]), float(r["score"])) for r in metrics if r["kind"] == "eval"]
    live = [float(r["score"]) for r in metrics if r["kind"] == "eval_live"]
    return {"eval_steps": [s for s, _ in evals], "eval_returns": [r for _, r in evals],
            **({"live_eval_returns": live} if live else {}),
            "averages": {f"{tau:g}": scores[tau] for tau in taus}, "wall_seconds": round(time.time() - started, 1),
            "settings": {"config": str(config.relative_to(ROOT)), "gin_params": bindings, "taus": list(taus)}}


def same_as_suite(task: str, seed: int, live: list[float]) -> bool | None:
    """Whether the live curve equals the suite's result file for this seed (None: no such file)."""
    path = ROOT / "benchmarks" / "results" / "suite" / TASKS[task].config_stem / f"{ROW}_seed_{seed}.json"
    if not path.exists():
        return None
    return json.loads(path.read_text())["eval_returns"] == live


def run(task: str, seed: int, taus: tuple[float, ...], budget: int | None = None) -> Path:
    torch.set_num_threads(1)
    load_before, commit, cpu_before = load_average(), code_commit(), cpu_seconds()
    result = train(task, seed, taus, budget)
    result["live"] = result.pop("eval_returns")  # ROW evaluates its live actor
    same = same_as_suite(task, seed, result["live"]) if budget is None else None
    result.update({"task": task, "row": ROW, "seed": seed, "budget": budget or TASKS[task].budget,
                   "same_as_suite": same,
                   "cpu_seconds": round(cpu_seconds() - cpu_before, 1), "code_commit": commit,
                   "machine": machine_info(), "load_average": {"before": load_before, "after": load_average()},
                   "finished": time.strftime("%Y-%m-%d %H:%M:%S %Z")})
    results = RESULTS if budget is None else ROOT / "runs" / "actor_average"  # a trial run is not a result
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{TASKS[task].config_stem}_seed_{seed}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    return path


def suite_commit(task: str, seed: int) -> str:
    path = ROOT / "benchmarks" / "results" / "suite" / TASKS[task].config_stem / f"{ROW}_seed_{seed}.json"
    return json.loads(path.read_text())["code_commit"]["commit"][:7] if path.exists() else "none"


def policy_numbers(curve: list[float]) -> dict[str, float]:
    return {"final": curve[-1], "best": max(curve), "last5": float(np.mean(curve[-5:])),
            "stability": stability_ratio([curve]) or 0.0}


def decision(by_policy: dict[tuple[str, str], list[dict[str, float]]]) -> dict[str, Any]:
    """The rule of the module docstring over the runs so far: per average, whether its mean stability beats the
    live actor's on every task and its mean final return (over all runs) is not below the live actor's; the pick is
    the passing average with the highest mean final return (None: none passes)."""
    tasks = sorted({task for task, _ in by_policy})
    names = sorted({name for _, name in by_policy if name != "live"})

    def mean(name: str, key: str, task: str | None = None) -> float:
        return statistics.mean(n[key] for (t, policy), numbers in by_policy.items() for n in numbers
                                if policy == name and task in (None, t))

    live_final = mean("live", "final")
    verdicts = {name: {"steadier_on_every_task": all(mean(name, "stability", t) > mean("live", "stability", t)
                                                     for t in tasks),
                       "mean_final": mean(name, "final"), "final_not_lower": mean(name, "final") >= live_final}
                for name in names}
    passing = [name for name, v in verdicts.items() if v["steadier_on_every_task"] and v["final_not_lower"]]
    return {"tasks": tasks, "live_mean_final": live_final, "averages": verdicts,
            "pick": max(passing, key=lambda name: verdicts[name]["mean_final"]) if passing else None}


def decision_lines(by_policy: dict[tuple[str, str], list[dict[str, float]]]) -> list[str]:
    rule = decision(by_policy)
    lines = ["The rule (module docstring) over these runs: an average passes when it is steadier than the live "
             "actor on every task and its mean final return is not lower; the pick is the passing one with the highest "
             f"mean final return. Live actor: mean final {rule['live_mean_final']:.1f}.", ""]
    for name, verdict in rule["averages"].items():
        lines.append(f"- {name}: mean final {verdict['mean_final']:.1f}, steadier on every task: "
                     f"{'yes' if verdict['steadier_on_every_task'] else 'no'}, final not lower: "
                     f"{'yes' if verdict['final_not_lower'] else 'no'}")
    lines += ["", f"Pick: **{rule['pick'] or 'none'}**."]
    return lines


def report() -> str:
    files = sorted(RESULTS.glob("*_seed_*.json"))
    runs = [json.loads(p.read_text()) for p in files]
    if not runs:
        sys.exit("actor_average: no result files yet; run one with --task and --seed")
    lines = ["# Averaged actor weights against the live actor (CrossQ SAC mode)", "",
             "Written by `python benchmarks/actor_average.py --report`: each run is one suite run of "
             f"{ROW}; every policy plays the same start states at each evaluation (10 episodes every 5k steps).", "",
             "| task | seed | policy | final | best | mean of last 5 | stability |", "| --- | --- | --- | --- | --- | "
             "--- | --- |"]
    by_policy: dict[tuple[str, str], list[dict[str, float]]] = {}
    for result in sorted(runs, key=lambda r: (r["task"], r["seed"])):
        curves = {"live": result["live"], **{f"tau {k}": v for k, v in result["averages"].items()}}
        for name, curve in curves.items():
            numbers = policy_numbers(curve)
            by_policy.setdefault((result["task"], name), []).append(numbers)
            lines.append(f"| {result['task']} | {result['seed']} | {name} | {numbers['final']:.1f} | "
                         f"{numbers['best']:.1f} | {numbers['last5']:.1f} | {numbers['stability']:.2f} |")
    lines += ["", "Means over seeds:", "", "| task | policy | seeds | mean final | mean stability |",
              "| --- | --- | --- | --- | --- |"]
    for (task, name), numbers in sorted(by_policy.items()):
        lines.append(f"| {task} | {name} | {len(numbers)} | {statistics.mean(n['final'] for n in numbers):.1f} | "
                     f"{statistics.mean(n['stability'] for n in numbers):.2f} |")
    lines += ["", *decision_lines(by_policy)]
    lines += ["", "Is the live curve the suite's run of that seed? (Equal code gives equal runs; a change in "
              "floating-point arithmetic, such as BatchRenorm's two-pass variance in bdb6aa7, gives a different run "
              "from the same seed.)", ""]
    for r in runs:
        lines.append(f"- {r['task']} seed {r['seed']}: {'yes' if r['same_as_suite'] else 'no'} (this run at "
                     f"{r['code_commit']['commit'][:7]}, the suite's at {suite_commit(r['task'], r['seed'])})")
    commits = sorted({r["code_commit"].get("commit", "?")[:7] for r in runs})
    lines += ["", f"Commits: {', '.join(commits)}; machine: {cpu_kind(runs[0]['machine'])}."]
    text = "\n".join(lines) + "\n"
    (RESULTS.parent / "actor_average.md").write_text(text)
    return text


def runnable_tasks(row: str = ROW) -> list[str]:
    """The suite's tasks that have a config of ``row`` (``configs/suite/<task stem>_<algo>.gin``): the ones this
    script can train (the locomotion tasks and InvertedPendulum-v5 for ``ROW``)."""
    return sorted(task for task in TASKS if config_file(task, row.removeprefix("polyak_")).is_file())


def learning_start(task: str, row: str = ROW) -> int:
    """The env steps of ``row``'s config on ``task`` before the first update: the larger of
    ``TrainerConfig.start_steps`` and ``ReplayConfig.min_size``. A budget must go beyond it: before it the actor
    never updates, so the averages have nothing to average (and below ``min_size`` polyak refuses the run)."""
    from polyak.ginconf import configs_from_file

    configs = configs_from_file(config_file(task, row.removeprefix("polyak_")))
    return max(configs.trainer.start_steps, configs.replay.min_size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=runnable_tasks(), default="Hopper-v5",
                        help=f"a task with a {ROW} config in the suite (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="the suite's seed to run (default: %(default)s)")
    parser.add_argument("--taus", type=float, nargs="+", default=list(TAUS),
                        help="the averages' rates per actor update, each in (0, 1] (default: %(default)s)")
    parser.add_argument("--budget", type=int,
                        help="env steps (default: the suite's for the task); fewer only to try it (the run's result "
                             "goes under runs/actor_average/, not benchmarks/results/); above the config's start "
                             "steps")
    parser.add_argument("--report", action="store_true", help="write the table over the result files")
    args = parser.parse_args()
    if not args.report and any(not 0.0 < tau <= 1.0 for tau in args.taus):
        parser.error(f"every --taus rate must be in (0, 1], got {' '.join(map(str, args.taus))}")
    if not args.report and args.budget is not None:
        start, suite_budget = learning_start(args.task), TASKS[args.task].budget
        if not start < args.budget:
            parser.error(f"--budget must be above {start} on {args.task} (the config's start steps and replay "
                         f"min_size: no update runs before then), got {args.budget}; the suite's budget is "
                         f"{suite_budget}")
    if args.report:
        print(report())
        return
    try:
        print(run(args.task, args.seed, tuple(args.taus), args.budget))
    except RunFailed as error:
        sys.exit(f"actor_average: {error}")


if __name__ == "__main__":
    main()
