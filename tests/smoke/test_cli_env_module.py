"""`module:EnvId` and `TrainerConfig.env_kwargs` through train, --resume, test, record and export."""

from __future__ import annotations

import csv
import os

import imageio.v3 as iio
import numpy as np

from tests.smoke.cli_helpers import PENDULUM, polyak
from tests.unit.test_env_ids import ENV_MODULE  # written into a module of the test's own

ARGS = ["--gin-param", "TrainerConfig.env_id='polyak_cli_line_env:CliLine-v0'",
        "--gin-param", "TrainerConfig.env_kwargs={'length': 50, 'scale': 2.0}",
        "--gin-param", "TrainerConfig.start_steps=100", "--gin-param", "ReplayConfig.min_size=100",
        "--gin-param", "TrainerConfig.eval_interval=200", "--gin-param", "TrainerConfig.eval_episodes=2",
        "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)", "--gin-param", "TrainerConfig.checkpoint_interval=200"]


def eval_scores(run) -> dict[int, float]:
    with open(run / "metrics.csv", newline="") as handle:
        return {int(r["env_steps"]): float(r["score"]) for r in csv.DictReader(handle) if r["kind"] == "eval"}


def test_module_env_with_kwargs_trains_resumes_tests_records_and_exports(tmp_path, monkeypatch):
    (tmp_path / "polyak_cli_line_env.py").write_text(ENV_MODULE.replace("{name}", "CliLine-v0"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    run = tmp_path / "run"
    first = polyak("train", "--config", PENDULUM, "--run-dir", str(run), *ARGS,
                   "--gin-param", "TrainerConfig.max_env_steps=400")
    assert first.returncode == 0, first.stderr
    assert "env_kwargs = {'length': 50, 'scale': 2.0}" in (run / "config.gin").read_text()
    assert set(eval_scores(run)) == {200, 400}
    (run / "summary.json").unlink()  # as if the run had been killed after its last checkpoint
    resumed = polyak("train", "--resume", str(run), "--gin-param", "TrainerConfig.max_env_steps=600")
    assert resumed.returncode == 0, resumed.stderr
    # the resumed run evaluates on an env built with the same kwargs: reward 1 per step, 50 steps per episode
    assert eval_scores(run) == {200: 50.0, 400: 50.0, 600: 50.0}
    tested = polyak("test", str(run), "--episodes", "2")
    assert tested.returncode == 0, tested.stderr
    assert "mean score 50.00" in tested.stdout
    recorded = polyak("record", str(run), "--out", str(tmp_path / "line.gif"), "--steps", "4")
    assert recorded.returncode == 0, recorded.stderr
    frames = iio.imread(tmp_path / "line.gif", index=None)[..., :3]
    # scale 2.0 from env_kwargs (the default 1.0 would give 10, 11, ...)
    assert [np.unique(frame).tolist() for frame in frames] == [[20], [21], [22], [23]]
    exported = polyak("export", str(run), "--out", str(tmp_path / "exported"))
    assert exported.returncode == 0, exported.stderr
    again = polyak("test", str(tmp_path / "exported"), "--episodes", "1")
    assert again.returncode == 0 and "mean score 50.00" in again.stdout, again.stderr
    replayed = polyak("record", str(tmp_path / "exported"), "--out", str(tmp_path / "exported.gif"), "--steps", "2")
    assert replayed.returncode == 0, replayed.stderr
    frames = iio.imread(tmp_path / "exported.gif", index=None)[..., :3]
    assert [np.unique(frame).tolist() for frame in frames] == [[20], [21]]
