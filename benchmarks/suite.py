"""The benchmark suite: polyak's DDPG and TD3 beside Stable-Baselines3's TD3 on toy, MuJoCo and PyBullet tasks.

Usage:
  python benchmarks/suite.py [--only TASK ...] [--rows ROW ...] [--seeds 0 1 2] [--jobs 2]
  python benchmarks/suite.py --report          # only rebuild suite.json and the plots from finished runs

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
ROWS = ("polyak_ddpg", "polyak_td3", "sb3_td3", "polyak_ou", "polyak_td7", "polyak_crossq", "sb3_crossq")
# MountainCar also runs the exploration that solves it (configs/suite/mountaincar_ou.gin: DDPG with OU noise).
EXPLORATION_ROWS = {"MountainCarContinuous-v0": ("polyak_ou",)}
# TD7 and CrossQ (the sample-efficiency issues) run on the five standard MuJoCo locomotion tasks only.
SAMPLE_EFFICIENCY_ROWS = ("polyak_td7", "polyak_crossq", "sb3_crossq")
SAMPLE_EFFICIENCY_TASKS = ("HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Ant-v5", "Humanoid-v5")
# The five standard tasks run TD3, TD7 and CrossQ only (DDPG stays on the tasks it has).
FRONTIER_ONLY_TASKS = ("Walker2d-v5", "Ant-v5", "Humanoid-v5")


def rows_of(task: str) -> tuple[str, ...]:
    """The rows a task runs: every task the DDPG/TD3 rows, the locomotion tasks also TD7 and CrossQ,
    MountainCar also its exploration row."""
    exploration = {row for rows in EXPLORATION_ROWS.values() for row in rows}
    return tuple(row for row in ROWS if (row not in SAMPLE_EFFICIENCY_ROWS or task in SAMPLE_EFFICIENCY_TASKS)
                 and (row not in exploration or row in EXPLORATION_ROWS.get(task, ()))
                 and (row != "polyak_ddpg" or task not in FRONTIER_ONLY_TASKS))


def result_path(task: str, row: str, seed: int) -> Path:
    return RUNS / TASKS[task].config_stem / f"{row}_seed_{seed}.json"


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
    evals = [(int(r["env_steps"]), float(r["score"])) for r in read_metrics(run_dir) if r["kind"] == "eval"]
    return {"eval_steps": [s for s, _ in evals], "eval_returns": [r for _, r in evals],
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
    assert configs.actor.lr == critic.lr and critic.batch_renorm and not agent.target_networks
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


def run_one(task: str, row: str, seed: int) -> None:
    """Train one (task, row, seed) in this process and write its result file, unless another runner has claimed
    it (two shells, two sittings): then it is skipped, not started again over the other's run directory."""
    path = result_path(task, row, seed)
    with claimed(path) as mine:
        if not mine:
            print(f"{task} {row} seed {seed}: another runner is training it; skipped", flush=True)
        elif not path.exists():
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
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(result, indent=1) + "\n")
    temporary.replace(path)
    print(f"{task} {row} seed {seed}: final {result['final_return']:.1f}, {result['env_steps_per_s']} env steps/s",
          flush=True)


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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    for task, entry in suite["tasks"].items():
        if not entry["rows"]:
            continue
        figure, axes = plt.subplots(figsize=(6, 4))
        for row, data in entry["rows"].items():
            length = min(len(r) for r in data["eval_returns"])
            curves = np.array([r[:length] for r in data["eval_returns"]])
            steps = np.array(data["eval_steps"][:length])
            mean, std = curves.mean(axis=0), curves.std(axis=0)
            axes.plot(steps, mean, label=f"{row} ({seeds_text(len(curves))})")
            axes.fill_between(steps, mean - std, mean + std, alpha=0.2)
        axes.set(title=f"{task}, {entry['budget']:,} env steps", xlabel="env steps",
                 ylabel=f"evaluation return ({EVAL_EPISODES} episodes)")
        axes.legend()
        axes.grid(alpha=0.3)
        figure.tight_layout()
        figure.savefig(RESULTS / f"suite_{TASKS[task].config_stem}.png", dpi=100)
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


def report() -> dict[str, Any]:
    suite = collect()
    (RESULTS / "suite.json").write_text(json.dumps(suite, indent=1) + "\n")
    (RESULTS / "suite.md").write_text(markdown_table(suite) + "\n" + efficiency_table(suite))
    plot(suite)
    plot_wall_time(suite)
    print(markdown_table(suite))
    return suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(TASKS), default=list(TASKS), metavar="TASK")
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--report", action="store_true", help="only rebuild suite.json and the plots")
    parser.add_argument("--one", nargs=3, metavar=("TASK", "ROW", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_one(args.one[0], args.one[1], int(args.one[2]))
        return
    if not args.report:
        todo = [(task, row, seed) for task in args.only for row in args.rows for seed in args.seeds
                if row in rows_of(task) and not result_path(task, row, seed).exists()]
        print(f"{len(todo)} runs to do, {args.jobs} at a time", flush=True)
        environment = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")

        def launch(job: tuple[str, str, int]) -> int:
            task, row, seed = job
            return subprocess.run([sys.executable, __file__, "--one", task, row, str(seed)], env=environment).returncode

        with ThreadPoolExecutor(args.jobs) as pool:
            failed = [job for job, code in zip(todo, pool.map(launch, todo), strict=True) if code != 0]
        if failed:
            print(f"failed: {failed}", flush=True)
    print(json.dumps({"tasks": {t: list(e["rows"]) for t, e in report()["tasks"].items()}}))


if __name__ == "__main__":
    main()
