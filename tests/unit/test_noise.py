"""Noise statistics and epsilon schedules against closed forms."""

import numpy as np
import pytest

from polyak.config import NoiseConfig
from polyak.noise import ExplorationNoise, GaussianNoise, OrnsteinUhlenbeckNoise, epsilon_at


def test_ou_without_shocks_reverts_geometrically_to_mu():
    noise = OrnsteinUhlenbeckNoise(1, 2, mu=0.5, theta=0.15, sigma=0.0, dt=1.0, rng=np.random.default_rng(0))
    noise.state[:] = 2.5
    for _ in range(10):
        sample = noise.sample()
    # x_t - mu = (1 - theta)^t (x_0 - mu)
    np.testing.assert_allclose(sample, 0.5 + 0.85**10 * 2.0)


def test_ou_stationary_variance_matches_closed_form():
    theta, sigma = 0.15, 0.2
    noise = OrnsteinUhlenbeckNoise(4000, 1, mu=0.0, theta=theta, sigma=sigma, dt=1.0, rng=np.random.default_rng(1))
    for _ in range(200):  # (1 - theta)^400 of the initial state remains: negligible
        noise.sample()
    samples = np.concatenate([noise.sample() for _ in range(50)]).ravel()
    expected = sigma**2 / (2 * theta - theta**2)  # Var of x' = (1 - theta) x + sigma e
    assert samples.var() == pytest.approx(expected, rel=0.05)
    assert abs(samples.mean()) < 0.02


def test_ou_keeps_one_state_per_env_and_resets_by_mask():
    noise = OrnsteinUhlenbeckNoise(3, 2, mu=0.0, theta=0.15, sigma=0.2, dt=1.0, rng=np.random.default_rng(2))
    sample = noise.sample()
    assert sample.shape == (3, 2)
    assert not np.allclose(sample[0], sample[1])
    noise.reset(np.array([True, False, True]))
    assert np.all(noise.state[[0, 2]] == 0.0)
    np.testing.assert_array_equal(noise.state[1], sample[1])


def test_gaussian_noise_has_requested_std():
    noise = GaussianNoise(100, 4, sigma=0.3, rng=np.random.default_rng(3))
    samples = np.concatenate([noise.sample() for _ in range(100)])
    assert samples.std() == pytest.approx(0.3, rel=0.03)


def test_linear_epsilon_schedule_is_seed_000s():
    config = NoiseConfig(epsilon_schedule="linear", epsilon_start=1.0, epsilon_decay=1e-5, epsilon_min=0.025)
    assert epsilon_at(config, 0) == 1.0
    assert epsilon_at(config, 50_000) == pytest.approx(0.5)
    assert epsilon_at(config, 97_499) == pytest.approx(0.02501)
    assert epsilon_at(config, 200_000) == 0.025


def test_geometric_epsilon_schedule():
    config = NoiseConfig(epsilon_schedule="geometric", epsilon_decay=0.999, epsilon_min=0.1)
    assert epsilon_at(config, 1000) == pytest.approx(0.999**1000)
    assert epsilon_at(config, 10_000) == 0.1


def test_exploration_noise_scales_by_epsilon_and_decays_per_sample():
    config = NoiseConfig(kind="gaussian", sigma=1.0, epsilon_schedule="linear", epsilon_decay=0.25, epsilon_min=0.0)
    noise = ExplorationNoise(config, 1, 1, np.random.default_rng(4))
    reference = np.random.default_rng(4)
    for step in range(5):
        expected = max(0.0, 1.0 - 0.25 * step) * reference.standard_normal((1, 1))
        np.testing.assert_allclose(noise.sample(), expected)


def test_noise_state_round_trip_reproduces_samples():
    config = NoiseConfig(kind="ou", sigma=0.2)
    a = ExplorationNoise(config, 2, 3, np.random.default_rng(5))
    for _ in range(7):
        a.sample()
    b = ExplorationNoise(config, 2, 3, np.random.default_rng(99))
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a.sample(), b.sample())
    assert a.epsilon == b.epsilon
