"""Environment boundary: per-dimension action rescaling, SAME_STEP autoreset, clear refusals."""

import numpy as np
import pytest

from polyak.envs import final_observations, make_env
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
