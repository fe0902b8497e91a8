"""DDPG learns Pendulum-v1: a deterministic evaluation mean >= -200 within 20,000 env steps."""

from pathlib import Path

import pytest

from tests.smoke.cli_helpers import PENDULUM, train_until_eval


@pytest.mark.slow
def test_pendulum_reaches_minus_200_within_20k_steps(tmp_path):
    evals = train_until_eval(PENDULUM, tmp_path / "pendulum", -200.0, 20_000)
    reached = [steps for steps, score in evals if score >= -200.0]
    assert reached, f"no evaluation reached -200: {evals}"
    assert reached[0] <= 20_000


@pytest.mark.slow
def test_fast_pendulum_config_reaches_minus_200_within_10k_steps(tmp_path):
    """configs/pendulum_fast.gin (64-64, 3-step returns) is speed.py's time-to-threshold config."""
    fast = str(Path(PENDULUM).with_name("pendulum_fast.gin"))
    evals = train_until_eval(fast, tmp_path / "pendulum_fast", -200.0, 10_000)
    assert "ReplayConfig.n_step = 3" in (tmp_path / "pendulum_fast" / "config.gin").read_text()
    reached = [steps for steps, score in evals if score >= -200.0]
    assert reached, f"no evaluation reached -200 within 10,000 steps: {evals}"
