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
    assert _png_width(out) < 1100  # no evaluations: no evaluation panel


def test_plot_of_a_missing_directory_is_one_line(tmp_path):
    result = polyak("plot", str(tmp_path / "nope"), "--out", str(tmp_path / "x.png"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "does not exist" in result.stderr


def _png_width(path) -> int:
    return int.from_bytes(path.read_bytes()[16:20], "big")


def test_plot_shows_evaluations_and_counts_a_repeated_seed_once(tmp_path):
    import shutil

    from polyak.plot import group_runs

    with_evals = [*SHORT, "--gin-param", "TrainerConfig.eval_interval=400", "--gin-param",
                  "TrainerConfig.eval_episodes=1"]
    runs = []
    for seed in (0, 1):
        run = tmp_path / f"pendulum_seed_{seed}"
        assert polyak("train", "--config", PENDULUM, "--seed", str(seed), "--run-dir", str(run),
                      *with_evals).returncode == 0
        runs.append(run)
    again = tmp_path / "pendulum_again"  # another run of seed 0 under another name
    shutil.copytree(runs[0], again)

    curve = read_run(runs[1])
    assert curve.seed == 1 and curve.eval_steps.tolist() == [400, 800] and len(curve.eval_scores) == 2
    groups, warnings = group_runs([read_run(r) for r in (*runs, again)])
    assert [len(g) for g in groups] == [2]
    assert warnings == ["pendulum_again and pendulum_seed_0 are runs of one config with the same seed (0); "
                        "counting it once (plotting pendulum_seed_0)"]

    out = tmp_path / "curves.png"
    result = polyak("plot", *map(str, runs), str(again), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == f"polyak: warning: {warnings[0]}"
    assert _png_width(out) > 1500  # the evaluation panel beside the episode panel
