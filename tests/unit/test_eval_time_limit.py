"""Evaluation on envs without a time limit: a per-episode step cap, and a stop flag checked every step."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from polyak.envs import make_env
from polyak.evaluation import EvaluationStopped, run_episodes, time_limit
from polyak.evaluator import Evaluator


class EndlessEnv(gym.Env):
    """Reward 1 per step; ends an episode after ``length`` steps, or never with ``length=None``. The observation
    is the step within the episode, so a test sees resets."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (1,), np.float64)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def __init__(self, length: int | None = None) -> None:
        self.length, self.t = length, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1), {}

    def step(self, action):
        self.t += 1
        return np.array([float(self.t)]), 1.0, False, self.length is not None and self.t >= self.length, {}


gym.register("polyak-test/Endless-v0", entry_point=EndlessEnv)  # no max_episode_steps: no time limit
gym.register("polyak-test/EndlessLimited-v0", entry_point=EndlessEnv, max_episode_steps=7)


def vector(*lengths: int | None) -> SyncVectorEnv:
    return SyncVectorEnv([lambda length=length: EndlessEnv(length) for length in lengths],
                         autoreset_mode=AutoresetMode.SAME_STEP)


def zeros(obs: np.ndarray) -> np.ndarray:
    return np.zeros((len(obs), 1))


def test_time_limit_reads_the_spec_or_the_vector_env() -> None:
    for env_id, limit in (("Pendulum-v1", 200), ("polyak-test/Endless-v0", None),
                          ("polyak-test/EndlessLimited-v0", 7), ("polyak/UnityReacher-v0", 1000)):
        env = make_env(env_id, 2)
        try:
            assert time_limit(env) == limit, env_id
        finally:
            env.close()


def test_a_never_ending_episode_is_cut_at_the_cap_and_scored_by_its_return_so_far() -> None:
    env = vector(None, None)
    cuts: list[None] = []
    seen: list[np.ndarray] = []

    def policy(obs: np.ndarray) -> np.ndarray:
        seen.append(obs[:, 0].copy())
        return zeros(obs)

    scores = run_episodes(env, policy, 3, seed=0, max_episode_steps=5, on_cut=lambda: cuts.append(None))
    assert scores == [5.0, 5.0, 5.0]
    assert len(cuts) == 3
    # env 0 plays two episodes: reset after its cut, it starts again from step 0
    assert [float(s[0]) for s in seen] == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]


def test_the_cap_leaves_episodes_the_env_ends_itself_alone() -> None:
    env = vector(3, None)
    seen: list[np.ndarray] = []

    def policy(obs: np.ndarray) -> np.ndarray:
        seen.append(obs[:, 0].copy())
        return zeros(obs)

    scores = run_episodes(env, policy, 4, seed=0, max_episode_steps=5)
    assert scores == [3.0, 3.0, 5.0, 5.0]
    # env 1's reset after its cut does not touch env 0's episode in progress
    assert [float(s[0]) for s in seen[:7]] == [0, 1, 2, 0, 1, 2, 0]
    assert [float(s[1]) for s in seen] == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]


def test_without_a_cap_scores_are_unchanged_on_envs_with_a_time_limit() -> None:
    def scores(cap: int | None) -> list[float]:
        env = make_env("Pendulum-v1", 2)
        try:
            return run_episodes(env, lambda obs: np.tanh(obs[:, :1]), 3, seed=11, max_episode_steps=cap)
        finally:
            env.close()

    assert scores(None) == scores(1_000_000)


def test_should_stop_is_checked_every_step() -> None:
    calls = []

    def should_stop() -> bool:
        calls.append(None)
        return len(calls) > 12

    with pytest.raises(EvaluationStopped) as stopped:
        run_episodes(vector(None), zeros, 2, seed=0, max_episode_steps=10, should_stop=should_stop)
    assert (stopped.value.played, stopped.value.episodes) == (1, 2)
    assert len(calls) == 13  # 12 steps, then the stop


def test_should_stop_ends_an_evaluation_without_a_cap() -> None:
    steps = []

    def should_stop() -> bool:
        steps.append(None)
        return len(steps) > 1000

    with pytest.raises(EvaluationStopped):
        run_episodes(vector(None), zeros, 1, seed=0, should_stop=should_stop)


def test_the_evaluator_caps_only_envs_without_a_time_limit_and_warns_once(capsys) -> None:
    endless = Evaluator(make_env("polyak-test/Endless-v0", 2), episodes=3, stream_seed=0, max_episode_steps=4)
    limited = Evaluator(make_env("polyak-test/EndlessLimited-v0", 1), episodes=1, stream_seed=0, max_episode_steps=4)
    try:
        assert endless.evaluate(zeros, 0) == 4.0
        assert endless.evaluate(zeros, 1) == 4.0
        assert limited.evaluate(zeros, 0) == 7.0  # its own limit, not the cap
    finally:
        endless.close()
        limited.close()
    out = capsys.readouterr().out
    assert out.count("polyak: warning:") == 1, out
    assert ("'polyak-test/Endless-v0' has no time limit" in out and "cut at 4 steps" in out
            and "TrainerConfig.eval_max_episode_steps" in out), out
