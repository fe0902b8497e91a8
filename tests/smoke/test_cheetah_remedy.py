"""benchmarks/cheetah_remedy.py: a run of an arm trains the recommended row with the arm's change and reads its
posture at each checkpoint; the report applies the rule written before the runs and tests the control only on its
full set of seeds."""

from __future__ import annotations

import json
import sys
from math import comb

import pytest

from tests.smoke.cli_helpers import ROOT

pytest.importorskip("mujoco")
sys.path.insert(0, str(ROOT / "benchmarks"))
remedy = pytest.importorskip("cheetah_remedy")

STEPS = list(range(5_000, 100_001, 5_000))


@pytest.fixture
def study(tmp_path, monkeypatch):
    monkeypatch.setattr(remedy, "STUDY", tmp_path / "study")
    monkeypatch.setattr(remedy, "REPORT", tmp_path / "report.md")
    # the follow-up's finals: 3 slow of 10 and 2 slow of 10 (5 of 20 in all)
    monkeypatch.setattr(remedy, "follow_up_finals", lambda: {
        "polyak_recommended": [2_000.0, 5_000.0, 5_500.0] + [8_000.0] * 7,
        "sb3_crossq": [5_300.0, 5_500.0] + [8_500.0] * 8})
    monkeypatch.setattr(remedy, "same_seed_runs", lambda: SB3_RUNS)
    SB3_RUNS.clear()
    return tmp_path


SB3_RUNS: list[dict] = []  # sb3-contrib's runs on the study's seeds, as the same-seed check reads them


def write(arm: str, seed: int, final: float) -> None:
    curve = [final * step / STEPS[-1] for step in STEPS]
    posture = [{"env_steps": step, "mean_pitch": 0.1 * step / STEPS[-1]} for step in range(10_000, 100_001, 10_000)]
    result = {"seed": seed, "eval_steps": STEPS, "eval_returns": curve, "final_return": final, "posture": posture,
              "cpu_seconds": 600.0, "code_commit": {"commit": "abcdef0123"},
              "machine": {"cpu": "CPU", "cpu_isa": "X"}}
    path = remedy.result_path(arm, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result))


def test_the_rule_waits_for_ten_seeds_and_drops_the_remedy_at_three_slow_runs():
    assert remedy.verdict([8_000.0, 5_999.0]) == "undecided: 2 of 10 seeds run, 1 slow"
    assert remedy.verdict([5_000.0, 4_000.0, 3_000.0]).startswith("dropped: 3 slow runs")
    assert remedy.verdict([5_000.0] + [8_100.0] * 9) == "worth the five-task rerun"  # mean 7,790, 1 slow
    assert remedy.verdict([5_000.0] * 2 + [9_000.0] * 8) == "not worth the rerun"  # mean 8,200, but 2 slow
    assert remedy.verdict([6_000.0] + [7_700.0] * 9) == "not worth the rerun"  # none slow, mean 7,530 < 7,767


def test_the_report_lists_each_run_and_tests_the_control_on_its_full_set_of_seeds(study):
    write(remedy.REMEDY, 10, 9_000.0)
    write(remedy.REMEDY, 11, 3_000.0)
    for seed in remedy.SEEDS[:-1]:
        write(remedy.CONTROL, seed, 7_000.0)
    text = remedy.report()
    # the run line: final, its return at 50k (half of the linear curve), best, mean of the last five, pitch at 50k/end
    assert "| critic_lr_5e-4 | 11 | 3,000 | 1,500 | 3,000 | 2,700 | 0.05 / 0.10 | yes | 10.0 |" in text
    assert "| critic_lr_5e-4 (seeds 10-19) | 2 | 6,000 |  | 1 |" in text  # no IQM from fewer than 3 runs
    assert "| sb3_crossq at 512 (the follow-up, seeds 0-9) | 10 | 7,880 |" in text
    assert "Verdict on critic_lr_5e-4: undecided: 2 of 10 seeds run, 1 slow." in text
    assert "Verdict on critic_lr_7e-4: no runs yet." in text
    assert "Control: 9 of 10 seeds run" in text
    write(remedy.CONTROL, remedy.SEEDS[-1], 7_000.0)
    text = remedy.report()
    # P(all 5 slow runs among the 20 at 512, given 5 slow in 30) = C(20,5) / C(30,5)
    assert f"p = {comb(20, 5) / comb(30, 5):.3f}" in text and "against 0 of 10 at 256" in text
    assert remedy.REPORT.read_text() == text


def test_the_same_seed_check_compares_each_arm_with_sb3_on_its_own_seeds_and_judges_only_the_candidate(study):
    for seed in remedy.SEEDS:
        write(remedy.MIDPOINT, seed, 7_000.0 + 100 * (seed - 10))  # 7,000 .. 7,900, mean 7,450
        write(remedy.REMEDY, seed, 9_000.0)
    SB3_RUNS.extend({"seed": seed, "final_return": 7_400.0, "code_commit": {"commit": "0123456789"},
                     "machine": {"cpu": "CPU", "cpu_isa": "X"}} for seed in (10, 11))
    text = remedy.report()
    assert "sb3_crossq at 512 on seeds 10-19, 2 of 10 run, mean final 7,400, 0 slow" in text
    assert "| 11 | 7,400 | +1,600 | -300 | — |" in text  # 5e-4, 7e-4 (7,100 - 7,400), the control has no run
    # the candidate over seeds 10-11: 7,000 and 7,100 against 7,400 twice: lower on both, probability 0
    assert "| critic_lr_7e-4 | 2 | -350 | 0 of 2 | 0.00 [0.00, 0.00] |" in text
    assert "| critic_lr_5e-4 | 2 | +1,600 | 2 of 2 | 1.00 [1.00, 1.00] |" in text
    assert "Same-seed verdict on critic_lr_7e-4: undecided: 2 of 10 sb3_crossq seeds run." in text
    assert "0123456" in text.splitlines()[-1]  # sb3-contrib's commits are among those the runs were trained at
    SB3_RUNS.extend({**SB3_RUNS[0], "seed": seed} for seed in remedy.SEEDS[2:])
    assert "Same-seed verdict on critic_lr_7e-4: worth the five-task rerun." in remedy.report()  # 7,450 >= 7,400
    SB3_RUNS[:] = [{**run, "final_return": 7_451.0} for run in SB3_RUNS]
    assert "Same-seed verdict on critic_lr_7e-4: its verdict stands (not worth the rerun)." in remedy.report()
    high_but_two_slow = {seed: 9_000.0 if seed > 11 else 5_000.0 for seed in remedy.SEEDS}  # mean 8,200
    assert remedy.same_seed_verdict(high_but_two_slow, dict.fromkeys(remedy.SEEDS, 7_000.0)).startswith(
        "its verdict stands")


def test_a_run_reads_its_posture_at_each_checkpoint_and_keeps_its_change(study, monkeypatch):
    monkeypatch.setattr(remedy, "STUDY", remedy.RESULTS / "cheetah_remedy")  # --out-dir relocates the committed path
    monkeypatch.setattr(remedy, "POSTURE_EPISODES", 1)
    small = ("TrainerConfig.max_env_steps = 200", "TrainerConfig.eval_interval = 100",
             "TrainerConfig.checkpoint_interval = 100", "TrainerConfig.start_steps = 50", "ReplayConfig.min_size = 50",
             "TrainerConfig.eval_episodes = 1")  # after the protocol's bindings, so they win; it learns from step 50
    monkeypatch.setattr(remedy, "KEEP_CHECKPOINTS", (*remedy.KEEP_CHECKPOINTS, *small))
    out = study / "out"
    remedy.train(remedy.REMEDY, 10, out_dir=out)
    result = json.loads((out / "cheetah_remedy" / remedy.REMEDY / "seed_10.json").read_text())
    assert [row["env_steps"] for row in result["posture"]] == [100, 200]
    assert {"critic/NetworkConfig.lr = 0.0005", "critic/NetworkConfig.hidden_sizes = (512, 512)"} <= set(
        result["settings"]["gin_params"])
    assert result["remedy"] == remedy.REMEDY and result["cpu_seconds"] > 0
    assert not (out / "runs" / "cheetah_remedy" / remedy.REMEDY / "halfcheetah" / "w512_seed_10").exists()
    remedy.train(remedy.REMEDY, 10, out_dir=out)  # a finished run is not trained again
    assert json.loads((out / "cheetah_remedy" / remedy.REMEDY / "seed_10.json").read_text()) == result
