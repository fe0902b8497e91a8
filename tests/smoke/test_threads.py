"""Torch threads are set deliberately (TrainerConfig.threads, --threads), not left at one per core."""

from __future__ import annotations

import pytest
import torch

import polyak
from polyak.cli import main
from polyak.config import TrainerConfig
from polyak.errors import ConfigError
from tests.smoke.cli_helpers import PENDULUM
from tests.smoke.cli_helpers import polyak as polyak_cli

TINY = ["--config", PENDULUM, "--gin-param", "TrainerConfig.max_env_steps=200",
        "--gin-param", "TrainerConfig.start_steps=100", "--gin-param", "ReplayConfig.min_size=50",
        "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)", "--gin-param", "TrainerConfig.progress_bar=False",
        "--gin-param", "TrainerConfig.eval_interval=None"]


@pytest.fixture(autouse=True)
def many_threads():
    """Start each test from torch's threads at 3 (neither polyak's default nor --threads 2); restore after."""
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    yield
    torch.set_num_threads(before)


def test_the_default_is_one_thread_and_it_is_validated():
    assert TrainerConfig().threads == 1
    assert TrainerConfig(threads=None).threads is None
    for bad in (0, -1):
        with pytest.raises(ConfigError, match=r"TrainerConfig.threads must be >= 1 or None"):
            TrainerConfig(threads=bad)


def test_train_sets_the_default_and_says_so(tmp_path, capsys):
    assert main(["train", *TINY, "--run-dir", str(tmp_path / "run")]) == 0
    assert torch.get_num_threads() == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "polyak: torch threads: 1 (TrainerConfig.threads; --threads to change)"


def test_threads_option_and_binding(tmp_path, capsys):
    assert main(["train", *TINY, "--threads", "2", "--run-dir", str(tmp_path / "run")]) == 0
    assert torch.get_num_threads() == 2
    assert "polyak: torch threads: 2 (TrainerConfig.threads; --threads to change)" in capsys.readouterr().out
    torch.set_num_threads(3)
    assert main(["train", *TINY, "--gin-param", "TrainerConfig.threads=None", "--run-dir", str(tmp_path / "r2")]) == 0
    assert torch.get_num_threads() == 3  # None: torch's own setting is left alone
    assert "polyak: torch threads: 3 (torch's default: TrainerConfig.threads = None" in capsys.readouterr().out


def test_the_python_api_sets_threads(tmp_path):
    overrides = [TINY[i + 1] for i in range(2, len(TINY), 2)]
    polyak.train(PENDULUM, overrides, run_dir=tmp_path / "run", threads=2)
    assert torch.get_num_threads() == 2
    polyak.train(PENDULUM, overrides, run_dir=tmp_path / "default")
    assert torch.get_num_threads() == 1
    with pytest.raises(ConfigError, match="threads must be a whole number >= 1"):
        polyak.train(PENDULUM, overrides, run_dir=tmp_path / "bad", threads=0)


@pytest.mark.parametrize("command", [["train"], ["test"], ["record", "--out", "x.gif"]])
@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_bad_threads_give_one_line_and_exit_2(command, value, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--threads", value])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.count("\n") == 1 and "argument --threads: must be a whole number >= 1" in err, err


def test_a_bad_binding_and_threads_with_workers_give_one_line(tmp_path):
    result = polyak_cli("train", *TINY, "--gin-param", "TrainerConfig.threads=0", "--run-dir", str(tmp_path / "a"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "TrainerConfig.threads must be >= 1 or None" in result.stderr
    result = polyak_cli("train", *TINY, "--threads", "2", "--workers", "2", "--run-dir", str(tmp_path / "b"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "--threads is for single-process training" in result.stderr


def test_polyak_test_uses_one_thread(tmp_path):
    run = tmp_path / "run"
    assert main(["train", *TINY, "--threads", "2", "--run-dir", str(run)]) == 0
    assert main(["test", str(run), "--episodes", "1", "--max-episode-steps", "20"]) == 0
    assert torch.get_num_threads() == 1
