"""One writer per run dir, through the CLI: a second train or --resume is refused with one line and exit 2 while
the first goes on untouched; a killed writer leaves no stale lock."""

import os
import signal
import subprocess
import sys
import time

from polyak.checkpoint import complete_checkpoints
from tests.smoke.cli_helpers import PENDULUM, ROOT

LONG = ["--config", PENDULUM, "--gin-param", "TrainerConfig.max_env_steps=1000000",
        "--gin-param", "TrainerConfig.start_steps=100", "--gin-param", "ReplayConfig.min_size=50",
        "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)", "--gin-param", "TrainerConfig.progress_bar=False",
        "--gin-param", "TrainerConfig.eval_interval=None", "--gin-param", "TrainerConfig.checkpoint_interval=200"]


def _start(*args):
    return subprocess.Popen([sys.executable, "-m", "polyak.cli", *args], cwd=ROOT, text=True,
                            env=dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


def _wait_for_checkpoints(run_dir, count=1):
    deadline = time.monotonic() + 120
    while len(complete_checkpoints(run_dir / "checkpoints")) < count:
        assert time.monotonic() < deadline, "no checkpoint appeared"
        time.sleep(0.01)


def _refused(process):
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2, err
    assert err.startswith("polyak: error: ") and err.count("\n") == 1, err
    assert "being written by another polyak process" in err, err


def test_second_writer_is_refused_and_the_first_goes_on(tmp_path):
    run_dir = tmp_path / "run"
    first = _start("train", *LONG, "--run-dir", str(run_dir))
    try:
        _wait_for_checkpoints(run_dir)
        _refused(_start("train", "--resume", str(run_dir)))
        metrics_before = (run_dir / "metrics.csv").stat().st_size
        _wait_for_checkpoints(run_dir, 3)
        assert first.poll() is None, "the first writer must still be running"
        assert (run_dir / "metrics.csv").stat().st_size >= metrics_before
        assert len(list((run_dir / "tb").iterdir())) == 1, "one TensorBoard writer"
    finally:
        first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=120) == 0, first.stderr.read()


def test_second_new_run_into_the_same_dir_is_refused(tmp_path):
    run_dir = tmp_path / "run"
    slow = [*LONG, "--gin-param", "TrainerConfig.checkpoint_interval=1000000"]  # no checkpoint for a while
    first = _start("train", *slow, "--run-dir", str(run_dir))
    try:
        deadline = time.monotonic() + 120
        while not (run_dir / "metrics.csv").exists():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        _refused(_start("train", *slow, "--run-dir", str(run_dir)))
        assert first.poll() is None
    finally:
        first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=120) == 0


def test_killed_writer_leaves_no_stale_lock(tmp_path):
    run_dir = tmp_path / "run"
    first = _start("train", *LONG, "--run-dir", str(run_dir))
    _wait_for_checkpoints(run_dir)
    first.kill()
    first.wait()
    newest = complete_checkpoints(run_dir / "checkpoints")[-1].name
    resumed = _start("train", "--resume", str(run_dir))
    deadline = time.monotonic() + 120
    while complete_checkpoints(run_dir / "checkpoints")[-1].name <= newest:  # the resumed run writes
        assert resumed.poll() is None, resumed.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    resumed.send_signal(signal.SIGTERM)
    _, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
