"""DDPG learns Pendulum-v1: a deterministic evaluation mean >= -200 within 20,000 env steps."""

import pytest

from tests.smoke.cli_helpers import PENDULUM, train_until_eval


@pytest.mark.slow
def test_pendulum_reaches_minus_200_within_20k_steps(tmp_path):
    evals = train_until_eval(PENDULUM, tmp_path / "pendulum", -200.0, 20_000)
    reached = [steps for steps, score in evals if score >= -200.0]
    assert reached, f"no evaluation reached -200: {evals}"
    assert reached[0] <= 20_000
