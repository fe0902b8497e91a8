"""Mistakes with `polyak sweep` and `polyak train --workers` end as one line and exit code 2, before Ray starts.

Most cases call the CLI's ``main`` in this process (they fail before anything heavy is imported); the
ones about a missing ray run the command in a subprocess where ``import ray`` fails.
"""

import subprocess
from dataclasses import dataclass

import pytest

from polyak.cli import main
from tests.distributed.helpers import PENDULUM, polyak, without_ray_env


@dataclass
class _Result:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(capsys):
    def run(*args: str) -> _Result:
        code = main(list(args))
        captured = capsys.readouterr()
        return _Result(code, captured.out, captured.err)

    return run


def _one_line_error(result: _Result | subprocess.CompletedProcess, *fragments: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("polyak: error: ") and result.stderr.count("\n") == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


@pytest.mark.parametrize("seeds, fragment", [("4-0", "empty"), ("zero", "--seeds must be"), ("0-2,2", "twice")])
def test_bad_seed_ranges(cli, tmp_path, seeds, fragment):
    _one_line_error(cli("sweep", "--config", PENDULUM, "--seeds", seeds, "--sweep-dir", str(tmp_path / "s")),
                    fragment)


@pytest.mark.parametrize("grid, fragment", [
    ("AgentConfig.tau", "--grid must look like"),
    ("AgentConfig.tau=0.1", "--grid must look like"),
    ("AgentConfig.tau=[0.1, (2]", "unbalanced"),
    ("AgentConfig.tau=[0.1, 2.0]", "grid point tau=2.0: AgentConfig.tau must be in (0, 1]"),
    ("AgentConfig.nope=[1, 2]", "nope"),
])
def test_bad_grids(cli, tmp_path, grid, fragment):
    _one_line_error(cli("sweep", "--config", PENDULUM, "--seeds", "0", "--grid", grid,
                           "--sweep-dir", str(tmp_path / "s")), fragment)
    assert not (tmp_path / "s").exists()


def test_sweep_into_a_non_empty_directory(cli, tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "x").write_text("")
    _one_line_error(cli("sweep", "--config", PENDULUM, "--seeds", "0", "--sweep-dir", str(tmp_path / "s")),
                    "not empty")


def test_workers_errors(cli, tmp_path):
    _one_line_error(cli("train", "--config", PENDULUM, "--workers", "0"), "--workers must be >= 1, got 0")
    _one_line_error(cli("train", "--workers", "2", "--resume", str(tmp_path)), "cannot be combined with --resume")
    _one_line_error(cli("train", "--config", PENDULUM, "--address", "127.0.0.1:6379"), "--address needs --workers")
    _one_line_error(cli("train", "--config", PENDULUM, "--workers", "2", "--gin-param",
                           "ApexConfig.weight_push_interval=0"), "ApexConfig.weight_push_interval must be >= 1")
    _one_line_error(cli("train", "--config", PENDULUM, "--workers", "2", "--gin-param",
                           "ReplayConfig.buffer_life=10"), "buffer_life must be None with --workers")
    _one_line_error(cli("train", "--config", str(tmp_path / "missing.gin"), "--workers", "2"), "does not exist")


def test_unreachable_cluster_is_one_line(cli, tmp_path):
    pytest.importorskip("ray")
    # Port 1 on the loopback refuses connections; Ray itself would retry for minutes.
    _one_line_error(cli("train", "--config", PENDULUM, "--workers", "1", "--address", "127.0.0.1:1",
                           "--run-dir", str(tmp_path / "r")), "cannot reach the Ray cluster at 127.0.0.1:1")
    _one_line_error(cli("sweep", "--config", PENDULUM, "--seeds", "0", "--address", "127.0.0.1:1",
                           "--sweep-dir", str(tmp_path / "s")), "cannot reach the Ray cluster")
    assert not (tmp_path / "r").exists() and not (tmp_path / "s").exists()


def test_an_apex_run_cannot_be_resumed(cli, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.gin").write_text("TrainerConfig.env_id = 'Pendulum-v1'\nApexConfig.num_workers = 2\n")
    _one_line_error(cli("train", "--resume", str(run)), "is an Ape-X run", "cannot be resumed")


def test_ray_missing_is_one_line(tmp_path):
    env = without_ray_env(tmp_path)
    _one_line_error(polyak("sweep", "--config", PENDULUM, "--seeds", "0-1", "--sweep-dir", str(tmp_path / "s"),
                           env=env), "pip install 'polyak[distributed]'")
    _one_line_error(polyak("train", "--config", PENDULUM, "--workers", "2", "--run-dir", str(tmp_path / "r"),
                           env=env), "pip install 'polyak[distributed]'")
    assert not (tmp_path / "s").exists() and not (tmp_path / "r").exists()
    # The core still works without ray.
    assert polyak("plot", "--help", env=env).returncode == 0


@pytest.mark.parametrize("args, fragment", [
    (["--gin-param", "TrainerConfig.env_id = 'NoSuch-v0'"], "unknown environment id 'NoSuch-v0'"),
    (["--gin-param", "TrainerConfig.env_kwargs = {'no_such_keyword': 1}"], "no_such_keyword"),
    (["--gin-param", "TrainerConfig.max_env_steps = 10"], "is below ReplayConfig.min_size"),
    (["--grid", "TrainerConfig.env_id = ['Pendulum-v1', 'NoSuch-v0']"],
     "unknown environment id 'NoSuch-v0'"),
])
def test_a_trial_that_polyak_train_would_refuse_is_refused_before_ray(cli, tmp_path, args, fragment):
    result = cli("sweep", "--config", PENDULUM, "--seeds", "0", *args, "--sweep-dir", str(tmp_path / "s"))
    _one_line_error(result, fragment)
    assert ("grid point env_id=" in result.stderr) == ("--grid" in args)
    assert not (tmp_path / "s").exists()
