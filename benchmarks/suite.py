"""The benchmark suite: polyak's rows (DDPG to CrossQ, the recommended one) beside SB3's TD3 and sb3-contrib's CrossQ.

Usage:
  python benchmarks/suite.py [--only TASK ...] [--rows ROW ...] [--seeds S ...] [--jobs 2]
  python benchmarks/suite.py --report          # only rebuild the report (suite.json, suite.md, plots, README table)
  python benchmarks/suite.py --only Hopper-v5 --rows polyak_td3 --out-dir DIR   # reproduce a row into DIR
  python benchmarks/suite.py --only Hopper-v5 --rows polyak_td3 --force   # re-run it over the committed results
  python benchmarks/suite.py --todo [--only TASK ...] [--rows ROW ...] [--seeds S ...]   # what is missing, its cost

A row of your own: a polyak row ``polyak_<name>`` trains ``configs/suite/<task stem>_<name>.gin`` (e.g.
``configs/suite/hopper_td3.gin`` for polyak_td3 on Hopper-v5), so a config of yours joins the suite as a gin file
there and its row name in ``ROWS`` (and ``SAMPLE_EFFICIENCY_ROWS`` for the five locomotion tasks only); write its
runs to ``--out-dir`` to keep them apart from the committed results.

The report's statistics (per-task IQMs with bootstrap intervals, normalized-score IQMs, probability of
improvement, the learning curves' intervals) use rliable (the ``bench`` extra), imported only by the report.

Each finished (task, row, seed) is written at once to ``benchmarks/results/suite/<task stem>/<row>_seed_<s>.json``
(``suite/hopper/`` for Hopper-v5; with the commit and the machine load) and a re-run skips it, so the table fills
over several sittings. Without ``--seeds`` each row runs the seeds it is asked for (``default_seeds``), so on the
committed results there is nothing to do, and the report is rebuilt only when a run finished or ``--report`` asks.
Every run trains in its own process with one torch thread; ``--jobs`` run at a time. A run that fails or stops
before its budget writes no result file, and the command then exits with status 1; a run cut short (Ctrl-C, a
sitting's end) goes on at the next call: an SB3 row from its last evaluation's snapshot, a polyak row from the
start (its run directory is removed, and the command says so).

Every row is evaluated the same way: the deterministic policy for 10 episodes every 5,000 env steps (1,000 on the
20k-step tasks), each evaluation on new start states drawn from a seeded stream (``polyak.evaluation``), so runs stay
reproducible and no evaluation replays another's starts. ``final_returns`` is, per seed, the mean return of the last
evaluation (at the budget). The polyak rows train ``configs/suite/<task>_<algo>.gin`` through the CLI; ``sb3_td3``
is SB3's TD3 built from the hyperparameters of ``configs/suite/<task>_td3.gin`` (networks, batch, learning rate,
noise, start steps, delays, tau, gamma, replay size), with the same evaluation function on a polyak-made env.

This module holds the suite's definitions (tasks, rows, seeds, paths, configs), trains one run and writes its result
file, and is the command line. The report is built by ``suite_report.py`` (suite.json, suite.md, the README's table,
``--todo``) from ``suite_stats.py``'s statistics and ``suite_plots.py``'s figures.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import sb3_snapshot
from common import (
    RunFailed,
    claim_holder,
    claimed,
    code_commit,
    load_average,
    machine_info,
    not_offered,
    read_metrics,
    run_jobs,
    sb3_deterministic_action,
    train_run,
)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"  # the committed results; --out-dir puts a run's elsewhere
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
STABILITY_SEEDS = 2

# The report's statistics (``suite_stats.suite_statistics``). The recommended row is the row of
# configs/recommended.gin: the row the rule (``suite_stats.recommendation``) picked (polyak_crossq_sac) with a 512-wide
# critic, evaluated and shipped through its averaged actor (AgentConfig.actor_average; benchmarks/critic_width.py
# chose both); the issue asks 5 seeds of it and of sb3_crossq on each locomotion task, 3 of the others. Its runs
# score the live actor too, on the same start states (``live_eval_returns``).
RECOMMENDED_ROW = "polyak_recommended"
BASELINE_ROW = "sb3_crossq"
SEEDS_ASKED = {RECOMMENDED_ROW: 5, BASELINE_ROW: 5}
DEFAULT_SEEDS_ASKED = 3


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


def seeds_asked(row: str) -> int:
    """The seeds the statistics issue asks of a row on each locomotion task."""
    return SEEDS_ASKED.get(row, DEFAULT_SEEDS_ASKED)


def default_seeds(task: str, row: str) -> list[int]:
    """The seeds a run of the suite does for a row when not told: the stability probe's rows 2 on its task, the
    recommended row and sb3_crossq 5 on the locomotion tasks, every other row 3 (what the committed results hold)."""
    if row in STABILITY_ROWS.get(task, ()):
        return list(range(STABILITY_SEEDS))
    return list(range(seeds_asked(row) if task in SAMPLE_EFFICIENCY_TASKS else DEFAULT_SEEDS_ASKED))


def seeds_text(count: int) -> str:
    return f"{count} seed" + ("" if count == 1 else "s")


def task_runs_dir(results: Path, task: str) -> Path:
    """The folder of a task's run files under a results directory (``RESULTS`` or an ``--out-dir``)."""
    return results / "suite" / TASKS[task].config_stem


def result_path(results: Path, task: str, row: str, seed: int) -> Path:
    return task_runs_dir(results, task) / f"{row}_seed_{seed}.json"


def runs_to_do(results: Path, tasks: list[str], rows: list[str], seeds: list[int] | None,
               force: bool = False) -> list[tuple[str, str, int]]:
    """The (task, row, seed)s a task runs (``seeds``, or each row's ``default_seeds`` when None), less those with a
    result file under ``results`` unless ``force``."""
    return [(task, row, seed) for task in tasks for row in rows if row in rows_of(task)
            for seed in (default_seeds(task, row) if seeds is None else seeds)
            if force or not result_path(results, task, row, seed).exists()]


def config_file(task: str, algo: str) -> Path:
    return CONFIGS / f"{TASKS[task].config_stem}_{algo}.gin"


def recommended_config_mismatches(wanted: dict[str, Any], read: Callable[[Any], dict[str, Any]], root: Path = ROOT,
                                  config_of: Callable[[str, str], Path] = config_file) -> list[str]:
    """Each setting in ``wanted`` that ``configs/recommended.gin`` or a suite config of the recommended row binds
    otherwise, one line each. ``read`` takes a config's built settings (``polyak.ginconf``) to a dict with the keys of
    ``wanted``; a study passes ``root`` and ``config_of`` from its own module so its tests can point them at copies."""
    from polyak.ginconf import build_configs_from_gin, parse_gin

    mismatches = []
    files = [config_of(task, "recommended") for task in SAMPLE_EFFICIENCY_TASKS] + [root / "configs/recommended.gin"]
    for path in files:
        parse_gin(path, [])
        settings = read(build_configs_from_gin())
        mismatches += [f"{path.relative_to(root)}: {key} is {settings[key]}, the rerun's is {value}"
                       for key, value in wanted.items() if settings[key] != value]
    return mismatches


# ---------------------------------------------------------------------------------------------- one run
def suite_run_dir(task: str, row: str, seed: int, results: Path = RESULTS) -> Path:
    """Where a suite run keeps its files while it trains: polyak's run directory, an SB3 row's snapshots. One per
    results directory (``runs/`` beside an ``--out-dir``'s result files), so two runs of the same seed into two
    results directories never share one."""
    runs = ROOT / "runs" / "suite" if results.resolve() == RESULTS else results / "runs"
    return runs / TASKS[task].config_stem / f"{row}_seed_{seed}"


class IncompleteRun(Exception):
    """A run whose last evaluation is not at its task's budget: it writes no result file."""


def check_complete(task: str, row: str, seed: int, eval_steps: list[int]) -> None:
    """Raise :class:`IncompleteRun` unless the run's evaluations end at the task's budget."""
    budget = TASKS[task].budget
    last = eval_steps[-1] if eval_steps else 0
    if last != budget:
        raise IncompleteRun(f"{task} {row} seed {seed}: its last evaluation is at {last:,} env steps, not the "
                            f"budget of {budget:,}; no result written")


def run_polyak(task: str, row: str, seed: int, extra_bindings: tuple[str, ...] = (),
               run_dir: Path | None = None) -> dict[str, Any]:
    """``polyak train`` on the task's shipped config; the trainer evaluates with the suite's protocol.
    ``extra_bindings`` (a study's change, e.g. ``benchmarks/critic_width.py``) go after the protocol's."""
    algo = row.removeprefix("polyak_")
    spec = TASKS[task]
    run_dir = run_dir or suite_run_dir(task, row, seed)
    bindings = [f"TrainerConfig.max_env_steps = {spec.budget}", f"TrainerConfig.eval_interval = {spec.eval_every}",
                f"TrainerConfig.eval_episodes = {EVAL_EPISODES}", "TrainerConfig.progress_bar = False",
                *extra_bindings]
    started = time.time()
    summary = train_run(str(config_file(task, algo)), seed, run_dir, bindings, threads=1, show_errors=True)
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


def sb3_crossq_kwargs(task: str, critic_width: int | None = None) -> dict[str, Any]:
    """sb3-contrib CrossQ's arguments from polyak's CrossQ config of the task: the same widths, learning rate,
    batch, start steps, policy delay and batch-renormalization settings. sb3-contrib's CrossQ is the SAC variant
    (a stochastic actor with entropy tuning); polyak's is the authors' TD3 mode, so the exploration differs.
    ``critic_width`` replaces the width of every critic layer (``benchmarks/baseline_width.py``)."""
    from polyak.ginconf import build_configs_from_gin, parse_gin

    parse_gin(config_file(task, "crossq"), [])
    configs = build_configs_from_gin()
    agent, trainer, critic = configs.agent, configs.trainer, configs.critic
    assert configs.actor.lr == critic.lr and critic.batch_renorm and agent.algorithm.value == "crossq"
    critic_sizes = list(critic.hidden_sizes) if critic_width is None else [critic_width] * len(critic.hidden_sizes)
    return {
        "learning_rate": critic.lr, "buffer_size": configs.replay.capacity, "learning_starts": trainer.start_steps,
        "batch_size": agent.batch_size, "gamma": agent.gamma, "train_freq": trainer.learn_every,
        "gradient_steps": trainer.learn_steps, "policy_delay": agent.policy_delay,
        "policy_kwargs": {"net_arch": {"pi": list(configs.actor.hidden_sizes), "qf": critic_sizes},
                          "batch_norm_momentum": critic.batch_renorm_momentum,
                          "renorm_warmup_steps": critic.batch_renorm_warmup, "n_critics": agent.n_critics},
    }


def run_sb3(task: str, row: str, seed: int, critic_width: int | None = None,
            snapshots: Path | None = None,
            after_snapshot: Callable[[Path, Any], bool] | None = None) -> dict[str, Any]:
    """SB3's TD3 (``sb3_td3``) or sb3-contrib's CrossQ (``sb3_crossq``, its critic ``critic_width`` wide if given),
    evaluated with polyak's protocol. With ``snapshots`` (a folder) it snapshots itself after each evaluation and
    goes on from a snapshot found there (``sb3_snapshot``); the folder is removed once the run is done.
    ``after_snapshot(snapshot_folder, model)`` runs after each snapshot (to keep its model, say); returning False
    ends the run there, before its budget."""
    import gymnasium as gym
    import numpy as np
    from stable_baselines3.common.callbacks import BaseCallback

    from polyak.envs import make_env
    from polyak.envs.factory import resolve_env_id
    from polyak.evaluation import evaluation_seed, run_episodes
    from polyak.seeding import run_streams

    if critic_width is not None and row != "sb3_crossq":
        raise ValueError(f"critic_width is for sb3_crossq, not {row}")
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

        settings = sb3_crossq_kwargs(task, critic_width)
        model = CrossQ("MlpPolicy", env, seed=seed, device="cpu", verbose=0, **settings)
        library, algorithm, source = "sb3-contrib", "CrossQ (SAC variant)", config_file(task, "crossq")
    eval_env = make_env(spec.env_id, 1)  # actions in [-1, 1], as the actors output them
    stream = run_streams(seed).evaluation_seed  # the start states polyak's run of this seed is evaluated on
    steps: list[int] = []
    returns: list[float] = []
    seconds: list[float] = []
    resumed_at: list[int] = []
    earlier = {"wall_seconds": 0.0, "cpu_seconds": 0.0}  # spent in sittings before a resume
    earlier_commits: list[dict[str, Any]] = []  # the code each earlier sitting trained with
    this_commit = code_commit()
    identity = {"task": task, "row": row, "seed": seed, "budget": spec.budget, "settings": settings}
    loaded = None if snapshots is None else sb3_snapshot.load(snapshots, type(model), env, identity, seed)
    if loaded is not None:
        model, progress = loaded
        steps, returns, seconds = progress["eval_steps"], progress["eval_returns"], progress["eval_wall_seconds"]
        resumed_at = [*progress["resumed_at_steps"], model.num_timesteps]
        earlier = {key: progress[key] for key in earlier}
        earlier_commits = progress.get("sitting_commits", [])  # absent from snapshots taken before it was kept
        print(f"{task} {row} seed {seed}: resumed at {model.num_timesteps} env steps from {snapshots}", flush=True)
    cpu_started = cpu_seconds()

    def act(obs: np.ndarray) -> np.ndarray:
        return sb3_deterministic_action(model, obs)

    class Evaluate(BaseCallback):
        snapshot_due = False
        go_on = True

        def _on_step(self) -> bool:
            if not self.go_on:
                return False
            if self.num_timesteps % spec.eval_every == 0:
                model.policy.set_training_mode(False)
                scores = run_episodes(eval_env, act, EVAL_EPISODES, evaluation_seed(stream, len(returns)))
                steps.append(self.num_timesteps)
                returns.append(float(np.mean(scores)))
                seconds.append(round(time.perf_counter() - started, 2))
                print(f"{task} {row} seed {seed}: {self.num_timesteps} env steps, evaluated {returns[-1]:.1f}",
                      flush=True)  # the only sign of life of an sb3 run that takes an hour or more
                self.snapshot_due = snapshots is not None
            return True

        def _on_rollout_start(self) -> None:  # the evaluated step's transition is stored and trained on by now
            if self.snapshot_due:
                self.snapshot_due = False
                snapshot = sb3_snapshot.save(snapshots, model, {
                    "identity": identity, "eval_steps": steps, "eval_returns": returns, "eval_wall_seconds": seconds,
                    "resumed_at_steps": resumed_at, "sitting_commits": [*earlier_commits, this_commit],
                    "wall_seconds": time.perf_counter() - started,
                    "cpu_seconds": cpu_seconds() - cpu_started + earlier["cpu_seconds"]})
                if after_snapshot is not None:
                    self.go_on = after_snapshot(snapshot, model)

    started = time.perf_counter() - earlier["wall_seconds"]
    model.learn(total_timesteps=spec.budget - model.num_timesteps, callback=Evaluate(),
                reset_num_timesteps=loaded is None)
    wall = time.perf_counter() - started
    eval_env.close()
    env.close()
    if snapshots is not None:
        sb3_snapshot.discard(snapshots)
    resumed = {"resumed_at_steps": resumed_at, "cpu_seconds_in_earlier_sittings": earlier["cpu_seconds"],
               "earlier_sittings_code_commits": earlier_commits}
    return {**(resumed if resumed_at else {}),
            "eval_steps": steps, "eval_returns": returns, "eval_wall_seconds": seconds, "wall_seconds": round(wall, 3),
            "settings": {"library": library, "library_version": metadata.version(library), "algorithm": algorithm,
                         **settings,
                         "from_config": str(source.relative_to(ROOT))}}


def cpu_seconds() -> float:
    """CPU time of this process and its finished children: a speed measure that load on the shared CPU does not
    inflate the way it inflates wall time (one torch thread per run)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_one(results: Path, task: str, row: str, seed: int, force: bool = False) -> None:
    """Train one (task, row, seed) in this process and write its result file, unless another runner has claimed
    it (two shells, two sittings): then it is skipped, not started again over the other's run directory. A result
    file already there is kept, or with ``force`` replaced when the new run finishes."""
    path = result_path(results, task, row, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with claimed(path) as mine:
        if not mine:
            print(f"{task} {row} seed {seed}: {claim_holder(path)} is training it; skipped", flush=True)
        elif force or not path.exists():
            _train_and_write(results, task, row, seed, path)


def _train_and_write(results: Path, task: str, row: str, seed: int, path: Path) -> None:
    import torch

    torch.set_num_threads(1)
    load_before = load_average()
    commit = code_commit()  # at the start: later commits may land while it trains
    cpu_before = cpu_seconds()
    spec = TASKS[task]
    run_dir = suite_run_dir(task, row, seed, results)  # polyak's run directory, or an sb3 row's snapshots
    runner: Callable[[], dict[str, Any]] = (
        (lambda: run_sb3(task, row, seed, snapshots=run_dir)) if row.startswith("sb3_")
        else (lambda: run_polyak(task, row, seed, run_dir=run_dir))
    )
    result = runner()
    check_complete(task, row, seed, result["eval_steps"])
    result.update({
        "task": task, "row": row, "seed": seed, "budget": spec.budget,
        "final_return": result["eval_returns"][-1],
        "env_steps_per_s": round(spec.budget / result["wall_seconds"], 2),
        "cpu_seconds": round(cpu_seconds() - cpu_before + result.pop("cpu_seconds_in_earlier_sittings", 0.0), 2),
        "code_commit": commit, "machine": machine_info(),
        "load_average": {"before": load_before, "after": load_average()},
        "finished": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    })
    result["env_steps_per_cpu_s"] = round(spec.budget / max(result["cpu_seconds"], 1e-9), 2)
    write_result(path, result)
    print(f"{task} {row} seed {seed}: final {result['final_return']:.1f}, {result['env_steps_per_s']} env steps/s",
          flush=True)


def write_result(path: Path, result: dict[str, Any]) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(result, indent=1) + "\n")
    temporary.replace(path)


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def rows_not_run(tasks: list[str], rows: list[str]) -> list[str]:
    """One line per asked row that none of the asked tasks runs (``rows_of``), with the tasks that do run it."""
    where = not_offered(rows, tasks, {task: rows_of(task) for task in TASKS})
    return [f"{row} does not run on {', '.join(tasks)}: the suite runs it on {', '.join(on)}"
            for row, on in where.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog="A row of your own, the statistics and the protocol: the module "
                                            "docstring and docs/benchmarks.md.")
    parser.add_argument("--only", nargs="+", choices=list(TASKS), default=None, metavar="TASK",
                        help=f"the tasks to run (default: all): {', '.join(TASKS)}")
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=None, metavar="ROW",
                        help=f"the rows to run (default: every row each task runs): {', '.join(ROWS)}")
    parser.add_argument("--seeds", nargs="+", type=int, default=None,
                        help="default: the seeds each row is asked for (5 for the recommended row and sb3_crossq on "
                             "the locomotion tasks, 2 for the InvertedPendulum stability rows, else 3)")
    parser.add_argument("--jobs", type=positive_int, default=2,
                        help="runs at a time, each in its own process with one torch thread (default: 2)")
    parser.add_argument("--report", action="store_true",
                        help="only rebuild the report from the result files, over every task: suite.json, suite.md "
                             "and the plots (for the committed results also the README's table and "
                             "docs/benchmarks.md's)")
    parser.add_argument("--todo", action="store_true",
                        help="list the runs still missing with their estimated CPU minutes, and exit (default: the "
                             "locomotion tasks' rows at the seeds each is asked for; --only, --rows and --seeds "
                             "narrow or widen it)")
    parser.add_argument("--force", action="store_true",
                        help="also re-run what already has a result file (replaced when the new run finishes)")
    parser.add_argument("--out-dir", type=Path, default=RESULTS,
                        help="write the result files, suite.json, suite.md and the plots here, and keep the runs' "
                             "own files in its runs/ (default: benchmarks/results, the committed results, with the "
                             "runs' files in runs/suite)")
    parser.add_argument("--one", nargs=3, metavar=("TASK", "ROW", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    results: Path = args.out_dir.resolve()
    if (args.report or args.todo) and not args.one and not results.is_dir():
        parser.error(f"--out-dir {args.out_dir} does not exist: there are no result files to "
                     f"{'report' if args.report else 'count'}")
    if args.rows is not None and not args.one and not args.report:
        not_run = rows_not_run(args.only or list(TASKS), args.rows)
        if len(not_run) == len(args.rows):
            parser.error("; ".join(not_run))
        for line in not_run:
            print(f"suite: {line}; left out", file=sys.stderr, flush=True)
    try:
        sys.exit(_run(args, results))
    except KeyboardInterrupt:
        if not args.one:  # each --one process is interrupted too; the command says it once
            print("interrupted: finished runs kept their result files; the same command goes on from there (an SB3 "
                  "row from its last evaluation's snapshot, a polyak row from its start)", file=sys.stderr)
        sys.exit(130)


def _run(args: argparse.Namespace, results: Path) -> int:
    """The command; its exit status (1 when a run failed)."""
    tasks, rows = args.only or list(TASKS), args.rows or list(ROWS)
    passed = ["--out-dir", str(results), *(["--force"] if args.force else [])]  # to each --one process
    if args.one:
        try:
            run_one(results, args.one[0], args.one[1], int(args.one[2]), force=args.force)
        except (IncompleteRun, RunFailed) as error:
            print(f"suite: {error}", file=sys.stderr, flush=True)
            return 1
        return 0
    from suite_report import collect, missing_runs, report, todo_text  # imports this module: not at the top

    if args.todo:
        asked = None if args.only is None and args.rows is None and args.seeds is None else (tasks, rows, args.seeds)
        committed = collect(RESULTS) if results != RESULTS else None  # estimates from the committed runs too
        print(todo_text(missing_runs(collect(results), results, asked, committed)))
        return 0
    failed: list[tuple[str, str, int]] = []
    if not args.report:
        results.joinpath("suite").mkdir(parents=True, exist_ok=True)
        todo = runs_to_do(results, tasks, rows, args.seeds, args.force)
        failed = run_jobs(__file__, todo, args.jobs, passed)
        if not todo:
            return 0
        if len(failed) == len(todo):
            print("no run finished; the report is unchanged", flush=True)
            return 1
    print(json.dumps({"tasks": {t: list(e["rows"]) for t, e in report(results)["tasks"].items()}}))
    return 1 if failed else 0


if __name__ == "__main__":
    main()
