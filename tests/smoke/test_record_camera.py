"""``polyak record`` films Gymnasium's locomotion tasks through their ``track`` camera (Gymnasium 1.4 renders them
from a free camera that HalfCheetah runs out of within a second), and other envs as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from polyak.envs.factory import make_env
from polyak.record import TRACKING_CAMERA, has_tracking_camera, record_episode

pytest.importorskip("mujoco")


class StandStill:
    """A policy stand-in: zero actions, and every ``make_env`` call's keyword arguments kept."""

    def __init__(self, env_id: str, action_dim: int) -> None:
        self.env_id, self.action_dim, self.made_with = env_id, action_dim, []

    def make_env(self, num_envs: int | None = None, render_mode: str | None = None, **kwargs: Any):
        self.made_with.append(kwargs)
        return make_env(self.env_id, 1, render_mode, **kwargs)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return np.zeros((len(obs), self.action_dim), dtype=np.float32)


@pytest.mark.parametrize(("env_id", "tracks"), [("HalfCheetah-v5", True), ("Walker2d-v5", True),
                                                 ("Pendulum-v1", False)])
def test_the_track_camera_is_found_where_the_model_has_one(env_id, tracks):
    env = make_env(env_id, 1, "rgb_array")
    try:
        assert has_tracking_camera(env) is tracks
    finally:
        env.close()


def test_record_films_halfcheetah_through_the_track_camera(tmp_path: Path):
    policy = StandStill("HalfCheetah-v5", 6)
    assert record_episode(policy, tmp_path / "cheetah.gif", steps=3, width=64, height=48) == 3
    assert policy.made_with[-1] == {"camera_name": TRACKING_CAMERA, "width": 64, "height": 48}
    assert (tmp_path / "cheetah.gif").stat().st_size > 0
