"""Prioritized replay (Schaul et al. 2016): priorities, importance weights, beta, insertion, buffer_life."""

import numpy as np
import pytest
import torch

from polyak.checkpoint import load_checkpoint, save_checkpoint
from polyak.config import ReplayConfig
from polyak.replay import PrioritizedSampler, Replay, beta_at, importance_weights

CPU = torch.device("cpu")


def make_sampler(capacity: int = 8, **kwargs) -> PrioritizedSampler:
    options = {"alpha": 1.0, "beta_start": 0.5, "beta_steps": 10, "epsilon": 0.0} | kwargs
    return PrioritizedSampler(capacity, np.random.default_rng(0), **options)


def test_importance_weights_hand_worked():
    # N = 4, P = (0.1, 0.2, 0.3, 0.4), beta = 1: w = 1 / (N P) = (2.5, 1.25, 0.8333, 0.625), / max -> (1, .5, 1/3, .25)
    weights = importance_weights(np.array([0.1, 0.2, 0.3, 0.4]), 4, 1.0)
    np.testing.assert_allclose(weights, [1.0, 0.5, 1 / 3, 0.25])
    # beta = 0.5: w = (N P)^-1/2 = (1.5811, 1.1180, 0.9129, 0.7906) / 1.5811
    weights = importance_weights(np.array([0.1, 0.2, 0.3, 0.4]), 4, 0.5)
    np.testing.assert_allclose(weights, np.sqrt([1.0, 0.5, 1 / 3, 0.25]))


def test_priority_is_abs_td_error_plus_epsilon_to_the_alpha():
    sampler = make_sampler(alpha=0.6, epsilon=0.01)
    np.testing.assert_allclose(sampler.priorities(np.array([-1.0, 0.0, 3.0])), [1.01**0.6, 0.01**0.6, 3.01**0.6])


def test_sampled_weights_match_the_stored_priorities_and_beta_anneals_to_one():
    sampler = make_sampler(capacity=4, beta_start=0.5, beta_steps=4)
    sampler.update(np.arange(4), np.array([1.0, 2.0, 3.0, 4.0]))  # alpha 1, eps 0: P = (.1, .2, .3, .4)
    indices, weights = sampler.sample(4, 4)  # stratified: one draw in each quarter [0, 2.5), [2.5, 5), ...
    assert indices[0] in (0, 1) and indices[1] in (1, 2) and indices[2] in (2, 3) and indices[3] == 3
    expected = importance_weights(np.array([1.0, 2.0, 3.0, 4.0])[indices] / 10.0, 4, 0.5)
    np.testing.assert_allclose(weights, expected)
    assert [beta_at(t, 0.5, 4) for t in range(6)] == [0.5, 0.625, 0.75, 0.875, 1.0, 1.0]
    for _ in range(3):
        sampler.sample(4, 4)
    assert sampler.beta == 1.0


def test_new_rows_get_the_max_priority_so_far():
    sampler = make_sampler()
    sampler.on_add(np.array([0, 1]))
    np.testing.assert_array_equal(sampler.tree.get(np.array([0, 1])), [1.0, 1.0])
    sampler.update(np.array([0]), np.array([7.0]))
    sampler.on_add(np.array([2]))
    assert sampler.tree.get(np.array([2]))[0] == 7.0
    sampler.on_add(np.array([3]), td_errors=np.array([0.5]))  # TD error at insertion (Reacher PER notebook)
    assert sampler.tree.get(np.array([3]))[0] == 0.5


def test_stratified_sampling_follows_priorities():
    sampler = make_sampler(capacity=5)
    priorities = np.array([1.0, 0.0, 2.0, 3.0, 4.0])
    sampler.update(np.arange(5), priorities)
    counts = np.zeros(5)
    for _ in range(500):
        indices, _ = sampler.sample(5, 200)
        counts += np.bincount(indices, minlength=5)
    np.testing.assert_allclose(counts / counts.sum(), priorities / priorities.sum(), atol=2e-3)


def _step(replay: Replay, t: int, envs: int = 2, done: bool = False):
    obs = np.full((envs, 3), float(t))
    replay.add(obs, np.zeros((envs, 1)), np.ones(envs), obs + 1, np.zeros(envs), np.full(envs, done))


def test_replay_batches_carry_weights_indices_and_per_sample_discount():
    config = ReplayConfig(capacity=64, min_size=1, n_step=3, sampler='prioritized', beta_start=1.0)
    replay = Replay(config, 0.9, 2, 3, 1, np.random.default_rng(0))
    for t in range(10):
        _step(replay, t, done=(t == 9))
    batch = replay.sample(16, CPU)
    assert batch.weights is not None and batch.weights.shape == (16,) and batch.weights.max() == 1.0
    assert isinstance(batch.discount, torch.Tensor)
    assert {round(float(d), 5) for d in batch.discount} <= {0.9, 0.81, 0.729}
    replay.update_priorities(batch.indices, torch.linspace(0, 5, 16))
    assert replay.sampler.max_priority > 1.0


def test_td_error_priorities_at_insertion_come_with_the_transitions():
    config = ReplayConfig(capacity=16, min_size=1, sampler='prioritized', alpha=1.0, priority_epsilon=1e-9,
                          initial_priority="td_error")
    replay = Replay(config, 0.99, 2, 3, 1, np.random.default_rng(0))
    assert replay.wants_td_errors
    for t in (0, 4):
        obs = np.full((2, 3), float(t))
        transitions = replay.assemble(obs, np.zeros((2, 1)), np.ones(2), obs + 1, np.zeros(2), np.zeros(2, bool))
        replay.insert(transitions, transitions.obs[:, 0] + 1.0)
    np.testing.assert_allclose(replay.sampler.tree.get(np.arange(4)), [1.0, 1.0, 5.0, 5.0])
    with pytest.raises(ValueError, match="needs the TD errors"):
        _step(replay, 8)


def test_buffer_life_empties_the_buffer_after_that_many_batches():
    config = ReplayConfig(capacity=32, min_size=1, sampler='prioritized', buffer_life=3)
    replay = Replay(config, 0.99, 2, 3, 1, np.random.default_rng(0))
    for t in range(5):
        _step(replay, t)
    for _ in range(3):
        assert len(replay) == 10
        batch = replay.sample(4, CPU)
        replay.update_priorities(batch.indices, torch.ones(4))
    assert len(replay) == 0 and len(replay.storage) == 0 and replay.sampler.tree.total == 0.0
    _step(replay, 9)
    assert len(replay) == 2 and replay.sampler.tree.total == pytest.approx(2 * replay.sampler.max_priority)


def test_replay_state_round_trip(tmp_path):
    config = ReplayConfig(capacity=32, min_size=1, n_step=2, sampler='prioritized')
    a = Replay(config, 0.9, 2, 3, 1, np.random.default_rng(0))
    for t in range(7):
        _step(a, t)
    a.update_priorities(a.sample(4, CPU).indices, torch.arange(4.0))
    b = Replay(config, 0.9, 2, 3, 1, np.random.default_rng(5))
    path = save_checkpoint(tmp_path, "step", {"replay": a.state_dict()}, {})  # through the checkpoint format
    b.load_state_dict(load_checkpoint(path)[0]["replay"])
    batch_a, batch_b = a.sample(8, CPU), b.sample(8, CPU)
    np.testing.assert_array_equal(batch_a.indices, batch_b.indices)
    torch.testing.assert_close(batch_a.weights, batch_b.weights)
    np.testing.assert_array_equal(a.assembler.length, b.assembler.length)


def test_td_error_insertion_needs_prioritized_replay():
    with pytest.raises(Exception, match="initial_priority"):
        ReplayConfig(initial_priority="td_error")
