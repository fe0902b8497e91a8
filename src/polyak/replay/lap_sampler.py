"""TD7's buffer-side LAP (loss-adjusted prioritized replay) on polyak's sum tree.

TD7 (Fujimoto et al. 2023, ``buffer.py``) keeps one priority per stored transition and:

* gives a new transition the current ``max_priority``, which starts at 1;
* samples i.i.d. with probability ``p_i / sum_k p_k`` over the filled part, **without importance-sampling
  weights** (LAP's loss, :func:`polyak.lap.lap_huber`, already corrects the expected gradient);
* writes a learning step's priorities (:func:`polyak.lap.lap_priority`, i.e. ``max(|delta|, 1)^alpha``) to the
  sampled rows as given and raises ``max_priority`` to the batch maximum;
* at every hard target update, resets ``max_priority`` to the largest priority still stored, so a large
  priority that was overwritten by the ring buffer or lowered by a later update stops feeding new transitions.

:class:`LapSampler` has the interface of every sampler (:class:`polyak.replay.samplers.ReplaySampler`), so the
replay and the Ape-X shards hold it like any other. Differences from
:class:`~polyak.replay.samplers.PrioritizedSampler`: ``sample`` returns ``weights = None``; ``update(indices,
td_errors)`` turns per-sample |TD errors| into LAP priorities itself, while ``update_priorities(indices,
priorities)`` writes already-computed priorities (the output of :func:`polyak.lap.lap_priority`, which reduces the
critic heads with a max as TD7 does); the ``on_hard_target_update`` hook is TD7's ``reset_max_priority()``.
Rows never written have priority 0 in the tree and are never drawn, so sampling and the reset only see the filled
part; the ring buffer overwriting a row is just ``on_add`` on that row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyak.config import ReplayConfig
from polyak.replay.sumtree import SumTree


class LapSampler:
    """LAP sampling as in TD7: proportional to stored priority, new rows at ``max_priority``, no weights.

    ``alpha`` and ``min_priority`` (TD7: 0.4 and 1) are used only by :meth:`priorities` / :meth:`update`, which
    compute ``max(|td|, min_priority) ** alpha`` from per-sample TD errors. ``stratified=False`` (TD7) draws
    ``batch_size`` independent uniform values in ``[0, total)``; ``True`` draws one per equal segment of the
    priority mass, as :class:`~polyak.replay.samplers.PrioritizedSampler` does (same marginal probabilities,
    lower variance).
    """

    prioritized: bool = True
    wants_td_errors: bool = False  # TD7: new rows at max_priority
    initial_max_priority = 1.0

    def __init__(
        self, capacity: int, rng: np.random.Generator, *, alpha: float = 0.4, min_priority: float = 1.0,
        stratified: bool = False,
    ) -> None:
        if alpha < 0:
            raise ValueError(f"alpha must be >= 0, got {alpha}")
        if not min_priority > 0:
            raise ValueError(f"min_priority must be > 0, got {min_priority}")
        self.tree = SumTree(capacity)
        self.rng = rng
        self.alpha, self.min_priority, self.stratified = alpha, min_priority, stratified
        self.max_priority = self.initial_max_priority

    @classmethod
    def from_config(cls, config: ReplayConfig, capacity: int, rng: np.random.Generator) -> LapSampler:
        return cls(capacity, rng, alpha=config.lap_alpha, min_priority=config.lap_min_priority)

    @classmethod
    def needs_td_errors(cls, config: ReplayConfig) -> bool:
        return False

    @property
    def capacity(self) -> int:
        return self.tree.capacity

    def priorities(self, td_errors: np.ndarray) -> np.ndarray:
        """LAP priorities of per-sample TD errors: ``max(|td|, min_priority) ** alpha`` (float64)."""
        magnitude = np.abs(np.asarray(td_errors, dtype=np.float64))
        return np.maximum(magnitude, self.min_priority) ** self.alpha

    def sample(self, size: int, batch_size: int) -> tuple[np.ndarray, None]:
        """``batch_size`` rows drawn with probability ``p_i / sum_k p_k`` (with replacement); no weights.

        ``size`` is the filled part of the storage (only checked: unwritten rows have priority 0).
        """
        total = self.tree.total
        if size < 1 or total <= 0:
            raise ValueError("cannot sample from an empty LAP replay")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if self.stratified:
            values = (np.arange(batch_size) + self.rng.random(batch_size)) * (total / batch_size)
        else:
            values = self.rng.random(batch_size) * total
        # A value at ``total`` (rounding) would fall off the right edge: clamp it just below.
        indices = self.tree.find(np.minimum(values, np.nextafter(total, 0.0)))
        return indices, None

    def on_add(self, rows: np.ndarray, td_errors: np.ndarray | None = None) -> None:
        """New (or overwritten) rows get ``max_priority``; with ``td_errors``, their own LAP priorities instead."""
        rows = np.asarray(rows, dtype=np.int64)
        if td_errors is None:
            self.tree.update(rows, np.full(rows.shape, self.max_priority))
        else:
            self.update(rows, td_errors)

    def update(self, indices: np.ndarray, td_errors: np.ndarray) -> None:
        """The :class:`PrioritizedSampler` hook: per-sample |TD errors| -> LAP priorities, then
        :meth:`update_priorities`."""
        self.update_priorities(indices, self.priorities(td_errors))

    def update_priorities(self, indices: np.ndarray, priorities: np.ndarray) -> None:
        """Write ``priorities`` to rows ``indices`` as given (last one wins for repeated rows) and raise
        ``max_priority`` to their maximum (TD7's ``update_priority``)."""
        priorities = np.asarray(priorities, dtype=np.float64).ravel()
        indices = np.asarray(indices, dtype=np.int64).ravel()
        if priorities.shape != indices.shape:
            raise ValueError(f"{indices.size} indices but {priorities.size} priorities")
        self.tree.update(indices, priorities)  # checks finiteness, sign and range
        if priorities.size:
            self.max_priority = max(self.max_priority, float(priorities.max()))

    def reset_max_priority(self) -> float:
        """``max_priority`` <- the largest stored priority (TD7 calls this at every hard target update).

        Only written rows hold mass, so this is the max over the filled part. With nothing stored (after
        :meth:`clear`, where TD7 would fail) it goes back to the initial 1. Returns the new value.
        """
        leaves = self.tree.nodes[self.tree.leaves: self.tree.leaves + self.tree.capacity]
        stored = float(leaves.max())
        self.max_priority = stored if stored > 0 else self.initial_max_priority
        return self.max_priority

    def set_step(self, step: int) -> None:
        """LAP has no schedule (no importance weights to anneal)."""

    def on_hard_target_update(self) -> None:
        """TD7 resets ``max_priority`` at every hard target update: :meth:`reset_max_priority`."""
        self.reset_max_priority()

    def clear(self) -> None:
        """Forget every priority; ``max_priority`` goes back to 1, as in a new TD7 buffer."""
        self.tree.clear()
        self.max_priority = self.initial_max_priority

    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.bit_generator.state, "tree": self.tree.state_dict(),
                "max_priority": self.max_priority}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.tree.load_state_dict(state["tree"])
        self.max_priority = float(state["max_priority"])
