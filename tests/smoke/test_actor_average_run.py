"""A run with the averaged actor (``AgentConfig.actor_average``) is the same training as a run without it: the live
actor's evaluations it logs beside the averaged actor's (``eval_live`` rows) equal, number for number, the
evaluations of the run without averaging from the same seed; ``TrainerConfig.eval_live_actor = False`` leaves them
out, and a run that evaluates its live actor logs none."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import torch

import polyak

ROOT = Path(__file__).resolve().parents[2]
TINY = ["TrainerConfig.env_id = 'Pendulum-v1'", "TrainerConfig.start_steps = 200", "ReplayConfig.min_size = 200",
        "TrainerConfig.eval_interval = 200", "TrainerConfig.eval_episodes = 2", "TrainerConfig.max_env_steps = 800",
        "TrainerConfig.progress_bar = False", "NetworkConfig.hidden_sizes = (32, 32)", "AgentConfig.batch_size = 32",
        "NetworkConfig.batch_renorm_warmup = 100"]

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _evaluations(run: Path) -> dict[str, list[tuple[int, float]]]:
    with open(run / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {kind: [(int(r["env_steps"]), float(r["score"])) for r in rows if r["kind"] == kind]
            for kind in ("eval", "eval_live")}


def _train(tmp_path: Path, name: str, *bindings: str) -> Path:
    torch.set_num_threads(1)
    return polyak.train(ROOT / "configs" / "suite" / "crossq_sac.gin", [*TINY, *bindings], run_dir=tmp_path / name,
                        seed=3).path


def test_the_live_actors_scores_are_those_of_the_same_run_without_averaging(tmp_path: Path) -> None:
    averaged = _evaluations(_train(tmp_path, "averaged", "AgentConfig.actor_average = 0.05"))
    plain = _evaluations(_train(tmp_path, "plain"))
    assert [s for s, _ in averaged["eval"]] == [200, 400, 600, 800]
    assert averaged["eval_live"] == plain["eval"]  # same training, same start states
    assert plain["eval_live"] == []
    assert averaged["eval"][0] == averaged["eval_live"][0]  # no update yet: the average is the initial actor
    assert averaged["eval"][1:] != averaged["eval_live"][1:]


def test_eval_live_actor_off_logs_only_the_averaged_actor(tmp_path: Path) -> None:
    scores = _evaluations(_train(tmp_path, "off", "AgentConfig.actor_average = 0.05",
                                 "TrainerConfig.eval_live_actor = False"))
    assert len(scores["eval"]) == 4 and scores["eval_live"] == []
