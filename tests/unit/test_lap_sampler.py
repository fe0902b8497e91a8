"""TD7's buffer-side LAP on the sum tree: sampling frequencies, max priority, reset, ring overwrite, resume."""

import copy

import numpy as np
import pytest
import torch

from polyak.lap import lap_priority
from polyak.replay.lap_sampler import LapSampler


def make_sampler(capacity: int = 8, seed: int = 0, **kwargs) -> LapSampler:
    return LapSampler(capacity, np.random.default_rng(seed), **kwargs)


def chi_square(counts: np.ndarray, probabilities: np.ndarray) -> float:
    expected = counts.sum() * probabilities
    return float(((counts - expected) ** 2 / expected).sum())


@pytest.mark.parametrize("stratified", [False, True])
def test_sampling_frequencies_match_the_priorities(stratified):
    # 5 of 8 slots written, priorities 1, 2, 3, 1.5, 0.5 (sum 8): P = (.125, .25, .375, .1875, .0625).
    sampler = make_sampler(8, stratified=stratified)
    priorities = np.array([1.0, 2.0, 3.0, 1.5, 0.5])
    sampler.update_priorities(np.arange(5), priorities)
    counts = np.zeros(8)
    for _ in range(20):  # 400,000 draws: the frequencies' standard deviations are below 0.0008
        indices, weights = sampler.sample(5, 20_000)
        assert weights is None  # LAP: no importance-sampling weights
        np.add.at(counts, indices, 1)
    assert counts[5:].sum() == 0  # unwritten rows are never drawn
    probabilities = priorities / priorities.sum()
    # 4 degrees of freedom: the 0.999 quantile is 18.47. The seed is fixed, so this is deterministic.
    assert chi_square(counts[:5], probabilities) < 18.47
    np.testing.assert_allclose(counts[:5] / counts.sum(), probabilities, atol=0.003)


def test_iid_sampling_equals_td7_cumsum_searchsorted_on_the_same_uniforms():
    # TD7: csum = cumsum(priority[:size]); ind = searchsorted(csum, rand * csum[-1]). Dyadic priorities keep the
    # tree's sums and the cumsum exact, so the two agree draw for draw (side='right': a value on a boundary
    # belongs to the next row in the tree; such values have probability zero).
    rng = np.random.default_rng(3)
    priorities = rng.integers(1, 40, size=13) / 4.0
    sampler = make_sampler(16, seed=7)
    sampler.update_priorities(np.arange(13), priorities)
    indices, _ = sampler.sample(13, 1000)
    uniforms = np.random.default_rng(7).random(1000)
    csum = np.cumsum(priorities)
    np.testing.assert_array_equal(indices, np.searchsorted(csum, uniforms * csum[-1], side="right"))


def test_new_rows_get_max_priority_which_starts_at_one_and_only_rises_on_update():
    sampler = make_sampler(8)
    assert sampler.max_priority == 1.0
    sampler.on_add(np.array([0, 1]))
    np.testing.assert_array_equal(sampler.tree.get(np.array([0, 1])), [1.0, 1.0])
    sampler.update_priorities(np.array([0, 1]), np.array([3.0, 2.0]))
    assert sampler.max_priority == 3.0
    sampler.on_add(np.array([2]))
    assert sampler.tree.get(np.array([2]))[0] == 3.0
    sampler.update_priorities(np.array([0, 2]), np.array([1.0, 1.5]))  # lower: max_priority stays (TD7)
    assert sampler.max_priority == 3.0
    np.testing.assert_array_equal(sampler.tree.get(np.arange(3)), [1.0, 2.0, 1.5])
    sampler.on_add(np.array([3]))
    assert sampler.tree.get(np.array([3]))[0] == 3.0
    assert sampler.tree.total == pytest.approx(1.0 + 2.0 + 1.5 + 3.0)


def test_priorities_are_written_as_given_and_repeated_rows_keep_the_last():
    sampler = make_sampler(4)
    sampler.on_add(np.arange(4))
    sampler.update_priorities(np.array([1, 1, 2]), np.array([5.0, 2.0, 0.25]))
    np.testing.assert_array_equal(sampler.tree.get(np.arange(4)), [1.0, 2.0, 0.25, 1.0])
    assert sampler.max_priority == 5.0  # the batch max, even though row 1 kept the later 2.0 (TD7 does the same)
    with pytest.raises(ValueError):
        sampler.update_priorities(np.array([0]), np.array([np.nan]))
    with pytest.raises(ValueError):
        sampler.update_priorities(np.array([0, 1]), np.array([1.0]))
    with pytest.raises(IndexError):
        sampler.update_priorities(np.array([4]), np.array([1.0]))


def test_update_turns_td_errors_into_lap_priorities_like_polyak_lap():
    sampler = make_sampler(4, alpha=0.4, min_priority=1.0)
    td = np.array([-3.0, 0.2, 0.0, 10.0])
    expected = lap_priority(torch.tensor(td), alpha=0.4).numpy()  # max(|td|, 1)^0.4
    np.testing.assert_allclose(sampler.priorities(td), expected, rtol=1e-6)
    sampler.update(np.arange(4), td)
    np.testing.assert_allclose(sampler.tree.get(np.arange(4)), [3.0**0.4, 1.0, 1.0, 10.0**0.4])
    assert sampler.max_priority == pytest.approx(10.0**0.4)
    # Two critic heads, polyak's (n_critics, batch) layout: lap_priority takes the max over heads first.
    heads = torch.tensor([[0.5, -4.0], [2.0, 1.0]])
    sampler.update_priorities(np.array([0, 1]), lap_priority(heads).numpy())
    np.testing.assert_allclose(sampler.tree.get(np.array([0, 1])), [2.0**0.4, 4.0**0.4], rtol=1e-6)


def test_reset_max_priority_takes_the_stored_max_over_the_filled_part():
    sampler = make_sampler(8)
    sampler.on_add(np.arange(5))
    sampler.update_priorities(np.array([0, 1, 2]), np.array([9.0, 2.0, 4.0]))
    assert sampler.max_priority == 9.0
    sampler.update_priorities(np.array([0]), np.array([1.0]))  # the 9 is gone from the buffer
    assert sampler.max_priority == 9.0
    assert sampler.reset_max_priority() == 4.0
    assert sampler.max_priority == 4.0
    sampler.on_add(np.array([5]))
    assert sampler.tree.get(np.array([5]))[0] == 4.0
    # Everything at the floor: reset goes down to 1.
    sampler.update_priorities(np.arange(6), np.ones(6))
    assert sampler.reset_max_priority() == 1.0


def test_reset_on_an_empty_tree_returns_to_one_and_clear_forgets_everything():
    sampler = make_sampler(4)
    sampler.reset_max_priority()
    assert sampler.max_priority == 1.0
    sampler.on_add(np.arange(2))
    sampler.update_priorities(np.array([1]), np.array([6.0]))
    sampler.clear()
    assert sampler.tree.total == 0.0 and sampler.max_priority == 1.0
    with pytest.raises(ValueError):
        sampler.sample(0, 4)
    sampler.on_add(np.array([0]))
    assert sampler.tree.get(np.array([0]))[0] == 1.0


def test_ring_buffer_overwrite_replaces_the_old_priority():
    capacity = 4
    sampler = make_sampler(capacity)
    written = 0

    def add(n: int) -> np.ndarray:  # a ring buffer's rows for n new transitions
        nonlocal written
        rows = (written + np.arange(n)) % capacity
        written += n
        sampler.on_add(rows)
        return rows

    add(4)
    sampler.update_priorities(np.arange(4), np.array([8.0, 1.0, 2.0, 1.0]))
    assert sampler.max_priority == 8.0
    rows = add(2)  # wraps: rows 0 and 1 now hold new transitions at max_priority (8)
    np.testing.assert_array_equal(rows, [0, 1])
    np.testing.assert_array_equal(sampler.tree.get(np.arange(4)), [8.0, 8.0, 2.0, 1.0])
    sampler.update_priorities(np.array([0, 1]), np.array([1.5, 1.0]))
    assert sampler.reset_max_priority() == 2.0  # the overwritten 8 no longer counts
    rows = add(3)  # rows 2, 3, 0 at the new max 2
    np.testing.assert_array_equal(rows, [2, 3, 0])
    np.testing.assert_array_equal(sampler.tree.get(np.arange(4)), [2.0, 1.0, 2.0, 2.0])
    assert sampler.tree.total == pytest.approx(7.0)
    counts = np.bincount(sampler.sample(4, 70_000)[0], minlength=4)
    np.testing.assert_allclose(counts / counts.sum(), [2 / 7, 1 / 7, 2 / 7, 2 / 7], atol=0.01)


def test_state_round_trip_resumes_exactly():
    sampler = make_sampler(16, seed=5)
    sampler.on_add(np.arange(10))
    sampler.update_priorities(np.array([1, 4, 7]), np.array([3.0, 1.2, 2.5]))
    sampler.sample(10, 32)
    state = copy.deepcopy(sampler.state_dict())

    resumed = make_sampler(16, seed=999)
    resumed.load_state_dict(state)
    assert resumed.max_priority == sampler.max_priority == 3.0
    np.testing.assert_array_equal(resumed.tree.nodes, sampler.tree.nodes)
    for step in range(5):
        a, _ = sampler.sample(10, 32)
        b, _ = resumed.sample(10, 32)
        np.testing.assert_array_equal(a, b)
        for s in (sampler, resumed):
            s.update_priorities(a, 1.0 + (a % 3) * 0.5 + step)
            s.on_add(np.array([10 + step]))
        assert sampler.reset_max_priority() == resumed.reset_max_priority()
    np.testing.assert_array_equal(resumed.tree.nodes, sampler.tree.nodes)


def test_load_state_dict_checks_the_capacity():
    state = make_sampler(8).state_dict()
    with pytest.raises(ValueError):
        make_sampler(4).load_state_dict(state)


def test_constructor_checks():
    with pytest.raises(ValueError):
        make_sampler(4, alpha=-0.1)
    with pytest.raises(ValueError):
        make_sampler(4, min_priority=0.0)
    with pytest.raises(ValueError):
        make_sampler(0)
