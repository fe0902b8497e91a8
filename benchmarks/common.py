"""Helpers shared by the benchmark scripts: machine info and running the CLI in a subprocess."""

from __future__ import annotations

import csv
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def machine_info() -> dict[str, Any]:
    import torch

    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
    }


def load_average() -> list[float]:
    """The 1-, 5- and 15-minute load averages, rounded: benchmarks record them beside timings on a shared CPU."""
    return [round(x, 2) for x in os.getloadavg()]


def code_commit() -> dict[str, Any]:
    """The checkout's commit and whether src/ differs from it, so a result names the code it measured."""
    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False).stdout.strip()

    return {"commit": git("rev-parse", "HEAD") or None, "src_modified": bool(git("status", "--porcelain", "src"))}


@contextmanager
def claimed(result: Path) -> Iterator[bool]:
    """Hold a claim on the run that writes ``result`` (a lock file beside it) while the block trains it.

    Yields False when another runner (another shell, a second sitting) holds the claim: the caller skips the run,
    instead of deleting that runner's run directory as an unfinished leftover. The claim ends with its process, so
    a runner killed mid-run leaves nothing that blocks the next sitting.
    """
    from filelock import FileLock, Timeout

    result.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(result.with_suffix(".claim")), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def train_run(config: str, seed: int, run_dir: Path, bindings: list[str], threads: int) -> dict[str, Any]:
    """Run ``polyak train`` in a subprocess with ``threads`` torch threads; return its summary."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    command = [sys.executable, "-m", "polyak.cli", "train", "--config", config, "--seed", str(seed),
               "--run-dir", str(run_dir)]
    for binding in bindings:
        command += ["--gin-param", binding]
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads((run_dir / "summary.json").read_text())


def read_metrics(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "metrics.csv", newline="") as handle:
        return list(csv.DictReader(handle))
