"""Ape-X DDPG throughput on this machine: env steps/s and learner updates/s with 1 and 2 rollout workers.

Usage: flock /tmp/polyak-bench.lock python benchmarks/apex.py [--seconds 40] [--out benchmarks/results/apex.json]

Two kinds of numbers, all with one torch thread per process, on configs/pendulum.gin with the Ape-X
defaults (prioritized replay, priorities from the workers, 3-step returns; 256-256 networks, batch 256):

* in-process, no Ray: one rollout worker's rate (acting with the CPU actor, env, n-step assembly, initial
  priorities) and the learner's rate (sample from a replay shard, update, priorities back): the
  per-worker and learner ceilings that a real cluster would add up;
* `polyak train --workers N` on a local Ray for N = 1, 2, decoupled (workers and learner as fast as they
  can, the paper's setting) and paced (1 update per transition, the default for this config); each run is
  stopped with SIGINT after ``--seconds`` and its ``apex.json`` gives rates from the first rollout on.

The last stdout line is the JSON result.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import machine_info

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "pendulum.gin"
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
COMMON = ["TrainerConfig.max_env_steps = 100000000", "TrainerConfig.eval_interval = None",
          "TrainerConfig.progress_bar = False", "ReplayConfig.capacity = 1000000"]


def _rate(function, seconds: float) -> tuple[float, int]:
    """Calls per second of ``function`` over about ``seconds`` (after one warm-up call)."""
    function()
    calls, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        function()
        calls += 1
    return calls / (time.perf_counter() - started), calls


def in_process(seconds: float) -> dict:
    """One rollout worker and the learner step, each alone in this process (no Ray)."""
    import dataclasses

    import numpy as np
    import torch

    from polyak.distributed.apex_config import APEX_DEFAULTS
    from polyak.distributed.apex_learner import to_batch
    from polyak.distributed.apex_replay import ReplayShard
    from polyak.distributed.apex_worker import RolloutWorker
    from polyak.ginconf import build_configs_from_gin, parse_gin
    from polyak.trainer import build_agent

    torch.set_num_threads(1)
    parse_gin(None, [*APEX_DEFAULTS, f"include {str(CONFIG)!r}", *COMMON])
    configs = build_configs_from_gin()
    configs = dataclasses.replace(configs, agent=dataclasses.replace(configs.agent, device="cpu"))
    chunk = 50
    worker = RolloutWorker(configs, index=0, seed=0, random_steps=0, shards=[])
    worker_calls, _ = _rate(lambda: worker.rollout(chunk), seconds)
    # Fill a shard with the worker's transitions, then time the learner's step on it.
    shard = ReplayShard(configs.replay, configs.replay.capacity, worker.obs_dim, worker.action_dim, seed=0)
    while shard.size() < 10_000:
        shard.add(*worker.rollout(200)[:2])
    agent = build_agent(configs, worker.obs_dim, worker.action_dim, np.random.SeedSequence(0))

    def learner_step() -> None:
        data = shard.sample(configs.agent.batch_size)
        result = agent.learner.update(to_batch(data, agent.device))
        shard.update_priorities(data["indices"], result.td_errors.cpu().numpy())

    updates, _ = _rate(learner_step, seconds)
    return {"worker_env_steps_per_s": round(worker_calls * chunk * configs.trainer.num_envs, 1),
            "learner_updates_per_s": round(updates, 1), "chunk": chunk, "batch_size": configs.agent.batch_size}


def ray_run(workers: int, decoupled: bool, seconds: float, workdir: Path) -> dict:
    """`polyak train --workers N` for ``seconds`` after the workers started, then SIGINT; its apex.json."""
    run_dir = workdir / f"w{workers}_{'decoupled' if decoupled else 'paced'}"
    command = [sys.executable, "-m", "polyak.cli", "train", "--config", str(CONFIG), "--workers", str(workers),
               "--seed", "0", "--run-dir", str(run_dir)]
    for binding in [*COMMON, f"ApexConfig.decoupled = {decoupled}"]:
        command += ["--gin-param", binding]
    load_before = os.getloadavg()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=dict(os.environ, **RAY_ENV), stdin=subprocess.DEVNULL)
    assert process.stdout is not None
    for line in process.stdout:
        if re.search(r"Ape-X: \d+ rollout workers", line):
            break
    time.sleep(seconds)
    process.send_signal(signal.SIGINT)
    output = process.communicate(timeout=300)[0]
    if process.returncode != 0:
        raise RuntimeError(f"polyak train --workers {workers} failed:\n{output[-3000:]}")
    record = json.loads((run_dir / "apex.json").read_text())
    record["loadavg_before"] = [round(x, 2) for x in load_before]
    record["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return record


def note(alone: dict, runs: list[dict]) -> str:
    """What these numbers show on a 2-core machine, and what they cannot."""
    by = {(r["workers"], r["decoupled"]): r for r in runs}
    d1, d2, p1, p2 = by[(1, True)], by[(2, True)], by[(1, False)], by[(2, False)]

    def change(a: float, b: float) -> str:
        return f"{(b - a) / a * 100:+.0f}%"

    return (
        f"{os.cpu_count()} cores here. Alone on a core, one rollout worker makes {alone['worker_env_steps_per_s']:.0f} "
        f"env steps/s and the learner {alone['learner_updates_per_s']:.0f} updates/s: the per-worker and learner "
        "ceilings a cluster adds up (each extra 1-CPU worker adds about the per-worker rate until the learner or "
        "the replay shard saturates). On Ray here, the learner, a replay shard and N workers share the same cores. "
        f"Decoupled, 1 -> 2 workers changed env steps/s by {change(d1['env_steps_per_s'], d2['env_steps_per_s'])} "
        f"({d1['env_steps_per_s']:.0f} -> {d2['env_steps_per_s']:.0f}) and learner updates/s by "
        f"{change(d1['updates_per_s'], d2['updates_per_s'])} ({d1['updates_per_s']:.0f} -> "
        f"{d2['updates_per_s']:.0f}): the processes compete for 2 cores (workers, shards and the learner at the "
        "same priority), so this is not a scaling measurement. "
        f"Paced at 1 update per transition, throughput is bounded by the learner's ({p1['updates_per_s']:.0f} and "
        f"{p2['updates_per_s']:.0f} updates/s with 1 and 2 workers, "
        f"{change(p1['updates_per_s'], p2['updates_per_s'])}, against {alone['learner_updates_per_s']:.0f} alone; "
        "a second worker can only free the learner from waiting on one worker's rollouts). What 2 "
        "cores cannot show: speed-up with more workers, replay-shard or network limits, multi-node behaviour."
    )


def other_benchmarks() -> list[str]:
    """Other polyak benchmarks running now (they would share the cores with this measurement)."""
    found = subprocess.run(["pgrep", "-af", r"benchmarks/(speed|ablations|pendulum|unity_reacher|soak)\.py"],
                           capture_output=True, text=True).stdout
    return [line.split(" ", 1)[1] for line in found.splitlines() if " " in line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=40.0, help="measured seconds per Ray run")
    parser.add_argument("--in-process-seconds", type=float, default=10.0)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "apex.json"))
    args = parser.parse_args()

    started = time.perf_counter()
    load_start = os.getloadavg()
    concurrent = other_benchmarks()
    alone = in_process(args.in_process_seconds)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for decoupled in (True, False):
            for workers in (1, 2):
                record = ray_run(workers, decoupled, args.seconds, Path(tmp))
                runs.append({key: record[key] for key in (
                    "workers", "decoupled", "updates_per_transition", "measured_seconds", "env_steps",
                    "learner_updates", "env_steps_per_s", "updates_per_s", "worker_env_steps", "loadavg_before",
                    "loadavg_after")})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout
    result = {
        "benchmark": "apex",
        "settings": {"config": "configs/pendulum.gin + Ape-X defaults (prioritized, td_error priorities, n_step 3)",
                     "networks": "256-256", "batch_size": 256, "rollout_chunk": 50, "weight_push_interval": 50,
                     "replay_shards": 1, "torch_threads_per_process": 1, "seconds_per_ray_run": args.seconds,
                     "eval": "off"},
        "machine": machine_info(),
        "commit": commit.strip(),
        "loadavg_start": [round(x, 2) for x in load_start],
        "other_benchmarks_running": sorted(set(concurrent) | set(other_benchmarks())),
        "in_process": alone,
        "ray_runs": runs,
        "note": note(alone, runs),
        "total_wall_seconds": round(time.perf_counter() - started, 1),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
