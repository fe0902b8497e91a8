"""Ape-X DDPG with 2 rollout workers learns Pendulum-v1: a deterministic evaluation mean >= -200."""

import csv
import json

import pytest

from tests.distributed.helpers import PENDULUM, polyak

pytest.importorskip("ray")


@pytest.mark.slow
def test_apex_two_workers_reach_minus_200_on_pendulum(tmp_path):
    run = tmp_path / "apex"
    result = polyak("train", "--config", PENDULUM, "--workers", "2", "--seed", "0", "--run-dir", str(run),
                    "--gin-param", "TrainerConfig.max_env_steps=20000",
                    "--gin-param", "TrainerConfig.eval_stop_score=-200", timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    with open(run / "metrics.csv", newline="") as handle:
        evals = [(int(r["env_steps"]), float(r["score"])) for r in csv.DictReader(handle) if r["kind"] == "eval"]
    reached = [steps for steps, score in evals if score >= -200.0]
    record = json.loads((run / "apex.json").read_text())
    print(f"\nApe-X (2 workers) first eval >= -200 at {reached[:1]} env steps; evals {evals}; {record}")
    assert reached, f"no evaluation reached -200: {evals}"
    assert reached[0] <= 20_000 and record["worker_restarts"] == 0
