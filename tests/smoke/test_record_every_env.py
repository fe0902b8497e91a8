"""polyak record on the task of every shipped config: a few frames of an untrained actor, not black, at the
requested size where the env takes one."""

from __future__ import annotations

import importlib.util
import os
import re

import imageio.v3 as iio
import numpy as np
import pytest
import torch

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

from polyak.config import NetworkConfig
from polyak.envs import make_env
from polyak.ginconf import shipped_configs
from polyak.networks import Actor
from polyak.policy import Policy
from polyak.record import accepts_size, record_episode
from polyak.spaces import env_spaces

_ENV_ID = re.compile(r"^TrainerConfig\.env_id\s*=\s*['\"]([^'\"]+)['\"]", re.MULTILINE)
ENV_IDS = sorted({m for path in shipped_configs().values() for m in _ENV_ID.findall(path.read_text())})
WIDTH, HEIGHT = 64, 48


def test_the_shipped_tasks_are_the_expected_ones():
    assert set(ENV_IDS) == {"Pendulum-v1", "MountainCarContinuous-v0", "InvertedPendulum-v5", "HalfCheetah-v5",
                            "Hopper-v5", "Walker2d-v5", "Ant-v5", "Humanoid-v5", "polyak/UnityReacher-v0",
                            "pybullet_envs_gymnasium:HopperBulletEnv-v0"}


def _untrained_policy(env_id: str) -> Policy:
    env = make_env(env_id, 1)
    try:
        spaces = env_spaces(env)
        obs_dim = int(env.single_observation_space.shape[0])
        action_dim = int(env.single_action_space.shape[0])
    finally:
        env.close()
    actor = Actor(obs_dim, action_dim, NetworkConfig(hidden_sizes=(8, 8)), torch.Generator().manual_seed(0))
    return Policy(env_id, 1, actor.eval(), torch.device("cpu"), spaces=spaces)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_record_a_few_frames(env_id: str, tmp_path) -> None:
    if env_id.startswith("pybullet_envs_gymnasium:") and importlib.util.find_spec("pybullet_envs_gymnasium") is None:
        pytest.skip("pybullet is not installed (the bullet extra)")
    out = tmp_path / "frames.gif"
    written = record_episode(_untrained_policy(env_id), out, steps=6, every=2, width=WIDTH, height=HEIGHT)
    frames = iio.imread(out)
    assert written == 3 and frames.shape[0] == 3 and frames.shape[-1] == 3
    if accepts_size(env_id):
        assert frames.shape[1:3] == (HEIGHT, WIDTH)
    lit = (frames.max(axis=-1) > 20).mean(axis=(1, 2))  # InvertedPendulum's scene has a black background
    assert (lit > 0.02).all(), f"black frames: {lit}"
    assert np.unique(frames[0].reshape(-1, 3), axis=0).shape[0] > 2, "a flat fill, not a scene"
