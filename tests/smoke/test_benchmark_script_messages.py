"""The benchmark scripts' messages: a mistake in what a user gives ``benchmarks/pendulum.py`` or
``benchmarks/actor_average.py`` is one line naming it, before any training, and the pendulum result records the
budget and config the runs really had; the study scripts' options say their defaults and that a finished seed is
skipped."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.smoke.cli_helpers import ROOT

BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))


def script(name: str, *args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, str(BENCHMARKS / name), *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env, timeout=timeout, stdin=subprocess.DEVNULL)


def one_line_refusal(result: subprocess.CompletedProcess) -> str:
    """The refusal's last stderr line, once the run is known to have failed without a traceback or output."""
    assert result.returncode != 0, result.stdout[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.stdout == ""
    return result.stderr.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def pendulum():
    spec = importlib.util.spec_from_file_location("pendulum_benchmark", BENCHMARKS / "pendulum.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------------------------------------ pendulum.py
def test_a_typo_in_a_binding_is_polyaks_one_line_before_any_run(tmp_path):
    result = script("pendulum.py", "--seeds", "0", "--jobs", "1", "--gin-param", "TrainerConfig.max_env_step=2000",
                    "--out", str(tmp_path / "out.json"))
    line = one_line_refusal(result)
    assert line.startswith("pendulum: ") and "did you mean 'max_env_steps'?" in line, line
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize(("args", "words"), [
    (("--gin-param", "TrainerConfig.max_env_steps=100"), "below ReplayConfig.min_size"),
    (("--config", "no/such/file.gin"), "does not exist"),
    (("--workers", "0"), "--workers must be >= 1"),
])
def test_what_polyak_train_would_refuse_is_refused_up_front(tmp_path, args, words):
    line = one_line_refusal(script("pendulum.py", "--seeds", "0", "--jobs", "1", *args,
                                   "--out", str(tmp_path / "out.json")))
    assert line.startswith("pendulum: ") and words in line, line


def test_every_seed_is_checked_before_any_run_not_only_the_first(tmp_path):
    line = one_line_refusal(script("pendulum.py", "--seeds", "0", "-1", "--jobs", "1",
                                   "--out", str(tmp_path / "out.json")))
    assert line == "pendulum: seed must be a whole number from 0 to 2**63 - 1, got -1", line


def test_no_jobs_is_a_usage_error(tmp_path):
    line = one_line_refusal(script("pendulum.py", "--jobs", "0", "--out", str(tmp_path / "out.json")))
    assert "--jobs must be at least 1, got 0" in line


def test_a_short_run_records_its_own_budget_and_the_config_path(tmp_path):
    """A binding that changes the budget is what the result records (read from the run's config.json), and the
    shipped config is named by its path in the repository, not its bare file name."""
    out = tmp_path / "pendulum.json"
    result = script("pendulum.py", "--seeds", "0", "--jobs", "1", "--out", str(out),
                    "--gin-param", "TrainerConfig.max_env_steps=1200", "--gin-param", "ReplayConfig.min_size=200",
                    "--gin-param", "TrainerConfig.start_steps=200", "--gin-param", "TrainerConfig.eval_interval=600",
                    timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    recorded = json.loads(out.read_text())
    assert json.loads(result.stdout.strip().splitlines()[-1]) == recorded
    assert recorded["settings"]["max_env_steps"] == 1200
    assert recorded["settings"]["config"] == "configs/pendulum.gin"
    assert [seed["max_env_steps"] for seed in recorded["seeds"]] == [1200]
    assert recorded["seeds"][0]["final_eval"] is not None


def test_a_users_config_is_recorded_by_its_path(pendulum, tmp_path, monkeypatch):
    mine = tmp_path / "repo" / "my" / "pendulum.gin"
    mine.parent.mkdir(parents=True)
    shutil.copyfile(ROOT / "configs" / "pendulum.gin", mine)
    assert pendulum.recorded_config(str(ROOT / "configs" / "pendulum.gin")) == "configs/pendulum.gin"
    monkeypatch.chdir(ROOT)
    assert pendulum.recorded_config("configs/pendulum.gin") == "configs/pendulum.gin"
    assert pendulum.recorded_config("pendulum") == "configs/pendulum.gin"  # by name: the same file, the same words
    assert pendulum.recorded_config("suite/hopper_td3") == "configs/suite/hopper_td3.gin"

    monkeypatch.setattr(pendulum, "ROOT", tmp_path / "repo")  # a user's file inside the repository
    monkeypatch.chdir(tmp_path / "repo")
    assert pendulum.recorded_config("my/pendulum.gin") == "my/pendulum.gin"
    assert pendulum.recorded_config(str(mine)) == "my/pendulum.gin"

    monkeypatch.setattr(pendulum, "ROOT", ROOT)  # outside it: as given
    monkeypatch.chdir(tmp_path / "repo")
    assert pendulum.recorded_config("my/pendulum.gin") == "my/pendulum.gin"
    assert pendulum.recorded_config(str(mine)) == str(mine)


def test_settings_record_the_runs_budget(pendulum):
    seeds = [{"seed": 0, "max_env_steps": 3000}, {"seed": 1, "max_env_steps": 3000}]
    settings = pendulum.settings(str(ROOT / "configs" / "pendulum.gin"), ["TrainerConfig.max_env_steps=3000"], 2,
                                 None, seeds)
    assert settings == {"config": "configs/pendulum.gin", "gin_params": ["TrainerConfig.max_env_steps=3000"],
                        "jobs": 2, "apex_workers": None, "torch_threads_per_run": 1, "max_env_steps": 3000}
    differed = pendulum.settings("configs/pendulum.gin", [], 1, None, [*seeds, {"seed": 2, "max_env_steps": 20000}])
    assert differed["max_env_steps"] == [3000, 20000]


# ------------------------------------------------------------------------------------------- actor_average.py
@pytest.mark.parametrize("task", ["Pendulum-v1", "MountainCarContinuous-v0", "HopperBulletEnv-v0"])
def test_a_task_without_the_rows_config_is_not_a_choice(task):
    line = one_line_refusal(script("actor_average.py", "--task", task))
    assert line.startswith("actor_average.py: error: argument --task: invalid choice"), line


def test_the_choices_are_the_tasks_with_the_rows_config():
    actor_average = pytest.importorskip("actor_average")
    suite = pytest.importorskip("suite")
    tasks = actor_average.runnable_tasks()
    assert set(suite.SAMPLE_EFFICIENCY_TASKS) <= set(tasks)
    assert set(tasks) == set(suite.SAMPLE_EFFICIENCY_TASKS) | {"InvertedPendulum-v5"}
    assert actor_average.learning_start("Hopper-v5") == 5000


@pytest.mark.parametrize(("args", "words"), [
    (("--budget", "2000"), "--budget must be above 5000 on Hopper-v5"),
    (("--budget", "5000"), "--budget must be above 5000 on Hopper-v5"),
    (("--budget", "0"), "--budget must be above 5000 on Hopper-v5"),
    (("--task", "InvertedPendulum-v5", "--budget", "-1"), "--budget must be above 5000 on InvertedPendulum-v5"),
    (("--taus", "0.01", "0"), "every --taus rate must be in (0, 1]"),
    (("--taus", "1.5"), "every --taus rate must be in (0, 1]"),
])
def test_a_bad_budget_or_rate_is_one_line_before_training(args, words):
    line = one_line_refusal(script("actor_average.py", *args))
    assert line.startswith("actor_average.py: error: ") and words in line, line


# ---------------------------------------------------------------------------------- the study scripts' help
@pytest.mark.parametrize("name", ["critic_width.py", "baseline_width.py"])
def test_the_study_scripts_say_their_defaults_and_the_skip(name):
    pytest.importorskip("rliable")
    result = script(name, "--help")
    assert result.returncode == 0, result.stderr[-2000:]
    text = " ".join(result.stdout.split())
    assert "(default: 512)" in text and "(default: 0)" in text and "(default: Ant-v5)" in text
    assert "exists is skipped unless --force" in text
    assert "--out-dir OUT_DIR write the run's result file under this folder instead of benchmarks/results/" in text
    if name == "critic_width.py":
        assert "--taus follow-up" in text and "HalfCheetah-v5 runs with --taus (seeds 5-9)" in text
        assert "Would a wider critic lift" not in text


# ------------------------------------------------------------------------------------------ suite_ablations.py
def test_an_ablation_the_task_does_not_have_is_one_line_naming_where_it_runs(tmp_path):
    result = script("suite_ablations.py", "--only", "Hopper-v5", "--variants", "no_noise", "--out-dir", str(tmp_path))
    line = one_line_refusal(result)
    assert "no_noise is not a variant of Hopper-v5 (it runs on MountainCarContinuous-v0)" in line, line
    assert not list(tmp_path.iterdir())


def test_the_ablation_runner_says_when_nothing_is_left_to_run(tmp_path):
    folder = tmp_path / "suite_ablations" / "hopper"
    folder.mkdir(parents=True)
    (folder / "ou_seed_0.json").write_text("{}")
    result = script("suite_ablations.py", "--only", "Hopper-v5", "--variants", "ou", "--seeds", "0",
                    "--out-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "every asked run has its result file already (--force runs them again)" in result.stdout, result.stdout
    assert "Traceback" not in result.stderr


# ------------------------------------------------------------------------------------------------ ablations.py
def test_a_failed_ablation_run_is_recorded_as_its_error_not_a_crash_of_the_sweep(tmp_path):
    spec = importlib.util.spec_from_file_location("ablations_benchmark", BENCHMARKS / "ablations.py")
    ablations = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = ablations  # its dataclasses look their module up
    spec.loader.exec_module(ablations)
    task = ablations.tasks(2000, 2)["pendulum"]
    bad = ablations.Variant("bad_tau", "test", ("AgentConfig.tau=2.0",))  # polyak refuses it before training
    record = ablations.one_run(task, bad, 0, tmp_path, quick=True)
    assert record["seed"] == 0 and "tau" in record["error"] and "Traceback" not in record["error"], record
