"""Ring-buffer storage and uniform sampling."""

import numpy as np
import torch

from polyak.replay import ReplayStorage, UniformSampler


def _rows(start: int, count: int, obs_dim: int = 2):
    ids = np.arange(start, start + count, dtype=np.float32)
    return (np.repeat(ids[:, None], obs_dim, 1), ids[:, None], ids, np.repeat(ids[:, None] + 0.5, obs_dim, 1),
            (ids % 2).astype(np.float32))


def test_ring_buffer_wraps_around_and_overwrites_oldest():
    storage = ReplayStorage(capacity=5, obs_dim=2, action_dim=1)
    rows = storage.add(*_rows(0, 3))
    np.testing.assert_array_equal(rows, [0, 1, 2])
    rows = storage.add(*_rows(3, 3))
    np.testing.assert_array_equal(rows, [3, 4, 0])  # transition 5 overwrote transition 0
    assert len(storage) == 5 and storage.position == 1
    np.testing.assert_array_equal(storage.reward, [5, 1, 2, 3, 4])
    storage.add(*_rows(6, 7))  # more than capacity in one call: the newest five survive
    assert sorted(storage.reward.tolist()) == [8, 9, 10, 11, 12]
    assert len(storage) == 5


def test_terminated_is_stored_per_transition():
    storage = ReplayStorage(capacity=4, obs_dim=2, action_dim=1)
    storage.add(*_rows(0, 4))
    batch = storage.gather(np.array([0, 1, 2, 3]), 0.99, torch.device("cpu"))
    torch.testing.assert_close(batch.terminated, torch.tensor([0.0, 1.0, 0.0, 1.0]))
    torch.testing.assert_close(batch.next_obs[:, 0], torch.tensor([0.5, 1.5, 2.5, 3.5]))
    assert batch.discount == 0.99


def test_uniform_sampler_draws_only_filled_rows_and_roughly_uniformly():
    sampler = UniformSampler(np.random.default_rng(0))
    indices, weights = sampler.sample(size=10, batch_size=100_000)
    assert weights is None
    assert indices.min() == 0 and indices.max() == 9
    counts = np.bincount(indices, minlength=10)
    assert np.all(np.abs(counts - 10_000) < 500)


def test_storage_state_round_trip():
    a = ReplayStorage(capacity=6, obs_dim=2, action_dim=1)
    a.add(*_rows(0, 8))
    b = ReplayStorage(capacity=6, obs_dim=2, action_dim=1)
    b.load_state_dict(a.state_dict())
    assert (b.size, b.position) == (a.size, a.position)
    np.testing.assert_array_equal(b.reward, a.reward)


def test_large_capacity_is_preallocated_lazily():
    storage = ReplayStorage(capacity=1_000_000, obs_dim=33, action_dim=4)
    assert storage.obs.shape == (1_000_000, 33)
    storage.add(np.zeros((20, 33)), np.zeros((20, 4)), np.zeros(20), np.zeros((20, 33)), np.zeros(20))
    assert len(storage) == 20
