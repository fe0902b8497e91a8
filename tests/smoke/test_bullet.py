"""PyBullet's HopperBulletEnv-v0 (the task the DDPG write-up is written around) trains through the CLI."""

from __future__ import annotations

import json

import pytest

from tests.smoke.cli_helpers import ROOT, polyak

pytest.importorskip("pybullet_envs_gymnasium")


def test_hopper_bullet_trains_a_few_hundred_steps_and_tests(tmp_path):
    run = tmp_path / "hopperbullet"
    bindings = ["TrainerConfig.max_env_steps=400", "TrainerConfig.start_steps=200", "ReplayConfig.min_size=200",
                "TrainerConfig.eval_interval=400", "TrainerConfig.eval_episodes=1",
                "NetworkConfig.hidden_sizes=(32, 32)"]
    config = ROOT / "configs" / "suite" / "hopperbullet_td3.gin"
    result = polyak("train", "--config", str(config), "--run-dir", str(run),
                    *[arg for binding in bindings for arg in ("--gin-param", binding)])
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["env_steps"] == 400 and summary["env_id"] == "pybullet_envs_gymnasium:HopperBulletEnv-v0"
    assert summary["updates"] > 0  # it learned, not only collected
    tested = polyak("test", str(run), "--episodes", "1")
    assert tested.returncode == 0, tested.stderr[-2000:]
    assert "mean score" in tested.stdout
