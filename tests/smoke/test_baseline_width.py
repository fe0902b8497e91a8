"""benchmarks/baseline_width.py: sb3-contrib's CrossQ with only its critic's width changed, paired by seed with the
suite's 256-wide sb3_crossq run and the recommended row's wide rerun, and the rule that reads the goal like for like
(the recommended row's mean final return at least sb3_crossq's at the same width, once a task has 5 seeds)."""

from __future__ import annotations

import dataclasses
import json
import sys

import pytest

from tests.smoke.cli_helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
pytest.importorskip("rliable")
baseline_width = pytest.importorskip("baseline_width")
critic_width = pytest.importorskip("critic_width")
suite = pytest.importorskip("suite")


def test_only_the_critic_width_changes_in_sb3_crossqs_settings():
    shipped, wide = suite.sb3_crossq_kwargs("Ant-v5"), suite.sb3_crossq_kwargs("Ant-v5", critic_width=512)
    assert shipped["policy_kwargs"]["net_arch"] == {"pi": [256, 256], "qf": [256, 256]}
    assert wide["policy_kwargs"]["net_arch"] == {"pi": [256, 256], "qf": [512, 512]}
    assert {k: v for k, v in wide.items() if k != "policy_kwargs"} == {
        k: v for k, v in shipped.items() if k != "policy_kwargs"}
    assert {k: v for k, v in wide["policy_kwargs"].items() if k != "net_arch"} == {
        k: v for k, v in shipped["policy_kwargs"].items() if k != "net_arch"}


def result(task: str, seed: int, curve: list[float], **extra) -> dict:
    return {"task": task, "seed": seed, "eval_returns": curve, "cpu_seconds": 3000.0,
            "machine": {"cpu_isa": "AVX512", "cpu": "Intel Xeon"}, **extra}


def write(path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


@pytest.fixture
def results(tmp_path, monkeypatch):
    """A results folder; the follow-up's pick is rate 0.0005 at 512 wide."""
    folder = tmp_path / "results"
    monkeypatch.setattr(baseline_width, "RESULTS", folder)
    monkeypatch.setattr(baseline_width, "STUDY", folder / "baseline_width")
    monkeypatch.setattr(critic_width, "AVERAGING", folder / "critic_width_averaging")
    monkeypatch.setattr(baseline_width, "follow_up_pick", lambda: "w512 tau 0.0005")
    return folder


def add_seed(folder, seed: int, base: float | None, wide: float, recommended: float | None,
             task: str = "Ant-v5") -> None:
    """Runs of one seed with flat curves at the given finals (the rerun's shipped curve far off its pick)."""
    stem = suite.TASKS[task].config_stem
    if base is not None:
        write(folder / "suite" / stem / f"sb3_crossq_seed_{seed}.json", result(task, seed, [base] * 20))
    write(folder / "baseline_width" / stem / f"sb3_crossq_w512_seed_{seed}.json",
          result(task, seed, [wide] * 20, critic_width=512))
    if recommended is not None:
        write(folder / "critic_width_averaging" / stem / f"w512_seed_{seed}.json",
              result(task, seed, [1.0] * 20, averages={"0.0005": [recommended] * 20, "0.001": [2.0] * 20}))


def test_each_seed_is_paired_and_the_task_undecided_before_its_five_seeds(results):
    add_seed(results, 0, base=1000.0, wide=2000.0, recommended=3000.0)
    add_seed(results, 1, base=1200.0, wide=2600.0, recommended=2400.0)
    add_seed(results, 2, base=900.0, wide=5000.0, recommended=None)  # no rerun run: not in the means
    text = baseline_width.report()
    assert "| Ant-v5 | 0 | 1000.0, 1.00 | 2000.0, 1.00 | 3000.0, 1.00 | 50.0 | Intel AVX512 |" in text
    assert "| Ant-v5 | 2 | 900.0, 1.00 | 5000.0, 1.00 | — |" in text
    # Means over seeds 0-1: 1,100, 2,300 and 2,700. Of the four (recommended, sb3 at 512) pairs the recommended run
    # is ahead in three: 3,000 beats 2,000 and 2,600, 2,400 beats 2,000 but not 2,600.
    assert "| Ant-v5 | 2 of 5 | 1100.0 | 2300.0 | 2700.0 | 0.75 [" in text
    assert "undecided (2 of 5 seeds) |" in text
    assert (results / "baseline_width.md").read_text() == text


def test_a_resumed_run_says_where_in_the_table(results):
    add_seed(results, 0, base=1000.0, wide=2000.0, recommended=3000.0)
    resumed = results / "baseline_width" / "ant" / "sb3_crossq_w512_seed_0.json"
    write(resumed, {**json.loads(resumed.read_text()), "resumed_at_steps": [30000]})
    assert "| 2000.0, 1.00 | 3000.0, 1.00 | 50.0 (resumed at 30,000 steps) | Intel AVX512 |" in baseline_width.report()


def test_with_five_seeds_the_rule_compares_the_means(results):
    for seed in range(5):
        add_seed(results, seed, base=1000.0, wide=2000.0 + seed, recommended=2000.0)
    verdict = baseline_width.task_verdict("Ant-v5", 512, baseline_width.seed_runs("Ant-v5", 512, "w512 tau 0.0005"))
    assert verdict["seeds"] == 5 and verdict["means"]["wide"] == pytest.approx(2002.0)
    assert verdict["meets_goal"] is False  # 2,000 against 2,002
    # 25 pairs: each recommended 2,000 ties sb3's 2,000 (half a win) and loses to the other four: 5 * 0.5 / 25.
    assert verdict["improvement"]["probability"] == pytest.approx(0.1)
    assert "| Ant-v5 | 5 of 5 | 1000.0 | 2002.0 | 2000.0 | 0.10 [" in baseline_width.report()
    assert "| no (0.1% behind) |" in baseline_width.report()  # 2 below 2,002
    write(results / "baseline_width" / "ant" / "sb3_crossq_w512_seed_4.json",
          result("Ant-v5", 4, [1994.0] * 20, critic_width=512))  # sb3's mean is now 2,000: a tie meets the goal
    verdict = baseline_width.task_verdict("Ant-v5", 512, baseline_width.seed_runs("Ant-v5", 512, "w512 tau 0.0005"))
    assert verdict["means"]["wide"] == pytest.approx(2000.0) and verdict["meets_goal"] is True
    assert "| Ant-v5 | 5 of 5 | 1000.0 | 2000.0 | 2000.0 |" in baseline_width.report()


def test_a_run_is_recorded_as_sb3_crossq_with_its_width(tmp_path, monkeypatch):
    monkeypatch.setattr(baseline_width, "STUDY", tmp_path)
    calls = []

    def fake_run(task, row, seed, critic_width=None, snapshots=None):
        calls.append((task, row, seed, critic_width, snapshots.relative_to(suite.ROOT).as_posix()))
        return {"eval_returns": [5.0, 7.0]}

    monkeypatch.setattr(baseline_width, "run_sb3", fake_run)
    baseline_width.train("Hopper-v5", 384, 2)
    written = json.loads((tmp_path / "hopper" / "sb3_crossq_w384_seed_2.json").read_text())
    assert calls == [("Hopper-v5", "sb3_crossq", 2, 384, "runs/baseline_width/hopper/w384_seed_2")]
    assert written["row"] == "sb3_crossq" and written["critic_width"] == 384 and written["final_return"] == 7.0
    baseline_width.train("Hopper-v5", 384, 2)  # done already: not trained again
    assert len(calls) == 1


def test_the_widths_are_read_from_the_suites_result_files(results, monkeypatch):
    monkeypatch.setattr(baseline_width, "ROOT", results.parent)
    recommended = results / "suite" / "ant" / "polyak_recommended_seed_0.json"
    write(results / "suite" / "ant" / "sb3_crossq_seed_0.json",
          result("Ant-v5", 0, [1.0], settings={"policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [384, 384]}}}))
    assert baseline_width.critic_widths("Ant-v5", results) is None  # no recommended run yet
    write(recommended, result("Ant-v5", 0, [1.0]))  # a suite run from before the rerun: 256 wide
    assert baseline_width.critic_widths("Ant-v5", results) == (256, 384)
    source = results / "critic_width_averaging" / "ant" / "w512_seed_0.json"
    write(source, result("Ant-v5", 0, [1.0], critic_width=512))
    write(recommended, result("Ant-v5", 0, [1.0], from_follow_up={"file": "results/critic_width_averaging/ant/"
                                                                          "w512_seed_0.json"}))
    assert baseline_width.critic_widths("Ant-v5", results) == (512, 384)  # promoted: the width of the run it came from


def test_the_suites_own_widths_are_equal_today_or_the_rerun_is_promoted():
    for task in ("Ant-v5", "Humanoid-v5"):
        ours, theirs = baseline_width.critic_widths(task)
        assert theirs == 256  # the CrossQ rows' width, as the suite's sb3_crossq files record it
        assert ours == 256 or (suite.RESULTS / critic_width.ADOPTION).exists()


def test_the_goal_gets_a_like_for_like_line_only_when_the_recommended_critic_is_wider(results, monkeypatch):
    monkeypatch.setattr(baseline_width, "critic_widths", lambda task, folder: (256, 256))
    assert baseline_width.goal_line(["Ant-v5", "Humanoid-v5"], results) is None
    monkeypatch.setattr(baseline_width, "critic_widths", lambda task, folder: (512, 256))
    assert baseline_width.goal_line(["Ant-v5"], results.parent / "elsewhere") is None  # not the committed results
    assert baseline_width.goal_line(["Ant-v5", "Humanoid-v5"], results) == (
        "Not like for like: polyak_recommended's critic 512 wide and sb3_crossq's 256 (the CrossQ rows' width; "
        "sb3-contrib's own default is 1,024). Against sb3_crossq with the same critic "
        "(`benchmarks/results/baseline_width.md`, 5 seeds a task): Ant-v5 no runs yet; Humanoid-v5 no runs yet.")
    add_seed(results, 0, base=1000.0, wide=2000.0, recommended=None)
    assert "Ant-v5 1 runs, none paired with the recommended row's rerun;" in (
        baseline_width.goal_line(["Ant-v5", "Humanoid-v5"], results))
    monkeypatch.setattr(baseline_width, "follow_up_pick", lambda: None)
    assert "Ant-v5 1 runs, none paired with the recommended row's (the rerun's pick is not made);" in (
        baseline_width.goal_line(["Ant-v5", "Humanoid-v5"], results))
    monkeypatch.setattr(baseline_width, "follow_up_pick", lambda: "w512 tau 0.0005")
    add_seed(results, 0, base=1000.0, wide=2000.0, recommended=3000.0)
    assert "Ant-v5 undecided (1 of 5 seeds, 3,000 against 2,000); Humanoid-v5 no runs yet." in (
        baseline_width.goal_line(["Ant-v5", "Humanoid-v5"], results))
    for seed in range(1, 5):
        add_seed(results, seed, base=1000.0, wide=3500.0, recommended=3000.0)
    line = baseline_width.goal_line(["Ant-v5"], results)
    # 3,000 beats sb3's 2,000 and loses to its four 3,500s: 5 wins in 25 pairs
    assert "Ant-v5 6.2% behind sb3_crossq's mean (3,000 against 3,200, probability of improvement 0.20 [" in line
    assert baseline_width.shortfall({"wide": 3200.0, "recommended": 3000.0}) == pytest.approx(0.0625)
    assert baseline_width.shortfall({"wide": 3200.0, "recommended": 3300.0}) == 0.0


def test_the_readme_goal_lines_carry_the_like_for_like_line(monkeypatch):
    suite_report = pytest.importorskip("suite_report")
    monkeypatch.setattr(suite_report, "goal_line", lambda tasks, folder: f"LIKE FOR LIKE on {', '.join(tasks)}")
    report = {"tasks": {"Ant-v5": {"rows": {"polyak_recommended": {"final_returns": [3000.0]},
                                            "sb3_crossq": {"final_returns": [2000.0]}}}}}
    lines = suite_report.readme_standing(report)
    assert lines[lines.index(next(line for line in lines if line.startswith("Goal:"))) + 1] == "LIKE FOR LIKE on Ant-v5"


def test_only_the_suites_seeds_decide(results):
    for seed in range(5):
        add_seed(results, seed, base=1000.0, wide=2000.0, recommended=2500.0)
    add_seed(results, 7, base=1000.0, wide=9000.0, recommended=100.0)  # beyond the suite's seeds 0-4
    verdict = baseline_width.task_verdict("Ant-v5", 512, baseline_width.seed_runs("Ant-v5", 512, "w512 tau 0.0005"))
    assert verdict["seeds"] == 5 and verdict["meets_goal"] is True
    assert verdict["means"]["wide"] == pytest.approx(2000.0) and verdict["improvement"]["probability"] == 1.0


def test_run_sb3_gives_sb3_contribs_crossq_the_wider_critic_and_refuses_it_for_td3(monkeypatch):
    sb3_contrib = pytest.importorskip("sb3_contrib")
    seen = {}

    class Stop(Exception):
        pass

    def capture(policy, env, **kwargs):
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr(sb3_contrib, "CrossQ", capture)
    with pytest.raises(Stop):
        suite.run_sb3("Hopper-v5", "sb3_crossq", 0, critic_width=512)
    assert seen["policy_kwargs"]["net_arch"] == {"pi": [256, 256], "qf": [512, 512]}
    with pytest.raises(ValueError, match="critic_width is for sb3_crossq"):
        suite.run_sb3("Hopper-v5", "sb3_td3", 0, critic_width=512)


def test_an_sb3_run_prints_each_evaluation_as_it_goes(monkeypatch, capsys):
    pytest.importorskip("sb3_contrib")
    spec = dataclasses.replace(suite.TASKS["InvertedPendulum-v5"], budget=40, eval_every=20)
    monkeypatch.setitem(suite.TASKS, "InvertedPendulum-v5", spec)
    result = suite.run_sb3("InvertedPendulum-v5", "sb3_crossq", 0)
    assert result["eval_steps"] == [20, 40]
    out = capsys.readouterr().out
    assert f"InvertedPendulum-v5 sb3_crossq seed 0: 20 env steps, evaluated {result['eval_returns'][0]:.1f}" in out
    assert "seed 0: 40 env steps, evaluated" in out


def test_the_halfcheetah_follow_up_reads_every_paired_seed_beside_the_verdict(results, monkeypatch):
    monkeypatch.setattr(baseline_width, "SAMPLE_EFFICIENCY_TASKS", ("HalfCheetah-v5",))
    for seed in range(5):
        add_seed(results, seed, base=1000.0, wide=2000.0, recommended=1900.0, task="HalfCheetah-v5")
    assert "Follow-up" not in baseline_width.report()  # none of its seeds yet
    add_seed(results, 5, base=None, wide=1000.0, recommended=None, task="HalfCheetah-v5")
    assert "Follow-up" not in baseline_width.report()  # seed 5 has one arm only
    add_seed(results, 6, base=None, wide=1000.0, recommended=3000.0, task="HalfCheetah-v5")
    text = baseline_width.report()
    assert "| HalfCheetah-v5 | 5 of 5 | 1000.0 | 2000.0 | 1900.0 |" in text  # the verdict: seeds 0-4 only
    assert "no (5.0% behind)" in text
    # Seeds 0-4 and 6: means (5 * 1,900 + 3,000) / 6 = 2,083.3 and (5 * 2,000 + 1,000) / 6 = 1,833.3. Of the 36
    # (recommended, sb3) pairs the recommended run wins 11: 3,000 beats all six, each 1,900 beats only 1,000.
    # The interquartile means cut one of six at each end: the middle four are 1,900 and 2,000 alike, so the typical
    # seed reads the other way round from the means.
    assert ("HalfCheetah-v5 over the 6 seeds with both 512-wide arms (0, 1, 2, 3, 4, 6; seeds 5, 7, 8, 9 still "
            "owed): mean final return 2083.3 for the recommended row against 1833.3 for sb3_crossq, interquartile "
            "mean 1900.0 [") in text
    assert "against 2000.0 [" in text and "probability of improvement 0.31 [" in text
