"""Reproducing a benchmark row on a fresh clone: the resumable runners (benchmarks/suite.py and
suite_ablations.py) skip what has a result file, and the committed results have them all, so they take ``--force``
(re-run anyway) and ``--out-dir DIR`` (results elsewhere, where nothing is done yet)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.smoke.cli_helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
suite = pytest.importorskip("suite")

PENDULUM_ROWS = ["polyak_ddpg", "polyak_td3", "sb3_td3"]  # committed for seeds 0-2


def test_suite_reruns_committed_rows_with_force_or_into_another_directory(tmp_path: Path) -> None:
    committed = suite.runs_to_do(suite.RESULTS, ["Pendulum-v1"], PENDULUM_ROWS, [0, 1, 2])
    assert committed == []  # the fresh clone's "0 runs to do"
    assert len(suite.runs_to_do(suite.RESULTS, ["Pendulum-v1"], PENDULUM_ROWS, [0, 1, 2], force=True)) == 9
    mine = tmp_path / "mine"
    assert suite.result_path(mine, "Pendulum-v1", "polyak_td3", 0).is_relative_to(mine)
    assert len(suite.runs_to_do(mine, ["Pendulum-v1"], PENDULUM_ROWS, [0, 1, 2])) == 9


def test_by_default_the_suite_runs_the_seeds_each_row_is_asked_and_the_committed_results_have_them_all(
        tmp_path: Path) -> None:
    assert suite.runs_to_do(suite.RESULTS, list(suite.TASKS), list(suite.ROWS), None) == []
    mine = tmp_path / "mine"
    probe = suite.runs_to_do(mine, ["InvertedPendulum-v5"], ["sb3_crossq", "polyak_td3"], None)
    assert probe == [("InvertedPendulum-v5", "sb3_crossq", 0), ("InvertedPendulum-v5", "sb3_crossq", 1),
                     ("InvertedPendulum-v5", "polyak_td3", 0), ("InvertedPendulum-v5", "polyak_td3", 1),
                     ("InvertedPendulum-v5", "polyak_td3", 2)]
    assert [seed for _, _, seed in suite.runs_to_do(mine, ["Ant-v5"], ["sb3_crossq"], None)] == [0, 1, 2, 3, 4]
    assert [seed for _, _, seed in suite.runs_to_do(mine, ["Ant-v5"], ["polyak_td7"], None)] == [0, 1, 2]
    assert suite.runs_to_do(mine, ["Ant-v5"], ["sb3_crossq"], [7]) == [("Ant-v5", "sb3_crossq", 7)]


def test_a_suite_run_with_nothing_to_do_leaves_the_report_alone(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    suite_dir = out / "suite" / "pendulum"
    suite_dir.mkdir(parents=True)
    for row in PENDULUM_ROWS:
        for seed in range(3):
            committed = suite.result_path(suite.RESULTS, "Pendulum-v1", row, seed)
            (suite_dir / committed.name).write_text(committed.read_text())
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "suite.py"), "--only", "Pendulum-v1",
                             "--rows", *PENDULUM_ROWS, "--out-dir", str(out)], capture_output=True, text=True,
                            timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert result.returncode == 0, result.stderr
    assert "0 runs to do" in result.stdout and "the report is unchanged" in result.stdout
    assert not (out / "suite.json").exists() and not (out / "suite.md").exists()


def test_suite_help_names_force_and_out_dir() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "suite.py"), "--help"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0 and "--force" in result.stdout and "--out-dir" in result.stdout


def _ablations(out_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", MPLBACKEND="Agg")
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "suite_ablations.py"), "--out-dir", str(out_dir),
                           "--max-env-steps", "200", "--only", "MountainCarContinuous-v0", "--variants", "baseline",
                           "--seeds", "0", "--jobs", "1", *args],
                          capture_output=True, text=True, env=env, timeout=600, stdin=subprocess.DEVNULL)


def test_suite_ablations_force_reruns_a_finished_run(tmp_path: Path) -> None:
    result = tmp_path / "suite_ablations" / "mountaincar" / "baseline_seed_0.json"
    first = _ablations(tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    written = result.stat().st_ino, result.stat().st_mtime_ns
    assert "0 runs to do" in _ablations(tmp_path).stdout
    assert (result.stat().st_ino, result.stat().st_mtime_ns) == written
    forced = _ablations(tmp_path, "--force")
    assert forced.returncode == 0, forced.stderr[-2000:]
    assert "1 run to do" in forced.stdout
    assert (result.stat().st_ino, result.stat().st_mtime_ns) != written  # trained again and replaced
    assert json.loads(result.read_text())["budget"] == 200
