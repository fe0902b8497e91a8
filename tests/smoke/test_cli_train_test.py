"""`polyak train` / `polyak test` end to end on a short Pendulum run."""

import json

from tests.smoke.cli_helpers import PENDULUM, polyak

SHORT = ["--gin-param", "TrainerConfig.max_env_steps=600", "--gin-param", "TrainerConfig.start_steps=200",
         "--gin-param", "ReplayConfig.min_size=100", "--gin-param", "TrainerConfig.eval_interval=300",
         "--gin-param", "TrainerConfig.eval_episodes=1", "--gin-param", "actor/NetworkConfig.hidden_sizes=(32, 32)",
         "--gin-param", "critic/NetworkConfig.hidden_sizes=(32, 32)"]


def test_train_writes_the_run_directory_contract_and_test_loads_it(tmp_path):
    run_dir = tmp_path / "run"
    result = polyak("train", "--config", PENDULUM, "--seed", "3", "--run-dir", str(run_dir), *SHORT)
    assert result.returncode == 0, result.stderr
    assert (run_dir / "config.gin").read_text().count("TrainerConfig.seed = 3") == 1
    assert "actor/NetworkConfig.hidden_sizes = (32, 32)" in (run_dir / "config.gin").read_text()
    assert list((run_dir / "tb").iterdir())
    header, *rows = (run_dir / "metrics.csv").read_text().splitlines()
    assert header.startswith("kind,env_steps,episode,score")
    assert sum(row.startswith("episode,") for row in rows) == 3  # 600 steps of 200-step episodes
    assert sum(row.startswith("eval,") for row in rows) == 2
    summary = json.loads((run_dir / "summary.json").read_text())
    for key in ("solved", "episodes_to_solve", "best_window_mean", "final_window_mean", "env_steps",
                "wall_seconds", "seed"):
        assert key in summary
    assert summary["env_steps"] == 600 and summary["seed"] == 3
    assert list((run_dir / "checkpoints").glob("step_*/state.safetensors"))

    tested = polyak("test", str(run_dir), "--episodes", "2")
    assert tested.returncode == 0, tested.stderr
    assert f"Pendulum-v1 ({run_dir}, best checkpoint, " in tested.stdout and "over 2 episodes" in tested.stdout


def test_seed_names_the_run_under_runs_root(tmp_path):
    result = polyak("train", "--config", PENDULUM, "--seed", "5", *SHORT, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "runs" / "Pendulum-v1_pendulum_seed_5" / "summary.json").is_file()
    again = polyak("train", "--config", PENDULUM, "--seed", "5", *SHORT, cwd=tmp_path)
    assert again.returncode == 0
    assert (tmp_path / "runs" / "Pendulum-v1_pendulum_seed_5_1" / "summary.json").is_file()  # never overwrites a run


def test_same_seed_gives_identical_metrics(tmp_path):
    for name in ("a", "b"):
        result = polyak("train", "--config", PENDULUM, "--seed", "11", "--run-dir", str(tmp_path / name), *SHORT)
        assert result.returncode == 0, result.stderr
    a = (tmp_path / "a" / "metrics.csv").read_text()
    assert a == (tmp_path / "b" / "metrics.csv").read_text()
    assert a.count("\n") > 3
    other = polyak("train", "--config", PENDULUM, "--seed", "12", "--run-dir", str(tmp_path / "c"), *SHORT)
    assert other.returncode == 0
    assert (tmp_path / "c" / "metrics.csv").read_text() != a
