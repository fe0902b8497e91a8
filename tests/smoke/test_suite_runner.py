"""benchmarks/suite.py as a researcher drives it: a failed run is one line and a non-zero exit, a run cut short
writes no result and the report leaves out a result that does not reach its budget, two results directories never
share a run directory, and --todo counts what it is asked about."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.smoke.cli_helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
suite = pytest.importorskip("suite")
suite_report = pytest.importorskip("suite_report")

SUITE = ROOT / "benchmarks" / "suite.py"


def run_suite(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", MPLBACKEND="Agg")
    return subprocess.run([sys.executable, str(SUITE), *args], capture_output=True, text=True, env=env, timeout=300,
                          stdin=subprocess.DEVNULL)


def test_a_run_that_fails_is_one_line_per_process_and_the_command_exits_non_zero(tmp_path):
    done = run_suite("--only", "Pendulum-v1", "--rows", "polyak_ddpg", "--seeds", "-1", "--jobs", "1",
                     "--out-dir", str(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "1 of 1 failed (no result file written): Pendulum-v1 polyak_ddpg seed -1" in done.stdout
    assert "no run finished; the report is unchanged" in done.stdout
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert said[-1].startswith("suite: polyak train --run-dir ") and "exited with status 2" in said[-1], said
    assert not (tmp_path / "suite.json").exists()


def test_two_results_directories_never_share_a_run_directory(tmp_path):
    committed = suite.suite_run_dir("Hopper-v5", "polyak_td3", 3)
    assert committed == suite.ROOT / "runs" / "suite" / "hopper" / "polyak_td3_seed_3"
    assert suite.suite_run_dir("Hopper-v5", "polyak_td3", 3, suite.RESULTS) == committed
    mine, theirs = (suite.suite_run_dir("Hopper-v5", "polyak_td3", 3, tmp_path / name) for name in ("a", "b"))
    assert mine == tmp_path / "a" / "runs" / "hopper" / "polyak_td3_seed_3" and mine != theirs != committed


def test_a_run_cut_short_writes_no_result_and_the_report_leaves_one_out(tmp_path, capsys):
    suite.check_complete("Pendulum-v1", "polyak_ddpg", 0, [1_000, 20_000])
    with pytest.raises(suite.IncompleteRun, match="last evaluation is at 7,000 env steps, not the budget of 20,000"):
        suite.check_complete("Pendulum-v1", "polyak_ddpg", 0, [1_000, 7_000])
    whole, cut = tmp_path / "whole.json", tmp_path / "cut.json"
    whole.write_text(json.dumps({"seed": 0, "eval_steps": [10, 20]}))
    cut.write_text(json.dumps({"seed": 1, "eval_steps": [10]}))
    assert [run["seed"] for run in suite_report.complete_runs([whole, cut], budget=20)] == [0]
    assert f"left out of the report: {cut} (its last evaluation is at 10 env steps" in capsys.readouterr().err


def test_a_row_no_asked_task_runs_is_said_not_counted_as_done():
    assert suite.rows_not_run(["Pendulum-v1"], ["polyak_td7", "polyak_td3"]) == [
        "polyak_td7 does not run on Pendulum-v1: the suite runs it on HalfCheetah-v5, Hopper-v5, Walker2d-v5, "
        "Ant-v5, Humanoid-v5"]
    for mode in ("--todo", "--jobs"):  # counting or running, a row that runs nowhere asked is a mistake
        refused = run_suite("--only", "Pendulum-v1", "--rows", "polyak_td7", *([mode] if mode == "--todo" else
                                                                                 [mode, "1"]))
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stdout + refused.stderr
        assert refused.stderr.strip().splitlines()[-1].endswith(
            "error: polyak_td7 does not run on Pendulum-v1: the suite runs it on HalfCheetah-v5, Hopper-v5, "
            "Walker2d-v5, Ant-v5, Humanoid-v5"), refused.stderr
    partly = run_suite("--only", "Walker2d-v5", "--rows", "polyak_td3", "polyak_ddpg", "--todo", "--seeds", "0")
    assert partly.returncode == 0, partly.stdout + partly.stderr
    assert "suite: polyak_ddpg does not run on Walker2d-v5: the suite runs it on " in partly.stderr, partly.stderr
    assert "; left out" in partly.stderr


def test_todo_counts_the_tasks_rows_and_seeds_it_is_asked_about(tmp_path):
    (tmp_path / "suite" / "hopper").mkdir(parents=True)
    (tmp_path / "suite" / "hopper" / "polyak_td3_seed_3.json").write_text("{}")
    committed = {"tasks": {"Hopper-v5": {"rows": {"polyak_td3": {"cpu_seconds": [600.0, 1200.0]}}}}}
    missing = suite_report.missing_runs({"tasks": {}}, tmp_path, (["Hopper-v5"], ["polyak_td3"], [3, 4, 5]),
                                        committed)
    assert [(run["seed"], run["cpu_minutes"]) for run in missing] == [(4, 15.0), (5, 15.0)]
    text = suite_report.todo_text(missing[:1])
    assert "1 run missing: about 0.2 CPU hours" in text
    done = run_suite("--todo", "--only", "Hopper-v5", "--rows", "polyak_td3", "--seeds", "3", "4")
    assert done.returncode == 0 and "| Hopper-v5 | polyak_td3 | 3 4 |" in done.stdout, done.stdout + done.stderr


def test_report_and_todo_refuse_a_results_directory_that_does_not_exist(tmp_path):
    done = run_suite("--report", "--out-dir", str(tmp_path / "typo"))
    assert done.returncode == 2 and "does not exist: there are no result files to report" in done.stderr
    done = run_suite("--todo", "--out-dir", str(tmp_path / "typo"))
    assert done.returncode == 2 and "does not exist: there are no result files to count" in done.stderr
    assert not (tmp_path / "typo").exists()
