"""Shared fixtures: small configs and a fake environment with asymmetric action bounds."""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
import pytest
import torch

os.environ.setdefault("MUJOCO_GL", "egl")
# One intra-op thread: tiny networks gain nothing from more, and oversubscribed cores make timings erratic.
torch.set_num_threads(1)


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


class FaultyEnv(gym.Env):
    """A 2-D point env that, after ``fail_after`` steps in total, turns its rewards into NaN (``nan``) or into
    3e38, finite but enough to overflow a float32 critic's loss (``huge``), or raises (``raise``)."""

    def __init__(self, mode: str = "nan", fail_after: int = 250) -> None:
        self.action_space = gym.spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), dtype=np.float32)
        self.mode, self.fail_after, self.total, self.t = mode, fail_after, 0, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.np_random.normal(size=2).astype(np.float32), {}

    def step(self, action):
        self.total += 1
        self.t += 1
        if self.total > self.fail_after and self.mode == "raise":
            raise RuntimeError("simulated physics failure")
        reward = -float(np.sum(np.square(action)))
        if self.total > self.fail_after:
            reward = 3e38 if self.mode == "huge" else float("nan")
        return self.np_random.normal(size=2).astype(np.float32), reward, False, self.t >= 50, {}


def _register() -> None:
    if "polyak-test/Asymmetric-v0" not in gym.registry:
        gym.register("polyak-test/Asymmetric-v0", entry_point=AsymmetricBoundsEnv)
        gym.register("polyak-test/Discrete-v0", entry_point=DiscreteEnv)
        gym.register("polyak-test/NaNReward-v0", entry_point=FaultyEnv, kwargs={"mode": "nan"})
        gym.register("polyak-test/HugeReward-v0", entry_point=FaultyEnv, kwargs={"mode": "huge"})
        gym.register("polyak-test/Crash-v0", entry_point=FaultyEnv, kwargs={"mode": "raise"})


_register()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


@pytest.fixture
def one_torch_thread():
    """One torch thread for a test that trains in-process, restored afterwards (the CLI may change it)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group tests for ``pytest -n N --dist loadgroup`` (``make test``): a file's tests share one worker, so a
    module-scoped fixture (a trained run) is built once; the Ray tests form one group so two local Ray nodes never
    start side by side on the 2-core CI machine. Without ``-n`` the marks do nothing."""
    root = config.rootpath
    for item in items:
        path = item.path.relative_to(root)
        group = "ray" if path.parts[:2] == ("tests", "distributed") else path.as_posix()
        item.add_marker(pytest.mark.xdist_group(group))
