"""benchmarks/stability.py on a checkout without run directories: the committed report's measurements stay."""

from __future__ import annotations

import json
import sys

import pytest

from tests.smoke.cli_helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
stability = pytest.importorskip("stability")


def suite_run(seed: int, commit: str) -> dict:
    return {"seed": seed, "eval_returns": [500.0, 1000.0], "final_return": 1000.0, "code_commit": {"commit": commit}}


def test_rebuilding_without_run_directories_keeps_the_diagnostics_of_the_same_commit(tmp_path, monkeypatch):
    runs = {"polyak_crossq": [suite_run(0, "aaa"), suite_run(1, "new")], "sb3_crossq": [suite_run(0, "aaa")]}
    monkeypatch.setattr(stability, "run_files", lambda row: runs.get(row, []))
    monkeypatch.setattr(stability, "ROOT", tmp_path)  # no runs/suite, no runs/stability here
    monkeypatch.setattr(stability, "RESULTS", tmp_path)
    monkeypatch.setattr(sys, "argv", ["stability.py"])
    measured = {"saturated_share": 0.25, "q_mean_final": 80.5}
    committed = json.loads((ROOT / "benchmarks" / "results" / "stability_invertedpendulum.json").read_text())
    probe = committed["probes"]["idp_crossq_seed_0"]
    earlier = {"rows": {"polyak_crossq": {"runs": [{"seed": 0, "code_commit": "aaa", "diagnostics": measured},
                                                   {"seed": 1, "code_commit": "old", "diagnostics": measured}]}},
               "probes": {"idp_crossq_seed_0": probe}}
    (tmp_path / "stability_invertedpendulum.json").write_text(json.dumps(earlier))
    stability.main()
    report = json.loads((tmp_path / "stability_invertedpendulum.json").read_text())
    polyak_runs = report["rows"]["polyak_crossq"]["runs"]
    assert polyak_runs[0]["diagnostics"] == measured
    assert polyak_runs[1]["diagnostics"] is None  # its result file is from a later commit: the old figures would lie
    assert "diagnostics" not in report["rows"]["sb3_crossq"]["runs"][0]
    assert report["probes"] == {"idp_crossq_seed_0": probe}
    text = (tmp_path / "stability_invertedpendulum.md").read_text()
    assert "| polyak_crossq | 0 | 1000.0 | 1000.0 | 750.0 | 25.0% | 80.5 |" in text
    assert "| polyak_crossq | 1 | 1000.0 | 1000.0 | 750.0 |  |  |" in text and "| idp_crossq_seed_0 |" in text
    written = (tmp_path / "stability_invertedpendulum.json").stat().st_mtime_ns, text
    stability.main()  # nothing measured differs now: the report stays as it was, its commit and load included
    assert ((tmp_path / "stability_invertedpendulum.json").stat().st_mtime_ns,
            (tmp_path / "stability_invertedpendulum.md").read_text()) == written
