"""The papercuts a newcomer met (issue "A newcomer's first hour", item 9), each through the CLI as a user meets it:
a missing wandb extra stops the run before anything is written, with the README's install command; ``polyak
configs`` shows whole sentences, wrapped; ``plot`` and ``record`` need no ``--out``; ``test`` prints mean ± std
and counts episodes in good English; exporting an untrained actor warns."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.smoke.cli_helpers import PENDULUM, ROOT, polyak

TINY = ["--gin-param", "NetworkConfig.hidden_sizes=(16, 16)", "--gin-param", "TrainerConfig.progress_bar=False",
        "--gin-param", "TrainerConfig.eval_episodes=1"]
# 1,200 steps, learning from step 1,000; a checkpoint every 200 steps, all kept: step 200's actor is untrained.
SHORT = [*TINY, "--gin-param", "TrainerConfig.max_env_steps=1200", "--gin-param", "TrainerConfig.start_steps=1000",
         "--gin-param", "ReplayConfig.min_size=1000", "--gin-param", "TrainerConfig.eval_interval=600",
         "--gin-param", "TrainerConfig.checkpoint_interval=200", "--gin-param", "TrainerConfig.keep_checkpoints=10"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short Pendulum run: 200 updates at its end, none in its first checkpoints."""
    path = tmp_path_factory.mktemp("papercuts") / "run"
    result = polyak("train", "--config", PENDULUM, "--seed", "0", "--run-dir", str(path), *SHORT)
    assert result.returncode == 0, result.stderr[-2000:]
    return path


def _readme_wandb_install() -> str:
    """The install command the README gives for the wandb extra."""
    found = re.findall(r"pip install -e '\.\[wandb\]'", (ROOT / "README.md").read_text())
    assert found, "the README names no install command for the wandb extra"
    return found[0]


def test_missing_wandb_stops_before_the_run_dir_is_written_naming_the_readme_command(tmp_path: Path) -> None:
    blocker = tmp_path / "no_wandb" / "wandb"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('No module named wandb')\n")
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore",
               PYTHONPATH=os.pathsep.join([str(blocker.parent), os.environ.get("PYTHONPATH", "")]))
    run_dir = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "polyak.cli", "train", "--config", PENDULUM, "--run-dir", str(run_dir), *TINY,
         "--gin-param", "TrainerConfig.wandb_project='polyak-test'"],
        capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("polyak: error")]
    assert len(errors) == 1 and "Traceback" not in result.stderr
    assert _readme_wandb_install() in errors[0]
    assert not run_dir.exists()  # nothing written: no config.gin, no config.json


def test_configs_shows_whole_first_sentences_wrapped() -> None:
    from polyak.ginconf import shipped_configs

    env = dict(os.environ, COLUMNS="100", PYTHONWARNINGS="ignore")
    result = subprocess.run([sys.executable, "-m", "polyak.cli", "configs"], capture_output=True, text=True, env=env,
                            timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert all(len(line) <= 100 for line in lines)
    entries: dict[str, str] = {}
    name = None
    for line in lines:
        if not line.strip():
            break
        if not line[0].isspace():
            name, _, text = line.partition("  ")
            entries[name] = text.strip()
        else:
            assert name is not None
            entries[name] += " " + line.strip()
    assert set(entries) == set(shipped_configs())
    assert entries["pendulum"] == ("DDPG on Pendulum-v1: close to the rl-baselines3-zoo DDPG settings, with 1,000 "
                                   "random start steps instead of 10,000.")
    assert entries["suite/hopper_td3"] == ("MuJoCo Hopper-v5, 100,000 env steps: TD3 with the TD3 paper's "
                                           "hyperparameters (td3.gin).")
    for name, text in entries.items():
        assert text.endswith((".", ")")), (name, text)  # a whole sentence, not cut mid-way


def test_plot_without_out_writes_into_the_run(run: Path) -> None:
    (run / "curves.png").unlink(missing_ok=True)
    result = polyak("plot", str(run))
    assert result.returncode == 0, result.stderr
    assert (run / "curves.png").read_bytes()[:4] == b"\x89PNG"
    assert str(run / "curves.png") in result.stdout


def test_plot_of_several_runs_without_out_writes_into_the_current_directory(run: Path, tmp_path: Path) -> None:
    result = polyak("plot", str(run), str(run), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "curves.png").is_file()


def test_record_without_out_writes_a_video_into_the_run(run: Path) -> None:
    result = polyak("record", str(run), "--steps", "4", "--width", "64", "--height", "64")
    assert result.returncode == 0, result.stderr[-2000:]
    assert (run / "video.mp4").stat().st_size > 0


def test_plot_and_record_help_say_where_output_goes_by_default() -> None:
    assert "curves.png" in polyak("plot", "--help").stdout
    assert "video.mp4" in polyak("record", "--help").stdout


def test_test_prints_mean_and_std_and_counts_episodes(run: Path) -> None:
    one = polyak("test", str(run), "--episodes", "1")
    assert one.returncode == 0, one.stderr
    assert "over 1 episode " in one.stdout and "over 1 episodes" not in one.stdout
    three = polyak("test", str(run), "--episodes", "3")
    assert three.returncode == 0, three.stderr
    assert re.search(r"mean score -?\d+\.\d\d ± \d+\.\d\d over 3 episodes", three.stdout), three.stdout


def test_exporting_an_actor_with_no_updates_warns_in_one_line(run: Path, tmp_path: Path) -> None:
    untrained = run / "checkpoints" / "step_000000000200"
    assert untrained.is_dir()
    result = polyak("export", str(run), "--checkpoint", str(untrained), "--out", str(tmp_path / "untrained"))
    assert result.returncode == 0, result.stderr
    warnings = [line for line in (result.stdout + result.stderr).splitlines() if "warning" in line]
    assert len(warnings) == 1 and "0 updates" in warnings[0], result.stdout + result.stderr
    trained = polyak("export", str(run), "--checkpoint", "newest", "--out", str(tmp_path / "trained"))
    assert trained.returncode == 0, trained.stderr
    assert "warning" not in trained.stdout + trained.stderr
