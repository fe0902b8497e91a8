"""Shared fixtures: small configs and a fake environment with asymmetric action bounds."""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
import pytest

os.environ.setdefault("MUJOCO_GL", "egl")


class AsymmetricBoundsEnv(gym.Env):
    """Observation = the last action the env received (so tests can read the rescaling)."""

    def __init__(self) -> None:
        self.action_space = gym.spaces.Box(np.array([-2.0, 0.0, 10.0]), np.array([4.0, 1.0, 30.0]), dtype=np.float64)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (3,), dtype=np.float64)
        self.steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.steps = 0
        return np.zeros(3), {}

    def step(self, action):
        self.steps += 1
        return np.asarray(action, dtype=np.float64), 1.0, False, self.steps >= 5, {}


class DiscreteEnv(gym.Env):
    def __init__(self) -> None:
        self.action_space = gym.spaces.Discrete(3)
        self.observation_space = gym.spaces.Box(-1, 1, (2,))

    def reset(self, *, seed=None, options=None):
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        return np.zeros(2, dtype=np.float32), 0.0, False, False, {}


def _register() -> None:
    if "polyak-test/Asymmetric-v0" not in gym.registry:
        gym.register("polyak-test/Asymmetric-v0", entry_point=AsymmetricBoundsEnv)
        gym.register("polyak-test/Discrete-v0", entry_point=DiscreteEnv)


_register()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)
