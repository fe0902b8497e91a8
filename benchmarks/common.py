"""Helpers shared by the benchmark scripts: machine info and running the CLI in a subprocess."""

from __future__ import annotations

import csv
import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Collection, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

RESULT_LIBRARIES = ("torch", "numpy", "gymnasium", "mujoco", "stable-baselines3", "sb3-contrib")


def library_versions(names: Collection[str] = RESULT_LIBRARIES) -> dict[str, str]:
    """The installed versions of ``names`` ("not installed" where absent). A run's return depends on the physics
    and the learners as well as on polyak's code: ``pyproject.toml`` leaves MuJoCo and SB3 unpinned, so a result
    records which versions produced it."""
    out = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def machine_info() -> dict[str, Any]:
    """The machine a timing was taken on. A virtual machine may name its CPU only "AMD EPYC", so the CPU family,
    model and clock and the vector instructions PyTorch uses (``cpu_isa``: AVX512 or AVX2) are recorded too:
    fp32 matmul on one core measured ~100 GFLOP/s on an AVX512 EPYC and ~35 on a family-23 (first Zen) AVX2 one,
    so timings compare only within one kind of CPU. ``libraries`` holds the versions of :func:`library_versions`."""
    import torch

    fields = {"model name": platform.processor() or "", "cpu family": None, "model": None, "cpu MHz": None}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if not line.strip():  # the first processor's block is enough
                break
            key, _, value = (part.strip() for part in line.partition(":"))
            if key in fields:
                fields[key] = value
    except OSError:
        pass
    return {
        "platform": platform.platform(),
        "cpu": fields["model name"],
        "cpu_family_model": f"{fields['cpu family']}/{fields['model']}" if fields["cpu family"] else None,
        "cpu_mhz": round(float(fields["cpu MHz"])) if fields["cpu MHz"] else None,
        "cpu_isa": torch.backends.cpu.get_cpu_capability(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "libraries": library_versions(),
    }


def cpu_kind(machine: dict[str, Any]) -> str:
    """A short name for the kind of CPU a result was measured on, for grouping timings: its vendor and vector
    instructions (``cpu_isa``), e.g. ``AMD AVX2`` or ``Intel AVX512``, or ``unrecorded`` for results written
    before the instructions were kept. The vendor matters: an AVX512 Xeon and an AVX512 EPYC differ in speed."""
    isa = machine.get("cpu_isa")
    if not isa:
        return "unrecorded"
    name = machine.get("cpu") or ""
    vendor = next((v for v in ("AMD", "Intel") if v in name), "")
    return f"{vendor} {isa}".strip()


def machines_by_kind(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The machines of ``runs`` (result dicts), keyed by CPU name and kind, for a report's ``machine`` entry."""
    return {f"{r['machine']['cpu']} ({cpu_kind(r['machine'])})": r["machine"] for r in runs}


def newest_commit(runs: list[dict[str, Any]]) -> str | None:
    """The commit the most recently finished of ``runs`` (result dicts) trained at: a report's ``code_commit``.
    A report spans runs from several commits; it lists them all beside this one."""
    if not runs:
        return None
    newest = max(runs, key=lambda r: r.get("finished") or "")
    return newest["code_commit"]["commit"]


def sb3_deterministic_action(model: Any, obs: Any) -> Any:
    """An SB3 model's deterministic action in [-1, 1] (tanh of the mean for a SAC-style actor), as polyak's
    rescaled eval envs expect: lets ``polyak.evaluation.run_episodes`` score an SB3 run."""
    import torch

    with torch.no_grad():
        return model.policy._predict(torch.as_tensor(obs, dtype=torch.float32), deterministic=True).numpy()


def trained_line(commits: set[str], machines: set[str]) -> str:
    """A study report's footer: the commits and machines its runs were trained at, one torch thread each."""
    return f"Trained at {', '.join(sorted(commits))} on {', '.join(sorted(machines))}, one torch thread a run."


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
    instead of deleting that runner's run directory as an unfinished leftover (:func:`claim_holder` names it). The
    claim ends with its process, so a runner killed mid-run leaves nothing that blocks the next sitting.
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
        with suppress(OSError):  # the owner file only names the holder to a runner that is skipped
            _claim_owner_file(result).write_text(f"{os.getpid()}\n")
        yield True
    finally:
        lock.release()


def claim_holder(result: Path) -> str:
    """Who holds ``result``'s claim, for the line that skips it: "another runner (pid N)", or "another runner"
    when its owner file cannot be read."""
    try:
        pid = int(_claim_owner_file(result).read_text(encoding="ascii")[:20].strip())
    except (OSError, ValueError, UnicodeDecodeError):
        return "another runner"
    return f"another runner (pid {pid})"


def _claim_owner_file(result: Path) -> Path:
    # beside the lock, not in it: a runner that fails to take the lock still opens (and may truncate) the lock file
    return result.with_suffix(".claim-owner")


def not_offered(asked: list[str], chosen: list[str], offered: dict[str, Collection[str]]) -> dict[str, list[str]]:
    """Each ``asked`` name that none of the ``chosen`` groups offers (a row no asked task runs, a variant no asked
    task ablates), with the groups of ``offered`` that do offer it."""
    return {name: [group for group, names in offered.items() if name in names]
            for name in asked if not any(name in offered[group] for group in chosen)}


class RunFailed(Exception):
    """A run exited with an error or was stopped before its budget: the message is one line (polyak's own, or
    where it was shown)."""


def require_whole_run(summary: Any, run_dir: Path) -> None:
    """:class:`RunFailed` when a run trained in this process stopped before its budget: polyak's ``Trainer.run``
    returns on SIGINT/SIGTERM with ``interrupted`` set, and the evaluations it logged so far are not a result."""
    if summary.interrupted is not None:
        raise RunFailed(f"the run in {run_dir} was stopped by {summary.interrupted} at {summary.env_steps} env steps, "
                        "before its budget: no result written")


def train_run(config: str, seed: int, run_dir: Path, bindings: list[str] | tuple[str, ...], threads: int,
              extra_args: tuple[str, ...] = (), show_errors: bool = False) -> dict[str, Any]:
    """Run ``polyak train`` (with ``extra_args``, e.g. ``--workers 2``) in a subprocess with ``threads`` torch
    threads; return its summary. A ``run_dir`` already there (a run cut short in an earlier sitting, or a finished one
    run again) is removed first, and said, so the run starts again rather than resuming a half-written one;
    ``show_errors`` shows the run's stderr as it comes. :class:`RunFailed` when it exits with an error."""
    if run_dir.exists():
        left_by = "an earlier run of it" if (run_dir / "summary.json").exists() else "a run that did not finish"
        print(f"removing {run_dir}, left by {left_by}: this run starts again", flush=True)
        shutil.rmtree(run_dir)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    command = [sys.executable, "-m", "polyak.cli", "train", "--config", config, "--seed", str(seed),
               "--run-dir", str(run_dir)]
    for binding in bindings:
        command += ["--gin-param", binding]
    command += list(extra_args)
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL,
                          stderr=None if show_errors else subprocess.PIPE, text=True)
    if done.returncode != 0:
        lines = [line for line in (done.stderr or "").splitlines() if line.strip()]
        said = lines[-1].strip() if lines else "its message is above" if show_errors else "it printed nothing"
        raise RunFailed(f"polyak train --run-dir {run_dir} exited with status {done.returncode}: {said}")
    if not (run_dir / "summary.json").exists():  # polyak stops on SIGINT/SIGTERM with status 0 and no summary
        raise RunFailed(f"polyak train --run-dir {run_dir} was stopped (SIGINT or SIGTERM) before its budget")
    return json.loads((run_dir / "summary.json").read_text())


def run_jobs(script: str, todo: list[tuple[str, str, int]], jobs: int,
             passed: list[str]) -> list[tuple[str, str, int]]:
    """Run ``python SCRIPT --one TASK NAME SEED *PASSED`` for each job in ``todo``, ``jobs`` at a time, each
    process with one torch thread (torch's default of one per core collapses when runs share the CPU); return (and
    print) the jobs that failed. With nothing to run it says that the report is unchanged: the caller then leaves
    its report (and the committed files it writes) as they are."""
    print(f"{len(todo)} run{'' if len(todo) == 1 else 's'} to do, {jobs} at a time", flush=True)
    if not todo:
        print("the report is unchanged; --report rebuilds it", flush=True)
        return []
    environment = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")

    def launch(job: tuple[str, str, int]) -> int:
        task, name, seed = job
        return subprocess.run([sys.executable, script, "--one", task, name, str(seed), *passed],
                              env=environment).returncode

    with ThreadPoolExecutor(jobs) as pool:
        failed = [job for job, code in zip(todo, pool.map(launch, todo), strict=True) if code != 0]
    if failed:
        print(f"{len(failed)} of {len(todo)} failed (no result file written): "
              + ", ".join(f"{task} {name} seed {seed}" for task, name, seed in failed), flush=True)
    return failed


def read_metrics(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "metrics.csv", newline="") as handle:
        return list(csv.DictReader(handle))
