"""Traps a third newcomer audit met after training: ``Run.train_more`` called twice, ``polyak plot`` on a run killed
mid-row, ``MUJOCO_GL`` naming a backend that cannot load, ``--out`` naming a directory, an export of an interrupted
run without results, a run missing config.json called old, and wrong types in the Python API."""

from __future__ import annotations

import ctypes.util
import os
import signal
from pathlib import Path

import numpy as np
import pytest

import polyak
from polyak.cli import main
from polyak.errors import ConfigError, EnvError
from tests.smoke.cli_helpers import polyak as polyak_command

SETTINGS = {"max_env_steps": 400, "learning_starts": 100, "eval_interval": 200, "eval_episodes": 2,
            "hidden_sizes": (16, 16), "batch_size": 16, "progress_bar": False}


@pytest.fixture(scope="module")
def pendulum_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return polyak.train("pendulum", run_dir=tmp_path_factory.mktemp("runs") / "run", **SETTINGS).path


def test_plot_skips_a_row_cut_short_and_says_so(pendulum_run: Path, tmp_path: Path, capsys) -> None:
    import shutil

    killed = tmp_path / "killed"
    shutil.copytree(pendulum_run, killed)
    with open(killed / "metrics.csv", "a") as handle:
        handle.write("eval,400,16,-12")  # the kill came in the middle of a row, inside its score (-1234.5)
    out = tmp_path / "curves.png"
    assert main(["plot", str(killed), "--out", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert "skipped the last row of metrics.csv, which is cut short" in capsys.readouterr().err
    from polyak.plot import read_run

    assert -12.0 not in read_run(killed).eval_scores.tolist() and read_run(pendulum_run).eval_steps.tolist() == \
        read_run(killed).eval_steps.tolist()


@pytest.mark.parametrize("command", [["plot", "RUN", "--out", "pictures/"], ["record", "RUN", "--out", "videos/"]])
def test_an_out_that_names_a_directory_is_refused(command: list[str], pendulum_run: Path, tmp_path: Path,
                                                  capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main([str(pendulum_run) if arg == "RUN" else arg for arg in command]) == 2
    err = capsys.readouterr().err
    assert f"--out {command[-1]} names a directory; give a file name such as {command[-1]}" in err
    assert not list(tmp_path.iterdir())  # nothing written, no pictures.png beside


@pytest.mark.parametrize("backend", ["foo", "osmesa"])
def test_a_mujoco_gl_backend_that_cannot_load_is_one_line(backend: str, monkeypatch) -> None:
    if backend == "osmesa" and ctypes.util.find_library("OSMesa") is not None:
        pytest.skip("OSMesa is installed here, so MUJOCO_GL=osmesa loads")
    monkeypatch.setenv("MUJOCO_GL", backend)
    monkeypatch.delenv("PYOPENGL_PLATFORM", raising=False)  # set to egl by an earlier MuJoCo import in this process
    result = polyak_command("test", "--episodes", "1")  # the pretrained Reacher, a MuJoCo env
    assert result.returncode == 2, result.stderr[-1500:]
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert f"MUJOCO_GL={backend}: MuJoCo cannot load that OpenGL backend" in result.stderr


def test_an_export_of_an_interrupted_run_carries_its_checkpoints_results(tmp_path: Path) -> None:
    import json

    def press_ctrl_c(env_steps: int, score: float) -> None:
        if env_steps == 400:
            os.kill(os.getpid(), signal.SIGINT)

    run = polyak.train("pendulum", run_dir=tmp_path / "run", callback=press_ctrl_c,
                       **{**SETTINGS, "max_env_steps": 1000})
    assert run.summary["interrupted"] == "SIGINT"
    evaluations = [(int(r.split(",")[1]), float(r.split(",")[3])) for r in (run.path / "metrics.csv").read_text()
                   .splitlines() if r.startswith("eval,")]
    best_steps, best_score = max(evaluations, key=lambda e: e[1])
    assert main(["export", str(run.path), "--out", str(tmp_path / "agent")]) == 0
    info = json.loads((tmp_path / "agent" / "info.json").read_text())
    assert info["training_summary"] == {} and info["checkpoint"] == "best"
    assert info["checkpoint_record"] == {"env_steps": best_steps, "eval_score": best_score}
    card = (tmp_path / "agent" / "README.md").read_text()
    assert f"| exported checkpoint: evaluation score | {best_score:.2f} |" in card
    assert "Training had not finished when this agent was exported" in card


def test_an_export_is_named_as_one_when_given_where_a_run_belongs(pendulum_run: Path, tmp_path: Path,
                                                                  capsys) -> None:
    agent = tmp_path / "agent"
    assert main(["export", str(pendulum_run), "--out", str(agent)]) == 0
    capsys.readouterr()
    for command in (["export", str(agent), "--out", str(tmp_path / "again")],
                    ["train", "--resume", str(agent), "--steps", "800"]):
        assert main(command) == 2
        assert f"{agent} is an exported agent, not a run" in capsys.readouterr().err


def test_a_run_whose_config_json_was_deleted_is_not_called_old(pendulum_run: Path, tmp_path: Path, capsys) -> None:
    import shutil

    damaged = tmp_path / "damaged"
    shutil.copytree(pendulum_run, damaged)
    (damaged / "config.json").unlink()
    assert main(["test", str(damaged)]) == 2
    assert (f"{damaged} has no config.json, only config.gin (a run of an older polyak, or config.json was deleted)"
            in capsys.readouterr().err)


def test_record_says_when_an_env_ignores_the_size_asked_for(pendulum_run: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "clip.gif"
    assert main(["record", str(pendulum_run), "--out", str(out), "--steps", "2", "--width", "100"]) == 0
    assert "Pendulum-v1 renders frames at a size of its own; --width and --height are ignored" in \
        capsys.readouterr().err
    assert main(["record", str(pendulum_run), "--out", str(out), "--steps", "2"]) == 0
    assert "ignored" not in capsys.readouterr().err


def test_api_type_mistakes_are_one_clear_error(pendulum_run: Path) -> None:
    with pytest.raises(ConfigError, match="load takes a run directory, a checkpoint or an exported agent as a path"):
        polyak.load(3)  # type: ignore[arg-type]
    policy = polyak.load(pendulum_run)
    with pytest.raises(ConfigError, match=r"predict takes numbers: one observation of shape \(3,\)"):
        policy.predict("abc")
    with pytest.raises(ConfigError, match="predict got an observation holding NaN or Inf"):
        policy.predict(np.array([np.nan, 0.0, 0.0]))
    with pytest.raises(EnvError, match="unknown environment id 'Pendulm-v1'"):  # not the budget, which is wrong too
        polyak.train(env="Pendulm-v1", max_env_steps=50)


def test_train_more_twice_goes_on_from_where_the_run_is(tmp_path: Path) -> None:
    run = polyak.train("pendulum", run_dir=tmp_path / "run", **SETTINGS)
    run.train_more(200)
    run.train_more(200)
    assert run.summary["env_steps"] == 800 and run.configs.trainer.max_env_steps == 800


def test_a_dependency_missing_from_a_broken_install_is_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    stub = tmp_path / "stub"  # a tensorboard that cannot be imported, found before the installed one
    (stub / "tensorboard").mkdir(parents=True)
    (stub / "tensorboard" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'tensorboard'\", "
                                                      "name='tensorboard')\n")
    env = dict(os.environ, PYTHONPATH=str(stub), OMP_NUM_THREADS="1")
    result = subprocess.run([sys.executable, "-m", "polyak.cli", "train", "--config", "pendulum", "--steps", "300",
                             "--run-dir", str(tmp_path / "run"), "--gin-param", "ReplayConfig.min_size=100",
                             "--gin-param", "TrainerConfig.start_steps=100"], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-1500:]
    assert "a package polyak needs cannot be imported (No module named 'tensorboard')" in result.stderr


def test_an_unrelated_error_with_mujoco_gl_set_keeps_its_own_traceback(monkeypatch) -> None:
    from polyak.envs.factory import make_env
    from polyak.envs.gl_backend import backend_problem

    monkeypatch.setenv("MUJOCO_GL", "egl")
    with pytest.raises(ZeroDivisionError) as raised:  # raised in gymnasium's MuJoCo code, not in OpenGL's
        make_env("HalfCheetah-v5", 1, frame_skip=0)
    assert backend_problem(raised.value) is None


def test_a_normalized_policy_takes_inf_and_refuses_nan(tmp_path: Path) -> None:
    run = polyak.train("pendulum", ["TrainerConfig.normalize_observations = True"], run_dir=tmp_path / "run",
                       **{**SETTINGS, "eval_interval": None})
    policy = run.load("newest")
    action, _ = policy.predict(np.array([np.inf, 0.0, -np.inf]))  # clipped by the observation statistics
    assert np.isfinite(action).all()
    with pytest.raises(ConfigError, match="NaN or Inf"):
        policy.predict(np.array([np.nan, 0.0, 0.0]))


def test_paths_and_numbers_of_other_types_are_taken(pendulum_run: Path, tmp_path: Path) -> None:
    class MyPath:
        def __fspath__(self) -> str:
            return str(pendulum_run)

    assert polyak.load(MyPath()).env_id == "Pendulum-v1"
    run = polyak.train("pendulum", run_dir=tmp_path / "run", **SETTINGS)
    run.train_more(np.int64(200))
    assert run.summary["env_steps"] == 600


def test_a_users_missing_module_is_not_blamed_on_polyaks_install() -> None:
    from polyak.cli import is_a_dependency

    assert is_a_dependency("tensorboard.compat") and is_a_dependency("gin")
    assert not is_a_dependency("my_sim_backend") and not is_a_dependency("onnx") and not is_a_dependency(None)


def test_a_checkpoint_asked_of_an_agent_without_checkpoints_is_refused(pendulum_run: Path, tmp_path: Path,
                                                                       capsys) -> None:
    assert main(["test", "--checkpoint", "newest"]) == 2
    assert "--checkpoint newest needs a run directory: the pretrained agent holds one actor" in capsys.readouterr().err
    agent = tmp_path / "agent"
    assert main(["export", str(pendulum_run), "--out", str(agent)]) == 0
    with pytest.raises(ConfigError, match="an exported agent, holds one actor, no checkpoints"):
        polyak.load(agent, "newest")
    assert polyak.load(agent).env_id == "Pendulum-v1"  # "best", the default, is what an export holds


def test_an_agent_is_exported_from_python_as_polyak_export_writes_it(pendulum_run: Path, tmp_path: Path) -> None:
    """SB3 users share a model with model.save; polyak's export had only its CLI."""
    out = polyak.export(pendulum_run, tmp_path / "agent")
    assert out == tmp_path / "agent" and (out / "README.md").is_file()
    obs = np.array([1.0, 0.0, 0.5], np.float32)
    np.testing.assert_array_equal(polyak.load(out).predict(obs)[0], polyak.load(pendulum_run).predict(obs)[0])
    with pytest.raises(ConfigError, match="holds an earlier export"):
        polyak.export(pendulum_run, out)
    assert polyak.export(pendulum_run, out, checkpoint="newest", overwrite=True) == out
    with pytest.raises(ConfigError, match=r"^export takes run as a path, got int$"):
        polyak.export(3, tmp_path / "other")
