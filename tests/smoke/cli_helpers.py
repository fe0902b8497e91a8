"""Run the polyak CLI in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PENDULUM = str(ROOT / "configs" / "pendulum.gin")


def polyak(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-m", "polyak.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout, stdin=subprocess.DEVNULL)


def train_until_eval(config: str, run_dir: Path, threshold: float, max_env_steps: int, *extra: str) -> list:
    """Train with ``config`` until an evaluation mean reaches ``threshold``; returns (env_steps, score) pairs."""
    import csv

    result = polyak("train", "--config", config, "--seed", "0", "--run-dir", str(run_dir),
                    "--gin-param", f"TrainerConfig.max_env_steps={max_env_steps}",
                    "--gin-param", f"TrainerConfig.eval_stop_score={threshold}", *extra, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    with open(run_dir / "metrics.csv", newline="") as handle:
        return [(int(r["env_steps"]), float(r["score"])) for r in csv.DictReader(handle) if r["kind"] == "eval"]
