"""Issue 15: using and sharing a trained agent (polyak.train/load/predict, config names, observation
normalization, export with a model card and ONNX) and the frictions a new user met, each reproduced."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import polyak
from polyak.envs import make_env
from polyak.errors import ConfigError
from tests.smoke.cli_helpers import polyak as cli

TINY = [
    "TrainerConfig.max_env_steps = 1200", "TrainerConfig.start_steps = 400", "TrainerConfig.eval_interval = 400",
    "TrainerConfig.eval_episodes = 1", "NetworkConfig.hidden_sizes = (16, 16)", "ReplayConfig.min_size = 128",
    "AgentConfig.batch_size = 64", "TrainerConfig.progress_bar = False", "TrainerConfig.checkpoint_interval = 400",
]
NORMALIZE = "TrainerConfig.normalize_observations = True"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    plain = polyak.train("pendulum", TINY, run_dir=root / "plain", seed=0)
    normalized = polyak.train("pendulum", [*TINY, NORMALIZE], run_dir=root / "normalized", seed=0)
    return {"plain": plain.path, "normalized": normalized.path}


def _one_line_error(result, fragment: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert fragment in lines[0], lines[0]


# ------------------------------------------------------------------ polyak.load / predict
@pytest.mark.parametrize("kind", ["plain", "normalized"])
def test_predict_in_env_units_single_and_batch(runs: dict[str, Path], kind: str) -> None:
    policy = polyak.load(runs[kind])
    assert policy.action_space.low.tolist() == [-2.0] and policy.action_space.high.tolist() == [2.0]
    assert policy.observation_space.shape == (3,)
    obs = np.random.default_rng(0).uniform(policy.observation_space.low, policy.observation_space.high, (64, 3))
    actions, state = policy.predict(obs)
    assert state is None and actions.shape == (64, 1) and np.all(np.abs(actions) <= 2.0)
    assert policy.predict(obs[0])[0].shape == (1,)
    np.testing.assert_allclose(policy.predict(obs[0])[0], actions[0], rtol=0, atol=1e-6)
    assert (kind == "normalized") == (policy.normalizer is not None)


def test_predict_matches_what_polyak_test_executes(runs: dict[str, Path]) -> None:
    """``polyak test`` steps a rescaling env with ``policy(obs)``; the env receives exactly ``predict(obs)``."""
    policy = polyak.load(runs["normalized"])
    env = make_env(policy.env_id, 1)
    obs, _ = env.reset(seed=3)
    executed = env.actions(policy(obs))  # the RescaleAction wrapper's own transform
    np.testing.assert_allclose(policy.predict(obs)[0], executed, rtol=0, atol=1e-6)
    env.close()


def test_load_checkpoint_and_spaces_without_env(runs: dict[str, Path]) -> None:
    best = runs["plain"] / "checkpoints" / "best"
    assert polyak.load(best).spaces is not None  # from the checkpoint's JSON, no env constructed
    newest = polyak.load(runs["plain"], checkpoint="newest")
    assert newest.spaces is not None


def test_pretrained_agent_loads_without_its_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pretrained agent's info.json stores its spaces: load, spaces and predict never build the env."""
    import polyak.envs

    def no_env(*args, **kwargs):
        raise AssertionError("an env was built")

    monkeypatch.setattr(polyak.envs, "make_env", no_env)
    policy = polyak.load()
    assert policy.spaces is not None
    assert policy.observation_space.shape == (33,) and policy.action_space.shape == (4,)
    actions, _ = policy.predict(np.zeros((3, 33), dtype=np.float32))
    assert actions.shape == (3, 4) and np.all(np.abs(actions) <= 1)


def test_train_refuses_a_used_run_dir_and_keeps_gin_apart(runs: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="already holds a run"):
        polyak.train("pendulum", TINY, run_dir=runs["plain"])
    run = polyak.train("pendulum_fast", ["TrainerConfig.max_env_steps = 300", "TrainerConfig.progress_bar = False",
                                         "TrainerConfig.start_steps = 100", "ReplayConfig.min_size = 100"],
                       run_dir=tmp_path / "other")
    config = json.loads((run.path / "config.json").read_text())
    assert config["trainer"]["max_env_steps"] == 300 and config["trainer"]["normalize_observations"] is False
    assert config["actor"]["hidden_sizes"] != [16, 16]  # the fixture's binding did not leak into this run


# ------------------------------------------------------------------ export, model card, ONNX
def test_export_onnx_matches_load_predict(runs: dict[str, Path], tmp_path: Path) -> None:
    onnxruntime = pytest.importorskip("onnxruntime")
    out = tmp_path / "shared"
    result = cli("export", str(runs["normalized"]), "--out", str(out), "--format", "onnx")
    assert result.returncode == 0, result.stderr
    for name in ("actor.safetensors", "config.json", "info.json", "README.md", "policy.onnx"):
        assert (out / name).is_file(), name
    info = json.loads((out / "info.json").read_text())
    assert info["spaces"]["action_space"]["high"] == [2.0] and info["obs_normalizer"]["count"] > 0
    card = (out / "README.md").read_text()
    assert "Pendulum-v1" in card and "Evaluation protocol" in card and "polyak.load" in card
    policy = polyak.load(out)
    obs = np.random.default_rng(1).uniform(-1, 1, (64, 3)).astype(np.float32) * [1, 1, 8]
    session = onnxruntime.InferenceSession(str(out / "policy.onnx"))
    onnx_actions = session.run(["action"], {"obs": obs.astype(np.float32)})[0]
    np.testing.assert_allclose(onnx_actions, policy.predict(obs)[0], rtol=0, atol=1e-5)


def test_export_into_the_run_is_refused_and_writes_nothing(runs: dict[str, Path]) -> None:
    before = sorted(p.name for p in runs["plain"].iterdir())
    _one_line_error(cli("export", str(runs["plain"]), "--out", str(runs["plain"])), "inside the run")
    assert sorted(p.name for p in runs["plain"].iterdir()) == before


# ------------------------------------------------------------------ the CLI frictions
def test_test_record_export_on_a_normalized_run(runs: dict[str, Path], tmp_path: Path) -> None:
    result = cli("test", str(runs["normalized"]))
    assert result.returncode == 0 and "mean score" in result.stdout, result.stderr
    result = cli("record", str(runs["normalized"]), "--out", str(tmp_path / "p.gif"), "--steps", "5")
    assert result.returncode == 0, result.stderr
    result = cli("record", "--run-dir", str(runs["normalized"]), "--out", str(tmp_path / "q.gif"), "--steps", "3")
    assert result.returncode == 0, result.stderr  # the old flag still works


def test_checkpoint_best_and_default_is_best(runs: dict[str, Path]) -> None:
    best = cli("test", str(runs["plain"]), "--checkpoint", "best")
    default = cli("test", str(runs["plain"]))
    assert best.returncode == 0 and best.stdout == default.stdout


def test_device_cuda_without_cuda_is_one_line(runs: dict[str, Path]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this torch has CUDA")
    _one_line_error(cli("test", str(runs["plain"]), "--device", "cuda"), "not available")


def test_version_and_configs() -> None:
    result = cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"polyak {polyak.__version__}"
    listing = cli("configs")
    assert listing.returncode == 0 and "pendulum " in listing.stdout and "suite/hopper_td3" in listing.stdout


@pytest.mark.parametrize("name", ["pendulum", "pendulum.gin", "suite/pendulum_td3", "pendulum_td3"])
def test_config_names_resolve(name: str) -> None:
    from polyak.ginconf import resolve_config

    assert resolve_config(name).is_file()


def test_config_name_typo_and_gin_errors_are_one_clear_line(tmp_path: Path) -> None:
    _one_line_error(cli("train", "--config", "pendulm", "--run-dir", str(tmp_path / "a")), "did you mean 'pendulum'")
    result = cli("train", "--config", "pendulum", "--run-dir", str(tmp_path / "b"),
                 "--gin-param", "TrainerConfig.max_env_step = 5")
    _one_line_error(result, "did you mean 'max_env_steps'")
    result = cli("train", "--config", "pendulum", "--run-dir", str(tmp_path / "c"),
                 "--gin-param", "TrainerConfig.env_id = Pendulum")
    _one_line_error(result, "not a Python literal")
    assert "<ast." not in result.stderr


def test_record_pendulum_frames_come_from_one_camera(tmp_path: Path) -> None:
    """Frame 0 of a Reacher recording (the reset state) used to come from an unset camera (all frames: one)."""
    import imageio.v3 as iio

    os.environ.setdefault("MUJOCO_GL", "egl")
    out = tmp_path / "arms.gif"
    result = cli("record", "--out", str(out), "--steps", "4", "--width", "96", "--height", "64")
    if result.returncode != 0 and "rendering failed" in result.stderr:
        pytest.skip("no headless GL here")
    assert result.returncode == 0, result.stderr
    frames = iio.imread(out)
    diffs = [np.abs(frames[i].astype(int) - frames[i + 1]).mean() for i in range(len(frames) - 1)]
    assert max(diffs) < 10, diffs  # consecutive frames of one camera differ little


def test_resume_is_exact_with_observation_normalization(tmp_path: Path) -> None:
    """The running statistics are in every checkpoint: stop with SIGINT, resume, end as an uninterrupted run."""
    from tests.smoke.test_resume import assert_sigint_then_resume_is_exact

    assert_sigint_then_resume_is_exact(tmp_path, [
        "--gin-param", NORMALIZE, "--gin-param", "ReplayConfig.sampler='prioritized'",
        "--gin-param", "ReplayConfig.initial_priority='td_error'"])


def test_apex_refuses_observation_normalization(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    result = cli("train", "--config", "pendulum", "--workers", "1", "--gin-param", NORMALIZE,
                 "--run-dir", str(tmp_path / "apex"))
    _one_line_error(result, "normalize_observations is not supported with --workers")


def test_output_closed_by_its_reader_stops_quietly() -> None:
    """`polyak configs | head`: when the reader goes away the command stops like a Unix tool, without an error line."""
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-m", "polyak.cli", "configs"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    process.stdout.close()  # no reader left: the first write fails with EPIPE
    _out, err = process.communicate(timeout=120)
    assert process.returncode == 141, err
    assert err == b""
