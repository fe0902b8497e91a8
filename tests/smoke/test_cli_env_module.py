"""`module:EnvId` and `TrainerConfig.env_kwargs` through train, --resume, test, record and export."""

from __future__ import annotations

import csv
import os

import imageio.v3 as iio
import numpy as np

from tests.smoke.cli_helpers import PENDULUM, polyak

# Written by the test into a module of its own: importing it registers the env, nothing else does.
ENV_MODULE = '''
import gymnasium as gym
import numpy as np


class Line(gym.Env):
    """Walk along a line; episodes last ``length`` steps; the observation holds ``scale``. Frame t is grey at
    ``10 * scale + t``, so a recording shows which keyword arguments built the env (and no two frames are equal,
    which GIF writers would merge)."""

    metadata = {"render_modes": ["rgb_array"]}
    observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
    action_space = gym.spaces.Box(-3.0, 3.0, (1,), np.float64)

    def __init__(self, length=4, scale=1.0, render_mode=None):
        self.length, self.scale, self.t, self.render_mode = length, scale, 0, render_mode

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0, self.scale]), {}

    def step(self, action):
        self.t += 1
        return np.array([float(action[0]), self.scale]), 1.0, False, self.t >= self.length, {}

    def render(self):
        return np.full((16, 16, 3), int(10 * self.scale) + self.t, dtype=np.uint8)


gym.register("CliLine-v0", entry_point=Line)
'''

ARGS = ["--gin-param", "TrainerConfig.env_id='polyak_cli_line_env:CliLine-v0'",
        "--gin-param", "TrainerConfig.env_kwargs={'length': 50, 'scale': 2.0}",
        "--gin-param", "TrainerConfig.start_steps=100", "--gin-param", "ReplayConfig.min_size=100",
        "--gin-param", "TrainerConfig.eval_interval=200", "--gin-param", "TrainerConfig.eval_episodes=2",
        "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)", "--gin-param", "TrainerConfig.checkpoint_interval=200"]


def eval_scores(run) -> dict[int, float]:
    with open(run / "metrics.csv", newline="") as handle:
        return {int(r["env_steps"]): float(r["score"]) for r in csv.DictReader(handle) if r["kind"] == "eval"}


def test_module_env_with_kwargs_trains_resumes_tests_records_and_exports(tmp_path, monkeypatch):
    (tmp_path / "polyak_cli_line_env.py").write_text(ENV_MODULE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    run = tmp_path / "run"
    first = polyak("train", "--config", PENDULUM, "--run-dir", str(run), *ARGS,
                   "--gin-param", "TrainerConfig.max_env_steps=300")
    assert first.returncode == 0, first.stderr
    assert "env_kwargs = {'length': 50, 'scale': 2.0}" in (run / "config.gin").read_text()
    assert set(eval_scores(run)) == {200}
    (run / "summary.json").unlink()  # as if the run had been killed after its last checkpoint
    resumed = polyak("train", "--resume", str(run), "--gin-param", "TrainerConfig.max_env_steps=500")
    assert resumed.returncode == 0, resumed.stderr
    # the resumed run evaluates on an env built with the same kwargs: reward 1 per step, 50 steps per episode
    assert eval_scores(run) == {200: 50.0, 400: 50.0}
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
