"""benchmarks/cheetah_gait_screen.py: a screening run measures its posture at each checkpoint and applies the rule;
the report counts runs in the gait per width and tests the difference only on the rule's full set of seeds."""

from __future__ import annotations

import json
import sys

import pytest

from tests.smoke.cli_helpers import ROOT

pytest.importorskip("mujoco")
sys.path.insert(0, str(ROOT / "benchmarks"))
screen = pytest.importorskip("cheetah_gait_screen")


@pytest.fixture
def study(tmp_path, monkeypatch):
    monkeypatch.setattr(screen, "STUDY", tmp_path / "study")
    monkeypatch.setattr(screen, "REPORT", tmp_path / "report.md")
    return tmp_path


def fake_result(width: int, seed: int, pitch: float) -> dict:
    rows = [{"env_steps": steps, "return": 100.0 * seed, "mean_pitch": pitch, "mean_abs_pitch": abs(pitch),
             "flipped_share": 0.0, "forward_velocity": 1.0} for steps in (5000, 10000, 15000)]
    return {"width": width, "seed": seed, "rows": rows, "in_gait": abs(pitch) > screen.GAIT_PITCH,
            "cpu_seconds": 60.0, "code_commit": {"commit": "abcdef0123"}, "machine": {"cpu": "CPU", "cpu_isa": "X"}}


def write(width: int, seed: int, pitch: float) -> None:
    screen.STUDY.mkdir(parents=True, exist_ok=True)
    screen.result_path(width, seed).write_text(json.dumps(fake_result(width, seed, pitch)))


def test_the_report_tests_only_the_rules_full_set_of_seeds(study):
    for seed in screen.SEEDS:  # 3 of 10 in the gait at 512, none at 256
        write(512, seed, 0.9 if seed < screen.SEEDS[3] else 0.1)
        if seed != screen.SEEDS[-1]:
            write(256, seed, -0.1)
    text = screen.report()
    assert "| 512 | 10 | 3 |" in text and "| 256 | 9 | 0 |" in text and "Not yet a test" in text
    write(256, screen.SEEDS[-1], 0.2)
    text = screen.report()
    # P(at least 3 of the 3 gait runs among the 10 at 512) = C(10,3) / C(20,3) = 120 / 1140
    assert f"p = {120 / 1140:.3f}" in text and "| 256 | 10 | 0 |" in text
    assert screen.REPORT.read_text() == text


def test_a_screening_run_reads_its_posture_at_each_checkpoint(study, monkeypatch):
    monkeypatch.setattr(screen, "STEPS", 200)
    monkeypatch.setattr(screen, "CHECKPOINT_EVERY", 100)
    monkeypatch.setattr(screen, "POSTURE_EPISODES", 1)
    monkeypatch.setattr(screen, "RUNS", study / "runs")
    shipped = screen.bindings  # and it learns from step 50 on, so its 200 steps include updates
    monkeypatch.setattr(screen, "bindings", lambda width: [*shipped(width), "ReplayConfig.min_size = 50",
                                                           "TrainerConfig.start_steps = 50"])
    screen.run_all([256], [0])
    result = json.loads(screen.result_path(256, 0).read_text())
    assert [row["env_steps"] for row in result["rows"]] == [100, 200]
    assert "critic/NetworkConfig.hidden_sizes = (256, 256)" in result["bindings"]
    assert result["in_gait"] == (result["rows"][-1]["mean_abs_pitch"] > screen.GAIT_PITCH)
    assert result["cpu_seconds"] > 0 and not (study / "runs" / "w256_seed_0").exists()
    screen.run_all([256], [0])  # a finished run is not trained again
    assert json.loads(screen.result_path(256, 0).read_text()) == result
