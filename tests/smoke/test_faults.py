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


def test_nan_stops_the_run_and_keeps_only_finite_checkpoints(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, err = _train(tmp_path / "run", "polyak-test/NaNReward-v0", capsys)
    assert code == 2
    assert err.startswith("polyak: error: training diverged") and err.count("\n") == 1, err
    assert complete_checkpoints(tmp_path / "run" / "checkpoints"), "the good checkpoints before the NaN remain"
    _all_finite(tmp_path / "run")


def test_env_exception_names_env_and_step_and_saves(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, err = _train(tmp_path / "run", "polyak-test/Crash-v0", capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "environment polyak-test/Crash-v0 failed at env step 250" in err
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
