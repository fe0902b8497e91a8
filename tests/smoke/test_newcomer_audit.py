"""Traps a second newcomer audit met through the API and the CLI: a callback that raises (the run must stay
resumable), Ctrl-C inside ``polyak.train`` (it must say so), run directories that are empty or inside another run,
resume hints for paths with spaces, an exported actor others cannot read, an empty run argument, and
``polyak upgrade`` given a file."""

from __future__ import annotations

import os
import shlex
import signal
import stat
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import polyak
from polyak.checkpoint import steps_of
from polyak.cli import main
from polyak.errors import ConfigError, EnvError
from polyak.planning import keyword_bindings, plan_run
from polyak.run_dir import RunDir

SETTINGS = {"max_env_steps": 400, "learning_starts": 100, "eval_interval": 200, "eval_episodes": 2,
            "hidden_sizes": (16, 16), "batch_size": 16, "progress_bar": False}


class CallbackBug(Exception):
    pass


def test_a_callback_that_raises_leaves_a_run_that_resumes_from_that_evaluation(tmp_path: Path) -> None:
    def broken(env_steps: int, score: float) -> None:
        if env_steps >= 400:
            raise CallbackBug("my callback's bug")

    run_dir = tmp_path / "run"
    with pytest.raises(CallbackBug):
        polyak.train("pendulum", run_dir=run_dir, callback=broken, **{**SETTINGS, "max_env_steps": 600})
    assert steps_of(RunDir(run_dir).newest_checkpoint()) == 400  # saved when the callback raised
    assert not RunDir(run_dir).summary.exists()
    more = polyak.train(resume=run_dir)
    assert more.summary["env_steps"] == 600 and more.summary["interrupted"] is None


def test_a_callback_that_raises_at_the_stopping_evaluation_leaves_a_run_whose_resume_ends_there(
        tmp_path: Path) -> None:
    def broken(env_steps: int, score: float) -> None:
        raise CallbackBug("my callback's bug")

    run_dir = tmp_path / "run"
    with pytest.raises(CallbackBug):  # any score reaches -1e9: the first evaluation decides to stop
        polyak.train("pendulum", ["TrainerConfig.eval_stop_score = -1e9"], run_dir=run_dir, callback=broken,
                     **SETTINGS)
    assert steps_of(RunDir(run_dir).newest_checkpoint()) == 200
    done = polyak.train(resume=run_dir)
    assert done.summary["env_steps"] == 200 and done.summary["interrupted"] is None
    assert done.summary["final_eval"] == done.summary["best_eval"]  # the one evaluation, not redone


def test_a_resume_with_a_stop_score_no_longer_reached_trains_on(tmp_path: Path) -> None:
    def broken(env_steps: int, score: float) -> None:
        if env_steps == 200:
            raise CallbackBug("my callback's bug")

    run_dir = tmp_path / "run"
    with pytest.raises(CallbackBug):
        polyak.train("pendulum", ["TrainerConfig.eval_stop_score = -1e9"], run_dir=run_dir, callback=broken,
                     **SETTINGS)
    more = polyak.train(overrides=["TrainerConfig.eval_stop_score = None"], resume=run_dir)
    assert more.summary["env_steps"] == 400


def test_a_callback_that_is_not_callable_is_refused_before_the_run(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"callback must be a function .* got int"):
        polyak.train("pendulum", run_dir=tmp_path / "run", callback=5, **SETTINGS)
    assert not (tmp_path / "run").exists()


def test_ctrl_c_inside_polyak_train_prints_how_to_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def press_ctrl_c(env_steps: int, score: float) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # the trainer's handler ends the run at its next step

    run = polyak.train("pendulum", run_dir=tmp_path / "my run", callback=press_ctrl_c, **SETTINGS)
    assert run.summary["interrupted"] == "SIGINT" and run.summary["env_steps"] < 400
    err = capsys.readouterr().err
    assert f"stopped by SIGINT at {run.summary['env_steps']} env steps; checkpoint saved" in err
    assert f"Resume with: polyak.train(resume={str(tmp_path / 'my run')!r})" in err


@pytest.mark.parametrize("run_dir", ["", "   "])
def test_an_empty_run_directory_is_refused(run_dir: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="the run directory is empty"):
        polyak.train("pendulum", run_dir=run_dir, **SETTINGS)
    assert list(tmp_path.iterdir()) == []


def test_a_run_directory_inside_another_run_is_refused(tmp_path: Path, monkeypatch) -> None:
    outer = polyak.train("pendulum", run_dir=tmp_path / "outer", **SETTINGS)
    inside = outer.path / "checkpoints" / "best" / "run"
    with pytest.raises(ConfigError, match=f"is inside the run directory {outer.path.absolute()}"):
        polyak.train("pendulum", run_dir=inside, **SETTINGS)
    assert not inside.exists()
    beside = polyak.train("pendulum", run_dir=tmp_path / "beside", **SETTINGS)  # a sibling is fine
    assert beside.summary["env_steps"] == 400
    monkeypatch.chdir(outer.path)  # '..' leaves the run: a sibling named from inside it is fine too
    assert plan_run("pendulum", run_dir="../sibling").run_dir == Path("../sibling")


def test_resume_hints_quote_a_path_with_a_space(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = polyak.train("pendulum", run_dir=tmp_path / "my run", **SETTINGS)
    assert main(["train", "--config", "pendulum", "--run-dir", str(run.path)]) == 2
    hint = capsys.readouterr().err.strip().rsplit("continue it with: ", 1)[1]
    assert shlex.split(hint) == ["polyak", "train", "--resume", str(run.path)]
    assert main(["train", "--resume", str(run.path), "--steps", "400"]) == 2
    hint = capsys.readouterr().err.strip().rsplit("give a larger budget: ", 1)[1]
    assert shlex.split(hint)[:4] == ["polyak", "train", "--resume", str(run.path)]


def test_an_exported_actor_is_readable_by_those_it_is_shared_with(tmp_path: Path) -> None:
    run = polyak.train("pendulum", run_dir=tmp_path / "run", **SETTINGS)
    old = os.umask(0o022)
    try:
        assert main(["export", str(run.path), "--out", str(tmp_path / "agent")]) == 0
    finally:
        os.umask(old)
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in (tmp_path / "agent").iterdir()}
    assert modes["actor.safetensors"] == 0o644 and set(modes.values()) == {0o644}, modes


@pytest.mark.parametrize("command", ["test", "record"])
def test_an_empty_run_argument_is_refused_not_read_as_the_pretrained_agent(command: str, capsys) -> None:
    assert main([command, ""]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "was given an empty run directory" in error


def test_upgrade_of_a_file_says_it_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "my_envs.py"
    module.write_text("")
    assert main(["upgrade", str(module)]) == 2
    assert f"{module} is a file, not a directory" in capsys.readouterr().err


@pytest.mark.parametrize("settings", [{"total_timesteps": 1000, "max_env_steps": 2000},
                                      {"net_arch": [64, 64], "hidden_sizes": (32,)},
                                      {"learning_rate": 1e-4, "lr": 3e-3},
                                      {"learning_starts": 1000, "start_steps": 500}])
def test_two_names_for_one_setting_with_different_values_are_refused(settings: dict) -> None:
    first, second = settings
    with pytest.raises(ConfigError, match=rf"^{first}=.* and {second}=.* both set \S+; give one$"):
        keyword_bindings(settings)


def test_two_names_for_one_setting_that_agree_are_accepted() -> None:
    bindings = keyword_bindings({"net_arch": [64, 64], "hidden_sizes": (64, 64), "total_timesteps": 1000,
                                 "max_env_steps": 1000.0})
    assert "TrainerConfig.max_env_steps = 1000" in bindings


class Endless(gym.Env):
    """A point moved by its action, with no time limit and no end: training never finishes an episode."""

    observation_space = gym.spaces.Box(-10.0, 10.0, (2,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position = np.zeros(2, np.float32)
        return self.position, {}

    def step(self, action):
        self.position = np.clip(self.position + action, -10.0, 10.0).astype(np.float32)
        return self.position, -float(np.linalg.norm(self.position)), False, False, {}


def test_plot_draws_the_evaluations_of_a_run_that_never_finished_an_episode(tmp_path: Path, capsys) -> None:
    run = polyak.train("pendulum", env=Endless(), run_dir=tmp_path / "endless", **SETTINGS,
                       overrides=["TrainerConfig.eval_max_episode_steps = 20"])
    assert run.summary["episodes"] == 0
    out = tmp_path / "curves.png"
    assert main(["plot", str(run.path), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(out.read_bytes()[16:20], "big") > 1100  # the evaluation panel beside the episodes'
    assert "warning" not in capsys.readouterr().err.lower()


def test_plot_of_a_run_with_neither_episodes_nor_evaluations_is_one_line(tmp_path: Path, capsys) -> None:
    run = polyak.train("pendulum", env=Endless(), run_dir=tmp_path / "endless", **{**SETTINGS, "eval_interval": None})
    assert main(["plot", str(run.path), "--out", str(tmp_path / "curves.png")]) == 2
    assert "has no finished episodes or evaluations to plot yet" in capsys.readouterr().err


def test_api_mistakes_are_named_as_the_api_spells_them(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config must be a config name or a \.gin file, got int"):
        polyak.train(config=123)
    vector = gym.make_vec("Pendulum-v1", 2)
    with pytest.raises(EnvError, match="polyak makes its own vector envs: pass one env"):
        polyak.train(vector)
    vector.close()
    run = polyak.train("pendulum", run_dir=tmp_path / "run", **SETTINGS)
    with pytest.raises(ConfigError, match=r"do not combine --resume \(resume=\) with .* \(config=, algo=, seed="):
        polyak.train(resume=run.path, seed=3)


def test_the_resume_hint_asks_for_the_env_when_the_run_cannot_make_it_again(tmp_path: Path, capsys) -> None:
    def press_ctrl_c(env_steps: int, score: float) -> None:
        os.kill(os.getpid(), signal.SIGINT)

    run = polyak.train("pendulum", env=lambda: gym.make("Pendulum-v1"), run_dir=tmp_path / "run",
                       callback=press_ctrl_c, **SETTINGS)
    assert run.summary["interrupted"] == "SIGINT"
    assert f"Resume with: polyak.train(resume={str(run.path)!r}, env=<the same env>)" in capsys.readouterr().err
