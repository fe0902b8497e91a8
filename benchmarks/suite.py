"""The benchmark suite: polyak's DDPG and TD3 beside Stable-Baselines3's TD3 on toy, MuJoCo and PyBullet tasks.

Usage:
  python benchmarks/suite.py [--only TASK ...] [--rows ROW ...] [--seeds 0 1 2] [--jobs 2]
  python benchmarks/suite.py --report          # only rebuild suite.json, suite.md and the plots from finished runs
  python benchmarks/suite.py --only Hopper-v5 --rows polyak_td3 --out-dir DIR   # reproduce a row into DIR
  python benchmarks/suite.py --only Hopper-v5 --rows polyak_td3 --force   # re-run it over the committed results

The report's statistics (per-task IQMs with bootstrap intervals, normalized-score IQMs, probability of
improvement, the learning curves' intervals) use rliable (the ``bench`` extra), imported only by the report.

Each finished (task, row, seed) is written at once to ``benchmarks/results/suite/<task>/<row>_seed_<s>.json``
(with the commit and the machine load) and a re-run skips it, so the table fills over several sittings.
Every run trains in its own process with one torch thread; ``--jobs`` run at a time.

Every row is evaluated the same way: the deterministic policy for 10 episodes every 5,000 env steps (1,000 on the
20k-step tasks), each evaluation on new start states drawn from a seeded stream (``polyak.evaluation``), so runs stay
reproducible and no evaluation replays another's starts. ``final_returns`` is, per seed, the mean return of the last
evaluation (at the budget). The polyak rows train ``configs/suite/<task>_<algo>.gin`` through the CLI; ``sb3_td3``
is SB3's TD3 built from the hyperparameters of ``configs/suite/<task>_td3.gin`` (networks, batch, learning rate,
noise, start steps, delays, tau, gamma, replay size), with the same evaluation function on a polyak-made env.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import (
    claimed,
    code_commit,
    cpu_kind,
    load_average,
    machine_info,
    machines_by_kind,
    newest_commit,
    read_metrics,
    sb3_deterministic_action,
)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
RUNS = RESULTS / "suite"
CONFIGS = ROOT / "configs" / "suite"
EVAL_EPISODES = 10


@dataclass(frozen=True)
class Task:
    env_id: str
    budget: int
    eval_every: int
    config_stem: str


TASKS: dict[str, Task] = {
    "Pendulum-v1": Task("Pendulum-v1", 20_000, 1_000, "pendulum"),
    "MountainCarContinuous-v0": Task("MountainCarContinuous-v0", 50_000, 5_000, "mountaincar"),
    "InvertedPendulum-v5": Task("InvertedPendulum-v5", 20_000, 1_000, "invertedpendulum"),
    "HalfCheetah-v5": Task("HalfCheetah-v5", 100_000, 5_000, "halfcheetah"),
    "Hopper-v5": Task("Hopper-v5", 100_000, 5_000, "hopper"),
    "Walker2d-v5": Task("Walker2d-v5", 100_000, 5_000, "walker2d"),
    "Ant-v5": Task("Ant-v5", 100_000, 5_000, "ant"),
    "Humanoid-v5": Task("Humanoid-v5", 100_000, 5_000, "humanoid"),
    "HopperBulletEnv-v0": Task("pybullet_envs_gymnasium:HopperBulletEnv-v0", 100_000, 5_000, "hopperbullet"),
}
ROWS = ("polyak_ddpg", "polyak_td3", "sb3_td3", "polyak_ou", "polyak_td7", "polyak_crossq", "sb3_crossq",
        "polyak_sac", "polyak_crossq_sac", "polyak_recommended")
# MountainCar also runs the exploration that solves it (configs/suite/mountaincar_ou.gin: DDPG with OU noise).
EXPLORATION_ROWS = {"MountainCarContinuous-v0": ("polyak_ou",)}
# TD7 and CrossQ (the sample-efficiency issues) run on the five standard MuJoCo locomotion tasks only.
SAMPLE_EFFICIENCY_ROWS = ("polyak_td7", "polyak_crossq", "sb3_crossq", "polyak_sac", "polyak_crossq_sac",
                          "polyak_recommended")
SAMPLE_EFFICIENCY_TASKS = ("HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Ant-v5", "Humanoid-v5")
# The five standard tasks run TD3, TD7 and CrossQ only (DDPG stays on the tasks it has).
FRONTIER_ONLY_TASKS = ("Walker2d-v5", "Ant-v5", "Humanoid-v5")
# The stability study: CrossQ's TD3 mode against its SAC mode (polyak's and sb3-contrib's) on a task whose maximum
# return (1,000) shows whether the final policy kept what an earlier evaluation reached.
STABILITY_ROWS = {"InvertedPendulum-v5": ("polyak_crossq", "sb3_crossq", "polyak_crossq_sac")}

# The report's statistics (``suite_statistics``). The recommended row is the row of configs/recommended.gin: the row
# the rule below picked (polyak_crossq_sac), evaluated and shipped through its averaged actor
# (AgentConfig.actor_average, chosen by benchmarks/actor_average.py's paired test); the issue asks 5 seeds of it and
# of sb3_crossq on each locomotion task, 3 of the others.
RECOMMENDED_ROW = "polyak_recommended"
# A run of the recommended row also scores its live actor on the same start states (``eval_live`` rows): the same
# training as the rule's pick, so that curve is the pick's run of that seed, written when the pick has none.
LIVE_ROWS = {RECOMMENDED_ROW: "polyak_crossq_sac"}
BASELINE_ROW = "sb3_crossq"
SEEDS_ASKED = {RECOMMENDED_ROW: 5, BASELINE_ROW: 5}
DEFAULT_SEEDS_ASKED = 3
# The rule that picks the recommended row from the measured rows (``recommendation``): among these candidates, on
# the locomotion tasks where all have runs, the highest IQM of normalized final returns. Stability is then a
# requirement on the pick, not a filter (a row that stays at a low best is not better for it): on every task the
# mean over seeds of (mean of the last five evaluations / best evaluation) must be at least STABILITY_FLOOR, else
# the report says the pick still falls from its best.
CANDIDATE_ROWS = ("polyak_td3", "polyak_td7", "polyak_crossq", "polyak_crossq_sac")
STABILITY_FLOOR = 0.8
BOOTSTRAP_REPS = 2_000
CONFIDENCE = 0.95
BOOTSTRAP_SEED = 0  # numpy's global RNG is seeded with it before each estimate: the report is reproducible


@dataclass(frozen=True)
class Published:
    """Published returns after 100k env steps (Gymnasium v4, so "about" for the v5 tasks)."""

    best: float
    best_method: str
    crossq_paper: float
    mrq: float


PUBLISHED_100K: dict[str, Published] = {
    "HalfCheetah-v5": Published(9_815, "FlashSAC", 8_112, 7_872),
    "Hopper-v5": Published(2_927, "SimbaV2", 2_764, 2_249),
    "Walker2d-v5": Published(4_488, "SimbaV2", 3_914, 3_127),
    "Ant-v5": Published(3_942, "SimbaV2", 2_299, 2_801),
    "Humanoid-v5": Published(6_138, "FlashSAC", 2_603, 522),
}
# Random-policy returns (Gymnasium v4) that SimbaV2 normalizes its MuJoCo scores with: MUJOCO_RANDOM_SCORE in
# SimbaV2's scale_rl/envs/mujoco.py (read in the fork github.com/pkicki/SimbaV2, commit 19dc9898).
RANDOM_SCORES: dict[str, float] = {
    "HalfCheetah-v5": -289.415, "Hopper-v5": 18.791, "Walker2d-v5": 2.791, "Ant-v5": -70.288, "Humanoid-v5": 120.423,
}
RANDOM_SCORES_SOURCE = "SimbaV2's MUJOCO_RANDOM_SCORE (scale_rl/envs/mujoco.py; Gymnasium v4)"


def rows_of(task: str) -> tuple[str, ...]:
    """The rows a task runs: every task the DDPG/TD3 rows, the locomotion tasks also TD7 and CrossQ,
    MountainCar also its exploration row."""
    exploration = {row for rows in EXPLORATION_ROWS.values() for row in rows}
    return tuple(row for row in ROWS if (row not in SAMPLE_EFFICIENCY_ROWS or task in SAMPLE_EFFICIENCY_TASKS
                                         or row in STABILITY_ROWS.get(task, ()))
                 and (row not in exploration or row in EXPLORATION_ROWS.get(task, ()))
                 and (row != "polyak_ddpg" or task not in FRONTIER_ONLY_TASKS))


def result_path(task: str, row: str, seed: int) -> Path:
    return RUNS / TASKS[task].config_stem / f"{row}_seed_{seed}.json"


def use_results_dir(path: Path) -> None:
    """Keep result files, suite.json, suite.md and the plots under ``path`` instead of benchmarks/results
    (``--out-dir``: reproduce a row on a fresh clone without touching the committed results)."""
    global RESULTS, RUNS
    RESULTS, RUNS = path, path / "suite"
    RUNS.mkdir(parents=True, exist_ok=True)


def runs_to_do(tasks: list[str], rows: list[str], seeds: list[int], force: bool = False) -> list[tuple[str, str, int]]:
    """The (task, row, seed)s a task runs, less those with a result file unless ``force``."""
    return [(task, row, seed) for task in tasks for row in rows for seed in seeds
            if row in rows_of(task) and (force or not result_path(task, row, seed).exists())]


def config_file(task: str, algo: str) -> Path:
    return CONFIGS / f"{TASKS[task].config_stem}_{algo}.gin"


# ---------------------------------------------------------------------------------------------- one run
def run_polyak(task: str, row: str, seed: int) -> dict[str, Any]:
    """``polyak train`` on the task's shipped config; the trainer evaluates with the suite's protocol."""
    algo = row.removeprefix("polyak_")
    spec = TASKS[task]
    run_dir = ROOT / "runs" / "suite" / spec.config_stem / f"{row}_seed_{seed}"
    if run_dir.exists():  # a run cut short in an earlier sitting: start it again
        subprocess.run(["rm", "-rf", str(run_dir)], check=True)
    bindings = [f"TrainerConfig.max_env_steps = {spec.budget}", f"TrainerConfig.eval_interval = {spec.eval_every}",
                f"TrainerConfig.eval_episodes = {EVAL_EPISODES}", "TrainerConfig.progress_bar = False"]
    command = [sys.executable, "-m", "polyak.cli", "train", "--config", str(config_file(task, algo)),
               "--seed", str(seed), "--run-dir", str(run_dir)]
    for binding in bindings:
        command += ["--gin-param", binding]
    started = time.time()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    summary = json.loads((run_dir / "summary.json").read_text())
    metrics = read_metrics(run_dir)
    evals = [(int(r["env_steps"]), float(r["score"])) for r in metrics if r["kind"] == "eval"]
    live = [float(r["score"]) for r in metrics if r["kind"] == "eval_live"]
    return {"eval_steps": [s for s, _ in evals], "eval_returns": [r for _, r in evals],
            **({"live_eval_returns": live} if live else {}),
            "eval_wall_seconds": eval_wall_seconds(run_dir, started),
            "wall_seconds": summary["wall_seconds"],
            "settings": {"config": str(config_file(task, algo).relative_to(ROOT)), "gin_params": bindings}}


def eval_wall_seconds(run_dir: Path, started: float) -> list[float]:
    """Seconds from the launch of ``polyak train`` to each evaluation, from the wall times TensorBoard stores
    with ``eval/score`` (metrics.csv keeps only values that depend on the seed)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir / "tb"), size_guidance={"scalars": 0}).Reload()
    return [round(event.wall_time - started, 2) for event in events.Scalars("eval/score")]


def sb3_td3_kwargs(task: str) -> dict[str, Any]:
    """SB3 TD3's arguments from the polyak TD3 config of the same task, so both rows train alike."""
    from polyak.ginconf import build_configs_from_gin, parse_gin

    parse_gin(config_file(task, "td3"), [])
    configs = build_configs_from_gin()
    agent, trainer = configs.agent, configs.trainer
    assert configs.actor.lr == configs.critic.lr, "SB3's TD3 has one learning rate for both networks"
    assert configs.critic.action_layer == 0 and configs.noise.kind.value == "gaussian"
    assert configs.actor.weight_init.value == "pytorch", "SB3 keeps PyTorch's default initialisation"
    return {
        "learning_rate": configs.actor.lr, "buffer_size": configs.replay.capacity,
        "learning_starts": trainer.start_steps, "batch_size": agent.batch_size, "tau": agent.tau,
        "gamma": agent.gamma, "train_freq": trainer.learn_every, "gradient_steps": trainer.learn_steps,
        "policy_delay": agent.policy_delay, "target_policy_noise": agent.target_policy_noise,
        "target_noise_clip": agent.target_noise_clip, "noise_sigma": configs.noise.sigma,
        "net_arch": {"pi": list(configs.actor.hidden_sizes), "qf": list(configs.critic.hidden_sizes)},
        "n_critics": agent.n_critics,
    }


def sb3_crossq_kwargs(task: str) -> dict[str, Any]:
    """sb3-contrib CrossQ's arguments from polyak's CrossQ config of the task: the same widths, learning rate,
    batch, start steps, policy delay and batch-renormalization settings. sb3-contrib's CrossQ is the SAC variant
    (a stochastic actor with entropy tuning); polyak's is the authors' TD3 mode, so the exploration differs."""
    from polyak.ginconf import build_configs_from_gin, parse_gin

    parse_gin(config_file(task, "crossq"), [])
    configs = build_configs_from_gin()
    agent, trainer, critic = configs.agent, configs.trainer, configs.critic
    assert configs.actor.lr == critic.lr and critic.batch_renorm and agent.algorithm.value == "crossq"
    return {
        "learning_rate": critic.lr, "buffer_size": configs.replay.capacity, "learning_starts": trainer.start_steps,
        "batch_size": agent.batch_size, "gamma": agent.gamma, "train_freq": trainer.learn_every,
        "gradient_steps": trainer.learn_steps, "policy_delay": agent.policy_delay,
        "policy_kwargs": {"net_arch": {"pi": list(configs.actor.hidden_sizes), "qf": list(critic.hidden_sizes)},
                          "batch_norm_momentum": critic.batch_renorm_momentum,
                          "renorm_warmup_steps": critic.batch_renorm_warmup, "n_critics": agent.n_critics},
    }


def run_sb3(task: str, row: str, seed: int) -> dict[str, Any]:
    """SB3's TD3 (``sb3_td3``) or sb3-contrib's CrossQ (``sb3_crossq``), evaluated with polyak's protocol."""
    import gymnasium as gym
    import numpy as np
    from stable_baselines3.common.callbacks import BaseCallback

    from polyak.envs import make_env
    from polyak.envs.factory import resolve_env_id
    from polyak.evaluation import evaluation_seed, run_episodes
    from polyak.seeding import run_streams

    spec = TASKS[task]
    env = gym.make(resolve_env_id(spec.env_id))
    action_dim = env.action_space.shape[0]
    if row == "sb3_td3":
        from stable_baselines3 import TD3
        from stable_baselines3.common.noise import NormalActionNoise

        settings = sb3_td3_kwargs(task)
        kwargs = dict(settings)
        sigma, net_arch, n_critics = kwargs.pop("noise_sigma"), kwargs.pop("net_arch"), kwargs.pop("n_critics")
        model = TD3("MlpPolicy", env, seed=seed, device="cpu", verbose=0,
                    action_noise=NormalActionNoise(np.zeros(action_dim), sigma * np.ones(action_dim)),
                    policy_kwargs={"net_arch": net_arch, "n_critics": n_critics}, **kwargs)
        library, algorithm, source = "stable-baselines3", "TD3", config_file(task, "td3")
    else:
        from sb3_contrib import CrossQ

        settings = sb3_crossq_kwargs(task)
        model = CrossQ("MlpPolicy", env, seed=seed, device="cpu", verbose=0, **settings)
        library, algorithm, source = "sb3-contrib", "CrossQ (SAC variant)", config_file(task, "crossq")
    eval_env = make_env(spec.env_id, 1)  # actions in [-1, 1], as the actors output them
    stream = run_streams(seed).evaluation_seed  # the start states polyak's run of this seed is evaluated on
    steps: list[int] = []
    returns: list[float] = []
    seconds: list[float] = []

    def act(obs: np.ndarray) -> np.ndarray:
        return sb3_deterministic_action(model, obs)

    class Evaluate(BaseCallback):
        def _on_step(self) -> bool:
            if self.num_timesteps % spec.eval_every == 0:
                model.policy.set_training_mode(False)
                scores = run_episodes(eval_env, act, EVAL_EPISODES, evaluation_seed(stream, len(returns)))
                steps.append(self.num_timesteps)
                returns.append(float(np.mean(scores)))
                seconds.append(round(time.perf_counter() - started, 2))
            return True

    started = time.perf_counter()
    model.learn(total_timesteps=spec.budget, callback=Evaluate())
    wall = time.perf_counter() - started
    eval_env.close()
    env.close()
    return {"eval_steps": steps, "eval_returns": returns, "eval_wall_seconds": seconds, "wall_seconds": round(wall, 3),
            "settings": {"library": library, "algorithm": algorithm, **settings,
                         "from_config": str(source.relative_to(ROOT))}}


def cpu_seconds() -> float:
    """CPU time of this process and its finished children: a speed measure that load on the shared CPU does not
    inflate the way it inflates wall time (one torch thread per run)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_one(task: str, row: str, seed: int, force: bool = False) -> None:
    """Train one (task, row, seed) in this process and write its result file, unless another runner has claimed
    it (two shells, two sittings): then it is skipped, not started again over the other's run directory. A result
    file already there is kept, or with ``force`` replaced when the new run finishes."""
    path = result_path(task, row, seed)
    with claimed(path) as mine:
        if not mine:
            print(f"{task} {row} seed {seed}: another runner is training it; skipped", flush=True)
        elif force or not path.exists():
            _train_and_write(task, row, seed, path)


def _train_and_write(task: str, row: str, seed: int, path: Path) -> None:
    import torch

    torch.set_num_threads(1)
    load_before = load_average()
    commit = code_commit()  # at the start: later commits may land while it trains
    cpu_before = cpu_seconds()
    runner: Callable[[], dict[str, Any]] = (
        (lambda: run_sb3(task, row, seed)) if row.startswith("sb3_") else (lambda: run_polyak(task, row, seed))
    )
    result = runner()
    spec = TASKS[task]
    result.update({
        "task": task, "row": row, "seed": seed, "budget": spec.budget,
        "final_return": result["eval_returns"][-1],
        "env_steps_per_s": round(spec.budget / result["wall_seconds"], 2),
        "cpu_seconds": round(cpu_seconds() - cpu_before, 2),
        "code_commit": commit, "machine": machine_info(),
        "load_average": {"before": load_before, "after": load_average()},
        "finished": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    })
    result["env_steps_per_cpu_s"] = round(spec.budget / max(result["cpu_seconds"], 1e-9), 2)
    write_result(path, result)
    if row in LIVE_ROWS and "live_eval_returns" in result:
        write_live_result(task, row, seed, result)
    print(f"{task} {row} seed {seed}: final {result['final_return']:.1f}, {result['env_steps_per_s']} env steps/s",
          flush=True)


def write_result(path: Path, result: dict[str, Any]) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(result, indent=1) + "\n")
    temporary.replace(path)


def write_live_result(task: str, row: str, seed: int, result: dict[str, Any]) -> None:
    """The live actor's curve of a ``LIVE_ROWS`` run as that seed's run of the row it trains as, unless that row has
    one (its own run, from another commit, stays); ``from_run`` says where it came from."""
    live_row = LIVE_ROWS[row]
    path = result_path(task, live_row, seed)
    if path.exists():
        return
    with claimed(path) as mine:
        if not mine or path.exists():
            return
        live = {**{k: v for k, v in result.items() if k != "live_eval_returns"}, "row": live_row,
                "eval_returns": result["live_eval_returns"], "final_return": result["live_eval_returns"][-1],
                "from_run": {"row": row, "note": "the live actor's evaluations of that run (same training, same "
                                                 "start states); its CPU and wall times are that run's"}}
        write_result(path, live)
        print(f"{task} {live_row} seed {seed}: final {live['final_return']:.1f}, from the {row} run", flush=True)


# ---------------------------------------------------------------------------------------------- report
def collect() -> dict[str, Any]:
    """suite.json from every finished run file."""
    tasks: dict[str, Any] = {}
    commits: set[str] = set()
    machines: dict[str, Any] = {}
    every_run: list[dict[str, Any]] = []
    for task, spec in TASKS.items():
        rows: dict[str, Any] = {}
        for row in ROWS:
            runs = sorted((json.loads(p.read_text()) for p in (RUNS / spec.config_stem).glob(f"{row}_seed_*.json")),
                          key=lambda r: r["seed"])
            if not runs:
                continue
            rows[row] = {
                "seeds": [r["seed"] for r in runs],
                "final_returns": [r["final_return"] for r in runs],
                "eval_steps": runs[0]["eval_steps"],
                "eval_returns": [r["eval_returns"] for r in runs],
                "env_steps_per_s": [r["env_steps_per_s"] for r in runs],
                "env_steps_per_cpu_s": [r.get("env_steps_per_cpu_s") for r in runs],
                "wall_seconds": [r["wall_seconds"] for r in runs],
                "cpu_seconds": [r.get("cpu_seconds") for r in runs],
                "eval_wall_seconds": [r.get("eval_wall_seconds") for r in runs],
                "code_commits": [r["code_commit"]["commit"] for r in runs],
                "load_average_before": [r["load_average"]["before"] for r in runs],
                "cpu_kinds": [cpu_kind(r["machine"]) for r in runs],
                "settings": runs[0]["settings"],
                **({"live_eval_returns": [r["live_eval_returns"] for r in runs]}
                   if all("live_eval_returns" in r for r in runs) else {}),
            }
            commits.update(r["code_commit"]["commit"] for r in runs)
            every_run.extend(runs)
            machines.update(machines_by_kind(runs))
        tasks[task] = {"budget": spec.budget, "eval_every": spec.eval_every, "rows": rows}
    return {"benchmark": "suite", "tasks": tasks, "machine": dict(sorted(machines.items())),
            "code_commit": newest_commit(every_run), "run_code_commits": sorted(commits), "eval_protocol": (
                f"deterministic policy, {EVAL_EPISODES} episodes per evaluation, new start states per evaluation "
                "from a seeded stream; final return = mean of the last evaluation")}


def seeds_text(count: int) -> str:
    return f"{count} seed" + ("" if count == 1 else "s")


def plot(suite: dict[str, Any]) -> None:
    """Per task, each row's mean learning curve over seeds with a shaded 95% bootstrap interval of that mean at every
    evaluation (``curve_interval``), the seed count in the legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    for task, entry in suite["tasks"].items():
        if not entry["rows"]:
            continue
        figure, axes = plt.subplots(figsize=(7, 4.5))
        for row, data in entry["rows"].items():
            length = min(len(r) for r in data["eval_returns"])
            curves = np.array([r[:length] for r in data["eval_returns"]])
            steps = np.array(data["eval_steps"][:length])
            mean, low, high = curve_interval(curves)
            (line,) = axes.plot(steps, mean, label=f"{row} ({seeds_text(len(curves))})")
            axes.fill_between(steps, low, high, alpha=0.2, color=line.get_color(), linewidth=0)
        axes.set(title=f"{task}, {entry['budget']:,} env steps: mean over seeds, shaded 95% bootstrap CI",
                 xlabel="env steps", ylabel=f"evaluation return ({EVAL_EPISODES} episodes)")
        axes.title.set_fontsize(10)
        axes.legend(fontsize=8)
        axes.grid(alpha=0.3)
        figure.tight_layout()
        figure.savefig(RESULTS / f"suite_{TASKS[task].config_stem}.png", dpi=100)
        plt.close(figure)


def plot_aggregate(suite: dict[str, Any]) -> None:
    """suite_aggregate.png, on the tasks where every candidate of the recommendation has runs, for each row with runs
    on all of them: the IQM of normalized final returns with its 95% interval, and the performance profile (the
    fraction of runs whose normalized final return exceeds tau, Agarwal et al. 2021) with its 95% band; both with
    rliable's stratified bootstrap."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    tasks = tasks_with_runs(suite, *CANDIDATE_ROWS)
    if not tasks:
        return
    rows = [row for row in ROWS if tasks_with_runs(suite, row, *CANDIDATE_ROWS) == tasks]
    taus = np.linspace(0.0, 1.25, 51)
    figure, (bars, profiles) = plt.subplots(1, 2, figsize=(11, 4.5))
    for index, row in enumerate(rows):
        matrix = final_matrix(suite, row, tasks, normalize=True)
        iqm, ci = iqm_interval(matrix)
        bars.errorbar([iqm], [index], xerr=[[iqm - ci[0]], [ci[1] - iqm]], fmt="o", capsize=4)
        point, band = bootstrap(matrix, lambda x: np.array([(x > tau).mean() for tau in taus]))
        (line,) = profiles.plot(taus, point, label=f"{row} ({matrix.shape[0]} seeds per task)")
        profiles.fill_between(taus, band[0], band[1], alpha=0.2, color=line.get_color(), linewidth=0)
    bars.set(yticks=range(len(rows)), yticklabels=rows, xlabel="IQM of normalized final return (95% CI)")
    profiles.set(xlabel="normalized final return tau (1 = best published 100k)", ylabel="fraction of runs > tau")
    figure.suptitle(f"100k env steps on {', '.join(tasks)}: normalized by random and best published scores",
                    fontsize=10)
    for axes in (bars, profiles):
        axes.grid(alpha=0.3)
    profiles.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(RESULTS / "suite_aggregate.png", dpi=100)
    plt.close(figure)


def eval_minutes(data: dict[str, Any], seed_index: int) -> list[float]:
    """Minutes from a run's start to each of its evaluations: recorded where the run recorded them, otherwise
    (runs before eval times were kept) spread evenly over the run's wall time by env steps."""
    recorded = data["eval_wall_seconds"][seed_index]
    if recorded:
        return [seconds / 60 for seconds in recorded]
    budget = data["eval_steps"][-1]
    return [data["wall_seconds"][seed_index] * steps / budget / 60 for steps in data["eval_steps"]]


def plot_wall_time(suite: dict[str, Any]) -> None:
    """Return against wall minutes (one torch thread per run) on the sample-efficiency tasks."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    for task in SAMPLE_EFFICIENCY_TASKS:
        entry = suite["tasks"].get(task)
        if not entry or not entry["rows"]:
            continue
        figure, axes = plt.subplots(figsize=(6, 4))
        for row, data in entry["rows"].items():
            length = min(len(r) for r in data["eval_returns"])
            curves = np.array([r[:length] for r in data["eval_returns"]])
            minutes = np.array([eval_minutes(data, i)[:length] for i in range(len(curves))]).mean(axis=0)
            interpolated = any(not recorded for recorded in data["eval_wall_seconds"])
            axes.plot(minutes, curves.mean(axis=0),
                      label=f"{row} ({len(curves)} seeds{', times interpolated' if interpolated else ''})")
        axes.set(title=f"{task}: return against wall time (one torch thread per run)", xlabel="wall minutes",
                 ylabel=f"evaluation return ({EVAL_EPISODES} episodes)")
        axes.legend(fontsize=8)
        axes.grid(alpha=0.3)
        figure.tight_layout()
        figure.savefig(RESULTS / f"suite_{TASKS[task].config_stem}_wall.png", dpi=100)
        plt.close(figure)


def efficiency_table(suite: dict[str, Any]) -> str:
    """The sample-efficiency issue's view of HalfCheetah and Hopper: each row's mean final return as a multiple of
    sb3_td3's (same env steps), the mean of each seed's last five evaluations (a policy that swings between
    evaluations, as on Hopper, makes the final one a draw), and its cost in wall and CPU minutes per run (medians
    over seeds)."""
    lines = ["| task | row | mean final return | × sb3_td3 | mean of the last 5 evaluations | wall minutes per run "
             "| CPU minutes per run | final return per wall minute | CPU |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for task in SAMPLE_EFFICIENCY_TASKS:
        rows = suite["tasks"].get(task, {}).get("rows", {})
        baseline = statistics.mean(rows["sb3_td3"]["final_returns"]) if "sb3_td3" in rows else None
        for row, data in rows.items():
            final = statistics.mean(data["final_returns"])
            wall = statistics.median(data["wall_seconds"]) / 60
            cpu = [x for x in data["cpu_seconds"] if x is not None]
            last_five = statistics.mean(statistics.mean(curve[-5:]) for curve in data["eval_returns"])
            cells = [task, f"{row} ({seeds_text(len(data['seeds']))})", f"{final:.1f}",
                     f"{final / baseline:.2f}" if baseline else "", f"{last_five:.1f}", f"{wall:.1f}",
                     f"{statistics.median(cpu) / 60:.1f}" if cpu else "", f"{final / wall:.0f}",
                     ", ".join(sorted(set(data["cpu_kinds"])))]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def speeds_by_cpu(data: dict[str, Any]) -> dict[str, float]:
    """Median env steps per CPU second (wall second where CPU time was not recorded) per kind of CPU: rates from
    different CPUs are never pooled (one core of the AMD AVX2 machine multiplies at about a third of the AVX512
    ones' rate)."""
    groups: dict[str, list[float]] = {}
    for kind, per_cpu, per_wall in zip(data["cpu_kinds"], data["env_steps_per_cpu_s"], data["env_steps_per_s"],
                                       strict=True):
        groups.setdefault(kind, []).append(per_cpu if per_cpu is not None else per_wall)
    return {kind: statistics.median(rates) for kind, rates in groups.items()}


def speed_cell(row: str, data: dict[str, Any]) -> str:
    timed = "" if all(x is not None for x in data["env_steps_per_cpu_s"]) else " (wall)"
    by_cpu = speeds_by_cpu(data)
    named = [f"{rate:.0f}" + ("" if kind == "unrecorded" else f" on {kind}") for kind, rate in by_cpu.items()]
    return f"{row} " + ", ".join(named) + timed


def markdown_table(suite: dict[str, Any]) -> str:
    """The README's table: mean ± std of the final return over seeds, and median env steps/s per row and kind of
    CPU, per task and row."""
    lines = ["| task | budget | " + " | ".join(ROWS) + " | env steps per CPU second (median over seeds, per CPU) |",
             "| --- | --- | " + " | ".join("---" for _ in ROWS) + " | --- |"]
    for task, entry in suite["tasks"].items():
        cells, speeds = [], []
        for row in ROWS:
            if row not in rows_of(task):
                cells.append("")
                continue
            data = entry["rows"].get(row)
            if data is None:
                cells.append("not run yet")
                continue
            finals = data["final_returns"]
            spread = f" ± {statistics.stdev(finals):.1f}" if len(finals) > 1 else ""  # no spread from one seed
            cells.append(f"{statistics.mean(finals):.1f}{spread} ({seeds_text(len(finals))})")
            speeds.append(speed_cell(row, data))
        lines.append(f"| {task} | {entry['budget'] // 1000}k | " + " | ".join(cells) + " | " + "; ".join(speeds) + " |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- statistics
# rliable and numpy are imported inside these functions: a training job does not need the bench extra's rliable.
def seeds_asked(row: str) -> int:
    """The seeds the statistics issue asks of a row on each locomotion task."""
    return SEEDS_ASKED.get(row, DEFAULT_SEEDS_ASKED)


def bootstrap(scores: Any, func: Callable[..., Any]) -> tuple[Any, Any]:
    """rliable's stratified percentile bootstrap of ``func`` over runs: ``scores`` is a (runs x tasks x ...) array,
    or a list of them resampled independently; returns the point estimate and the (2 x ...) interval. rliable draws
    its resamples from numpy's global RNG (the ``random_state`` it takes does not reach them), so that RNG is seeded
    with BOOTSTRAP_SEED just before and restored after: the same runs always give the same interval."""
    import numpy as np
    from rliable import library

    saved = np.random.get_state()
    np.random.seed(BOOTSTRAP_SEED)
    try:
        points, intervals = library.get_interval_estimates({"x": scores}, func, method="percentile",
                                                           reps=BOOTSTRAP_REPS, confidence_interval_size=CONFIDENCE)
    finally:
        np.random.set_state(saved)
    return np.asarray(points["x"]), np.asarray(intervals["x"])


def iqm_interval(scores: Any) -> tuple[float, list[float]]:
    """The interquartile mean of a (runs x tasks) array, rliable's ``aggregate_iqm`` (scipy's ``trim_mean`` cutting
    25% of the pooled values at each end: the plain mean of 3 values, the mean of the middle 3 of 5), and its 95%
    stratified bootstrap interval."""
    import numpy as np
    from rliable import metrics

    point, interval = bootstrap(np.asarray(scores, dtype=float), lambda x: np.array([metrics.aggregate_iqm(x)]))
    return float(point[0]), [float(interval[0, 0]), float(interval[1, 0])]


def curve_interval(curves: Any) -> tuple[Any, Any, Any]:
    """The mean learning curve of a (seeds x evaluations) array and, at each evaluation, the 95% percentile bootstrap
    interval of that mean over seeds (rliable resamples the seeds at each evaluation independently)."""
    import numpy as np

    array = np.asarray(curves, dtype=float)
    point, interval = bootstrap(array[:, None, :], lambda x: x.mean(axis=0)[0])
    return point, interval[0], interval[1]


def row_statistics(row: str, data: dict[str, Any]) -> dict[str, Any]:
    """One row on one task: seeds (and the seeds asked), mean and IQM of the final returns with the IQM's interval,
    the best evaluation (mean over seeds of each seed's highest) and the mean of each seed's last five evaluations.
    Users get the final policy, so the final return is the score; the other two show how much it swings."""
    finals = [float(x) for x in data["final_returns"]]
    iqm, ci = iqm_interval([[x] for x in finals])
    return {"seeds": len(finals), "seeds_asked": seeds_asked(row), "mean_final_return": statistics.mean(finals),
            "iqm_final_return": iqm, "iqm_ci": ci,
            "best_evaluation": statistics.mean(max(curve) for curve in data["eval_returns"]),
            "mean_last_five_evaluations": statistics.mean(statistics.mean(c[-5:]) for c in data["eval_returns"])}


def task_statistics(task: str, entry: dict[str, Any]) -> dict[str, Any]:
    """A locomotion task's rows (those with runs), the rows without runs yet, the published 100k figures and how far
    the best polyak row (by mean final return) is from them (relative: 0.1 = 10% above)."""
    rows = {row: row_statistics(row, entry["rows"][row]) for row in rows_of(task) if row in entry["rows"]}
    published = PUBLISHED_100K[task]
    result: dict[str, Any] = {"rows": rows, "rows_without_runs": [r for r in rows_of(task) if r not in rows],
                              "published_100k": {"best": published.best, "best_method": published.best_method,
                                                 "crossq_paper": published.crossq_paper, "mrq": published.mrq},
                              "best_polyak_row": None}
    polyak_rows = [row for row in rows if row.startswith("polyak_")]
    if polyak_rows:
        best = max(polyak_rows, key=lambda row: rows[row]["mean_final_return"])
        score = rows[best]["mean_final_return"]
        result["best_polyak_row"] = {
            "row": best, "mean_final_return": score, "vs_crossq_paper": score / published.crossq_paper - 1,
            "vs_best_published": score / published.best - 1, "vs_mrq": score / published.mrq - 1}
    return result


def normalized_score(task: str, score: float) -> float:
    """(score - random-policy score) / (best published 100k score - random-policy score): 0 is a random policy,
    1 the best published figure."""
    random = RANDOM_SCORES[task]
    return (score - random) / (PUBLISHED_100K[task].best - random)


def final_matrix(suite: dict[str, Any], row: str, tasks: list[str], normalize: bool) -> Any:
    """The row's final returns as a (seeds x tasks) array: the lowest ``k`` seed numbers on each task, ``k`` the
    fewest seeds the row has on any of them (rliable's bootstrap needs as many runs on every task, and every task
    then weighs the same)."""
    import numpy as np

    per_task = [suite["tasks"][task]["rows"][row]["final_returns"] for task in tasks]  # collect() sorts by seed
    count = min(len(finals) for finals in per_task)
    return np.array([[normalized_score(task, x) if normalize else x for x in finals[:count]]
                     for task, finals in zip(tasks, per_task, strict=True)]).T


def tasks_with_runs(suite: dict[str, Any], *rows: str) -> list[str]:
    """The locomotion tasks the cross-task statistics of ``rows`` use: those on which every one of them has at least
    DEFAULT_SEEDS_ASKED seeds, or, while no task has that many, those on which every one has runs. A task where a
    row has one seed would otherwise cut every task to one seed (``final_matrix`` takes as many on each)."""
    def seeds(task: str, row: str) -> int:
        return len(suite["tasks"].get(task, {}).get("rows", {}).get(row, {}).get("final_returns", []))

    with_runs = [task for task in SAMPLE_EFFICIENCY_TASKS if all(seeds(task, row) for row in rows)]
    enough = [task for task in with_runs if all(seeds(task, row) >= DEFAULT_SEEDS_ASKED for row in rows)]
    return enough or with_runs


def normalized_iqm(suite: dict[str, Any], row: str) -> dict[str, Any]:
    """The IQM of the row's normalized final returns pooled over the locomotion tasks it has runs on (named in
    ``tasks``: rows on different tasks do not compare), with its stratified bootstrap interval."""
    tasks = tasks_with_runs(suite, row)
    if not tasks:
        return {"tasks": [], "seeds_per_task": 0, "iqm": None, "ci": None}
    matrix = final_matrix(suite, row, tasks, normalize=True)
    iqm, ci = iqm_interval(matrix)
    return {"tasks": tasks, "seeds_per_task": int(matrix.shape[0]), "iqm": iqm, "ci": ci}


def probability_of_improvement(suite: dict[str, Any], row: str, over: str) -> dict[str, Any]:
    """rliable's probability of improvement of ``row`` over ``over`` (per task the probability that a run of one
    beats a run of the other, Mann-Whitney, averaged over tasks) with its bootstrap interval (the runs of both rows
    resampled independently), on the locomotion tasks where both rows have runs (named in ``tasks``)."""
    import numpy as np
    from rliable import metrics

    tasks = tasks_with_runs(suite, row, over)
    result: dict[str, Any] = {"row": row, "over": over, "tasks": tasks, "seeds_per_task": {}, "probability": None,
                              "ci": None}
    if not tasks:
        return result
    mine, theirs = (final_matrix(suite, name, tasks, normalize=False) for name in (row, over))
    point, interval = bootstrap([mine, theirs], lambda x, y: np.array([metrics.probability_of_improvement(x, y)]))
    result.update(seeds_per_task={row: int(mine.shape[0]), over: int(theirs.shape[0])},
                  probability=float(point[0]), ci=[float(interval[0, 0]), float(interval[1, 0])])
    return result


def stability_ratio(eval_returns: list[list[float]]) -> float | None:
    """Mean over seeds of (mean of the seed's last five evaluations / its best evaluation): 1.0 when every seed ends
    at its best, lower the more the final policies fell from what they reached; None when a best is not positive."""
    ratios = [statistics.mean(curve[-5:]) / max(curve) for curve in eval_returns if max(curve) > 0]
    return statistics.mean(ratios) if len(ratios) == len(eval_returns) else None


def recommendation(suite: dict[str, Any]) -> dict[str, Any]:
    """The rule behind the recommended row (``CANDIDATE_ROWS``, ``STABILITY_FLOOR``): per candidate, on the tasks
    where every candidate has runs, the IQM of its normalized final returns with its interval, the stability ratio
    per task and its lowest, and the median CPU minutes per 100k env steps; ``pick`` is the candidate with the highest
    IQM (None when no task has runs of all), ``pick_is_stable`` whether its lowest stability reaches the floor. The
    shipped recommended row (the pick through its averaged actor; ``shipped_is_stable``, None without runs there) and
    the baseline row are listed beside them when they have runs on those tasks, not as candidates."""
    tasks = tasks_with_runs(suite, *CANDIDATE_ROWS)
    result: dict[str, Any] = {"candidates": list(CANDIDATE_ROWS), "stability_floor": STABILITY_FLOOR,
                              "tasks": tasks, "rows": {}, "pick": None, "pick_is_stable": None}
    if not tasks:
        return result
    def runs_everywhere(row: str) -> bool:
        return all(row in suite["tasks"][task]["rows"] for task in tasks)

    listed = [*CANDIDATE_ROWS, *(row for row in (RECOMMENDED_ROW, BASELINE_ROW)
                                 if row not in CANDIDATE_ROWS and runs_everywhere(row))]
    for row in listed:
        matrix = final_matrix(suite, row, tasks, normalize=True)
        iqm, ci = iqm_interval(matrix)
        per_task = {task: stability_ratio(suite["tasks"][task]["rows"][row]["eval_returns"]) for task in tasks}
        known = [x for x in per_task.values() if x is not None]
        cpu_minutes = [seconds / 60 * 100_000 / suite["tasks"][task]["budget"] for task in tasks
                       for seconds in suite["tasks"][task]["rows"][row]["cpu_seconds"] if seconds is not None]
        result["rows"][row] = {
            "seeds_per_task": int(matrix.shape[0]), "normalized_iqm": iqm, "ci": ci, "stability": per_task,
            "lowest_stability": min(known) if len(known) == len(per_task) else None,
            "cpu_minutes_per_100k": statistics.median(cpu_minutes) if cpu_minutes else None,
            "candidate": row in CANDIDATE_ROWS}
    pick = max(CANDIDATE_ROWS, key=lambda row: result["rows"][row]["normalized_iqm"])
    result["pick"] = pick
    result["pick_is_stable"] = (result["rows"][pick]["lowest_stability"] or 0) >= STABILITY_FLOOR
    shipped = result["rows"].get(RECOMMENDED_ROW)
    result["shipped_is_stable"] = None if shipped is None else (shipped["lowest_stability"] or 0) >= STABILITY_FLOOR
    return result


def suite_statistics(suite: dict[str, Any]) -> dict[str, Any]:
    """suite.json's ``statistics``: per locomotion task and row the final-return statistics, the published figures
    and gaps; across tasks each row's IQM of normalized scores and the recommended row's probability of improvement
    over the baseline; the bootstrap settings."""
    empty: dict[str, Any] = {"rows": {}}
    return {
        "bootstrap": {"library": "rliable", "method": "stratified percentile bootstrap over runs",
                      "reps": BOOTSTRAP_REPS, "confidence": CONFIDENCE, "numpy_global_seed": BOOTSTRAP_SEED},
        "score": "final return: each seed's last evaluation (the policy a user gets)",
        "iqm": "rliable aggregate_iqm: scipy trim_mean cutting 25% at each end (3 values: their mean)",
        "normalization": {"formula": "(final return - random) / (best published 100k - random)",
                          "random_scores": RANDOM_SCORES, "random_scores_source": RANDOM_SCORES_SOURCE},
        "recommended_row": RECOMMENDED_ROW, "baseline_row": BASELINE_ROW,
        "seeds_asked": {row: seeds_asked(row) for row in ROWS},
        "tasks": {task: task_statistics(task, suite["tasks"].get(task, empty)) for task in SAMPLE_EFFICIENCY_TASKS},
        "normalized_iqm": {row: normalized_iqm(suite, row) for row in ROWS if tasks_with_runs(suite, row)},
        "probability_of_improvement": probability_of_improvement(suite, RECOMMENDED_ROW, BASELINE_ROW),
        "recommendation": recommendation(suite),
        "averaged_against_live": averaged_against_live(suite),
    }


def percent(fraction: float) -> str:
    return f"{fraction * 100:+.0f}%"


def interval_text(ci: list[float], digits: int) -> str:
    return f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def statistics_markdown(stats: dict[str, Any]) -> str:
    """suite.md's statistics section: the per-task table, a line per task with the published figures and gaps, the
    normalized IQMs and the probability of improvement."""
    settings = stats["bootstrap"]
    lines = [
        "## Statistics of the final return on the locomotion tasks (100k env steps)", "",
        f"The score is the final return (each seed's last evaluation: the policy a user gets). IQM: {stats['iqm']}. "
        f"Intervals: rliable's {settings['method']}, {settings['reps']:,} resamples, "
        f"{settings['confidence']:.0%} level, numpy's global RNG seeded with {settings['numpy_global_seed']}. "
        "Best evaluation: mean over seeds of each seed's highest evaluation. Rows short of the seeds the issue asks "
        f"({seeds_asked(RECOMMENDED_ROW)} for {RECOMMENDED_ROW} and {BASELINE_ROW}, {DEFAULT_SEEDS_ASKED} for the "
        "others) say so.", "",
        f"| task | row | seeds | mean final return | IQM final return [{settings['confidence']:.0%} CI] "
        "| best evaluation | mean of the last 5 evaluations |",
        "| --- | --- | --- | --- | --- | --- | --- |"]
    for task, entry in stats["tasks"].items():
        for row, data in entry["rows"].items():
            seeds = f"{data['seeds']}" if data["seeds"] >= data["seeds_asked"] else \
                f"{data['seeds']} of {data['seeds_asked']}"
            lines.append(f"| {task} | {row} | {seeds} | {data['mean_final_return']:.1f} | "
                         f"{data['iqm_final_return']:.1f} {interval_text(data['iqm_ci'], 1)} | "
                         f"{data['best_evaluation']:.1f} | {data['mean_last_five_evaluations']:.1f} |")
        if not entry["rows"]:
            lines.append(f"| {task} | no runs yet | | | | | |")
            continue
        for row in entry["rows_without_runs"]:
            lines.append(f"| {task} | {row} | 0 of {seeds_asked(row)} | not run yet | | | |")
    lines += ["", "Published 100k figures (Gymnasium v4, so about) and the best polyak row by mean final return:", ""]
    for task, entry in stats["tasks"].items():
        published, best = entry["published_100k"], entry["best_polyak_row"]
        figures = (f"CrossQ paper {published['crossq_paper']:,}, MR.Q {published['mrq']:,}, best published "
                   f"{published['best']:,} ({published['best_method']})")
        if best is None:
            lines.append(f"- {task}: no polyak runs yet; {figures}.")
        else:
            lines.append(f"- {task}: {best['row']} {best['mean_final_return']:.1f} "
                         f"({seeds_text(entry['rows'][best['row']]['seeds'])}): "
                         f"{percent(best['vs_crossq_paper'])} vs the CrossQ paper, "
                         f"{percent(best['vs_best_published'])} vs the best published, "
                         f"{percent(best['vs_mrq'])} vs MR.Q; {figures}.")
    normalization = stats["normalization"]
    lines += ["", f"Across tasks: normalized score = {normalization['formula']}, random-policy scores from "
              f"{normalization['random_scores_source']}: "
              + ", ".join(f"{task} {score:g}" for task, score in normalization["random_scores"].items())
              + f". Each row's IQM pools its normalized final returns over the tasks where it has at least "
              f"{DEFAULT_SEEDS_ASKED} seeds (all the tasks it has runs on while it has that many on none; listed: "
              "IQMs over different tasks do not compare), the same number of seeds per task (the lowest seed "
              "numbers); the probability of improvement and the recommendation choose their tasks the same way.",
              "", f"| row | tasks | seeds per task | IQM normalized score [{settings['confidence']:.0%} CI] |",
              "| --- | --- | --- | --- |"]
    for row, data in stats["normalized_iqm"].items():
        lines.append(f"| {row} | {', '.join(data['tasks'])} | {data['seeds_per_task']} | {data['iqm']:.3f} "
                     f"{interval_text(data['ci'], 3)} |")
    poi = stats["probability_of_improvement"]
    if poi["probability"] is None:
        lines += ["", f"Probability of improvement of {poi['row']} over {poi['over']}: no task has runs of both."]
    else:
        seeds = ", ".join(f"{row} {count}" for row, count in poi["seeds_per_task"].items())
        lines += ["", f"Probability of improvement of {poi['row']} (the recommended row) over {poi['over']} "
                  f"(rliable, final returns): {poi['probability']:.2f} "
                  f"{interval_text(poi['ci'], 2)}, on {', '.join(poi['tasks'])} (seeds per task: {seeds})."]
    return "\n".join(lines + recommendation_markdown(stats["recommendation"])
                     + averaged_against_live_markdown(stats["averaged_against_live"])) + "\n"


def averaged_against_live(suite: dict[str, Any]) -> list[dict[str, Any]]:
    """Per run of ``RECOMMENDED_ROW`` that scored both policies: the final return, the mean of the last five
    evaluations and the stability of its averaged actor and of its live actor (the same training, the same start
    states), task by task in seed order."""
    runs = []
    for task, entry in suite["tasks"].items():
        data = entry["rows"].get(RECOMMENDED_ROW, {})
        for seed, curve, live in zip(data.get("seeds", []), data.get("eval_returns", []),
                                     data.get("live_eval_returns", []), strict=False):
            runs.append({"task": task, "seed": seed, **{
                f"{prefix}{name}": value for prefix, values in (("", curve), ("live_", live)) for name, value in (
                    ("final", values[-1]), ("last5", statistics.mean(values[-5:])),
                    ("stability", stability_ratio([values])))}})
    return runs


def averaged_against_live_markdown(runs: list[dict[str, Any]]) -> list[str]:
    """suite.md's section comparing the shipped row's two policies run by run."""
    lines = ["", f"## The averaged actor against the live actor, per {RECOMMENDED_ROW} run", "",
             f"Each {RECOMMENDED_ROW} run evaluates its averaged actor (`AgentConfig.actor_average`) and its live "
             f"actor on the same start states; the live actor's curve is that seed's {LIVE_ROWS[RECOMMENDED_ROW]} run "
             "when that row had none. Stability: the mean of the last five evaluations over the best.", ""]
    if not runs:
        return [*lines, "No run yet."]
    lines += ["| task | seed | final: averaged, live | last five: averaged, live | stability: averaged, live |",
              "| --- | --- | --- | --- | --- |"]
    for run in runs:
        stability = ", ".join("n/a" if run[key] is None else f"{run[key]:.2f}"
                              for key in ("stability", "live_stability"))
        lines.append(f"| {run['task']} | {run['seed']} | {run['final']:,.1f}, {run['live_final']:,.1f} | "
                     f"{run['last5']:,.1f}, {run['live_last5']:,.1f} | {stability} |")
    higher = sum(run["final"] > run["live_final"] for run in runs)
    steadier = sum(run["last5"] > run["live_last5"] for run in runs)
    return [*lines, "", f"The averaged actor ended higher on {higher} of {len(runs)} runs and had the higher mean of "
                        f"the last five evaluations on {steadier} of {len(runs)}."]


def recommendation_markdown(rule: dict[str, Any]) -> list[str]:
    """suite.md's lines on the rule that picks the recommended row, its table and its pick."""
    lines = ["", "## Choosing the recommended row", "",
             f"The rule: among {', '.join(rule['candidates'])}, on the tasks where all of them have runs, the highest "
             "IQM of normalized final returns. Its final policies must then keep what they reached: stability (mean "
             "over seeds of the mean of the last five evaluations divided by the best evaluation) at least "
             f"{rule['stability_floor']:g} on every task. {BASELINE_ROW} is listed for reference, not as a candidate.",
             ""]
    if not rule["tasks"]:
        return [*lines, "No task has runs of every candidate yet."]
    lines += [f"| row | seeds per task | IQM normalized score [95% CI] on {', '.join(rule['tasks'])} | stability per "
              "task | lowest | CPU minutes per 100k steps (median) |", "| --- | --- | --- | --- | --- | --- |"]
    for row, data in rule["rows"].items():
        per_task = ", ".join("n/a" if x is None else f"{x:.2f}" for x in data["stability"].values())
        lowest = "n/a" if data["lowest_stability"] is None else f"{data['lowest_stability']:.2f}"
        cpu = "" if data["cpu_minutes_per_100k"] is None else f"{data['cpu_minutes_per_100k']:.1f}"
        name = row if data["candidate"] else f"{row} (shipped)" if row == RECOMMENDED_ROW else f"{row} (reference)"
        lines.append(f"| {name} | {data['seeds_per_task']} | {data['normalized_iqm']:.3f} "
                     f"{interval_text(data['ci'], 3)} | {per_task} | {lowest} | {cpu} |")
    pick = rule["pick"]
    stability = ("its final policies keep what they reached" if rule["pick_is_stable"] else
                 f"but its final policies still fall from their best (stability below {rule['stability_floor']:g})")
    verdict = (f"The rule picks **{pick}** on {', '.join(rule['tasks'])}, {stability}. The shipped recommended row, "
               f"{RECOMMENDED_ROW}, is {LIVE_ROWS[RECOMMENDED_ROW]} evaluated and shipped through its averaged actor "
               "(`AgentConfig.actor_average`; why: benchmarks/results/actor_average.md)")
    if rule.get("shipped_is_stable") is None:
        verdict += "; it has no runs on all of these tasks yet."
    else:
        verdict += (f": its final policies {'keep' if rule['shipped_is_stable'] else 'still fall from'} what they "
                    f"reached (lowest stability {rule['rows'][RECOMMENDED_ROW]['lowest_stability']:.2f}).")
    return [*lines, "", verdict]


README_ROWS = (RECOMMENDED_ROW, BASELINE_ROW, "polyak_crossq_sac", "polyak_crossq", "polyak_td7", "polyak_td3",
               "sb3_td3")
README_BEGIN = "<!-- suite table: written by python benchmarks/suite.py --report from benchmarks/results/suite.json -->"
README_END = "<!-- end of the suite table -->"


def readme_table(suite: dict[str, Any]) -> str:
    """The README's table of the five locomotion tasks at 100k env steps: per task and row the mean final return and
    its seeds (the recommended row also its IQM's 95% interval), then the CrossQ paper's and the best published
    100k figures; a row without runs on a task shows a dash."""
    header = ["task", *(f"{row} (recommended)" if row == RECOMMENDED_ROW else row for row in README_ROWS),
              "CrossQ paper", "best published"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for task in SAMPLE_EFFICIENCY_TASKS:
        rows = suite["tasks"].get(task, {}).get("rows", {})
        cells = [task]
        for row in README_ROWS:
            if row not in rows:
                cells.append("–")
                continue
            finals = rows[row]["final_returns"]
            cell = f"{statistics.mean(finals):,.0f} ({len(finals)})"
            if row == RECOMMENDED_ROW:
                low, high = iqm_interval([[x] for x in finals])[1]
                cell += f" [{low:,.0f}, {high:,.0f}]"
            cells.append(cell)
        published = PUBLISHED_100K[task]
        cells += [f"{published.crossq_paper:,}", f"{published.best:,} ({published.best_method})"]
        lines.append("| " + " | ".join(cells) + " |")
    poi = probability_of_improvement(suite, RECOMMENDED_ROW, BASELINE_ROW)
    if poi["probability"] is not None:
        seeds = ", ".join(f"{count} of {row}" for row, count in poi["seeds_per_task"].items())
        lines += ["", f"Probability that a {RECOMMENDED_ROW} run beats a {BASELINE_ROW} run (rliable's probability "
                  f"of improvement, final returns): {poi['probability']:.2f} {interval_text(poi['ci'], 2)} on "
                  f"{', '.join(poi['tasks'])} ({seeds} seeds per task)."]
    return "\n".join(lines)


def write_readme_table(suite: dict[str, Any], readme: Path) -> bool:
    """Replace the README's block between README_BEGIN and README_END with ``readme_table``; False (and nothing
    written) when the README has no such block."""
    text = readme.read_text()
    if README_BEGIN not in text or README_END not in text:
        return False
    before, rest = text.split(README_BEGIN, 1)
    after = rest.split(README_END, 1)[1]
    readme.write_text(f"{before}{README_BEGIN}\n{readme_table(suite)}\n{README_END}{after}")
    return True


def report() -> dict[str, Any]:
    suite = collect()
    suite["statistics"] = suite_statistics(suite)
    (RESULTS / "suite.json").write_text(json.dumps(suite, indent=1) + "\n")
    (RESULTS / "suite.md").write_text(markdown_table(suite) + "\n" + efficiency_table(suite) + "\n"
                                      + statistics_markdown(suite["statistics"]))
    plot(suite)
    plot_wall_time(suite)
    plot_aggregate(suite)
    if RESULTS == ROOT / "benchmarks" / "results":  # the committed results: keep the README's table in step
        write_readme_table(suite, ROOT / "README.md")
    print(markdown_table(suite))
    return suite


def missing_runs(suite: dict[str, Any]) -> list[dict[str, Any]]:
    """The frontier issue's runs still to do on the locomotion tasks (seeds 0 to ``seeds_asked(row) - 1`` of every
    row the task runs), each with an estimate of its CPU minutes: the median of the row's finished runs on that
    task, else on any locomotion task (for a ``LIVE_ROWS`` row, then its live row's, the same training), else None;
    0 for a seed that a ``LIVE_ROWS`` run still to do will write (``from_row``)."""
    def cpu_minutes(row: str, tasks: list[str]) -> list[float]:
        return [seconds / 60 for task in tasks for seconds in
                suite["tasks"].get(task, {}).get("rows", {}).get(row, {}).get("cpu_seconds", []) if seconds]

    missing = []
    for task in SAMPLE_EFFICIENCY_TASKS:
        for row in rows_of(task):
            seeds = [seed for seed in range(seeds_asked(row)) if not result_path(task, row, seed).exists()]
            same_training = [row, *([LIVE_ROWS[row]] if row in LIVE_ROWS else [])]  # the live row's runs cost the same
            estimate = next((found for found in (cpu_minutes(name, tasks) for name in same_training
                                                 for tasks in ([task], list(SAMPLE_EFFICIENCY_TASKS))) if found), [])
            for seed in seeds:
                source = next((source for source, live in LIVE_ROWS.items() if live == row
                               and seed < seeds_asked(source) and not result_path(task, source, seed).exists()), None)
                missing.append({"task": task, "row": row, "seed": seed, "from_row": source,
                                "cpu_minutes": 0.0 if source else statistics.median(estimate) if estimate else None})
    return missing


def todo_text(missing: list[dict[str, Any]]) -> str:
    """``--todo``'s table: per task and row the missing seeds and their estimated CPU minutes, then the total."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in missing:
        groups.setdefault((run["task"], run["row"]), []).append(run)
    lines = ["| task | row | missing seeds | estimated CPU minutes each |", "| --- | --- | --- | --- |"]
    for (task, row), runs in groups.items():
        own = [r for r in runs if not r["from_row"]]
        estimate = own[0]["cpu_minutes"] if own else None
        cells = [] if not own else [f"{' '.join(str(r['seed']) for r in own)} | "
                                    f"{'unknown' if estimate is None else f'{estimate:.0f}'}"]
        shared = [r for r in runs if r["from_row"]]
        if shared:
            cells.append(f"{' '.join(str(r['seed']) for r in shared)} | 0 (the live actor of the "
                         f"{shared[0]['from_row']} runs of these seeds)")
        lines += [f"| {task} | {row} | {cell} |" for cell in cells]
    known = [r["cpu_minutes"] for r in missing if r["cpu_minutes"] is not None]
    unknown = len(missing) - len(known)
    shared = sum(1 for r in missing if r["from_row"])
    lines += ["", f"{len(missing)} runs missing: about {sum(known) / 60:.1f} CPU hours for {len(known)} of them"
              + (f" ({shared} of them at no cost: another row's runs write them)" if shared else "")
              + (f", {unknown} without an estimate (no finished run of their row yet)" if unknown else "") + "."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(TASKS), default=list(TASKS), metavar="TASK")
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--report", action="store_true", help="only rebuild suite.json and the plots")
    parser.add_argument("--todo", action="store_true",
                        help="list the locomotion runs still missing (the seeds each row is asked for) with their "
                             "estimated CPU minutes, and exit")
    parser.add_argument("--force", action="store_true",
                        help="also re-run what already has a result file (replaced when the new run finishes)")
    parser.add_argument("--out-dir", type=Path, default=RESULTS,
                        help="write the result files, suite.json, suite.md and the plots here (default: "
                             "benchmarks/results, the committed results)")
    parser.add_argument("--one", nargs=3, metavar=("TASK", "ROW", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    use_results_dir(args.out_dir.resolve())
    passed = ["--out-dir", str(RESULTS), *(["--force"] if args.force else [])]  # to each --one process
    if args.one:
        run_one(args.one[0], args.one[1], int(args.one[2]), force=args.force)
        return
    if args.todo:
        print(todo_text(missing_runs(collect())))
        return
    if not args.report:
        todo = runs_to_do(args.only, args.rows, args.seeds, args.force)
        print(f"{len(todo)} runs to do, {args.jobs} at a time", flush=True)
        environment = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")

        def launch(job: tuple[str, str, int]) -> int:
            task, row, seed = job
            return subprocess.run([sys.executable, __file__, "--one", task, row, str(seed), *passed],
                                  env=environment).returncode

        with ThreadPoolExecutor(args.jobs) as pool:
            failed = [job for job, code in zip(todo, pool.map(launch, todo), strict=True) if code != 0]
        if failed:
            print(f"failed: {failed}", flush=True)
    print(json.dumps({"tasks": {t: list(e["rows"]) for t, e in report()["tasks"].items()}}))


if __name__ == "__main__":
    main()
