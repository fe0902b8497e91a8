"""Environment boundary: per-dimension action rescaling, SAME_STEP autoreset, clear refusals."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import DtypeObservation

from polyak.envs import final_observations, make_env
from polyak.envs.checked import EnvOutputError
from polyak.envs.factory import vector_env_from
from polyak.errors import EnvError


def test_actions_in_unit_box_are_rescaled_per_dimension_to_asymmetric_bounds():
    env = make_env("polyak-test/Asymmetric-v0", num_envs=2)
    env.reset(seed=0)
    # bounds: [-2, 4], [0, 1], [10, 30]
    obs, *_ = env.step(np.array([[-1.0, -1.0, -1.0], [1.0, 0.0, 0.5]]))
    np.testing.assert_allclose(obs[0], [-2.0, 0.0, 10.0])
    np.testing.assert_allclose(obs[1], [4.0, 0.5, 25.0])
    env.close()


def test_finished_episodes_expose_their_final_observation():
    env = make_env("polyak-test/Asymmetric-v0", num_envs=1)
    env.reset(seed=0)
    for _ in range(5):
        obs, _reward, terminated, truncated, info = env.step(np.array([[1.0, 1.0, 1.0]]))
    assert truncated[0] and not terminated[0]
    np.testing.assert_allclose(obs[0], 0.0)  # already the next episode's first observation
    real = final_observations(obs, np.logical_or(terminated, truncated), info)
    np.testing.assert_allclose(real[0], [4.0, 1.0, 30.0])


def test_pendulum_vector_env():
    env = make_env("Pendulum-v1", num_envs=3)
    obs, _ = env.reset(seed=1)
    assert obs.shape == (3, 3)
    env.close()


@pytest.mark.parametrize(("env_id", "message"), [
    ("NoSuchEnv-v0", "unknown environment id 'NoSuchEnv-v0'"),
    ("polyak-test/Discrete-v0", "Discrete action space; polyak needs a continuous Box"),
])
def test_unsuitable_envs_are_refused(env_id, message):
    with pytest.raises(EnvError, match=None) as info:
        make_env(env_id, 1)
    assert message in str(info.value)


class SpacesEnv(gym.Env):
    """A one-step env with the spaces a test gives it."""

    def __init__(self, observation_space: gym.Space, action_space: gym.Space) -> None:
        self.observation_space, self.action_space = observation_space, action_space

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), 0.0, True, False, {}


FLOAT_OBS, FLOAT_ACTIONS = gym.spaces.Box(-1.0, 1.0, (3,)), gym.spaces.Box(-1.0, 1.0, (2,))


@pytest.mark.parametrize(("observation_space", "action_space", "message"), [
    (FLOAT_OBS, gym.spaces.Box(-1.0, 1.0, (2, 2)), "has actions of shape (2, 2); polyak needs a flat Box"),
    (FLOAT_OBS, gym.spaces.Box(0, 5, (2,), np.int64), "has int64 actions; polyak needs a continuous Box of floats"),
    (gym.spaces.Box(0, 255, (3,), np.uint8), FLOAT_ACTIONS,
     "has uint8 observations; polyak needs floats: wrap the env in gymnasium.wrappers.DtypeObservation"),
    (gym.spaces.Box(-1.0, 1.0, (2, 3)), FLOAT_ACTIONS, "has observations of shape (2, 3); polyak needs a flat Box "
     "(one dimension): wrap the env in gymnasium.wrappers.FlattenObservation(env)"),
    (gym.spaces.Dict({"x": FLOAT_OBS}), FLOAT_ACTIONS, "has a Dict observation space; polyak needs a flat Box of "
     "floats: wrap the env in gymnasium.wrappers.FlattenObservation(env)"),
    (gym.spaces.Box(-1.0, 1.0, (0,)), FLOAT_ACTIONS, "has empty observations (shape (0,))"),
    (FLOAT_OBS, gym.spaces.Box(-np.inf, np.inf, (2,)), "has unbounded actions"),
])
def test_spaces_polyak_cannot_train_on_are_refused_before_any_step(observation_space, action_space, message):
    with pytest.raises(EnvError) as info:
        vector_env_from(lambda: SpacesEnv(observation_space, action_space), 1, "'mine'")
    assert str(info.value).startswith("environment 'mine' ") and message in str(info.value)


def test_integer_observations_train_once_wrapped_as_the_refusal_says():
    u8 = gym.spaces.Box(0, 255, (3,), np.uint8)
    env = vector_env_from(lambda: DtypeObservation(SpacesEnv(u8, FLOAT_ACTIONS), np.float32), 1, "'mine'")
    try:
        obs, _ = env.reset(seed=0)
        assert obs.dtype == np.float32 and env.single_observation_space.dtype == np.float32
    finally:
        env.close()


class FaultyEnv(gym.Env):
    """A 3-number observation, 2 actions; ``fault`` is returned from the first reset (``"reset"``) or as the
    reward or observation of step ``at``."""

    observation_space, action_space = FLOAT_OBS, FLOAT_ACTIONS

    def __init__(self, where: str, fault, at: int = 3):
        self.where, self.fault, self.at, self.steps = where, fault, at, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return (self.fault if self.where == "reset" else np.zeros(3, np.float32)), {}

    def step(self, action):
        self.steps += 1
        bad = self.steps == self.at
        obs = self.fault if bad and self.where == "obs" else np.zeros(3, np.float32)
        return obs, (self.fault if bad and self.where == "reward" else 0.5), False, False, {}


@pytest.mark.parametrize(("where", "fault", "message"), [
    ("reset", np.zeros(7, np.float32), "reset() returned an observation of shape (7,); its observation space has "
     "shape (3,)"),
    ("reset", np.array([0.0, np.nan, 0.0]), "reset() returned an observation holding NaN or Inf"),
    ("obs", np.zeros(9), "step() returned an observation of shape (9,); its observation space has shape (3,)"),
    ("obs", np.array([0.0, np.inf, 0.0]), "step() returned an observation holding NaN or Inf"),
    ("obs", np.array(["a", "b", "c"]), "step() returned an observation of dtype <U1; polyak needs real numbers"),
    ("reward", float("nan"), "step() returned a reward of nan"),
    ("reward", np.float32("-inf"), "step() returned a reward of -inf"),
    ("reward", None, "step() returned the reward None (NoneType); a reward is one real number"),
    ("reward", "x", "step() returned the reward 'x' (str); a reward is one real number"),
    ("reward", 1 + 0j, "step() returned the reward (1+0j) (complex); a reward is one real number"),
    ("reward", np.array([0.5]), "step() returned a reward of shape (1,) (ndarray); a reward is one number"),
])
def test_an_env_returning_what_polyak_cannot_train_on_is_named_at_that_call(where, fault, message):
    env = vector_env_from(lambda: FaultyEnv(where, fault), 1, "'mine'")
    try:
        with pytest.raises(EnvOutputError) as info:
            env.reset(seed=0)
            for _ in range(5):
                env.step(np.zeros((1, 2), np.float32))
        assert str(info.value) == message
        if where != "reset":
            assert env.envs[0].unwrapped.steps == 3  # raised at the step that returned it, not later
    finally:
        env.close()


@pytest.mark.parametrize("reward", [1, np.float64(0.25), np.array(2.0), True, np.int32(-3)])
def test_one_finite_number_of_any_numeric_type_is_a_reward(reward):
    env = vector_env_from(lambda: FaultyEnv("reward", reward), 1, "'mine'")
    try:
        env.reset(seed=0)
        rewards = [env.step(np.zeros((1, 2), np.float32))[1][0] for _ in range(4)]
        assert rewards == [0.5, 0.5, float(reward), 0.5]
    finally:
        env.close()


class NoRender(FaultyEnv):
    def __init__(self):
        super().__init__("none", None)


def test_an_env_that_cannot_render_says_so_when_a_recording_asks_it_to():
    gym.register("polyak-test/NoRender-v0", entry_point=NoRender, max_episode_steps=5)
    try:
        with pytest.raises(EnvError, match=r"^environment 'polyak-test/NoRender-v0' cannot render: its constructor "
                                           r"takes no render_mode"):
            make_env("polyak-test/NoRender-v0", 1, render_mode="rgb_array")
        make_env("polyak-test/NoRender-v0", 1).close()  # without rendering it is made
    finally:
        gym.registry.pop("polyak-test/NoRender-v0")


@pytest.mark.parametrize("observation", [np.array([1, 2, 3], np.int64), np.array([True, False, True]),
                                         np.zeros(3, np.float16), [0.0, 1.0, 2.0]])
def test_observations_of_real_numbers_of_any_dtype_pass_the_check(observation):
    env = vector_env_from(lambda: FaultyEnv("obs", observation), 1, "'mine'")
    try:
        env.reset(seed=0)
        for _ in range(4):
            env.step(np.zeros((1, 2), np.float32))
    finally:
        env.close()


def test_a_time_limit_wrapping_an_env_made_without_a_spec_is_the_envs_limit():
    from gymnasium.wrappers import TimeLimit

    from polyak.evaluation import time_limit

    limited = vector_env_from(lambda: TimeLimit(FaultyEnv("none", None), 50), 1, "'mine'")
    bare = vector_env_from(lambda: FaultyEnv("none", None), 1, "'mine'")
    try:
        assert (time_limit(limited), time_limit(bare)) == (50, None)
    finally:
        limited.close()
        bare.close()
