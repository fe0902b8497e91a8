"""After --resume, summary.json's final and best evaluations are those of metrics.csv's eval rows (the rows of
the first process up to its checkpoint, then the resumed ones), whether the run was stopped or killed."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.smoke.cli_helpers import PENDULUM, polyak

ARGS = ["--config", PENDULUM, "--seed", "4", "--gin-param", "TrainerConfig.max_env_steps=1600",
        "--gin-param", "TrainerConfig.start_steps=300", "--gin-param", "ReplayConfig.min_size=200",
        "--gin-param", "TrainerConfig.eval_interval=400", "--gin-param", "TrainerConfig.eval_episodes=1",
        "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)", "--gin-param", "TrainerConfig.checkpoint_interval=300",
        "--gin-param", "TrainerConfig.progress_bar=False"]


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL])
def test_final_eval_after_resume_is_the_last_eval_row(tmp_path, stop):
    run = tmp_path / "run"
    process = subprocess.Popen([sys.executable, "-m", "polyak.cli", "train", *ARGS, "--run-dir", str(run)],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("eval at 800"):  # past the checkpoint at 600: the eval at 800 runs again on resume
            time.sleep(0.2)
            process.send_signal(stop)
            break
    process.communicate(timeout=120)
    assert not (run / "summary.json").exists()

    resumed = polyak("train", "--resume", str(run))
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    summary = json.loads((run / "summary.json").read_text())
    with open(run / "metrics.csv", newline="") as handle:
        evals = [(int(r["env_steps"]), float(r["score"])) for r in csv.DictReader(handle) if r["kind"] == "eval"]
    assert [steps for steps, _ in evals] == [400, 800, 1200, 1600]
    assert summary["final_eval"] == evals[-1][1]
    assert summary["best_eval"] == max(score for _, score in evals)
    assert f"final eval {evals[-1][1]:.2f}" in resumed.stdout
