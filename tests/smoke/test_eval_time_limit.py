"""`polyak train` and `polyak test` on an env registered without a time limit: evaluation episodes are cut at a
cap (one warning), and SIGTERM during a long evaluation ends the run promptly with a checkpoint."""

from __future__ import annotations

import csv
import dataclasses
import gc
import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import gin
import pytest

from polyak.checkpoint import complete_checkpoints
from polyak.config import Configs
from polyak.ginconf import build_configs_from_gin, parse_gin
from polyak.trainer import Summary, Trainer
from tests.smoke.cli_helpers import PENDULUM, polyak

# An env that never ends an episode (reward 1 per step, so a cut episode scores its length), registered without
# max_episode_steps. ``delay`` slows its steps; ``marker`` gets one line per reset.
ENDLESS_MODULE = '''
import time

import gymnasium as gym
import numpy as np


class Endless(gym.Env):
    observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def __init__(self, delay=0.0, marker=None):
        self.delay, self.marker, self.t = delay, marker, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        if self.marker:
            with open(self.marker, "a") as handle:
                handle.write("reset\\n")
        return np.zeros(2), {}

    def step(self, action):
        self.t += 1
        if self.delay:
            time.sleep(self.delay)
        return np.array([float(action[0]), np.sin(self.t / 10)]), 1.0, False, False, {}


gym.register("Endless-v0", entry_point=Endless)
'''
ENV = "TrainerConfig.env_id='polyak_endless_env:Endless-v0'"
FAST = ["--config", PENDULUM, "--seed", "0", "--gin-param", ENV,
        "--gin-param", "TrainerConfig.start_steps=100", "--gin-param", "ReplayConfig.min_size=100",
        "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)", "--gin-param", "TrainerConfig.progress_bar=False"]
WARNING = "polyak: warning: environment 'Endless-v0' has no time limit"


@pytest.fixture
def endless_env(tmp_path, monkeypatch) -> Path:
    (tmp_path / "polyak_endless_env.py").write_text(ENDLESS_MODULE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    return tmp_path


def eval_scores(run: Path) -> dict[int, float]:
    with open(run / "metrics.csv", newline="") as handle:
        return {int(r["env_steps"]): float(r["score"]) for r in csv.DictReader(handle) if r["kind"] == "eval"}


@pytest.fixture
def start():
    """Start the CLI in the background; whatever still runs when the test ends is killed."""
    started: list[subprocess.Popen] = []

    def run(*args: str) -> subprocess.Popen:
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
        started.append(subprocess.Popen([sys.executable, "-m", "polyak.cli", *args], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env, stdin=subprocess.DEVNULL))
        return started[-1]

    yield run
    for process in started:
        if process.poll() is None:
            process.kill()
            process.communicate()


def wait_for_resets(marker: Path, count: int, process: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if marker.is_file() and marker.read_text().count("reset") >= count:
            return
        time.sleep(0.05)
    if process.poll() is None:
        process.kill()
    out, err = process.communicate()
    raise AssertionError(f"no reset number {count} of {marker}: {out[-1000:]} {err[-2000:]}")


def terminate(process: subprocess.Popen) -> tuple[str, str]:
    """SIGTERM, then the process's output once it exits; a failure when it still runs 20 s later."""
    process.send_signal(signal.SIGTERM)
    try:
        return process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("still running 20 s after SIGTERM")


def test_train_and_test_cap_evaluation_on_an_env_without_a_time_limit(endless_env):
    run = endless_env / "run"
    started = time.monotonic()
    trained = polyak("train", *FAST, "--run-dir", str(run), "--gin-param", "TrainerConfig.max_env_steps=300",
                     "--gin-param", "TrainerConfig.eval_interval=100", "--gin-param", "TrainerConfig.eval_episodes=2",
                     timeout=120)
    assert trained.returncode == 0, trained.stderr[-2000:]
    assert time.monotonic() - started < 60
    assert eval_scores(run) == {100: 1000.0, 200: 1000.0, 300: 1000.0}  # the default cap, 1000 steps
    assert trained.stdout.count("polyak: warning:") == 2, trained.stdout  # one for training, one for evaluation
    assert "so a training episode ends only when the env itself ends it" in trained.stdout
    assert WARNING in trained.stdout and "TrainerConfig.eval_max_episode_steps changes it" in trained.stdout

    tested = polyak("test", str(run), "--episodes", "2", timeout=120)
    assert tested.returncode == 0, tested.stderr[-2000:]
    assert "mean score 1000.00 ± 0.00 over 2 episodes" in tested.stdout
    assert tested.stdout.count("polyak: warning:") == 1 and "polyak test --max-episode-steps" in tested.stdout
    shorter = polyak("test", str(run), "--episodes", "3", "--max-episode-steps", "30", timeout=120)
    assert shorter.returncode == 0 and "mean score 30.00 ± 0.00 over 3 episodes" in shorter.stdout, shorter.stderr
    refused = polyak("test", str(run), "--max-episode-steps", "0")
    assert refused.returncode == 2 and "--max-episode-steps must be >= 1" in refused.stderr


def test_sigterm_during_a_long_evaluation_checkpoints_and_a_resume_redoes_it(endless_env, start):
    run, marker = endless_env / "run", endless_env / "resets"
    process = start("train", *FAST, "--run-dir", str(run),
                    "--gin-param", f"TrainerConfig.env_kwargs={{'delay': 0.002, 'marker': {str(marker)!r}}}",
                    "--gin-param", "TrainerConfig.max_env_steps=100000",
                    "--gin-param", "TrainerConfig.eval_interval=200", "--gin-param", "TrainerConfig.eval_episodes=1",
                    "--gin-param", "TrainerConfig.eval_max_episode_steps=100000000")
    wait_for_resets(marker, 2, process)  # the training env's reset, then the evaluation's
    time.sleep(0.5)
    out, err = terminate(process)
    assert process.returncode == 0, err[-2000:]
    assert f"stopped by SIGTERM at 200 env steps; checkpoint saved. Resume with: polyak train --resume {run}" in out
    assert [int(p.name.split("_")[1]) for p in complete_checkpoints(run / "checkpoints")] == [200]
    assert eval_scores(run) == {}  # the cut-short evaluation is not scored
    assert not (run / "summary.json").exists()

    resumed = polyak("train", "--resume", str(run), "--gin-param", "TrainerConfig.max_env_steps=200",
                     "--gin-param", "TrainerConfig.eval_max_episode_steps=25", timeout=120)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert eval_scores(run) == {200: 25.0}  # redone first, with the resume's cap


def test_sigterm_ends_polyak_test_promptly_with_one_line(endless_env, start):
    run, marker = endless_env / "run", endless_env / "resets"
    trained = polyak("train", *FAST, "--run-dir", str(run), "--gin-param", "TrainerConfig.max_env_steps=150",
                     "--gin-param", f"TrainerConfig.env_kwargs={{'delay': 0.002, 'marker': {str(marker)!r}}}",
                     timeout=120)
    assert trained.returncode == 0, trained.stderr[-2000:]
    marker.unlink()
    process = start("test", str(run), "--episodes", "2", "--max-episode-steps", "100000000")
    wait_for_resets(marker, 1, process)
    time.sleep(0.5)
    out, err = terminate(process)
    assert process.returncode == 128 + signal.SIGTERM, (out, err)
    assert err.strip() == "polyak: test stopped by SIGTERM after 0 of 2 episodes; no score", err
    assert "Traceback" not in out + err


def pendulum_configs() -> Configs:
    parse_gin(Path(PENDULUM), ["TrainerConfig.seed = 3", "TrainerConfig.max_env_steps = 1000",
                               "TrainerConfig.start_steps = 300", "ReplayConfig.min_size = 200",
                               "TrainerConfig.eval_interval = 400", "TrainerConfig.eval_episodes = 2",
                               "TrainerConfig.checkpoint_interval = 100", "NetworkConfig.hidden_sizes = (32, 32)",
                               "TrainerConfig.progress_bar = False"])
    try:
        return build_configs_from_gin()
    finally:
        gin.clear_config()


def run_with_a_signal_at_eval_step(configs: Configs, run_dir: Path, at: int) -> Summary:
    """Train ``run_dir``; SIGTERM's handler runs just before the evaluation env's step number ``at``."""
    trainer = Trainer(configs, run_dir)
    assert trainer.evaluator is not None
    env, steps = trainer.evaluator.env, itertools.count()
    step = env.step

    def step_then_signal(actions):
        if next(steps) == at:
            trainer._on_signal("SIGTERM")
        return step(actions)

    env.step = step_then_signal
    return trainer.run()


def test_a_signal_during_evaluation_then_resume_ends_like_an_uninterrupted_run(tmp_path):
    configs = pendulum_configs()
    Trainer(configs, tmp_path / "reference").run()
    # 100 steps into the second evaluation (at 800 env steps; 2 episodes of 200 steps each)
    summary = run_with_a_signal_at_eval_step(configs, tmp_path / "run", 500)
    assert (summary.interrupted, summary.env_steps) == ("SIGTERM", 800)
    assert eval_scores(tmp_path / "run").keys() == {400}
    gc.collect()  # the interrupted trainer lets go of the run's lock
    resumed = Trainer(configs, tmp_path / "run")
    resumed.restore()
    assert resumed.run().interrupted is None
    assert (tmp_path / "run" / "metrics.csv").read_bytes() == (tmp_path / "reference" / "metrics.csv").read_bytes()
    assert eval_scores(tmp_path / "run").keys() == {400, 800, 1000}  # 1000: the budget, between evaluations


def test_a_signal_during_the_live_actors_evaluation_stops_the_whole_evaluation(tmp_path):
    """With the averaged actor each evaluation plays the averaged actor's 2 episodes, then the live actor's (400 env
    steps each): a signal in the live half of the second one drops both halves, and the resumed run redoes both."""
    configs = pendulum_configs()
    configs = dataclasses.replace(configs, agent=dataclasses.replace(configs.agent, actor_average=0.05))
    Trainer(configs, tmp_path / "reference").run()
    summary = run_with_a_signal_at_eval_step(configs, tmp_path / "run", 800 + 400 + 100)
    assert (summary.interrupted, summary.env_steps) == ("SIGTERM", 800)
    assert eval_scores(tmp_path / "run").keys() == {400}
    gc.collect()
    resumed = Trainer(configs, tmp_path / "run")
    resumed.restore()
    assert resumed.run().interrupted is None
    reference = (tmp_path / "reference" / "metrics.csv").read_text()
    assert (tmp_path / "run" / "metrics.csv").read_text() == reference
    assert reference.count("\neval_live,") == 3  # at 400, 800 and the budget's end (1000)
