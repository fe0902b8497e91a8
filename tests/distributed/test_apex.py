"""Ape-X DDPG on a local Ray: a killed rollout worker is replaced and the run finishes as a normal run directory."""

import csv
import json
import os
import re
import signal
import subprocess
import sys

import pytest

from tests.distributed.helpers import PENDULUM, TINY, polyak, polyak_env

# Two envs per worker, one score per pair of finished episodes (the Reacher's rule, with 2 arms).
VECTOR = ["--gin-param", "TrainerConfig.num_envs=2", "--gin-param", "TrainerConfig.score_mean_over_envs=True"]

pytest.importorskip("ray")


def test_local_ray_stays_on_loopback_and_runs_its_workers_at_the_drivers_priority():
    """Ray's default nice 15 for workers starved a sweep's trials beside any busy process."""
    script = ("import os\n"
              "from polyak.distributed.ray_runtime import init_ray\n"
              "ray = init_ray(None, num_cpus=1, object_store_mb=80)\n"
              "print('NODES', sorted({n['NodeManagerAddress'] for n in ray.nodes()}))\n"
              "niceness = ray.remote(lambda: os.nice(0))\n"
              "print('NICE', os.nice(0), ray.get(niceness.remote()))\n")
    env = {key: value for key, value in polyak_env().items() if key != "RAY_worker_niceness"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=180)
    assert "NODES ['127.0.0.1']" in result.stdout, result.stdout + result.stderr
    driver, worker = re.search(r"NICE (-?\d+) (-?\d+)", result.stdout).groups()
    assert worker == driver


def test_killed_rollout_worker_is_restarted_and_training_finishes(tmp_path):
    run = tmp_path / "apex"
    command = [sys.executable, "-m", "polyak.cli", "train", "--config", PENDULUM, "--workers", "2", "--run-dir",
               str(run), "--gin-param", "TrainerConfig.max_env_steps=3200",
               "--gin-param", "TrainerConfig.eval_interval=800", "--gin-param", "TrainerConfig.eval_episodes=2",
               "--gin-param", "ApexConfig.replay_shards=2", *VECTOR, *TINY]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=polyak_env(),
                               stdin=subprocess.DEVNULL)
    lines, pids, killed = [], None, None
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line)
        found = re.search(r"rollout workers \(pids ([\d, ]+);", line)
        if found:
            pids = [int(p) for p in found.group(1).split(",")]
        if killed is None and pids and line.startswith("episode 2 "):
            killed = pids[0]
            os.kill(killed, signal.SIGKILL)
    output = "".join(lines)
    assert process.wait(timeout=600) == 0, output[-4000:]
    assert killed is not None, output[-4000:]
    assert "rollout worker 0 died" in output and "restarted it" in output
    record = json.loads((run / "apex.json").read_text())
    assert record["worker_restarts"] == 1 and record["env_steps"] >= 3200 and record["learner_updates"] > 0
    assert record["replay_shards"] == 2 and all(steps > 0 for steps in record["worker_env_steps"])
    summary = json.loads((run / "summary.json").read_text())
    assert summary["env_steps"] >= 3200 and summary["updates"] == record["learner_updates"]
    with open(run / "metrics.csv", newline="") as handle:
        kinds = [row["kind"] for row in csv.DictReader(handle)]
    assert kinds.count("eval") == 4 and kinds.count("episode") >= 5
    assert "ApexConfig.num_workers = 2" in (run / "config.gin").read_text()
    assert (run / "checkpoints" / "best").is_dir() and list((run / "tb").iterdir())

    # A normal run directory: `polyak test` and `polyak plot` work on it, and it cannot be resumed.
    tested = polyak("test", str(run), "--episodes", "2")
    assert tested.returncode == 0 and "mean score" in tested.stdout, tested.stderr
    assert polyak("plot", str(run), "--out", str(tmp_path / "apex.png")).returncode == 0
    assert (tmp_path / "apex.png").stat().st_size > 10_000
