"""benchmarks/suite.py's report, built from the committed run files: the schema the suite issue gives
(``tasks -> rows -> seeds, final_returns, eval_steps, eval_returns, env_steps_per_s``, one ``machine`` object,
one ``code_commit``), and each seed's final return is its last evaluation at the task's budget."""

from __future__ import annotations

import sys

import pytest

from tests.smoke.cli_helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
suite = pytest.importorskip("suite")


def test_the_suite_report_follows_the_issue_schema_and_its_finals_are_last_evaluations():
    report = suite.collect()
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
    report = suite.collect()
    table = suite.markdown_table(report).splitlines()
    assert len(table) == 2 + len(suite.TASKS)
    for task in suite.TASKS:
        assert any(line.startswith(f"| {task} |") for line in table)
