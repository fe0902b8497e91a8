"""`polyak plot`: seeds of one config share a mean ± std band; other configs get their own curve."""

from polyak.plot import read_run
from tests.smoke.cli_helpers import PENDULUM, polyak

SHORT = ["--gin-param", "TrainerConfig.max_env_steps=800", "--gin-param", "TrainerConfig.start_steps=200",
         "--gin-param", "ReplayConfig.min_size=100", "--gin-param", "TrainerConfig.eval_interval=None",
         "--gin-param", "NetworkConfig.hidden_sizes=(32, 32)"]


def test_plot_groups_seeds_and_writes_a_png(tmp_path):
    runs = []
    for seed in (0, 1, 2):
        run = tmp_path / f"pendulum_seed_{seed}"
        assert polyak("train", "--config", PENDULUM, "--seed", str(seed), "--run-dir", str(run), *SHORT).returncode == 0
        runs.append(run)
    other = tmp_path / "pendulum_bigger_tau"
    assert polyak("train", "--config", PENDULUM, "--run-dir", str(other), *SHORT,
                  "--gin-param", "AgentConfig.tau=0.05").returncode == 0

    groups = {read_run(r).group for r in runs}
    assert len(groups) == 1 and read_run(other).group not in groups

    out = tmp_path / "curves.png"
    result = polyak("plot", *map(str, runs), str(other), "--out", str(out), "--threshold", "-200")
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000


def test_plot_of_a_missing_directory_is_one_line(tmp_path):
    result = polyak("plot", str(tmp_path / "nope"), "--out", str(tmp_path / "x.png"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "does not exist" in result.stderr
