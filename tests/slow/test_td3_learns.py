"""TD3 (configs/td3.gin) learns Pendulum-v1: a deterministic evaluation mean >= -200 within 20,000 env steps."""

import csv

import pytest

from tests.smoke.cli_helpers import ROOT, polyak

TD3 = str(ROOT / "configs" / "td3.gin")


@pytest.mark.slow
def test_td3_reaches_minus_200_within_20k_steps(tmp_path):
    run_dir = tmp_path / "td3"
    result = polyak("train", "--config", TD3, "--seed", "0", "--run-dir", str(run_dir),
                    "--gin-param", "TrainerConfig.max_env_steps=20000",
                    "--gin-param", "TrainerConfig.eval_stop_score=-200.0", timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "AgentConfig.n_critics = 2" in (run_dir / "config.gin").read_text()
    with open(run_dir / "metrics.csv", newline="") as handle:
        evals = [(int(r["env_steps"]), float(r["score"])) for r in csv.DictReader(handle) if r["kind"] == "eval"]
    reached = [steps for steps, score in evals if score >= -200.0]
    assert reached, f"no evaluation reached -200: {evals}"
    assert reached[0] <= 20_000
