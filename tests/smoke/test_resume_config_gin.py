"""`polyak train --resume` keeps the run's config.gin (the full operative config), and `polyak export` ships it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from polyak.checkpoint import complete_checkpoints
from tests.smoke.cli_helpers import PENDULUM, polyak

ARGS = ["--config", PENDULUM, "--seed", "1", "--gin-param", "TrainerConfig.start_steps=100",
        "--gin-param", "ReplayConfig.min_size=100", "--gin-param", "TrainerConfig.checkpoint_interval=100",
        "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)", "--gin-param", "TrainerConfig.progress_bar=False",
        "--gin-param", "TrainerConfig.max_env_steps=1500"]


def test_resume_keeps_config_gin_and_export_ships_it(tmp_path):
    run = tmp_path / "run"
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    process = subprocess.Popen([sys.executable, "-m", "polyak.cli", "train", *ARGS, "--run-dir", str(run)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        while not complete_checkpoints(run / "checkpoints") and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0 and "stopped by SIGINT" in out, (out[-1000:], err[-2000:])
    written = (run / "config.gin").read_text()
    assert "TrainerConfig.env_id = 'Pendulum-v1'" in written and "TrainerConfig.start_steps = 100" in written

    resumed = polyak("train", "--resume", str(run))  # no bindings: the run's own config.json alone
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert (run / "config.gin").read_text() == written
    exported = polyak("export", str(run), "--out", str(tmp_path / "exported"))
    assert exported.returncode == 0, exported.stderr[-2000:]
    assert (tmp_path / "exported" / "config.gin").read_text() == written
