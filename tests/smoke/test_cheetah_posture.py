"""benchmarks/cheetah_posture.py: a HalfCheetah put on its back reads as flipped, one left upright does not."""

from __future__ import annotations

import dataclasses
import json
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


def test_an_sb3_crossq_rerun_keeps_each_evaluations_model_and_measures_it(tmp_path, monkeypatch):
    suite = pytest.importorskip("suite")
    pytest.importorskip("sb3_contrib")
    task = cheetah_posture.TASK
    monkeypatch.setitem(suite.TASKS, task, dataclasses.replace(suite.TASKS[task], budget=60, eval_every=20))
    shipped = suite.sb3_crossq_kwargs
    monkeypatch.setattr(suite, "sb3_crossq_kwargs", lambda t, width=None: {**shipped(t, width), "learning_starts": 10})
    monkeypatch.setattr(suite, "EVAL_EPISODES", 1)
    run_dir, out = tmp_path / "rerun", tmp_path / "posture.json"
    args = [str(run_dir), "--sb3-crossq-seed", "0", "--width", "64", "--until", "40", "--episodes", "1"]
    assert cheetah_posture.main([*args, "--out", str(out)]) == 0
    assert sorted(path.name for path in (run_dir / "models").iterdir()) == ["at_20.zip", "at_40.zip"]
    written = json.loads(out.read_text())
    assert [row["env_steps"] for row in written["rows"]] == [20, 40]
    assert [steps for steps, _ in written["run_evaluations"]] == [20, 40]
    assert written["row"] == "sb3_crossq" and written["critic_width"] == 64 and written["seed"] == 0
    assert written["committed_run_evaluations"] is None  # no like-for-like run at width 64
    assert all(0.0 <= row["flipped_share"] <= 1.0 for row in written["rows"])

    def no_training(*_args, **_kwargs):
        raise AssertionError("the kept models are measured without training again")

    monkeypatch.setattr(suite, "run_sb3", no_training)
    assert cheetah_posture.main(args) == 0
