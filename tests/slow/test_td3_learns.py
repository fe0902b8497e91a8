"""TD3 (configs/td3.gin) learns Pendulum-v1: a deterministic evaluation mean >= -200 within 20,000 env steps."""

import pytest

from tests.smoke.cli_helpers import ROOT, train_until_eval


@pytest.mark.slow
def test_td3_reaches_minus_200_within_20k_steps(tmp_path):
    evals = train_until_eval(str(ROOT / "configs" / "td3.gin"), tmp_path / "td3", -200.0, 20_000)
    assert "AgentConfig.n_critics = 2" in (tmp_path / "td3" / "config.gin").read_text()
    reached = [steps for steps, score in evals if score >= -200.0]
    assert reached, f"no evaluation reached -200: {evals}"
    assert reached[0] <= 20_000
