"""benchmarks/suite.py's report (suite_report.py, with suite_stats.py's statistics), built from the committed run
files: the schema the suite issue gives (``tasks -> rows -> seeds, final_returns, eval_steps, eval_returns,
env_steps_per_s``, one ``machine`` object, one ``code_commit``), and each seed's final return is its last evaluation
at the task's budget."""

from __future__ import annotations

import json
import sys

import pytest

from tests.smoke.cli_helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
suite = pytest.importorskip("suite")
suite_report = pytest.importorskip("suite_report")
suite_stats = pytest.importorskip("suite_stats")


def test_the_suite_report_follows_the_issue_schema_and_its_finals_are_last_evaluations():
    report = suite_report.collect(suite.RESULTS)
    assert isinstance(report["machine"], dict) and report["machine"]
    assert isinstance(report["code_commit"], str) and report["code_commit"] in report["run_code_commits"]
    rows_seen = 0
    for task, entry in report["tasks"].items():
        assert entry["budget"] == suite.TASKS[task].budget
        for row, data in entry["rows"].items():
            assert row in suite.rows_of(task)
            seeds = len(data["seeds"])
            assert len(set(data["seeds"])) == seeds
            for key in ("final_returns", "eval_returns", "env_steps_per_s"):
                assert len(data[key]) == seeds, (task, row, key)
            assert data["eval_steps"][-1] == entry["budget"], (task, row)
            for final, curve in zip(data["final_returns"], data["eval_returns"], strict=True):
                assert len(curve) == len(data["eval_steps"]) and final == curve[-1], (task, row)
            rows_seen += 1
    assert rows_seen >= 18  # polyak_ddpg, polyak_td3 and sb3_td3 on six tasks, at least


def test_the_markdown_table_has_a_line_per_task():
    report = suite_report.collect(suite.RESULTS)
    table = suite_report.markdown_table(report).splitlines()
    assert len(table) == 2 + len(suite.TASKS)
    for task in suite.TASKS:
        assert any(line.startswith(f"| {task} |") for line in table)


# ---------------------------------------------------------------------------------------------- statistics
# rliable comes with the bench extra; without it these tests are skipped.
np = pytest.importorskip("numpy")
scipy_stats = pytest.importorskip("scipy.stats")


@pytest.fixture(scope="module")
def committed() -> tuple[dict, dict]:
    pytest.importorskip("rliable")
    report = suite_report.collect(suite.RESULTS)
    return report, suite_stats.suite_statistics(report)


RECOMMENDED = suite.RECOMMENDED_ROW


def synthetic(finals: dict[str, dict[str, list[float]]]) -> dict:
    """A suite.json-shaped dict from final returns per task and row; each seed's curve rises to its final return."""
    return {"tasks": {task: {"rows": {row: {"final_returns": values, "eval_returns": [[0.0, x / 2, x] for x in values]}
                                      for row, values in rows.items()}}
                      for task, rows in finals.items()}}


def pairwise_improvement(x: list[float], y: list[float]) -> float:
    """P(a run of x beats a run of y), ties counting half: the Mann-Whitney U over all pairs."""
    return float(np.mean([[1.0 if a > b else 0.5 if a == b else 0.0 for b in y] for a in x]))


def test_a_rows_statistics_match_numpy_on_the_committed_hopper_runs(committed):
    report, stats = committed
    data = report["tasks"]["Hopper-v5"]["rows"]["polyak_crossq"]
    row = stats["tasks"]["Hopper-v5"]["rows"]["polyak_crossq"]
    finals, curves = np.array(data["final_returns"]), data["eval_returns"]
    assert row["seeds"] == len(finals) and row["seeds_asked"] == suite.seeds_asked("polyak_crossq") == 3
    assert row["mean_final_return"] == pytest.approx(finals.mean())
    assert row["iqm_final_return"] == pytest.approx(scipy_stats.trim_mean(finals, 0.25))
    if len(finals) == 3:  # trim_mean cuts int(0.25 * 3) = 0 values at each end: the IQM of 3 seeds is their mean
        assert row["iqm_final_return"] == pytest.approx(finals.mean())
    assert row["iqm_ci"][0] <= row["iqm_final_return"] <= row["iqm_ci"][1]
    assert row["iqm_ci"][0] >= finals.min() and row["iqm_ci"][1] <= finals.max()
    assert row["best_evaluation"] == pytest.approx(np.mean([max(c) for c in curves]))
    assert row["mean_last_five_evaluations"] == pytest.approx(np.mean([np.mean(c[-5:]) for c in curves]))


def test_the_iqm_of_five_seeds_is_the_mean_of_the_middle_three():
    pytest.importorskip("rliable")
    finals = [10.0, -400.0, 30.0, 20.0, 900.0]
    row = suite_stats.row_statistics(suite.RECOMMENDED_ROW, {"final_returns": finals,
                                                       "eval_returns": [[x] for x in finals]})
    assert row["iqm_final_return"] == pytest.approx(20.0)  # mean of 10, 20, 30
    assert row["mean_final_return"] == pytest.approx(np.mean(finals))
    assert row["iqm_ci"][0] <= 20.0 <= row["iqm_ci"][1]
    assert row["seeds"] == row["seeds_asked"] == 5


def test_the_bootstrap_is_reproducible_and_leaves_numpys_global_rng_alone():
    pytest.importorskip("rliable")
    scores = [[1.0], [5.0], [2.0], [8.0]]
    np.random.seed(123)
    state = np.random.get_state()[1].copy()
    first = suite_stats.iqm_interval(scores)
    assert np.array_equal(np.random.get_state()[1], state)
    assert suite_stats.iqm_interval(scores) == first


def test_the_normalized_iqm_pools_the_tasks_and_matches_a_hand_computation(committed):
    report, stats = committed
    entry = stats["normalized_iqm"]["polyak_crossq"]
    assert entry["tasks"] == suite_stats.tasks_with_runs(report, "polyak_crossq")
    assert {"HalfCheetah-v5", "Hopper-v5"} <= set(entry["tasks"])
    pooled = []
    for task in entry["tasks"]:
        published, random = suite.PUBLISHED_100K[task].best, suite.RANDOM_SCORES[task]
        finals = report["tasks"][task]["rows"]["polyak_crossq"]["final_returns"][:entry["seeds_per_task"]]
        pooled += [(x - random) / (published - random) for x in finals]
    pooled = np.sort(pooled)
    cut = int(0.25 * len(pooled))  # scipy's trim_mean: 6 values lose 1 at each end
    assert entry["iqm"] == pytest.approx(pooled[cut:len(pooled) - cut].mean())
    assert entry["ci"][0] <= entry["iqm"] <= entry["ci"][1]


def test_the_probability_of_improvement_matches_pairwise_counts_and_is_a_half_over_itself(committed):
    report, stats = committed
    assert (stats["probability_of_improvement"]["row"], stats["probability_of_improvement"]["over"]) == (
        suite.RECOMMENDED_ROW, suite.BASELINE_ROW)
    poi = suite_stats.probability_of_improvement(report, "polyak_crossq_sac", suite.BASELINE_ROW)  # both have runs
    assert poi["tasks"]

    def finals(task: str, row: str) -> list[float]:  # the lowest seeds, as many on every task
        return report["tasks"][task]["rows"][row]["final_returns"][:poi["seeds_per_task"][row]]

    by_hand = np.mean([pairwise_improvement(finals(t, poi["row"]), finals(t, poi["over"])) for t in poi["tasks"]])
    assert poi["probability"] == pytest.approx(by_hand)
    assert poi["ci"][0] <= poi["probability"] <= poi["ci"][1]
    itself = suite_stats.probability_of_improvement(report, "polyak_td3", "polyak_td3")
    assert itself["probability"] == 0.5 and itself["ci"][0] <= 0.5 <= itself["ci"][1]


def test_missing_runs_restrict_the_cross_task_statistics_to_the_tasks_that_have_them():
    pytest.importorskip("rliable")
    report = synthetic({"HalfCheetah-v5": {"sb3_crossq": [1000.0, 2000.0, 3000.0]},
                        "Hopper-v5": {RECOMMENDED: [300.0, 400.0, 500.0, 600.0, 700.0],
                                      "sb3_crossq": [100.0, 200.0, 350.0]}})
    stats = suite_stats.suite_statistics(report)
    poi = stats["probability_of_improvement"]
    assert poi["tasks"] == ["Hopper-v5"] and poi["seeds_per_task"] == {RECOMMENDED: 5, "sb3_crossq": 3}
    assert poi["probability"] == pytest.approx(pairwise_improvement([300, 400, 500, 600, 700], [100, 200, 350]))
    assert stats["normalized_iqm"]["sb3_crossq"]["tasks"] == ["HalfCheetah-v5", "Hopper-v5"]
    assert stats["normalized_iqm"][RECOMMENDED]["tasks"] == ["Hopper-v5"]
    for task in ("Walker2d-v5", "Ant-v5", "Humanoid-v5"):  # not in the synthetic suite at all
        assert stats["tasks"][task]["rows"] == {} and stats["tasks"][task]["best_polyak_row"] is None
    hopper = stats["tasks"]["Hopper-v5"]
    assert hopper["best_polyak_row"]["row"] == RECOMMENDED
    assert hopper["best_polyak_row"]["vs_crossq_paper"] == pytest.approx(500.0 / 2_764 - 1)
    assert "polyak_td3" in hopper["rows_without_runs"]
    text = suite_report.statistics_markdown(stats)
    assert "| Walker2d-v5 | no runs yet |" in text and "| Hopper-v5 | sb3_crossq | 3 of 5 |" in text
    assert f"| Hopper-v5 | {RECOMMENDED} | 5 |" in text
    only_one = suite_stats.suite_statistics(synthetic({"Hopper-v5": {RECOMMENDED: [1.0, 2.0]}}))
    assert only_one["probability_of_improvement"]["probability"] is None
    assert "no task has runs of both" in suite_report.statistics_markdown(only_one)


def test_the_stability_ratio_by_hand():
    # seed 0: last five 1,2,3,4,5 (mean 3) over a best of 6; seed 1 ends at its best: (0.5 + 1.0) / 2
    assert suite_stats.stability_ratio([[6.0, 1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 2.0]]) == pytest.approx(0.75)
    assert suite_stats.stability_ratio([[-5.0, -1.0]]) is None  # no positive best: the ratio means nothing


def test_the_recommendation_picks_the_highest_iqm_and_flags_a_pick_that_falls_from_its_best():
    pytest.importorskip("rliable")
    candidates = suite_stats.CANDIDATE_ROWS
    tasks = {}
    for task, scale in (("HalfCheetah-v5", 10.0), ("Hopper-v5", 1.0)):
        rows = {}
        for rank, row in enumerate(candidates):
            finals = [scale * (1000.0 + 100 * rank + seed) for seed in range(3)]
            # the best-scoring candidate reached twice its final five evaluations before the end
            curves = [[2 * x if row == candidates[-1] else x, *[x] * 5] for x in finals]
            rows[row] = {"final_returns": finals, "eval_returns": curves, "cpu_seconds": [600.0, 1200.0, None]}
        tasks[task] = {"budget": 50_000, "rows": rows}
    rule = suite_stats.recommendation({"tasks": tasks})
    assert rule["tasks"] == ["HalfCheetah-v5", "Hopper-v5"] and rule["pick"] == candidates[-1]
    assert rule["pick_is_stable"] is False and rule["rows"][rule["pick"]]["lowest_stability"] == pytest.approx(0.5)
    assert rule["rows"][candidates[0]]["lowest_stability"] == pytest.approx(1.0)
    assert rule["rows"][candidates[0]]["cpu_minutes_per_100k"] == pytest.approx(30.0)  # 10 or 20 per 50k
    assert suite.BASELINE_ROW not in rule["rows"]  # no baseline runs: not listed
    assert RECOMMENDED not in rule["rows"] and rule["shipped_is_stable"] is None
    text = "\n".join(suite_report.recommendation_markdown(rule))
    assert f"picks **{candidates[-1]}**" in text and "still fall from their best" in text
    assert "no runs on all of these tasks yet" in text
    for task, scale in (("HalfCheetah-v5", 10.0), ("Hopper-v5", 1.0)):  # the shipped row ends at its best
        finals = [scale * 1500.0] * 3
        tasks[task]["rows"][RECOMMENDED] = {"final_returns": finals, "eval_returns": [[x] * 6 for x in finals],
                                            "cpu_seconds": [600.0] * 3}
    rule = suite_stats.recommendation({"tasks": tasks})
    assert rule["pick"] == candidates[-1] and rule["shipped_is_stable"] is True
    assert not rule["rows"][RECOMMENDED]["candidate"]
    text = "\n".join(suite_report.recommendation_markdown(rule))
    assert f"| {RECOMMENDED} (shipped) |" in text and "keep what they reached (lowest stability 1.00)" in text
    del tasks["Hopper-v5"]["rows"][candidates[0]]  # a candidate missing on a task: it leaves the comparison
    assert suite_stats.recommendation({"tasks": tasks})["tasks"] == ["HalfCheetah-v5"]


def test_the_markdown_has_a_statistics_line_per_task_and_row_with_runs(committed):
    report, stats = committed
    text = suite_report.statistics_markdown(stats)
    tasks_with_rows = [t for t in suite.SAMPLE_EFFICIENCY_TASKS if report["tasks"][t]["rows"]]
    assert {"HalfCheetah-v5", "Hopper-v5"} <= set(tasks_with_rows)
    for task in tasks_with_rows:
        assert f"- {task}: " in text
        for row in report["tasks"][task]["rows"]:
            assert f"| {task} | {row} |" in text, (task, row)
    assert f"Probability of improvement of {suite.RECOMMENDED_ROW}" in text


def test_the_learning_curve_interval_brackets_the_mean():
    pytest.importorskip("rliable")
    curves = np.array([[0.0, 10.0, 20.0], [0.0, 30.0, 25.0], [0.0, 5.0, 90.0]])
    mean, low, high = suite_stats.curve_interval(curves)
    assert np.allclose(mean, curves.mean(axis=0))
    assert np.all(low <= mean) and np.all(mean <= high) and low[0] == high[0] == 0.0


def test_missing_runs_count_the_seeds_asked_and_estimate_from_finished_runs(tmp_path):
    (tmp_path / "suite" / "hopper").mkdir(parents=True)
    (tmp_path / "suite" / "hopper" / "sb3_td3_seed_1.json").write_text("{}")  # a finished run is not missing
    report = {"tasks": {"Hopper-v5": {"rows": {"sb3_td3": {"cpu_seconds": [600.0, 1200.0, None]}}},
                        "Ant-v5": {"rows": {"sb3_td3": {"cpu_seconds": [3000.0]}}}}}
    missing = suite_report.missing_runs(report, tmp_path)
    asked = sum(suite.seeds_asked(row) for task in suite.SAMPLE_EFFICIENCY_TASKS for row in suite.rows_of(task))
    assert len(missing) == asked - 1
    by_key = {(run["task"], run["row"], run["seed"]): run["cpu_minutes"] for run in missing}
    assert ("Hopper-v5", "sb3_td3", 1) not in by_key
    assert by_key[("Hopper-v5", "sb3_td3", 0)] == pytest.approx(15.0)  # median of its task's 10 and 20 minutes
    assert by_key[("Walker2d-v5", "sb3_td3", 0)] == pytest.approx(20.0)  # none there: median of 10, 20 and 50
    assert by_key[("Walker2d-v5", suite.BASELINE_ROW, 4)] is None
    text = suite_report.todo_text(missing)
    assert "| Hopper-v5 | sb3_td3 | 0 2 | 15 |" in text and f"{len(missing)} runs missing" in text


def test_the_readme_table_is_the_one_the_committed_results_give(committed):
    report, _ = committed
    readme = (ROOT / "README.md").read_text()
    block = readme.split(suite_report.README_BEGIN, 1)[1].split(suite_report.README_END, 1)[0]
    assert block.strip() == suite_report.readme_table(report).strip(), "run python benchmarks/suite.py --report"


def test_the_docs_results_table_is_the_one_the_committed_results_give(committed):
    report, _ = committed
    page = suite_report.DOCS_PAGE.read_text()
    block = page.split(suite_report.DOCS_BEGIN, 1)[1].split(suite_report.DOCS_END, 1)[0]
    assert block.strip() == suite_report.markdown_table(report).strip(), "run python benchmarks/suite.py --report"


def test_the_readme_table_is_written_between_its_markers_and_only_there(tmp_path):
    pytest.importorskip("rliable")
    report = synthetic({"Hopper-v5": {RECOMMENDED: [3000.0, 3100.0, 3200.0], "sb3_crossq": [1000.0, 3050.0]}})
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{suite_report.README_BEGIN}\nstale\n{suite_report.README_END}\noutro\n")
    assert suite_report.write_readme_table(report, readme)
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("outro\n") and "stale" not in text
    assert "| Hopper-v5 | 3,100 (3); IQM 3,100 [3,000, 3,200] | 2,025 (2) | – |" in text
    assert "| Walker2d-v5 | – | – |" in text
    assert "0.83" in text  # P(3000, 3100 or 3200 beats 1000 or 3050) = 5 of 6 pairs
    readme.write_text("no markers\n")
    assert not suite_report.write_readme_table(report, readme) and readme.read_text() == "no markers\n"


def test_the_readme_says_where_the_goal_is_met_and_missed_and_how_the_averaged_actor_did():
    pytest.importorskip("rliable")
    report = synthetic({"Hopper-v5": {RECOMMENDED: [3000.0, 3100.0, 3200.0], "sb3_crossq": [1000.0, 3050.0]},
                        "Ant-v5": {RECOMMENDED: [1000.0, 2000.0], "sb3_crossq": [2500.0, 2600.0]},
                        "Walker2d-v5": {"sb3_crossq": [3000.0]}})
    hopper = report["tasks"]["Hopper-v5"]["rows"][RECOMMENDED]
    hopper["seeds"] = [0, 1, 2]
    hopper["live_eval_returns"] = [[0.0, 1.0, 2900.0], [0.0, 1.0, 3200.0], [0.0, 1.0, 3100.0]]
    text = " ".join(suite_report.readme_standing(report))
    # Hopper 3,100 >= 2,025 and >= the paper's 2,764; Ant 1,500 < 2,550 (the IQM of 2 seeds is their mean) and
    # 1,500 / 2,299 - 1 = -34.8%; against the best published: 3,100 / 2,927 - 1 = +5.9%, 1,500 / 3,942 - 1 = -61.9%;
    # Walker2d has no recommended run, so it counts nowhere
    # on Ant both seeds of the recommended row lose to both of sb3_crossq's: probability of improvement 0, [0, 0]
    assert ("Met against sb3_crossq on 1 of 2 (behind on Ant-v5, 1,500 against 2,550, IQM 1,500 against 2,550, "
            "probability of improvement there 0.00 [0.00, 0.00])") in text
    assert "against the CrossQ paper on 1 of 2 (below on Ant-v5 -35%)" in text
    assert "Distance to the best published 100k figure: Hopper-v5 +6%, Ant-v5 -62%." in text
    # final 3,000 > 2,900, 3,100 < 3,200, 3,200 > 3,100; every averaged curve's last five mean is the higher
    assert "it ended higher on 2 of 3 and had the higher mean of the last five evaluations on 3 of 3" in text
    assert suite_report.readme_standing(synthetic({"Hopper-v5": {"sb3_crossq": [1.0]}})) == []
    assert suite_report.percent(0.003) == "+0.3%" and suite_report.percent(-0.134) == "-13%"


def test_a_task_with_one_seed_does_not_cut_the_cross_task_statistics_to_one_seed():
    pytest.importorskip("rliable")
    three, one = [1000.0, 2000.0, 3000.0], [500.0]
    report = synthetic({"HalfCheetah-v5": {RECOMMENDED: three, "sb3_crossq": three},
                        "Hopper-v5": {RECOMMENDED: three, "sb3_crossq": three},
                        "Walker2d-v5": {RECOMMENDED: one, "sb3_crossq": one}})
    assert suite_stats.tasks_with_runs(report, RECOMMENDED, "sb3_crossq") == ["HalfCheetah-v5", "Hopper-v5"]
    poi = suite_stats.probability_of_improvement(report, RECOMMENDED, "sb3_crossq")
    assert poi["seeds_per_task"] == {RECOMMENDED: 3, "sb3_crossq": 3} and poi["probability"] == pytest.approx(0.5)
    only_one = synthetic({"Walker2d-v5": {RECOMMENDED: one}, "Ant-v5": {RECOMMENDED: one}})
    assert suite_stats.tasks_with_runs(only_one, RECOMMENDED) == ["Walker2d-v5", "Ant-v5"]  # none has 3: all with runs


def test_the_averaged_actor_is_set_beside_the_live_actor_run_by_run():
    curves = [[100.0, 300.0, 300.0, 300.0, 300.0, 400.0], [100.0, 200.0, 600.0, 500.0, 500.0, 500.0]]
    live = [[100.0, 500.0, 100.0, 100.0, 100.0, 100.0], [100.0, 200.0, 600.0, 600.0, 600.0, 600.0]]
    report = {"tasks": {"Hopper-v5": {"rows": {RECOMMENDED: {"seeds": [0, 2], "eval_returns": curves,
                                                             "live_eval_returns": live}}},
                        "Walker2d-v5": {"rows": {RECOMMENDED: {"seeds": [1], "eval_returns": [curves[0]]}}}}}
    runs = suite_stats.averaged_against_live(report)
    assert [(run["task"], run["seed"]) for run in runs] == [("Hopper-v5", 0), ("Hopper-v5", 2)]  # Walker: no live
    first = runs[0]
    assert (first["final"], first["live_final"]) == (400.0, 100.0)
    assert first["last5"] == pytest.approx(320.0) and first["live_last5"] == pytest.approx(180.0)
    assert first["stability"] == pytest.approx(0.8) and first["live_stability"] == pytest.approx(180.0 / 500.0)
    text = "\n".join(suite_report.averaged_against_live_markdown(runs))
    assert "| Hopper-v5 | 0 | 400.0, 100.0 | 320.0, 180.0 | 0.80, 0.36 |" in text
    assert "ended higher on 1 of 2 runs" in text and "last five evaluations on 1 of 2" in text


def test_the_committed_recommended_runs_carry_both_curves(committed):
    report, stats = committed
    runs = stats["averaged_against_live"]
    recorded = sum(len(entry["rows"].get(RECOMMENDED, {}).get("seeds", [])) for entry in report["tasks"].values())
    assert recorded and len(runs) == recorded  # every run of the shipped row scored its live actor too

    # polyak_crossq_sac runs written from the live actor of a 256-wide recommended run (before the row became the
    # 512-wide one) are that run's live curve, kept by critic_width.py --promote with the run it came from.
    copies = [path for path in (suite.RESULTS / "suite").glob("*/polyak_crossq_sac_seed_*.json")
              if "from_run" in json.loads(path.read_text())]
    assert copies
    for path in copies:
        live = json.loads(path.read_text())
        source = suite.RESULTS / "critic_width_partners" / path.parent.name / f"{RECOMMENDED}_seed_{live['seed']}.json"
        assert json.loads(source.read_text())["live_eval_returns"] == live["eval_returns"]
