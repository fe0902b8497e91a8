"""`polyak sweep` on a local Ray: every trial is a normal run directory; a summary table and a plot at the end."""

import json

import pytest

from tests.distributed.helpers import PENDULUM, TINY, polyak

pytest.importorskip("ray")


def test_sweep_two_seeds_of_pendulum(tmp_path):
    """The issue's acceptance command, with an explicit --sweep-dir."""
    sweep = tmp_path / "sweep"
    result = polyak("sweep", "--config", PENDULUM, "--seeds", "0-1", "--gin-param", "TrainerConfig.max_env_steps=2000",
                    "--sweep-dir", str(sweep))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    runs = sorted(p.name for p in sweep.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert runs == ["base_seed_0", "base_seed_1"]
    for seed, name in enumerate(runs):
        run = sweep / name
        for part in ("config.gin", "metrics.csv", "summary.json", "tb", "checkpoints"):
            assert (run / part).exists(), f"{run} lacks {part}"
        summary = json.loads((run / "summary.json").read_text())
        assert summary["seed"] == seed and summary["env_steps"] == 2000
        assert "kind,env_steps" in (run / "metrics.csv").read_text().splitlines()[0]
    report = json.loads((sweep / "summary.json").read_text())
    (row,) = report["configs"]
    assert row["config"] == "base" and row["seeds"] == [0, 1] and row["finished"] == 2 and row["failed"] == 0
    finals = [t["summary"]["final_eval"] for t in report["trials"]]
    assert row["mean_final_score"] == pytest.approx(sum(finals) / 2)
    assert "mean final score" in (sweep / "summary.txt").read_text() and "base" in result.stdout
    assert (sweep / "curves.png").read_bytes()[:4] == b"\x89PNG"


def test_sweep_grid_gives_one_row_per_config(tmp_path):
    sweep = tmp_path / "grid"
    result = polyak("sweep", "--config", PENDULUM, "--seeds", "3", "--grid", "AgentConfig.tau=[0.005, 0.05]",
                    "--gin-param", "TrainerConfig.max_env_steps=600", "--gin-param", "TrainerConfig.eval_interval=None",
                    *TINY, "--sweep-dir", str(sweep), "--max-concurrent", "2")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report = json.loads((sweep / "summary.json").read_text())
    assert [row["config"] for row in report["configs"]] == ["tau=0.005", "tau=0.05"]
    assert (sweep / "tau=0.05_seed_3" / "config.gin").read_text().count("AgentConfig.tau = 0.05") == 1
    assert all(row["finished"] == 1 for row in report["configs"])
