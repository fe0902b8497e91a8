"""The Reacher's reset computes the camera pose: a frame rendered right after reset comes from the same camera as
the frames after steps (the static background agrees)."""

import os

import gymnasium as gym
import numpy as np
import pytest

import polyak.envs  # noqa: F401 - registers polyak/UnityReacher-v0


def test_frame_after_reset_and_after_a_step_share_the_camera():
    os.environ.setdefault("MUJOCO_GL", "egl")
    env = gym.make("polyak/UnityReacher-v0", render_mode="rgb_array", width=160, height=120)
    try:
        env.reset(seed=0)
        try:
            first = env.render().astype(int)
        except Exception as error:  # no headless GL on this machine
            pytest.skip(f"no headless rendering here: {type(error).__name__}")
        env.step(np.zeros(env.action_space.shape, dtype=np.float32))
        second = env.render().astype(int)
    finally:
        env.close()
    unchanged = (np.abs(first - second).sum(axis=-1) == 0).mean()
    assert unchanged > 0.9, unchanged  # only the arms and goals move; an unset camera shares ~no pixel
