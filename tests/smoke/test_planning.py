"""One way to plan a run (``polyak.planning.plan_run``) for ``polyak train`` and ``polyak.train``: the same
configs, names and refusals from both entry points, and gin's state cleared after planning."""

from __future__ import annotations

import gin
import pytest

import polyak
from polyak.cli import main
from polyak.errors import ConfigError
from polyak.planning import plan_run


def gin_params(bindings: list[str]) -> list[str]:
    return [arg for binding in bindings for arg in ("--gin-param", binding)]


TINY = ["TrainerConfig.max_env_steps = 300", "TrainerConfig.start_steps = 100", "ReplayConfig.min_size = 100",
        "TrainerConfig.progress_bar = False", "NetworkConfig.hidden_sizes = (8,)", "AgentConfig.batch_size = 16"]


def test_a_plan_leaves_gin_clear_and_names_the_run_after_config_and_seed(tmp_path):
    plan = plan_run("pendulum", [*TINY, f"TrainerConfig.runs_root = '{tmp_path}'"], seed=3)
    assert plan.run_dir == tmp_path / "Pendulum-v1_pendulum_seed_3" and plan.configs.trainer.seed == 3
    assert "TrainerConfig.max_env_steps = 300" in plan.operative_config and not plan.resume
    with pytest.raises(ValueError):
        gin.query_parameter("TrainerConfig.max_env_steps")


@pytest.mark.parametrize("leftover", ["metrics.csv", "summary.json", "checkpoints"])
def test_cli_and_api_refuse_the_same_used_run_dirs(tmp_path, capsys, leftover):
    used = tmp_path / "used"
    used.mkdir()
    (used / leftover).mkdir() if leftover == "checkpoints" else (used / leftover).write_text("")
    assert main(["train", "--config", "pendulum", "--run-dir", str(used), *gin_params(TINY)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "already holds a run" in error
    with pytest.raises(ConfigError, match="already holds a run"):
        polyak.train("pendulum", TINY, run_dir=used)


def test_resume_plans_from_the_runs_own_config(tmp_path):
    run = tmp_path / "run"
    assert main(["train", "--config", "pendulum", "--run-dir", str(run), "--gin-param",
                 "TrainerConfig.checkpoint_interval = 100", *gin_params(TINY)]) == 0
    (run / "summary.json").unlink()  # as if stopped before its summary
    plan = plan_run(resume=run, bindings=["TrainerConfig.max_env_steps = 400"])
    assert plan.resume and plan.operative_config == "" and plan.configs.trainer.max_env_steps == 400
    assert plan.configs.trainer.start_steps == 100  # from the run's config.json, not the file's defaults
    with pytest.raises(ConfigError, match="resuming uses the run's own config"):
        plan_run("pendulum", resume=run)


def test_an_unscoped_network_binding_the_configs_scoped_one_overrides_warns_in_one_line():
    plan = plan_run(config="suite/crossq", bindings=["NetworkConfig.hidden_sizes = (64, 64)"])
    assert plan.configs.actor.hidden_sizes == plan.configs.critic.hidden_sizes == (256, 256)  # gin: scoped wins
    (warning,) = plan.warnings
    assert "does not reach the actor and critic networks" in warning and "\n" not in warning
    assert "actor/NetworkConfig.hidden_sizes and critic/NetworkConfig.hidden_sizes" in warning
    only_critic = plan_run(config="suite/crossq", bindings=["NetworkConfig.hidden_sizes = (64, 64)",
                                                             "actor/NetworkConfig.hidden_sizes = (64, 64)"])
    assert only_critic.warnings == (only_critic.warnings[0],) and "reach the critic network:" in only_critic.warnings[0]


def test_a_network_binding_that_takes_effect_does_not_warn():
    plan = plan_run(config="pendulum", bindings=["NetworkConfig.hidden_sizes = (64, 64)", "NetworkConfig.lr = 3e-4"])
    assert plan.configs.actor.hidden_sizes == plan.configs.critic.hidden_sizes == (64, 64)
    assert plan.configs.actor.lr == plan.configs.critic.lr == 3e-4 and plan.warnings == ()
    scoped = plan_run(config="suite/crossq", bindings=["actor/NetworkConfig.hidden_sizes = (64, 64)"])
    assert scoped.configs.actor.hidden_sizes == (64, 64) and scoped.warnings == ()


def test_the_recommended_configs_critic_width_survives_an_unscoped_binding_with_a_warning():
    plan = plan_run(env="Pendulum-v1", bindings=["NetworkConfig.hidden_sizes = (64, 64)"])
    assert plan.configs.actor.hidden_sizes == (64, 64) and plan.configs.critic.hidden_sizes == (512, 512)
    (warning,) = plan.warnings
    assert "reach the critic network:" in warning and "critic/NetworkConfig.hidden_sizes" in warning
