"""The evaluation protocol: each env plays its share, and every evaluation draws new starts."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from polyak.evaluation import episode_shares, evaluation_seed, run_episodes


class CountdownEnv(gym.Env):
    """Episodes of ``length`` steps with reward 1 per step, so a score is the episode's length."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def __init__(self, length: int) -> None:
        self.length, self.t = length, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.zeros(1, np.float32), 1.0, self.t >= self.length, False, {}


def test_shares_split_episodes_evenly_first_envs_first() -> None:
    assert episode_shares(10, 3).tolist() == [4, 3, 3]
    assert episode_shares(2, 4).tolist() == [1, 1, 0, 0]
    assert episode_shares(20, 20).tolist() == [1] * 20


def test_short_episodes_do_not_crowd_out_long_ones() -> None:
    env = SyncVectorEnv([lambda: CountdownEnv(2), lambda: CountdownEnv(7)],
                        autoreset_mode=AutoresetMode.SAME_STEP)
    scores = run_episodes(env, lambda obs: np.zeros((2, 1)), 4, seed=0)
    # the old "first four to finish" rule would have returned [2, 2, 2, 7]
    assert scores == [2.0, 2.0, 7.0, 7.0]


def test_each_evaluation_gets_its_own_reproducible_seed() -> None:
    seeds = [evaluation_seed(123, i) for i in range(50)]
    assert len(set(seeds)) == 50
    assert seeds == [evaluation_seed(123, i) for i in range(50)]
    assert evaluation_seed(124, 0) != seeds[0]


def test_pendulum_starts_differ_between_evaluations() -> None:
    env = gym.make_vec("Pendulum-v1", num_envs=1, vectorization_mode="sync")
    first = [env.reset(seed=evaluation_seed(7, i))[0].tolist() for i in range(3)]
    env.close()
    assert first[0] != first[1] != first[2]
