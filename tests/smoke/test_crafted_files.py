"""Crafted files in a shared run directory, met through the CLI as a user would: one line, exit 2, no hang.

Each case damages a copy of a real run (huge safetensors header, wrong dtype, wrong shape, NaN weights,
a missing tensor, a 1 GB config.json, a symlink out of the run) and runs `polyak test` on it, and
`polyak train --resume` where the damage is in what resume reads.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from tests.smoke.cli_helpers import PENDULUM, polyak

TINY = ["--gin-param", "TrainerConfig.max_env_steps=400", "--gin-param", "TrainerConfig.start_steps=100",
        "--gin-param", "ReplayConfig.min_size=50", "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)",
        "--gin-param", "TrainerConfig.eval_interval=200", "--gin-param", "TrainerConfig.eval_episodes=1",
        "--gin-param", "TrainerConfig.checkpoint_interval=200"]


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("crafted") / "run"
    result = polyak("train", "--config", PENDULUM, "--run-dir", str(run), *TINY)
    assert result.returncode == 0, result.stderr
    return run


def _best_tensors(run: Path) -> Path:
    return run / "checkpoints" / "best" / "state.safetensors"


def _rewrite(path: Path, change: Callable[[dict[str, torch.Tensor]], None]) -> None:
    tensors = load_file(str(path))
    change(tensors)
    save_file(tensors, str(path))


def _actor_weight(tensors: dict[str, torch.Tensor]) -> str:
    return next(name for name in tensors if ".actor." in name and name.endswith("weight"))


def _huge_header(run: Path) -> None:
    path = _best_tensors(run)
    data = path.read_bytes()
    path.write_bytes(struct.pack("<Q", 1 << 62) + data[8:])


def _wrong_dtype(run: Path) -> None:
    _rewrite(_best_tensors(run), lambda t: t.update({(n := _actor_weight(t)): t[n].to(torch.int32)}))


def _wrong_shape(run: Path) -> None:
    _rewrite(_best_tensors(run), lambda t: t.update({_actor_weight(t): torch.zeros(3, 3)}))


def _nan_weights(run: Path) -> None:
    _rewrite(_best_tensors(run), lambda t: t[_actor_weight(t)].fill_(float("nan")))


def _missing_tensor(run: Path) -> None:
    _rewrite(_best_tensors(run), lambda t: t.pop(_actor_weight(t)))


def _gigabyte_config(run: Path) -> None:
    with open(run / "config.json", "r+b") as handle:  # sparse: 1 GB claimed, nothing written
        handle.truncate(1 << 30)


def _symlink_out(run: Path) -> None:
    outside = run.parent / "outside.safetensors"
    shutil.copyfile(_best_tensors(run), outside)
    _best_tensors(run).unlink()
    os.symlink(outside, _best_tensors(run))


CASES = {"huge header": _huge_header, "wrong dtype": _wrong_dtype, "wrong shape": _wrong_shape,
         "NaN weights": _nan_weights, "missing tensor": _missing_tensor, "1 GB config.json": _gigabyte_config,
         "symlink out of the run": _symlink_out}


@pytest.mark.parametrize("case", list(CASES))
def test_crafted_best_checkpoint_or_config_gives_one_line(clean_run, tmp_path, case):
    run = tmp_path / "run"
    shutil.copytree(clean_run, run, symlinks=True)
    CASES[case](run)
    started = time.perf_counter()
    result = polyak("test", str(run), "--episodes", "1", timeout=120)
    assert result.returncode == 2, (case, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("polyak: error:"), result.stderr
    assert "Traceback" not in result.stderr
    assert time.perf_counter() - started < 60  # refused up front, not after reading a gigabyte


def test_crafted_resume_checkpoint_gives_one_line_and_keeps_files(clean_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(clean_run, run)
    (run / "summary.json").unlink()  # as if killed after its last checkpoint
    newest = sorted((run / "checkpoints").glob("step_*"))[-1]
    path = newest / "state.safetensors"
    path.write_bytes(struct.pack("<Q", 1 << 62) + path.read_bytes()[8:])
    before = sorted(p.name for p in (run / "checkpoints").iterdir())
    result = polyak("train", "--resume", str(run), timeout=120)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == before  # nothing deleted or rewritten
    assert json.loads((run / "config.json").read_text())  # the run's config is intact
