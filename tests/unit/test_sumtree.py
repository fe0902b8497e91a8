"""The vectorised sum tree against hand-worked trees and sampling frequencies (Schaul et al. 2016)."""

import numpy as np
import pytest

from polyak.replay import SumTree

# Chi-square critical values at p = 0.001 by degrees of freedom (tables; scipy is not a dependency).
CHI2_999 = {5: 20.515, 6: 22.458, 7: 24.322}


def test_hand_worked_tree_of_five_slots():
    tree = SumTree(5)  # padded to 8 leaves, depth 3
    assert (tree.leaves, tree.depth) == (8, 3)
    tree.update(np.array([0, 1, 2, 3, 4]), np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    # level 2: (1+2, 3+4, 5+0, 0+0); level 1: (10, 5); root 15
    np.testing.assert_array_equal(tree.nodes[4:8], [3.0, 7.0, 5.0, 0.0])
    np.testing.assert_array_equal(tree.nodes[2:4], [10.0, 5.0])
    assert tree.total == 15.0
    # prefix sums: [0,1) -> 0, [1,3) -> 1, [3,6) -> 2, [6,10) -> 3, [10,15) -> 4
    values = np.array([0.0, 0.99, 1.0, 2.99, 3.0, 5.99, 6.0, 9.99, 10.0, 14.99])
    np.testing.assert_array_equal(tree.find(values), [0, 0, 1, 1, 2, 2, 3, 3, 4, 4])


def test_zero_priority_slots_are_never_found_even_at_boundaries():
    tree = SumTree(6)
    tree.update(np.arange(6), np.array([0.0, 2.0, 0.0, 0.0, 3.0, 0.0]))
    values = np.array([0.0, 2.0, 4.999999, 5.0, 5.0 + 1e-9, 1e6])
    found = tree.find(values)
    assert set(found.tolist()) <= {1, 4}
    np.testing.assert_array_equal(found[:3], [1, 4, 4])


def test_batched_update_with_repeated_indices_keeps_the_last_and_a_consistent_tree():
    tree = SumTree(7)
    tree.update(np.arange(7), np.ones(7))
    tree.update(np.array([3, 5, 3, 0, 5, 3]), np.array([10.0, 2.0, 20.0, 4.0, 6.0, 30.0]))
    np.testing.assert_array_equal(tree.get(np.arange(7)), [4.0, 1.0, 1.0, 30.0, 1.0, 6.0, 1.0])
    for node in range(1, tree.leaves):  # every parent equals the sum of its children
        assert tree.nodes[node] == tree.nodes[2 * node] + tree.nodes[2 * node + 1]
    assert tree.total == 44.0


def test_random_batched_updates_match_a_plain_array():
    rng = np.random.default_rng(0)
    tree = SumTree(100)
    reference = np.zeros(100)
    for _ in range(200):
        idx = rng.integers(0, 100, size=rng.integers(1, 40))
        values = rng.random(len(idx)) * 10
        tree.update(idx, values)
        for i, v in zip(idx, values, strict=True):  # sequential semantics: last write wins
            reference[i] = v
    np.testing.assert_allclose(tree.get(np.arange(100)), reference)
    assert tree.total == pytest.approx(reference.sum(), rel=1e-12)


def _chi_square(counts: np.ndarray, expected: np.ndarray) -> float:
    return float(((counts - expected) ** 2 / expected).sum())


def test_sampling_frequencies_match_priorities_chi_square():
    priorities = np.array([0.5, 1.0, 0.0, 2.0, 4.0, 0.25, 3.0, 1.25])  # one slot with zero priority
    tree = SumTree(len(priorities))
    tree.update(np.arange(len(priorities)), priorities)
    draws = 100_000
    values = np.random.default_rng(1).random(draws) * tree.total
    counts = np.bincount(tree.find(values), minlength=len(priorities))
    assert counts[2] == 0
    nonzero = priorities > 0
    expected = draws * priorities[nonzero] / priorities.sum()
    statistic = _chi_square(counts[nonzero], expected)
    assert statistic < CHI2_999[int(nonzero.sum()) - 1], statistic


def test_state_round_trip_rebuilds_the_inner_nodes():
    a = SumTree(11)
    a.update(np.arange(11), np.arange(11, dtype=float) ** 2)
    b = SumTree(11)
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a.nodes, b.nodes)


def test_bad_updates_are_refused():
    tree = SumTree(4)
    with pytest.raises(IndexError):
        tree.update(np.array([4]), np.array([1.0]))
    with pytest.raises(ValueError):
        tree.update(np.array([0]), np.array([-1.0]))
