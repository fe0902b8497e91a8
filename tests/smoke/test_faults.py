"""Faults during training: NaN, an env that raises, a full disk. Each ends with one clear line and never
leaves a damaged or NaN checkpoint behind."""

import errno

import pytest
import torch

import polyak.checkpoint
from polyak.checkpoint import complete_checkpoints, load_checkpoint
from polyak.cli import main
from tests.smoke.cli_helpers import ROOT

BASE = ["--gin-param", "TrainerConfig.max_env_steps=1000", "--gin-param", "TrainerConfig.start_steps=100",
        "--gin-param", "ReplayConfig.min_size=50", "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)",
        "--gin-param", "TrainerConfig.progress_bar=False", "--gin-param", "TrainerConfig.checkpoint_interval=100"]


def _train(run_dir, env_id, capsys):
    capsys.readouterr()
    code = main(["train", "--config", "configs/pendulum.gin", *BASE, "--gin-param",
                 f"TrainerConfig.env_id='{env_id}'", "--gin-param", "TrainerConfig.eval_interval=None",
                 "--run-dir", str(run_dir)])
    return code, capsys.readouterr().err


def _all_finite(run_dir):
    for checkpoint in complete_checkpoints(run_dir / "checkpoints"):
        state, _ = load_checkpoint(checkpoint)
        for net in ("actor", "critic"):
            assert all(torch.isfinite(t).all() for t in state["agent"][net].values()), checkpoint


def test_a_diverged_learner_stops_the_run_and_keeps_only_finite_checkpoints(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, err = _train(tmp_path / "run", "polyak-test/HugeReward-v0", capsys)  # finite rewards of 3e38
    assert code == 2
    assert err.startswith("polyak: error: training diverged") and err.count("\n") == 1, err
    assert complete_checkpoints(tmp_path / "run" / "checkpoints"), "the good checkpoints before the overflow remain"
    _all_finite(tmp_path / "run")


def test_a_nan_reward_is_named_as_the_envs_and_no_nan_reaches_a_checkpoint(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, err = _train(tmp_path / "run", "polyak-test/NaNReward-v0", capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("polyak: error: environment polyak-test/NaNReward-v0 failed after 250 env steps: step() "
                          "returned a reward of nan; a checkpoint was saved there"), err
    _all_finite(tmp_path / "run")


def test_env_exception_names_env_and_step_and_saves(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, err = _train(tmp_path / "run", "polyak-test/Crash-v0", capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "environment polyak-test/Crash-v0 failed after 250 env steps" in err
    assert "RuntimeError: simulated physics failure" in err and "checkpoint was saved" in err
    newest = complete_checkpoints(tmp_path / "run" / "checkpoints")[-1]
    assert newest.name.endswith("250")


def test_disk_full_keeps_previous_checkpoint(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    real_save = polyak.checkpoint.save_file
    calls = {"n": 0}

    def fills_up(tensors, path):
        calls["n"] += 1
        if calls["n"] > 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_save(tensors, path)

    monkeypatch.setattr(polyak.checkpoint, "save_file", fills_up)
    code, err = _train(tmp_path / "run", "Pendulum-v1", capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "could not write a checkpoint" in err and "No space left on device" in err
    assert "previous checkpoints are kept" in err
    checkpoints = tmp_path / "run" / "checkpoints"
    assert [p.name for p in complete_checkpoints(checkpoints)][-1].endswith("300")
    assert not any(p.name.startswith(".tmp-") for p in checkpoints.iterdir())
    load_checkpoint(complete_checkpoints(checkpoints)[-1])


@pytest.mark.parametrize("keep", [1, 2])
def test_keep_last_n(tmp_path, capsys, monkeypatch, keep):
    monkeypatch.chdir(ROOT)
    capsys.readouterr()
    assert main(["train", "--config", "configs/pendulum.gin", *BASE, "--gin-param",
                 f"TrainerConfig.keep_checkpoints={keep}", "--gin-param", "TrainerConfig.eval_interval=200",
                 "--gin-param", "TrainerConfig.eval_episodes=1", "--run-dir", str(tmp_path / "run")]) == 0
    assert len(complete_checkpoints(tmp_path / "run" / "checkpoints")) == keep
    assert (tmp_path / "run" / "checkpoints" / "best" / "state.safetensors").is_file()


# ---------------------------------------------------------------- real write failures, through the CLI
REAL = ["--config", "configs/pendulum.gin", *BASE, "--gin-param", "TrainerConfig.eval_interval=None",
        "--gin-param", "TrainerConfig.max_env_steps=3000"]


PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2  # <linux/prctl.h>, <linux/capability.h>


def _drop_permission_override() -> None:
    """In a child before exec: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the bounding set, so the
    program it execs, even as root, obeys permission bits (root's capabilities are recomputed at exec)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _permission_bits_hold(tmp_path) -> bool:
    """Whether a process started with :func:`_drop_permission_override` is refused a write to a 0o555 dir."""
    import os
    import subprocess
    import sys

    if os.geteuid() != 0:
        return True  # permission bits bind every other user
    probe = tmp_path / "probe"
    probe.mkdir(mode=0o555)
    try:
        done = subprocess.run([sys.executable, "-c", f"open({str(probe / 'x')!r}, 'w')"], capture_output=True,
                              preexec_fn=_drop_permission_override)
    except subprocess.SubprocessError:  # prctl refused (no CAP_SETPCAP): permission bits cannot be enforced
        return False
    finally:
        probe.chmod(0o755)
    return done.returncode != 0 and b"PermissionError" in done.stderr


def _cli(args, limit=None, timeout=300, obey_permissions=False):
    import os
    import resource
    import subprocess
    import sys

    def preexec():
        if limit is not None:  # every write past `limit` bytes fails with EFBIG (Python ignores SIGXFSZ)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        if obey_permissions and os.geteuid() == 0:
            _drop_permission_override()

    return subprocess.Popen([sys.executable, "-m", "polyak.cli", *args], cwd=ROOT, preexec_fn=preexec,
                            env=dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)


def _interrupted_run(run_dir):
    """A run stopped by SIGTERM after its first checkpoints: complete checkpoints, no summary."""
    import signal
    import time

    process = _cli(["train", *REAL, "--run-dir", str(run_dir)])
    deadline = time.monotonic() + 120
    while len(complete_checkpoints(run_dir / "checkpoints")) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=120) == 0, process.stderr.read()
    assert not (run_dir / "summary.json").exists()
    return complete_checkpoints(run_dir / "checkpoints")[-1]


def _one_line_and_intact(process, run_dir, newest, expected):
    _, err = process.communicate(timeout=300)
    assert process.returncode == 2, err
    assert err.startswith("polyak: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert expected in err, err
    found = complete_checkpoints(run_dir / "checkpoints")
    assert found[-1] == newest, "no newer checkpoint can have been completed"
    load_checkpoint(newest)
    resumed = _cli(["train", "--resume", str(run_dir)])
    _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0 and (run_dir / "summary.json").is_file(), err


def test_file_size_limit_during_a_save_gives_one_line_and_resume_works(tmp_path):
    run_dir = tmp_path / "run"
    newest = _interrupted_run(run_dir)
    state_bytes = (newest / "state.safetensors").stat().st_size
    # the resumed process may write small files (metrics, events) but no file as large as a checkpoint's
    process = _cli(["train", "--resume", str(run_dir)], limit=state_bytes // 2)
    _one_line_and_intact(process, run_dir, newest, "File too large")


def test_read_only_checkpoints_dir_gives_one_line_and_resume_works(tmp_path):
    """A checkpoints dir without write permission; as root (which ignores permission bits through
    CAP_DAC_OVERRIDE) the training process runs without that capability, so the bits hold for it too."""
    if not _permission_bits_hold(tmp_path):
        pytest.skip("cannot drop CAP_DAC_OVERRIDE here (no CAP_SETPCAP), so permission bits do not bind")
    run_dir = tmp_path / "run"
    newest = _interrupted_run(run_dir)
    checkpoints = run_dir / "checkpoints"
    modes = {path: path.stat().st_mode for path in (checkpoints, checkpoints / "replay")}
    for path in modes:
        path.chmod(0o555)
    try:
        process = _cli(["train", "--resume", str(run_dir)], obey_permissions=True)
        _, err = process.communicate(timeout=300)
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    assert process.returncode == 2 and err.count("\n") == 1 and "Permission denied" in err, err
    assert complete_checkpoints(checkpoints)[-1] == newest
    resumed = _cli(["train", "--resume", str(run_dir)])
    assert resumed.wait(timeout=300) == 0
