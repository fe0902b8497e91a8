"""Run the polyak CLI in a subprocess with Ray kept private: 127.0.0.1, no usage statistics."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.smoke.cli_helpers import PENDULUM, ROOT

RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
           "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
# A tiny, fast Pendulum: small networks, learning from 200 transitions, no evaluation.
TINY = ["--gin-param", "NetworkConfig.hidden_sizes=(32, 32)", "--gin-param", "TrainerConfig.start_steps=200",
        "--gin-param", "ReplayConfig.min_size=200", "--gin-param", "AgentConfig.batch_size=64"]

__all__ = ["PENDULUM", "ROOT", "TINY", "polyak", "polyak_env", "without_ray_env"]


def polyak_env(**extra: str) -> dict[str, str]:
    return dict(os.environ, **RAY_ENV, **extra)


def polyak(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "polyak.cli", *args], capture_output=True, text=True,
                          env=env or polyak_env(), timeout=timeout, stdin=subprocess.DEVNULL)


def without_ray_env(tmp_path: Path) -> dict[str, str]:
    """An environment in which ``import ray`` fails as if ray were not installed."""
    shim = tmp_path / "no_ray"
    shim.mkdir(exist_ok=True)
    (shim / "ray.py").write_text("raise ModuleNotFoundError(\"No module named 'ray'\", name='ray')\n")
    path = os.pathsep.join(p for p in (str(shim), str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return polyak_env(PYTHONPATH=path)
