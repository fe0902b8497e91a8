"""What a run leaves at its end and what a resume may change (a newcomer audit's findings): training that ends
between two evaluations scores its final policy, ``polyak test`` names the checkpoint it plays, a refused resume
leaves ``config.json`` as it was, a resume cannot change what the checkpoints mean, an exported agent is never
trained into, ``--steps`` sets the budget and ``polyak record`` films one episode by default."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import polyak
from polyak.cli import main
from tests.smoke.cli_helpers import PENDULUM

SMALL = ["--config", PENDULUM, "--gin-param", "TrainerConfig.start_steps=100", "--gin-param",
         "ReplayConfig.min_size=50", "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)", "--gin-param",
         "TrainerConfig.progress_bar=False", "--gin-param", "TrainerConfig.eval_episodes=1"]


def _evaluations(run: Path) -> list[tuple[int, float]]:
    with open(run / "metrics.csv", newline="") as handle:
        return [(int(r["env_steps"]), float(r["score"])) for r in csv.DictReader(handle) if r["kind"] == "eval"]


@pytest.fixture(scope="module")
def between(tmp_path_factory) -> Path:
    """A run whose budget (500) ends between its evaluations (every 300 env steps)."""
    run = tmp_path_factory.mktemp("runs") / "between"
    assert main(["train", *SMALL, "--steps", "500", "--gin-param", "TrainerConfig.eval_interval=300",
                 "--run-dir", str(run)]) == 0
    return run


def test_training_that_ends_between_evaluations_scores_its_final_policy(between: Path) -> None:
    evaluations = _evaluations(between)
    assert [steps for steps, _ in evaluations] == [300, 500]
    summary = json.loads((between / "summary.json").read_text())
    assert summary["env_steps"] == 500
    assert summary["final_eval"] == evaluations[-1][1]
    assert summary["best_eval"] == max(score for _, score in evaluations)
    best = json.loads((between / "checkpoints" / "best" / "state.json").read_text())["meta"]["env_steps"]
    assert best == max(evaluations, key=lambda pair: pair[1])[0]


def test_a_budget_on_the_schedule_is_evaluated_once_at_its_end(tmp_path: Path) -> None:
    run = tmp_path / "on_schedule"
    assert main(["train", *SMALL, "--steps", "400", "--gin-param", "TrainerConfig.eval_interval=200",
                 "--run-dir", str(run)]) == 0
    assert [steps for steps, _ in _evaluations(run)] == [200, 400]


def test_a_run_stopped_after_its_final_checkpoint_is_not_evaluated_twice(between: Path, tmp_path: Path) -> None:
    """Killed between its last checkpoint and its summary: the resume writes the summary and nothing else."""
    run = tmp_path / "unfinished"
    shutil.copytree(between, run)
    (run / "summary.json").unlink()
    assert main(["train", "--resume", str(run), "--steps", "500"]) == 0
    assert _evaluations(run) == _evaluations(between)
    assert json.loads((run / "summary.json").read_text())["final_eval"] == _evaluations(between)[-1][1]


def test_the_evaluation_at_a_budget_between_evaluations_leaves_training_as_it_was(between: Path,
                                                                                   tmp_path: Path) -> None:
    """500 steps (evaluated at 300 and at its end), then on to 600: the same networks and episodes as one run to
    600; the evaluation at 500 stays in metrics.csv (the start states of later evaluations follow their count)."""
    whole, halves = tmp_path / "whole", tmp_path / "halves"
    shutil.copytree(between, halves)
    assert main(["train", "--resume", str(halves), "--steps", "600"]) == 0
    assert main(["train", *SMALL, "--steps", "600", "--gin-param", "TrainerConfig.eval_interval=300",
                 "--run-dir", str(whole)]) == 0
    assert [steps for steps, _ in _evaluations(halves)] == [300, 500, 600]
    assert [steps for steps, _ in _evaluations(whole)] == [300, 600]
    assert _evaluations(halves)[0] == _evaluations(whole)[0]

    def episodes(run: Path) -> list[str]:
        return [row for row in (run / "metrics.csv").read_text().splitlines() if row.startswith("episode,")]

    assert episodes(halves) == episodes(whole)
    observations = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(polyak.load(halves, "newest").predict(observations)[0],
                                  polyak.load(whole, "newest").predict(observations)[0])


def test_polyak_test_names_the_checkpoint_it_plays(between: Path, capsys) -> None:
    best = json.loads((between / "checkpoints" / "best" / "state.json").read_text())["meta"]["env_steps"]
    assert main(["test", str(between), "--episodes", "1"]) == 0
    assert f"({between}, best checkpoint, {best} env steps)" in capsys.readouterr().out
    assert main(["test", str(between), "--episodes", "1", "--checkpoint", "newest"]) == 0
    assert f"({between}, checkpoint at 500 env steps)" in capsys.readouterr().out


@pytest.mark.parametrize(("binding", "named"), [
    ("NetworkConfig.activation='tanh'", "actor/NetworkConfig.activation ('relu' in"),
    ("critic/NetworkConfig.hidden_sizes=(8, 8)", "critic/NetworkConfig.hidden_sizes ((16, 16) in"),
    ("TrainerConfig.env_id='MountainCarContinuous-v0'", "TrainerConfig.env_id ('Pendulum-v1' in"),
    ("AgentConfig.n_critics=2", "AgentConfig.n_critics (1 in"),
])
def test_a_resume_cannot_change_what_the_checkpoints_mean(between: Path, tmp_path: Path, capsys, binding: str,
                                                          named: str) -> None:
    run = tmp_path / "run"
    shutil.copytree(between, run)
    config = (run / "config.json").read_bytes()
    assert main(["train", "--resume", str(run), "--steps", "800", "--gin-param", binding]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"--resume cannot change {named}" in error, error
    assert (run / "config.json").read_bytes() == config


def test_a_resume_refused_after_its_restore_leaves_config_json_as_it_was(between: Path, tmp_path: Path,
                                                                          capsys) -> None:
    """An unfinished run (no summary) at 500 env steps resumed with a budget of 400: refused once the checkpoint
    is read, and the run still resumes as it would have."""
    run = tmp_path / "stopped"
    shutil.copytree(between, run)
    (run / "summary.json").unlink()
    with open(run / "metrics.csv", "a") as metrics:  # a row written after the newest checkpoint (a kill -9)
        metrics.write("episode,510,3,-1000.0,,,,\n")
    config, rows = (run / "config.json").read_bytes(), (run / "metrics.csv").read_bytes()
    assert main(["train", "--resume", str(run), "--steps", "400"]) == 2
    assert "past TrainerConfig.max_env_steps = 400" in capsys.readouterr().err
    assert (run / "config.json").read_bytes() == config and (run / "metrics.csv").read_bytes() == rows
    assert main(["train", "--resume", str(run), "--steps", "600"]) == 0
    assert json.loads((run / "config.json").read_text())["trainer"]["max_env_steps"] == 600
    assert [steps for steps, _ in _evaluations(run)] == [300, 500, 600]


def test_an_exported_agent_is_not_trained_into(between: Path, tmp_path: Path, capsys) -> None:
    exported = tmp_path / "agent"
    assert main(["export", str(between), "--out", str(exported)]) == 0
    before = {p.name: p.read_bytes() for p in exported.iterdir() if p.is_file()}
    assert main(["train", *SMALL, "--steps", "200", "--run-dir", str(exported)]) == 2
    assert "holds an exported agent" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in exported.iterdir() if p.is_file()} == before


@pytest.mark.parametrize("steps", ["0", "-5", "1e3", "many"])
def test_steps_must_be_a_whole_number(steps: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["train", *SMALL, "--steps", steps])
    assert exit_info.value.code == 2
    assert "--steps: must be a whole number >= 1 (env steps)" in capsys.readouterr().err


def test_record_films_one_episode_by_default(between: Path, tmp_path: Path, capsys) -> None:
    assert main(["record", str(between), "--out", str(tmp_path / "episode.gif")]) == 0
    assert "wrote 200 frames of Pendulum-v1" in capsys.readouterr().out  # Pendulum-v1's time limit
    assert main(["record", str(between), "--out", str(tmp_path / "short.gif"), "--steps", "7"]) == 0
    assert "wrote 7 frames" in capsys.readouterr().out
