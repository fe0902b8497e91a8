"""benchmarks/critic_width.py's decision rule and report on hand-made runs: a width passes on a task when its mean
final return beats the 256-wide row's on the same seeds and its mean stability is not lower by more than 0.05, and
is worth the full rerun only when it passes on both tasks tried."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.smoke.cli_helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
critic_width = pytest.importorskip("critic_width")


def run(task: str, seed: int, curve: list[float], width: int | None = None) -> dict:
    result = {"task": task, "seed": seed, "eval_returns": curve, "cpu_seconds": 600.0,
              "machine": {"cpu_isa": "AVX512", "cpu": "AMD EPYC"}, "code_commit": {"commit": "abcdef0"}}
    return result if width is None else {**result, "critic_width": width}


def test_numbers_of_a_curve_by_hand():
    n = critic_width.numbers(run("Ant-v5", 0, [100.0, 400.0, 200.0, 300.0, 300.0, 200.0]))
    assert n["final"] == 200.0 and n["best"] == 400.0
    assert n["last5"] == pytest.approx(280.0)  # (400 + 200 + 300 + 300 + 200) / 5
    assert n["stability"] == pytest.approx(0.7)  # 280 / 400
    assert n["cpu_min"] == pytest.approx(10.0)


def test_a_width_passes_only_when_it_beats_the_base_on_both_tasks_and_keeps_its_stability():
    steady_up = [500.0] * 5 + [1000.0] * 5  # stability 1.0, final 1000
    base = run("Ant-v5", 0, [500.0] * 10)  # stability 1.0, final 500
    pairs = {("Ant-v5", 512): [(base, run("Ant-v5", 0, steady_up, 512))],
             ("Humanoid-v5", 512): [(run("Humanoid-v5", 0, [500.0] * 10), run("Humanoid-v5", 0, steady_up, 512))]}
    assert critic_width.decision(pairs)[512]["worth_rerun"]

    # Higher final on Humanoid, but its stability falls from 1.0 to 0.82 (last five 820 of a best of 1,000).
    falling = [1000.0] * 5 + [1000.0, 700.0, 700.0, 700.0, 1000.0]
    assert critic_width.numbers(run("Humanoid-v5", 0, falling))["stability"] == pytest.approx(0.82)
    pairs[("Humanoid-v5", 512)] = [(run("Humanoid-v5", 0, [500.0] * 10), run("Humanoid-v5", 0, falling, 512))]
    verdict = critic_width.decision(pairs)[512]
    assert verdict["tasks"]["Ant-v5"]["passes"] and not verdict["tasks"]["Humanoid-v5"]["passes"]
    assert not verdict["worth_rerun"]

    # One task alone is never enough.
    assert not critic_width.decision({("Ant-v5", 512): pairs[("Ant-v5", 512)]})[512]["worth_rerun"]


def test_the_report_pairs_each_study_run_with_the_suite_run_of_its_seed(tmp_path, monkeypatch):
    results = tmp_path / "results"
    suite_file = results / "suite" / "ant" / "polyak_recommended_seed_3.json"
    suite_file.parent.mkdir(parents=True)
    suite_file.write_text(json.dumps(run("Ant-v5", 3, [100.0] * 20)))
    study = results / "critic_width"
    (study / "ant").mkdir(parents=True)
    (study / "ant" / "w512_seed_3.json").write_text(json.dumps(run("Ant-v5", 3, [200.0] * 20, 512)))
    (study / "ant" / "w512_seed_4.json").write_text(json.dumps(run("Ant-v5", 4, [900.0] * 20, 512)))  # no partner
    monkeypatch.setattr(critic_width, "RESULTS", results)
    monkeypatch.setattr(critic_width, "STUDY", study)
    text = critic_width.report()
    assert "| Ant-v5 | 3 | 256 | 100.0 |" in text and "| Ant-v5 | 3 | 512 | 200.0 |" in text
    assert "900.0" not in text  # a seed without its 256-wide partner is not compared
    assert "| 512 | Ant-v5 | 1 | 100.0 → 200.0 | 1.00 → 1.00 | yes |" in text
    assert "width 512: undecided (no runs yet on Humanoid-v5)" in text
    assert "- width 512: HalfCheetah-v5 0, Hopper-v5 0, Walker2d-v5 0, Ant-v5 1, Humanoid-v5 0" in text
    assert (results / "critic_width.md").read_text() == text


def test_the_rerun_tasks_join_the_table_but_not_the_rule():
    steady_up = [500.0] * 5 + [1000.0] * 5
    pairs = {(task, 512): [(run(task, 0, [500.0] * 10), run(task, 0, steady_up, 512))]
             for task in ("Ant-v5", "Humanoid-v5")}
    # A Hopper run far below its partner does not change the verdict: the rule is decided on Ant and Humanoid.
    pairs[("Hopper-v5", 512)] = [(run("Hopper-v5", 0, [3000.0] * 10), run("Hopper-v5", 0, [100.0] * 10, 512))]
    verdict = critic_width.decision(pairs)[512]
    assert verdict["worth_rerun"] and set(verdict["tasks"]) == {"Ant-v5", "Humanoid-v5"}


def test_the_follow_up_judges_each_average_by_the_pilots_rule_and_picks_the_steadiest(tmp_path, monkeypatch):
    results = tmp_path / "results"
    for stem, task in (("ant", "Ant-v5"), ("humanoid", "Humanoid-v5")):
        suite_file = results / "suite" / stem / "polyak_recommended_seed_0.json"
        suite_file.parent.mkdir(parents=True)
        suite_file.write_text(json.dumps(run(task, 0, [500.0] * 10)))  # final 500, stability 1.0
        wide = {**run(task, 0, [500.0] * 5 + [2000.0, 1000.0] * 2 + [2000.0], 512),  # shipped: last five 1,600
                "averages": {"0.001": [500.0] * 5 + [1900.0] * 5,  # stability 1.0, final 1,900
                             "0.0005": [500.0] * 5 + [1000.0] * 4 + [1950.0]},  # stability 0.61, final 1,950
                "same_as_pilot": None}
        (results / "critic_width_averaging" / stem).mkdir(parents=True)
        (results / "critic_width_averaging" / stem / "w512_seed_0.json").write_text(json.dumps(wide))
    (results / "critic_width" / "ant").mkdir(parents=True)
    (results / "critic_width" / "ant" / "w512_seed_0.json").write_text(json.dumps(run("Ant-v5", 0, [600.0] * 10, 512)))
    monkeypatch.setattr(critic_width, "RESULTS", results)
    monkeypatch.setattr(critic_width, "STUDY", results / "critic_width")
    monkeypatch.setattr(critic_width, "AVERAGING", results / "critic_width_averaging")
    assert "- w512 tau 0.001: undecided (waiting for Ant-v5 seed 1, Humanoid-v5 seed 1, Humanoid-v5 seed 2)" in (
        text := critic_width.report())  # the verdict waits for the pilot's seeds
    assert "Pick: **none yet**." in text
    monkeypatch.setattr(critic_width, "FOLLOW_UP_SEEDS", {"Ant-v5": (0,), "Humanoid-v5": (0,)})

    verdicts = critic_width.decision(critic_width.averaging_pairs())
    assert set(verdicts) == {"w512 shipped", "w512 tau 0.001", "w512 tau 0.0005"}
    assert not verdicts["w512 shipped"]["worth_rerun"]  # stability 1.0 -> 0.80, beyond the 0.05 allowed
    assert verdicts["w512 tau 0.001"]["worth_rerun"] and not verdicts["w512 tau 0.0005"]["worth_rerun"]
    assert critic_width.averaging_pick(verdicts) == "w512 tau 0.001"

    text = critic_width.report()
    assert "| Humanoid-v5 | 0 | w512 tau 0.001 | 1900.0 | 1900.0 | 1900.0 | 1.00 | 500.0 | 1.00 |" in text
    assert "| w512 shipped | Ant-v5 | 1 | 500.0 → 2000.0 | 1.00 → 0.80 | no |" in text
    assert "Pick: **w512 tau 0.001**." in text
    assert ("The rerun's runs at width 512 (seeds 0-4 per task; `--promote 512` once all are in and the pick is made): "
            "HalfCheetah-v5 0, Hopper-v5 0, Walker2d-v5 0, Ant-v5 1, Humanoid-v5 1.") in text
    assert "- Ant-v5 seed 0: the shipped curve equals the pilot's run of the seed: no pilot run" in text


def test_the_follow_up_is_undecided_until_both_tasks_have_runs_and_then_may_pick_none(tmp_path, monkeypatch):
    results = tmp_path / "results"
    monkeypatch.setattr(critic_width, "RESULTS", results)
    monkeypatch.setattr(critic_width, "STUDY", results / "critic_width")
    monkeypatch.setattr(critic_width, "AVERAGING", results / "critic_width_averaging")
    monkeypatch.setattr(critic_width, "FOLLOW_UP_SEEDS", {"Ant-v5": (0,), "Humanoid-v5": (0,)})
    (results / "critic_width" / "ant").mkdir(parents=True)  # the report starts from the pilot's runs
    (results / "critic_width" / "ant" / "w512_seed_0.json").write_text(json.dumps(run("Ant-v5", 0, [600.0] * 10, 512)))
    for stem, task in (("ant", "Ant-v5"), ("humanoid", "Humanoid-v5")):
        suite_file = results / "suite" / stem / "polyak_recommended_seed_0.json"
        suite_file.parent.mkdir(parents=True)
        suite_file.write_text(json.dumps(run(task, 0, [500.0] * 10)))
        wide = {**run(task, 0, [500.0] * 10, 512), "averages": {"0.001": [400.0] * 10}, "same_as_pilot": None}
        (results / "critic_width_averaging" / stem).mkdir(parents=True)
        (results / "critic_width_averaging" / stem / "w512_seed_0.json").write_text(json.dumps(wide))
        text = critic_width.report()
        if task == "Ant-v5":  # final 400 is not above the 256-wide 500 on Ant, but Humanoid is still to run
            assert "- w512 tau 0.001: undecided (waiting for Humanoid-v5 seed 0)" in text
            assert "Pick: **none yet**." in text
    assert "- w512 tau 0.001: not worth it" in text and "- w512 shipped: not worth it" in text
    assert "Pick: **none**." in text


def test_a_follow_up_run_evaluates_its_averages_beside_the_shipped_one(tmp_path):
    """A short real run of the recommended row through actor_average.train: an extra average at the shipped rate
    (0.002) is the shipped averaged actor, score for score; another rate is another policy. (In a run this short
    every rate below 0.002 is still in the warm-up, which moves all of them alike, so the other rate is 0.5.) And
    the 0.5 average is what a run configured with ``AgentConfig.actor_average = 0.5`` evaluates."""
    actor_average = pytest.importorskip("actor_average")
    small = ("critic/NetworkConfig.hidden_sizes = (32, 32)", "actor/NetworkConfig.hidden_sizes = (32, 32)",
             "TrainerConfig.start_steps = 300", "ReplayConfig.min_size = 300",
             "TrainerConfig.eval_interval = 400", "TrainerConfig.eval_episodes = 2")
    result = actor_average.train("Hopper-v5", 0, (0.002, 0.5), budget=1200, row="polyak_recommended",
                                 extra_bindings=small, run_dir=tmp_path / "run")
    assert len(result["eval_returns"]) == len(result["live_eval_returns"]) == 3
    assert result["averages"]["0.002"] == result["eval_returns"]
    assert result["averages"]["0.5"] != result["eval_returns"]

    # The rerun's premise: a side average at a rate scores what the config shipping that rate scores, so a rerun
    # with --taus can stand for the recommended row at whichever rate the rule picks.
    configured = actor_average.train("Hopper-v5", 0, (), budget=1200, row="polyak_recommended",
                                     extra_bindings=(*small, "AgentConfig.actor_average = 0.5"),
                                     run_dir=tmp_path / "configured")
    assert configured["eval_returns"] == result["averages"]["0.5"]
    assert configured["live_eval_returns"] == result["live_eval_returns"]


def test_a_recorded_run_writes_the_suites_record_once(tmp_path):
    path = tmp_path / "ant" / "w64_seed_0.json"
    path.parent.mkdir()
    seen = []

    def train_one(run_dir, binding):
        seen.append((run_dir.name, binding))
        return {"eval_returns": [1.0, 2.0]}

    result = critic_width.recorded_run(path, "Ant-v5", 64, 0, "critic_width_test", train_one)
    assert seen == [("w64_seed_0", "critic/NetworkConfig.hidden_sizes = (64, 64)")]
    written = json.loads(path.read_text())
    assert written == result and written["final_return"] == 2.0 and written["critic_width"] == 64
    assert written["env_steps_per_cpu_s"] > 0 and {"code_commit", "machine", "load_average"} <= set(written)
    assert critic_width.recorded_run(path, "Ant-v5", 64, 0, "critic_width_test", train_one) is None  # done already
    assert len(seen) == 1


def test_the_shipped_configs_are_compared_with_the_rerun_setting_by_setting():
    assert critic_width.shipped_mismatches(512, 0.0005) == []  # today's configs: the rerun's, promoted
    mismatches = critic_width.shipped_mismatches(256, 0.002)
    assert len(mismatches) == 12  # five suite configs and configs/recommended.gin, two settings each
    assert "configs/suite/ant_recommended.gin: critic width is (512, 512), the rerun's is (256, 256)" in mismatches
    assert "configs/recommended.gin: actor_average is 0.0005, the rerun's is 0.002" in mismatches


def follow_up_results(tmp_path, monkeypatch) -> tuple:
    """A results folder with the suite's 256-wide runs (final 500, steady) and a writer of --taus runs at 512 whose
    0.001 average ends at 1,900 + seed (steady) unless ``tail`` says how it ends."""
    results = tmp_path / "results"
    for name, folder in (("RESULTS", ""), ("STUDY", "critic_width"), ("AVERAGING", "critic_width_averaging")):
        monkeypatch.setattr(critic_width, name, results / folder)
    monkeypatch.setattr(critic_width, "ROOT", tmp_path)
    monkeypatch.setattr(critic_width, "FOLLOW_UP_SEEDS", {"Ant-v5": (0,), "Humanoid-v5": (0,)})
    monkeypatch.setattr(critic_width, "shipped_mismatches", lambda width, rate: [])
    for task in critic_width.SAMPLE_EFFICIENCY_TASKS:
        for seed in range(5):
            suite_file = critic_width.result_path(results, task, "polyak_recommended", seed)
            suite_file.parent.mkdir(parents=True, exist_ok=True)
            suite_file.write_text(json.dumps(run(task, seed, [500.0] * 10)))

    def follow_up(task: str, seed: int, tail: list[float] | None = None) -> None:
        stem = critic_width.TASKS[task].config_stem
        shipped = [500.0] * 5 + [2000.0, 1000.0] * 2 + [2000.0]  # stability 0.80
        wide = {**run(task, seed, shipped, 512), "averages": {"0.001": [500.0] * 5 + (tail or [1900.0 + seed] * 5)},
                "eval_steps": list(range(5000, 55000, 5000)), "live_eval_returns": [450.0] * 10,
                "wall_seconds": 4000.0, "row": "polyak_recommended", "budget": 100000, "env_steps_per_cpu_s": 27.8,
                "load_average": {"before": [2.0], "after": [2.0]}, "finished": "today", "same_as_pilot": None,
                "settings": {"config": f"configs/suite/{stem}_recommended.gin",
                             "gin_params": ["TrainerConfig.max_env_steps = 100000",
                                            "critic/NetworkConfig.hidden_sizes = (512, 512)"]}}
        path = critic_width.averaging_path(task, 512, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(wide))

    return results, follow_up


def test_promote_writes_the_picked_curves_as_the_suites_row_only_when_nothing_is_owed(tmp_path, monkeypatch):
    results, follow_up = follow_up_results(tmp_path, monkeypatch)
    for task in ("Ant-v5", "Humanoid-v5"):
        follow_up(task, 0)
    assert critic_width.follow_up_pick() == "w512 tau 0.001"
    assert critic_width.adoption(512, "w512 tau 0.001") is None  # runs owed
    with pytest.raises(SystemExit, match=r"owes 23 runs .*HalfCheetah-v5 seed 0"):
        critic_width.promote(512)
    with pytest.raises(SystemExit, match="no follow-up pick at width 1024"):
        critic_width.promote(1024)
    for task in critic_width.SAMPLE_EFFICIENCY_TASKS:
        for seed in range(5):
            follow_up(task, seed)
    verdict = critic_width.adoption(512, "w512 tau 0.001")
    assert verdict["adopt"] and verdict["rerun"]["seeds_per_task"] == 5
    assert verdict["shipped"]["lowest_stability"] == verdict["rerun"]["lowest_stability"] == 1.0
    # The 256-wide row: 500 on every seed, so 5 copies of each task's normalized 500 (Hopper: (500 - 18.791) /
    # (2,927 - 18.791)); the IQM cuts 6 of the 25 values at each end: 4, 5 and 4 copies of the 2nd-4th lowest remain.
    assert critic_width.normalized_score("Hopper-v5", 500.0) == pytest.approx((500 - 18.791) / (2927 - 18.791))
    ranked = sorted(critic_width.normalized_score(task, 500.0) for task in critic_width.SAMPLE_EFFICIENCY_TASKS)
    assert verdict["shipped"]["normalized_iqm"] == pytest.approx((4 * ranked[1] + 5 * ranked[2] + 4 * ranked[3]) / 13)
    before = critic_width.result_path(results, "Ant-v5", "polyak_recommended", 0).read_text()
    monkeypatch.setattr(critic_width, "shipped_mismatches", lambda width, rate: [f"recommended.gin: rate {rate}"])
    with pytest.raises(SystemExit, match=re.escape("not the rerun's yet; recommended.gin: rate 0.001")):
        critic_width.promote(512)
    assert critic_width.result_path(results, "Ant-v5", "polyak_recommended", 0).read_text() == before

    monkeypatch.setattr(critic_width, "shipped_mismatches", lambda width, rate: [])
    written = critic_width.promote(512)
    assert len(written) == 25
    hopper = json.loads(critic_width.result_path(results, "Hopper-v5", "polyak_recommended", 3).read_text())
    assert hopper["eval_returns"] == [500.0] * 5 + [1903.0] * 5 and hopper["final_return"] == 1903.0
    assert hopper["live_eval_returns"] == [450.0] * 10 and hopper["env_steps_per_s"] == 25.0  # 100,000 / 4,000 s
    assert hopper["settings"]["gin_params"] == ["TrainerConfig.max_env_steps = 100000"]  # the width is the config's
    assert hopper["from_follow_up"]["policy"] == "w512 tau 0.001"
    assert hopper["from_follow_up"]["file"] == "results/critic_width_averaging/hopper/w512_seed_3.json"
    assert "averages" not in hopper and "critic_width" not in hopper
    # The suite's files are the rerun's now; the rule's numbers are those kept at the promotion.
    assert json.loads((results / "critic_width_adoption.json").read_text()) == verdict
    assert critic_width.adoption(512, "w512 tau 0.001") == verdict
    # The 256-wide files it replaced are kept, and the study still pairs each run with them (not with itself).
    kept = results / "critic_width_partners" / "ant" / "polyak_recommended_seed_0.json"
    assert kept.read_text() == before and critic_width.partner_path("Ant-v5", 0) == kept
    bases = [base["eval_returns"] for runs in critic_width.averaging_pairs().values() for base, _ in runs]
    assert len(bases) == 2 * 25 and all(curve == [500.0] * 10 for curve in bases)  # shipped and 0.001 per run
    assert critic_width.follow_up_pick() == "w512 tau 0.001"
    critic_width.promote(512)  # again: the kept partners stay the 256-wide runs
    assert kept.read_text() == before


def test_the_shipping_rule_keeps_the_256_wide_row_when_a_task_ends_less_steady(tmp_path, monkeypatch):
    results, follow_up = follow_up_results(tmp_path, monkeypatch)
    for task in critic_width.SAMPLE_EFFICIENCY_TASKS:
        for seed in range(5):
            # Walker2d ends far higher but falls from its best: last five 2,600 of a best of 4,000, stability 0.65.
            follow_up(task, seed, [4000.0, 2000.0, 2000.0, 3000.0, 2000.0] if task == "Walker2d-v5" else None)
    (results / "critic_width").mkdir()  # the report starts from the pilot's runs
    (results / "critic_width" / "ant").mkdir()
    (results / "critic_width" / "ant" / "w512_seed_0.json").write_text(json.dumps(run("Ant-v5", 0, [600.0] * 10, 512)))
    verdict = critic_width.adoption(512, "w512 tau 0.001")
    assert verdict["rerun"]["normalized_iqm"] > verdict["shipped"]["normalized_iqm"]
    assert verdict["rerun"]["stability"]["Walker2d-v5"] == pytest.approx(0.65)
    assert not verdict["adopt"]
    text = critic_width.report()
    assert "| rerun, w512 tau 0.001 | 5 |" in text and "Walker2d 0.65" in text and "| 0.65 |" in text
    assert "Ship the rerun's row: **no**." in text
    with pytest.raises(SystemExit, match="the shipping rule keeps the 256-wide row"):
        critic_width.promote(512)
    assert not (results / "critic_width_adoption.json").exists()
    assert "from_follow_up" not in critic_width.result_path(results, "Hopper-v5", "polyak_recommended", 0).read_text()


def test_a_follow_up_label_names_its_rate():
    assert critic_width.pick_rate("w512 tau 0.0005") == 0.0005
    assert critic_width.pick_rate("w512 shipped") == critic_width.SHIPPED_RATE


def test_a_follow_up_run_stopped_by_a_signal_writes_no_result(tmp_path, monkeypatch):
    """SIGTERM ends polyak's trainer cleanly (a checkpoint, no summary); the study must not then record the
    evaluations so far as a finished run's result, as it once did for a run stopped at 55,000 of 100,000 steps."""
    import os
    import signal

    from common import RunFailed

    import polyak.planning

    actor_average = pytest.importorskip("actor_average")
    real_open_trainer = polyak.planning.open_trainer

    def open_trainer_stopped_at_its_first_evaluation(plan, on_evaluation):
        def stop_then_record(env_steps, score):
            os.kill(os.getpid(), signal.SIGTERM)  # the trainer's handler takes it: the loop ends after this step
            on_evaluation(env_steps, score)
        return real_open_trainer(plan, stop_then_record)

    monkeypatch.setattr(polyak.planning, "open_trainer", open_trainer_stopped_at_its_first_evaluation)
    small = ("actor/NetworkConfig.hidden_sizes = (32, 32)", "TrainerConfig.start_steps = 300",
             "ReplayConfig.min_size = 300", "TrainerConfig.eval_interval = 400", "TrainerConfig.eval_episodes = 2")
    path = tmp_path / "w32_seed_0.json"

    def train_one(run_dir, binding):
        return actor_average.train("Hopper-v5", 0, (0.5,), budget=1200, row="polyak_recommended",
                                   extra_bindings=(*small, binding), run_dir=tmp_path / "run")

    with pytest.raises(RunFailed, match=r"stopped by SIGTERM at 400 env steps, before its budget: no result written"):
        critic_width.recorded_run(path, "Hopper-v5", 32, 0, "critic_width_test", train_one)
    assert not path.exists()
    assert (tmp_path / "run" / "checkpoints").is_dir() and not (tmp_path / "run" / "summary.json").exists()


def test_a_run_reproduced_into_an_out_dir_leaves_the_committed_file_and_force_runs_it_again(tmp_path, monkeypatch):
    results = tmp_path / "results"
    monkeypatch.setattr(critic_width, "RESULTS", results)
    monkeypatch.setattr(critic_width, "STUDY", results / "critic_width")
    committed = critic_width.study_path("Ant-v5", 512, 3)
    committed.parent.mkdir(parents=True)
    committed.write_text(json.dumps(run("Ant-v5", 3, [100.0] * 20, 512)))
    run_dirs = []

    def train_one(run_dir, binding):
        run_dirs.append((run_dir, binding))
        return {"eval_returns": [float(len(run_dirs))] * 20}

    out = tmp_path / "mine"
    first = critic_width.recorded_run(committed, "Ant-v5", 512, 3, "critic_width", train_one, out_dir=out)
    reproduced = out / "critic_width" / "ant" / "w512_seed_3.json"
    assert first["final_return"] == 1.0 and json.loads(reproduced.read_text())["final_return"] == 1.0
    assert run_dirs == [(out / "runs" / "critic_width" / "ant" / "w512_seed_3",
                         "critic/NetworkConfig.hidden_sizes = (512, 512)")]
    assert json.loads(committed.read_text())["eval_returns"] == [100.0] * 20
    assert critic_width.recorded_run(committed, "Ant-v5", 512, 3, "critic_width", train_one, out_dir=out) is None
    assert len(run_dirs) == 1  # done already: not trained again
    again = critic_width.recorded_run(committed, "Ant-v5", 512, 3, "critic_width", train_one, out_dir=out, force=True)
    assert again["final_return"] == 2.0 and json.loads(reproduced.read_text())["final_return"] == 2.0
    assert json.loads(committed.read_text())["eval_returns"] == [100.0] * 20


@pytest.mark.parametrize("script", ["critic_width.py", "baseline_width.py"])
def test_an_out_dir_that_cannot_be_made_is_one_line_before_any_run(tmp_path, script):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--task", "Ant-v5", "--seed", "0",
                           "--out-dir", str(blocker / "inside")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"{script[:-3]}: --out-dir {blocker / 'inside'}: Not a directory"]
    assert not (tmp_path / "runs").exists()
