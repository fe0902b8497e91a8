"""Reacher through the CLI: a tiny run, then test, export, record (headless) and plot."""

import json

import numpy as np
import pytest

from tests.smoke.cli_helpers import ROOT, polyak

REACHER = str(ROOT / "configs" / "unity_reacher_plain_ddpg.gin")
TINY = ["--gin-param", "TrainerConfig.max_env_steps=4000", "--gin-param", "TrainerConfig.eval_interval=2000",
        "--gin-param", "ReplayConfig.capacity=10000"]


@pytest.fixture(scope="module")
def reacher_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("reacher") / "run"
    result = polyak("train", "--config", REACHER, "--seed", "1", "--run-dir", str(run_dir), *TINY)
    assert result.returncode == 0, result.stderr
    return run_dir


def test_reacher_run_uses_20_arms_and_learns_every_20_steps(reacher_run):
    summary = json.loads((reacher_run / "summary.json").read_text())
    assert summary["env_steps"] == 4000  # 200 env.step calls x 20 arms
    assert summary["updates"] == 200 // 20 * 20
    assert "TrainerConfig.num_envs = 20" in (reacher_run / "config.gin").read_text()


def test_export_then_test_the_exported_policy(reacher_run, tmp_path):
    exported = tmp_path / "policy"
    assert polyak("export", str(reacher_run), "--out", str(exported)).returncode == 0
    assert (exported / "actor.safetensors").is_file()
    tested = polyak("test", str(exported))
    assert tested.returncode == 0, tested.stderr
    assert "mean score" in tested.stdout and "over 20 episodes" in tested.stdout


def test_record_writes_a_gif_that_shows_the_scene(reacher_run, tmp_path):
    import imageio.v3 as iio

    out = tmp_path / "arms.gif"
    result = polyak("record", "--run-dir", str(reacher_run), "--out", str(out), "--steps", "12", "--every", "3",
                    "--width", "160", "--height", "120")
    assert result.returncode == 0, result.stderr
    frames = iio.imread(out)
    assert frames.shape[0] == 4 and frames.shape[1:3] == (120, 160)
    assert frames.mean() > 20  # not a black frame
    assert np.unique(frames.reshape(-1, frames.shape[-1]), axis=0).shape[0] > 10  # more than a flat fill


def test_record_refuses_unknown_formats(reacher_run, tmp_path):
    result = polyak("record", "--run-dir", str(reacher_run), "--out", str(tmp_path / "a.avi"))
    assert result.returncode == 2 and "must end in .gif or .mp4" in result.stderr


def test_the_default_config_is_the_plain_ddpg_plus_its_changes(tmp_path):
    """`polyak train` with no --config, from a directory without configs/: the default's include of the plain
    config resolves inside the package, and both files' bindings are in effect."""
    run_dir = tmp_path / "default"
    result = polyak("train", "--run-dir", str(run_dir), "--gin-param", "TrainerConfig.max_env_steps=2000",
                    "--gin-param", "TrainerConfig.progress_bar=False", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    config = json.loads((run_dir / "config.json").read_text())
    assert config["trainer"]["num_envs"] == 20 and config["trainer"]["learn_steps"] == 10
    assert config["replay"]["n_step"] == 3 and config["replay"]["sampler"] == "prioritized"
    assert config["agent"]["tau"] == 0.02 and config["critic"]["layer_norm"] is True
    assert config["critic"]["grad_clip_norm"] == 1.0  # from the plain config
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["updates"] == 2000 // 20 // 20 * 10
