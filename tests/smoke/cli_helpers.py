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
