"""The resumable benchmark runners (benchmarks/suite_ablations.py, which shares suite.py's helpers): a tiny run
writes its result, a re-run skips it, and a run another runner has claimed is skipped, its run directory kept."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys

from tests.smoke.cli_helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from common import claimed, library_versions, machine_info

ABLATIONS = ROOT / "benchmarks" / "suite_ablations.py"
TASK = "MountainCarContinuous-v0"


def ablations(out_dir, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", MPLBACKEND="Agg")
    return subprocess.run([sys.executable, str(ABLATIONS), "--out-dir", str(out_dir), "--max-env-steps", "200",
                           *args], capture_output=True, text=True, env=env, timeout=600, stdin=subprocess.DEVNULL)


def test_results_record_the_library_versions_that_produced_them():
    import mujoco

    asked = library_versions(("gymnasium", "polyak-no-such-package"))
    assert asked == {"gymnasium": importlib.metadata.version("gymnasium"), "polyak-no-such-package": "not installed"}
    assert machine_info()["libraries"]["mujoco"] == mujoco.__version__  # the physics a result's returns came from


def test_a_tiny_ablation_run_writes_its_result_and_a_rerun_skips_it(tmp_path):
    first = ablations(tmp_path, "--only", TASK, "--variants", "baseline", "ou", "--seeds", "0", "--jobs", "1")
    assert first.returncode == 0, first.stderr[-2000:]
    assert "2 runs to do" in first.stdout
    ou = json.loads((tmp_path / "suite_ablations" / "mountaincar" / "ou_seed_0.json").read_text())
    assert ou["budget"] == 200 and ou["eval_steps"] == [200]
    assert "NoiseConfig.kind='ou'" in ou["settings"]["gin_params"]  # the variant's binding reached the run
    report = json.loads((tmp_path / "suite_ablations.json").read_text())
    assert set(report["tasks"][TASK]["variants"]) == {"baseline", "ou"}
    assert "against_baseline" in report["tasks"][TASK]["variants"]["ou"]
    written = (tmp_path / "suite_ablations.json").stat().st_mtime_ns
    second = ablations(tmp_path, "--only", TASK, "--variants", "baseline", "ou", "--seeds", "0", "--jobs", "1")
    assert second.returncode == 0, second.stderr[-2000:]
    assert "0 runs to do" in second.stdout and "the report is unchanged" in second.stdout
    assert (tmp_path / "suite_ablations.json").stat().st_mtime_ns == written  # nothing ran: not rewritten


def test_a_run_claimed_by_another_runner_is_skipped_and_its_run_dir_kept(tmp_path):
    result = tmp_path / "suite_ablations" / "mountaincar" / "baseline_seed_0.json"
    result.parent.mkdir(parents=True)
    their_run = tmp_path / "runs" / "mountaincar" / "baseline_seed_0"
    their_run.mkdir(parents=True)
    (their_run / "metrics.csv").write_text("kind,env_steps\n")
    with claimed(result) as mine:  # another runner (this test's process) is training it
        assert mine
        skipped = ablations(tmp_path, "--one", TASK, "baseline", "0")
    assert skipped.returncode == 0, skipped.stderr[-2000:]
    assert f"another runner (pid {os.getpid()}) is training it; skipped" in skipped.stdout
    assert (their_run / "metrics.csv").read_text() == "kind,env_steps\n"
    assert not result.exists()
    trained = ablations(tmp_path, "--one", TASK, "baseline", "0")  # the claim released: now it runs
    assert trained.returncode == 0, trained.stderr[-2000:]
    assert json.loads(result.read_text())["final_return"] is not None
