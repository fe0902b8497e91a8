"""Gymnasium's ``module:EnvId`` convention and ``env_kwargs``, with an env module the test writes itself."""

from __future__ import annotations

import numpy as np
import pytest

from polyak.envs import make_env
from polyak.errors import EnvError

ENV_MODULE = '''
import gymnasium as gym
import numpy as np


class Line(gym.Env):
    """Walk along a line; episodes last ``length`` steps; the observation holds ``scale``. Frame t is grey at
    ``10 * scale + t``, so a recording shows which keyword arguments built the env (and no two frames are equal,
    which GIF writers would merge)."""

    metadata = {"render_modes": ["rgb_array"]}
    observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
    action_space = gym.spaces.Box(-3.0, 3.0, (1,), np.float64)

    def __init__(self, length=4, scale=1.0, render_mode=None):
        self.length, self.scale, self.t, self.render_mode = length, scale, 0, render_mode

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0, self.scale]), {}

    def step(self, action):
        self.t += 1
        return np.array([float(action[0]), self.scale]), 1.0, False, self.t >= self.length, {}

    def render(self):
        return np.full((16, 16, 3), int(10 * self.scale) + self.t, dtype=np.uint8)


gym.register("{name}", entry_point=Line)
'''


@pytest.fixture
def env_module(tmp_path, monkeypatch) -> str:
    """A module on sys.path that registers ``LineTest-v0`` only when imported."""
    (tmp_path / "polyak_line_env.py").write_text(ENV_MODULE.replace("{name}", "LineTest-v0"))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "polyak_line_env"


def test_module_prefix_imports_the_module_and_makes_the_env(env_module):
    env = make_env(f"{env_module}:LineTest-v0", num_envs=2)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (2, 2)
    obs, *_ = env.step(np.array([[1.0], [-1.0]]))
    np.testing.assert_allclose(obs[:, 0], [3.0, -3.0])  # rescaled from [-1, 1] to the env's [-3, 3]
    env.close()


def test_env_kwargs_reach_the_constructor(env_module):
    env = make_env(f"{env_module}:LineTest-v0", num_envs=1, length=2, scale=7.5)
    obs, _ = env.reset(seed=0)
    assert obs[0, 1] == 7.5
    for _ in range(2):
        _obs, _reward, _terminated, truncated, _info = env.step(np.zeros((1, 1)))
    assert truncated[0]
    env.close()


@pytest.mark.parametrize(("env_id", "message"), [
    ("no_such_module_xyz:LineTest-v0", "cannot be imported"),
    (":LineTest-v0", "must be 'EnvId' or 'module:EnvId'"),
])
def test_bad_module_ids_are_env_errors(env_id, message):
    with pytest.raises(EnvError, match=message):
        make_env(env_id, 1)


def test_unknown_keyword_is_an_env_error(env_module):
    with pytest.raises(EnvError, match="no_such_kwarg"):
        make_env(f"{env_module}:LineTest-v0", 1, no_such_kwarg=1)
