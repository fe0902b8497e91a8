"""A vectorised sum tree for proportional prioritized replay (Schaul et al. 2016, appendix B.2.1).

The tree is a complete binary tree stored in one float64 array: node ``i`` has children ``2i`` and
``2i + 1``, the root is node 1 and leaf ``j`` is node ``leaves + j`` with ``leaves`` the capacity
rounded up to a power of two (so every leaf has the same depth). Queries and updates take arrays and
walk the tree one level at a time.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class SumTree:
    """Priorities of ``capacity`` slots; batched prefix-sum search and batched updates."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.depth = max(1, int(np.ceil(np.log2(capacity))))
        self.leaves = 1 << self.depth
        self.nodes = np.zeros(2 * self.leaves, dtype=np.float64)

    @property
    def total(self) -> float:
        return float(self.nodes[1])

    def get(self, indices: np.ndarray) -> np.ndarray:
        """Leaf priorities of slots ``indices``."""
        return self.nodes[self.leaves + np.asarray(indices, dtype=np.int64)]

    def update(self, indices: np.ndarray, priorities: np.ndarray) -> None:
        """Set slots ``indices`` to ``priorities``; with repeated indices the last one wins.

        Parents are recomputed from their children (not adjusted by deltas), so repeats and
        floating-point error never leave the tree inconsistent.
        """
        indices = np.asarray(indices, dtype=np.int64).ravel()
        priorities = np.broadcast_to(np.asarray(priorities, dtype=np.float64), indices.shape)
        if indices.size == 0:
            return
        if indices.min() < 0 or indices.max() >= self.capacity:
            raise IndexError(f"sum tree slots must be in [0, {self.capacity}), got {indices.min()}..{indices.max()}")
        if not np.all(np.isfinite(priorities)) or priorities.min() < 0:
            raise ValueError("priorities must be finite and >= 0")
        # Keep the last occurrence of each slot: unique over the reversed array.
        unique, first_in_reversed = np.unique(indices[::-1], return_index=True)
        self.nodes[self.leaves + unique] = priorities[::-1][first_in_reversed]
        nodes = self.leaves + unique
        for _ in range(self.depth):  # every leaf has the same depth: one level per pass
            nodes = np.unique(nodes >> 1)
            self.nodes[nodes] = self.nodes[2 * nodes] + self.nodes[2 * nodes + 1]

    def find(self, values: np.ndarray) -> np.ndarray:
        """Slots whose prefix-sum interval holds each value in [0, total): one descent for the batch.

        A value goes right when it is >= the left child's sum and the right subtree holds mass, so
        zero-priority slots are never returned, even when rounding puts a value at the boundary.
        """
        values = np.array(values, dtype=np.float64, copy=True).ravel()
        nodes = np.ones(values.shape, dtype=np.int64)
        for _ in range(self.depth):
            left = 2 * nodes
            left_sum = self.nodes[left]
            go_right = (values >= left_sum) & (self.nodes[left + 1] > 0)
            values = np.where(go_right, values - left_sum, values)
            nodes = np.where(go_right, left + 1, left)
        return nodes - self.leaves

    def clear(self) -> None:
        self.nodes[:] = 0.0

    def state_dict(self) -> dict[str, Any]:
        return {"leaves": self.nodes[self.leaves: self.leaves + self.capacity].copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        leaves = np.asarray(state["leaves"], dtype=np.float64)
        if leaves.shape != (self.capacity,):
            raise ValueError(f"sum tree state has {leaves.shape[0]} leaves, expected {self.capacity}")
        self.clear()
        self.nodes[self.leaves: self.leaves + self.capacity] = leaves
        for level in range(self.depth - 1, -1, -1):
            start, stop = 1 << level, 1 << (level + 1)
            self.nodes[start:stop] = self.nodes[2 * start: 2 * stop: 2] + self.nodes[2 * start + 1: 2 * stop: 2]
