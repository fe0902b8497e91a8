"""benchmarks/cheetah_posture.py: a HalfCheetah put on its back reads as flipped, one left upright does not."""

from __future__ import annotations

import math
import sys

import gymnasium as gym
import numpy as np
import pytest

from tests.smoke.cli_helpers import ROOT

pytest.importorskip("mujoco")
sys.path.insert(0, str(ROOT / "benchmarks"))
cheetah_posture = pytest.importorskip("cheetah_posture")


class StartPitch(gym.Wrapper):
    """HalfCheetah-v5 whose episodes start with the torso turned by ``pitch`` radians (pi: on its back)."""

    def __init__(self, env: gym.Env, pitch: float) -> None:
        super().__init__(env)
        self.pitch = pitch

    def reset(self, **kwargs):
        _, info = self.env.reset(**kwargs)
        data = self.env.unwrapped.data
        qpos, qvel = data.qpos.copy(), data.qvel.copy()
        qpos[1] += 0.3  # lift the torso so it does not start inside the floor
        qpos[2] = self.pitch
        self.env.unwrapped.set_state(qpos, qvel)
        return self.env.unwrapped._get_obs(), info


class StandStill:
    def predict(self, obs: np.ndarray) -> tuple[np.ndarray, None]:
        return np.zeros(6, dtype=np.float32), None


@pytest.mark.parametrize(("pitch", "flipped"), [(0.0, False), (math.pi, True), (3 * math.pi, True)])
def test_a_cheetah_on_its_back_reads_as_flipped(monkeypatch, pitch, flipped):
    make = gym.make
    monkeypatch.setattr(cheetah_posture.gym, "make", lambda env_id: StartPitch(make(env_id), pitch))
    row = cheetah_posture.posture(StandStill(), episodes=1)
    if flipped:  # 3 pi winds the hinge past pi: the wrapped pitch is still on its back
        assert row["flipped_share"] > 0.9 and row["mean_abs_pitch"] > math.pi / 2
    else:
        assert row["flipped_share"] == 0.0 and row["mean_abs_pitch"] < 0.5
    # standing still earns only the control cost (zero here) and the small drift of settling
    assert abs(row["return"]) < 50 and abs(row["forward_velocity"]) < 0.1


def test_a_run_without_checkpoints_is_one_line_and_exit_2(tmp_path, capsys):
    assert cheetah_posture.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no checkpoints" in err
