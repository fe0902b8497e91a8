"""Stopping and resuming: SIGINT, SIGTERM and SIGKILL during a save, then --resume, end exactly like an
uninterrupted run (same parameters, same metrics.csv) on CPU."""

import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from polyak.checkpoint import complete_checkpoints, load_checkpoint
from tests.smoke.cli_helpers import PENDULUM, polyak

ARGS = ["--config", PENDULUM, "--seed", "4", "--gin-param", "TrainerConfig.max_env_steps=1600",
        "--gin-param", "TrainerConfig.start_steps=300", "--gin-param", "ReplayConfig.min_size=200",
        "--gin-param", "TrainerConfig.eval_interval=400", "--gin-param", "TrainerConfig.eval_episodes=1",
        "--gin-param", "NetworkConfig.hidden_sizes=(32, 32)", "--gin-param", "TrainerConfig.checkpoint_interval=50",
        "--gin-param", "TrainerConfig.progress_bar=False"]


# Runs the CLI with every checkpoint save held open for a moment once its temporary directory is complete
# (its last fsync before the rename), so a test can kill the process in the middle of a save.
SLOW_SAVES = """
import sys
import time

from polyak import checkpoint
from polyak.cli import main

fsync_dir = checkpoint._fsync_dir


def held_open(path):
    fsync_dir(path)
    if path.name.startswith(".tmp-"):
        time.sleep(DELAY)


checkpoint._fsync_dir = held_open
sys.exit(main())
"""


def _start(run_dir, save_delay: float | None = None):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    command = [sys.executable, "-m", "polyak.cli"]
    if save_delay is not None:
        launcher = run_dir.parent / "slow_saves.py"
        launcher.write_text(SLOW_SAVES.replace("DELAY", repr(save_delay)))
        command = [sys.executable, str(launcher)]
    return subprocess.Popen([*command, "train", *ARGS, "--run-dir", str(run_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_for(condition, timeout=120.0, poll=0.0005):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(poll)
    return False


def _final_agent(run_dir):
    state, _ = load_checkpoint(complete_checkpoints(run_dir / "checkpoints")[-1])
    return state["agent"]


def _assert_same_run(reference, resumed):
    assert (resumed / "metrics.csv").read_bytes() == (reference / "metrics.csv").read_bytes()
    a, b = _final_agent(reference), _final_agent(resumed)
    for net in ("actor", "critic", "actor_target", "critic_target"):
        for name, tensor in a[net].items():
            assert torch.equal(tensor, b[net][name]), f"{net}.{name} differs"


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("reference") / "run"
    result = polyak("train", *ARGS, "--run-dir", str(run_dir))
    assert result.returncode == 0, result.stderr
    return run_dir


@pytest.mark.parametrize(("sig", "after_checkpoints"), [(signal.SIGINT, 3), (signal.SIGINT, 17),
                                                        (signal.SIGTERM, 9), (signal.SIGTERM, 24)])
def test_signal_saves_and_resume_is_exact(reference, tmp_path, sig, after_checkpoints):
    run_dir = tmp_path / "run"
    process = _start(run_dir)
    counter = {"seen": set()}

    def enough():
        counter["seen"].update(p.name for p in complete_checkpoints(run_dir / "checkpoints"))
        return len(counter["seen"]) >= after_checkpoints or process.poll() is not None

    assert _wait_for(enough)
    process.send_signal(sig)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert f"stopped by {sig.name}" in out and f"polyak train --resume {run_dir}" in out
    assert not (run_dir / "summary.json").exists()
    resumed = polyak("train", "--resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    _assert_same_run(reference, run_dir)


def test_sigkill_during_a_save_keeps_the_previous_checkpoint(reference, tmp_path):
    run_dir = tmp_path / "run"
    process = _start(run_dir, save_delay=0.2)  # each save waits before its rename
    checkpoints = run_dir / "checkpoints"

    def saving():
        return (checkpoints.is_dir() and len(complete_checkpoints(checkpoints)) >= 2
                and any(p.name.startswith(".tmp-") for p in checkpoints.iterdir())) or process.poll() is not None

    assert _wait_for(saving)
    process.kill()
    process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL, "the run finished before a save could be interrupted"
    newest = complete_checkpoints(checkpoints)[-1]
    load_checkpoint(newest)  # the newest complete checkpoint is intact
    resumed = polyak("train", "--resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    assert not any(p.name.startswith(".tmp-") for p in checkpoints.iterdir())
    _assert_same_run(reference, run_dir)


def test_resume_of_a_finished_run_is_refused(reference):
    result = polyak("train", "--resume", str(reference))
    assert result.returncode == 2 and "already finished" in result.stderr


def assert_sigint_then_resume_is_exact(tmp_path, switches: list[str]) -> None:
    """An uninterrupted run and one stopped by SIGINT after two checkpoints, then resumed, end identical."""
    reference = tmp_path / "reference"
    result = polyak("train", *ARGS, *switches, "--run-dir", str(reference))
    assert result.returncode == 0, result.stderr
    run_dir = tmp_path / "run"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    process = subprocess.Popen([sys.executable, "-m", "polyak.cli", "train", *ARGS, *switches, "--run-dir",
                                str(run_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert _wait_for(lambda: len(complete_checkpoints(run_dir / "checkpoints")) >= 2 or process.poll() is not None)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0 and "stopped by SIGINT" in out, err
    resumed = polyak("train", "--resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    _assert_same_run(reference, run_dir)


def test_resume_is_exact_with_prioritized_nstep_td3_and_ou_noise(tmp_path):
    assert_sigint_then_resume_is_exact(tmp_path, [
        "--gin-param", "ReplayConfig.sampler='prioritized'", "--gin-param", "ReplayConfig.n_step=3",
        "--gin-param", "AgentConfig.n_critics=2", "--gin-param", "AgentConfig.policy_delay=2",
        "--gin-param", "AgentConfig.target_policy_noise=0.2", "--gin-param", "NoiseConfig.kind='ou'"])
