"""Reference scores of the Unity-Reacher re-creation (spec §8 "Sanity targets", §9)."""

from __future__ import annotations

import numpy as np
import pytest

from polyak.envs.scripted import ScriptedReacherController
from polyak.envs.unity_reacher import DECISIONS_PER_EPISODE, UnityReacherVectorEnv

pytestmark = pytest.mark.slow

N = 20


def test_random_policy_scores_low_and_sim_stays_stable() -> None:
    """10 episodes × 20 arms (200,000 arm-decisions) of uniform random actions: score ≈ 0.1–1, no NaN/warnings."""
    env = UnityReacherVectorEnv(num_envs=N)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    episodes = 10
    scores = np.zeros((episodes, N))
    for ep in range(episodes):
        for _ in range(DECISIONS_PER_EPISODE):
            obs, reward, terminated, truncated, info = env.step(rng.uniform(-1, 1, (N, 4)))
            assert np.isfinite(obs).all() and np.isfinite(reward).all()
            assert not terminated.any()
            scores[ep] += reward
        assert truncated.all() and np.isfinite(info["final_obs"]).all()
        assert np.isfinite(env.data.qpos).all() and np.isfinite(env.data.qvel).all()
    warnings = {i: w.number for i, w in enumerate(env.data.warning) if w.number}
    env.close()
    assert not warnings, f"MuJoCo warnings: {warnings}"
    assert 0.05 < scores.mean() < 2.0, scores.mean()


def test_scripted_controller_solves_the_task() -> None:
    """One episode of the observation-only controller over 20 arms scores ≥ 30 (the DRLND solve level)."""
    env = UnityReacherVectorEnv(num_envs=N)
    controller = ScriptedReacherController()
    obs, _ = env.reset(seed=0)
    score = np.zeros(N)
    for _ in range(DECISIONS_PER_EPISODE):
        action = controller(obs)
        assert action.shape == (N, 4) and np.all(np.abs(action) <= 1.0)
        obs, reward, _, truncated, _ = env.step(action)
        score += reward
    env.close()
    assert truncated.all()
    assert score.mean() >= 30.0, score
