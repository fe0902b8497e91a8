"""benchmarks/critic_lr_rerun.py: a run trains the recommended row with the rerun's critic learning rate; the
HalfCheetah-v5 gate, written before the runs, holds the other tasks back until it passes; the report pairs each run
with the shipped row and sb3-contrib's CrossQ at 512 on its seed, and reads the shipping rule only on all 25 runs."""

from __future__ import annotations

import json
import re
import shutil
import sys

import pytest

from tests.smoke.cli_helpers import ROOT

pytest.importorskip("mujoco")
sys.path.insert(0, str(ROOT / "benchmarks"))
rerun = pytest.importorskip("critic_lr_rerun")

STEPS = list(range(5_000, 100_001, 5_000))


def write(path, final: float, curve: list[float] | None = None) -> None:
    curve = curve or [final * step / STEPS[-1] for step in STEPS]
    result = {"eval_steps": STEPS, "eval_returns": curve, "final_return": curve[-1], "cpu_seconds": 3_600.0,
              "code_commit": {"commit": "abcdef0123"}, "machine": {"cpu": "CPU", "cpu_isa": "X"}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result))


@pytest.fixture
def study(tmp_path, monkeypatch):
    """The rerun's, the shipped row's and sb3-contrib's files under ``tmp_path``: shipped 8,000 and sb3-contrib
    7,600 on every seed of every task."""
    monkeypatch.setattr(rerun, "STUDY", tmp_path / "rerun")
    monkeypatch.setattr(rerun, "REPORT", tmp_path / "report.md")
    monkeypatch.setattr(rerun, "result_path", lambda _results, task, row, seed: tmp_path / "suite" / task / f"{seed}")
    monkeypatch.setattr(rerun, "sb3_path", lambda task, width, seed: tmp_path / f"sb3_{width}" / task / f"{seed}")
    for task in rerun.SAMPLE_EFFICIENCY_TASKS:
        for seed in rerun.SEEDS:
            write(rerun.result_path(None, task, None, seed), 8_000.0)
            write(rerun.sb3_path(task, rerun.WIDTH, seed), 7_600.0)
    return tmp_path


def test_the_gate_waits_for_five_seeds_and_compares_means_with_sb3_contrib():
    sb3 = dict.fromkeys(rerun.SEEDS, 7_600.0)
    assert rerun.gate({0: 9_000.0, 2: 8_000.0}, sb3) == (  # 5 x 7,600 - 17,000 = 21,000 over 3 seeds
        "undecided: 2 of 5 rerun seeds run (sb3-contrib 5 of 5); to pass, seeds 1, 3, 4 must average at least 7,000")
    assert rerun.gate({0: 9_000.0}, {0: 7_600.0}) == "undecided: 1 of 5 rerun seeds run (sb3-contrib 1 of 5)"
    assert rerun.gate(dict.fromkeys(rerun.SEEDS, 7_600.0), sb3).startswith("passed: mean final 7,600")
    one_slow = rerun.gate({0: 2_000.0, 1: 9_000.0, 2: 9_000.0, 3: 9_000.0, 4: 9_000.0}, sb3)  # mean 7,600: a tie
    assert one_slow.startswith("passed")
    failed = rerun.gate({**dict.fromkeys(rerun.SEEDS, 7_600.0), 0: 7_599.0}, sb3)  # mean 7,599.8
    assert failed.startswith("failed: mean final 7,600 against sb3-contrib's 7,600 (0.0% behind)")
    assert "the like-for-like miss stands" in failed


def test_the_other_tasks_wait_for_the_gate(study):
    waits = "Hopper-v5 waits for the HalfCheetah-v5 gate (undecided: 0 of 5"
    with pytest.raises(rerun.RunFailed, match=re.escape(waits)):
        rerun.train("Hopper-v5", 0)
    for seed in rerun.SEEDS:
        write(rerun.rerun_path("HalfCheetah-v5", seed), 7_000.0)
    failed = "gate (failed: mean final 7,000 against sb3-contrib's 7,600 (7.9% behind)"
    with pytest.raises(rerun.RunFailed, match=re.escape(failed)):
        rerun.train("Walker2d-v5", 0)


def test_the_report_pairs_runs_by_seed_and_reads_the_shipping_rule_on_all_runs(study):
    write(rerun.rerun_path("HalfCheetah-v5", 0), 9_000.0)
    write(rerun.rerun_path("HalfCheetah-v5", 1), 7_000.0)
    text = rerun.report()
    assert "| HalfCheetah-v5 | 0 | 9,000 | 8,000 | +1,000 | 7,600 | 60.0 |" in text
    assert "| HalfCheetah-v5 | 2 | 8,000 | 8,000 | 7,600 | yes |" in text  # means over seeds 0-1
    assert "Gate (HalfCheetah-v5): undecided: 2 of 5 rerun seeds run" in text
    assert "read once all 25 rerun runs are in" in text and "Hopper-v5 |" not in text
    rerun.sb3_path("HalfCheetah-v5", rerun.WIDTH, 1).unlink()
    assert "| HalfCheetah-v5 | 1 | 7,000 | 8,000 | -1,000 | — | 60.0 |" in rerun.report()
    write(rerun.sb3_path("HalfCheetah-v5", rerun.WIDTH, 1), 7_600.0)
    for task in rerun.SAMPLE_EFFICIENCY_TASKS:
        for seed in rerun.SEEDS:
            write(rerun.rerun_path(task, seed), 9_000.0)  # every final above the shipped row's, curves as steady
    text = rerun.report()
    assert "Gate (HalfCheetah-v5): passed: mean final 9,000 against sb3-contrib's 7,600" in text
    assert "Ship the rerun's row: **yes**." in text
    # the same final, but after a best of 12,000: its last five over its best 0.75, the linear curves' 0.9
    falls = [12_000.0 * step / STEPS[14] for step in STEPS[:15]] + [9_000.0] * 5
    write(rerun.rerun_path("Ant-v5", 3), 9_000.0, falls)
    assert rerun.shipping_rule()["rerun"]["lowest_stability"] < rerun.shipping_rule()["shipped"]["lowest_stability"]
    assert "Ship the rerun's row: **no**." in rerun.report()
    assert rerun.REPORT.read_text().endswith("Trained at abcdef0 on X, one torch thread a run.\n")


def test_a_run_trains_the_recommended_row_with_the_rerun_s_learning_rate(study, monkeypatch):
    monkeypatch.setattr(rerun, "STUDY", rerun.RESULTS / "critic_lr_rerun")  # --out-dir relocates the committed path
    small = ("TrainerConfig.max_env_steps = 200", "TrainerConfig.eval_interval = 100", "TrainerConfig.start_steps = 50",
             "ReplayConfig.min_size = 50", "TrainerConfig.eval_episodes = 1")
    monkeypatch.setattr(rerun, "BINDINGS", (*rerun.BINDINGS, *small))
    out = study / "out"
    rerun.train("HalfCheetah-v5", 0, out_dir=out)
    result = json.loads((out / "critic_lr_rerun" / "halfcheetah" / "seed_0.json").read_text())
    assert {"critic/NetworkConfig.lr = 0.0007", "critic/NetworkConfig.hidden_sizes = (512, 512)"} <= set(
        result["settings"]["gin_params"])
    assert result["eval_steps"] == [100, 200] and result["seed"] == 0 and result["cpu_seconds"] > 0


def rerun_record(task: str, seed: int, final: float, curve: list[float] | None = None) -> dict:
    """A rerun result file as ``recorded_run`` writes it."""
    curve = curve or [final * step / STEPS[-1] for step in STEPS]
    return {"eval_steps": STEPS, "eval_returns": curve, "live_eval_returns": curve, "final_return": final,
            "eval_wall_seconds": [10.0] * len(STEPS), "wall_seconds": 4_000.0, "cpu_seconds": 3_600.0,
            "task": task, "row": "polyak_recommended", "critic_width": 512, "seed": seed, "budget": 100_000,
            "settings": {"config": "configs/suite/x_recommended.gin",
                         "gin_params": ["TrainerConfig.max_env_steps = 100000",
                                        "critic/NetworkConfig.hidden_sizes = (512, 512)", rerun.LR_BINDING]},
            "code_commit": {"commit": "abcdef0123"}, "machine": {"cpu": "CPU", "cpu_isa": "X"},
            "load_average": {"before": [2.0], "after": [2.0]}, "finished": "today", "env_steps_per_cpu_s": 27.8}


def test_promote_writes_the_runs_as_the_suites_row_only_when_the_rule_and_configs_say_so(study, monkeypatch):
    monkeypatch.setattr(rerun, "ROOT", study)
    monkeypatch.setattr(rerun, "PARTNERS", study / "partners")
    monkeypatch.setattr(rerun, "shipped_mismatches", lambda: [])
    suite_file = rerun.result_path(None, "Ant-v5", None, 3)
    before = suite_file.read_text()
    for task in rerun.SAMPLE_EFFICIENCY_TASKS:
        for seed in rerun.SEEDS:
            if (task, seed) != ("Humanoid-v5", 4):
                write(rerun.rerun_path(task, seed), 0.0)  # a placeholder, replaced below
                rerun.rerun_path(task, seed).write_text(json.dumps(rerun_record(task, seed, 9_000.0 + seed)))
    with pytest.raises(SystemExit, match=re.escape("owes 1 runs (Humanoid-v5 seed 4); nothing promoted")):
        rerun.promote()
    # Humanoid seed 4 falls from a best of 12,000 to 9,000: higher finals, but a less steady task than the shipped
    falls = [12_000.0 * step / STEPS[14] for step in STEPS[:15]] + [9_000.0] * 5
    rerun.rerun_path("Humanoid-v5", 4).write_text(json.dumps(rerun_record("Humanoid-v5", 4, 9_000.0, falls)))
    with pytest.raises(SystemExit, match="the shipping rule keeps critic lr 1e-3"):
        rerun.promote()
    rerun.rerun_path("Humanoid-v5", 4).write_text(json.dumps(rerun_record("Humanoid-v5", 4, 9_004.0)))
    monkeypatch.setattr(rerun, "shipped_mismatches", lambda: ["configs/recommended.gin: critic lr is 0.001"])
    with pytest.raises(SystemExit, match=re.escape("configs are not the rerun's yet; configs/recommended.gin")):
        rerun.promote()
    assert suite_file.read_text() == before and not rerun.PARTNERS.exists()  # every refusal wrote nothing
    verdict = rerun.shipping_rule()
    assert verdict["ship"]

    monkeypatch.setattr(rerun, "shipped_mismatches", lambda: [])
    assert len(rerun.promote()) == 25
    ant = json.loads(suite_file.read_text())
    assert ant["final_return"] == 9_003.0 and ant["critic_width"] == 512 and ant["env_steps_per_s"] == 25.0
    assert ant["settings"]["gin_params"] == ["TrainerConfig.max_env_steps = 100000"]  # the config carries the rest
    assert ant["from_rerun"]["file"] == "rerun/ant/seed_3.json"
    kept = study / "partners" / "ant" / "polyak_recommended_seed_3.json"
    assert kept.read_text() == before and rerun.shipped_path("Ant-v5", 3) == kept
    # The report and the rule still pair each run with the row it replaced, not with itself.
    assert rerun.shipped_finals("Ant-v5") == dict.fromkeys(rerun.SEEDS, 8_000.0)
    assert rerun.shipping_rule() == verdict
    rerun.promote()  # again: the kept files stay the replaced runs
    assert kept.read_text() == before


def test_the_shipped_configs_are_compared_with_the_rerun_s_critic(tmp_path, monkeypatch):
    """Copies of the six files, lines appended, against 512 wide and lr 7e-4."""
    shutil.copytree(ROOT / "configs" / "suite", tmp_path / "configs" / "suite")
    shutil.copy(ROOT / "configs" / "recommended.gin", tmp_path / "configs" / "recommended.gin")
    appended = {"halfcheetah": "critic/NetworkConfig.hidden_sizes = (256, 256)",
                "hopper": "critic/NetworkConfig.lr = 0.001", "recommended": "critic/NetworkConfig.lr = 0.0005"}
    for path in [*(tmp_path / "configs" / "suite").glob("*_recommended.gin"), tmp_path / "configs" / "recommended.gin"]:
        extra = appended.get(path.stem.removesuffix("_recommended"), "")
        path.write_text(f"{path.read_text()}\n{rerun.LR_BINDING}\n{extra}\n")
    monkeypatch.setattr(rerun, "ROOT", tmp_path)
    monkeypatch.setattr(rerun, "config_file", lambda task, algo: (
        tmp_path / "configs" / "suite" / f"{rerun.TASKS[task].config_stem}_{algo}.gin"))
    assert rerun.shipped_mismatches() == [
        "configs/suite/halfcheetah_recommended.gin: critic width is (256, 256), the rerun's is (512, 512)",
        "configs/suite/hopper_recommended.gin: critic lr is 0.001, the rerun's is 0.0007",
        "configs/recommended.gin: critic lr is 0.0005, the rerun's is 0.0007"]
