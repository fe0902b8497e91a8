"""The random start phase of the collector: ``random_steps`` uniform actions, and with ``random_until_episode_end``
random to the end of the episode running then (TD7's main.py: random actions until ``allow_train``, which is set at
an episode end)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from polyak.collector import Collector
from polyak.scores import ScoreBoard

EPISODE = 7


class FixedLength(gym.Env):
    """Episodes of exactly ``EPISODE`` steps; observation = the step number."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.full(1, self.t, np.float32), 1.0, False, self.t >= EPISODE, {}


class PolicyMarker:
    """An explorer whose actions are exactly 0.5: anything else came from the random phase."""

    def act(self, obs, explore):
        return np.full((obs.shape[0], 2), 0.5)

    def reset(self, mask=None):
        pass


def vector_env() -> gym.vector.SyncVectorEnv:
    return gym.vector.SyncVectorEnv([FixedLength], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)


def actions_taken(random_steps: int, until_episode_end: bool, steps: int) -> list[bool]:
    env = vector_env()
    taken: list[bool] = []
    collector = Collector(env, PolicyMarker(), lambda obs, action, *rest: taken.append(bool(np.all(action == 0.5))),
                          ScoreBoard(1, 5, False), env_seed=0, random_steps=random_steps,
                          random_rng=np.random.default_rng(0), random_until_episode_end=until_episode_end)
    collector.collect(steps)
    return taken


@pytest.mark.parametrize(("random_steps", "policy_from"), [(10, 14), (14, 14), (15, 21), (1, 7)])
def test_random_actions_last_to_the_end_of_the_episode_running_at_random_steps(random_steps, policy_from):
    taken = actions_taken(random_steps, True, 28)
    assert taken == [False] * policy_from + [True] * (28 - policy_from)


def test_without_the_switch_the_policy_acts_from_random_steps_on():
    assert actions_taken(10, False, 20) == [False] * 10 + [True] * 10


def test_the_random_episode_state_survives_a_checkpoint():
    env = vector_env()
    collector = Collector(env, PolicyMarker(), lambda *args: None, ScoreBoard(1, 5, False), env_seed=0,
                          random_steps=3, random_rng=np.random.default_rng(0), random_until_episode_end=True)
    collector.collect(4)
    state = collector.state_dict()
    assert state["random_episode"] is True
    restored = Collector(vector_env(), PolicyMarker(), lambda *args: None,
                         ScoreBoard(1, 5, False), env_seed=0, random_steps=3, random_rng=np.random.default_rng(0),
                         random_until_episode_end=True)
    restored.load_state_dict(state)
    assert restored.random_episode
