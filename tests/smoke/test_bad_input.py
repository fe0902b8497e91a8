"""Every user error: one clear line on stderr, a non-zero exit, no traceback."""

import pytest

from tests.smoke.cli_helpers import polyak


def _run_dir_without_checkpoint(tmp_path):
    run = tmp_path / "empty_run"
    run.mkdir()
    (run / "config.gin").write_text("TrainerConfig.env_id = 'Pendulum-v1'\n")
    return str(run)


CASES = [
    ("unknown env id", lambda t: ["train", "--gin-param", "TrainerConfig.env_id='NoSuchEnv-v9'"],
     "unknown environment id 'NoSuchEnv-v9'"),
    ("discrete action space", lambda t: ["train", "--gin-param", "TrainerConfig.env_id='CartPole-v1'"],
     "Discrete action space; polyak needs a continuous Box"),
    ("unknown binding", lambda t: ["train", "--gin-param", "TrainerConfig.learning_rate=3"],
     "doesn't have a parameter named 'learning_rate'"),
    ("unknown configurable", lambda t: ["train", "--gin-param", "Optimizer.lr=3"], "No configurable matching"),
    ("wrong value type", lambda t: ["train", "--gin-param", "TrainerConfig.num_envs='four'"],
     "TrainerConfig.num_envs must be int, got 'four'"),
    ("wrong tuple type", lambda t: ["train", "--gin-param", "actor/NetworkConfig.hidden_sizes=(64, 'x')"],
     "NetworkConfig.hidden_sizes must be a tuple of int"),
    ("tau out of range", lambda t: ["train", "--gin-param", "AgentConfig.tau=2.0"],
     "AgentConfig.tau must be in (0, 1]"),
    ("gamma out of range", lambda t: ["train", "--gin-param", "AgentConfig.gamma=-0.1"], "gamma must be in [0, 1]"),
    ("syntax error", lambda t: ["train", "--gin-param", "TrainerConfig.seed = (("], "invalid gin config"),
    ("missing config file", lambda t: ["train", "--config", str(t / "nope.gin")], "nope.gin does not exist"),
    ("negative seed", lambda t: ["train", "--seed", "-3"], "--seed must be >= 0"),
    ("seed not a number", lambda t: ["train", "--seed", "abc"], "invalid int value: 'abc'"),
    ("unknown subcommand", lambda t: ["fly"], "invalid choice: 'fly'"),
    ("test: missing run dir", lambda t: ["test", str(t / "missing")], "does not exist"),
    ("test: empty dir", lambda t: ["test", str(t)], "is not a polyak run directory (no config.gin)"),
    ("test: run without checkpoint", lambda t: ["test", _run_dir_without_checkpoint(t)], "has no complete checkpoint"),
]


@pytest.mark.parametrize(("name", "args", "message"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_one_clear_line(tmp_path, name, args, message):
    result = polyak(*args(tmp_path))
    assert result.returncode == 2, (name, result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("polyak: error: ")
    assert message in lines[0], lines[0]
