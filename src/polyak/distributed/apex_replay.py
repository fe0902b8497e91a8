"""An Ape-X replay shard (Horgan et al. 2018): storage + sampler behind a Ray actor.

Rollout workers add n-step transitions with their locally computed TD errors (the initial
priorities); the learner samples batches and hands TD errors back. A plain class, made a Ray actor
by the learner, so it is testable without Ray. Reuses the core storage and the core sampler factory, so a
shard samples exactly as the single-process replay does for the same ``ReplayConfig.sampler``.
"""

from __future__ import annotations

import numpy as np

from polyak.config import ReplayConfig
from polyak.replay import ReplaySampler, ReplayStorage, Transitions, make_sampler


class ReplayShard:
    """One shard of the distributed replay; ``ReplayConfig.sampler`` picks its sampler (:func:`make_sampler`)."""

    def __init__(self, config: ReplayConfig, capacity: int, obs_dim: int, action_dim: int, seed: int) -> None:
        self.storage = ReplayStorage(capacity, obs_dim, action_dim, per_sample_discount=True)
        self.sampler: ReplaySampler = make_sampler(config, capacity, np.random.default_rng(seed))

    def add(self, transitions: Transitions, td_errors: np.ndarray | None) -> int:
        """Store transitions with their initial priorities (max priority when ``td_errors`` is None)."""
        if not len(transitions):
            return len(self.storage)
        rows = self.storage.add(transitions.obs, transitions.action, transitions.reward, transitions.next_obs,
                                transitions.terminated, transitions.discount)
        self.sampler.on_add(rows, td_errors)
        return len(self.storage)

    def sample(self, batch_size: int, learner_step: int | None = None) -> dict[str, np.ndarray | None]:
        """A batch as NumPy arrays, with storage ``indices`` and importance ``weights`` (None without them).

        ``learner_step`` (the learner's update count over all shards) sets the point of the beta schedule;
        without it the shard counts its own samples.
        """
        if learner_step is not None:
            self.sampler.set_step(learner_step)
        indices, weights = self.sampler.sample(len(self.storage), batch_size)
        batch: dict[str, np.ndarray | None] = {name: getattr(self.storage, name)[indices]
                                               for name in self.storage.FIELDS}
        batch["indices"] = indices
        batch["weights"] = None if weights is None else weights.astype(np.float32)
        return batch

    def update_priorities(self, indices: np.ndarray, td_errors: np.ndarray) -> None:
        """TD errors from the learner; rows overwritten since sampling get a stale priority (as in the paper)."""
        self.sampler.update(indices, td_errors)

    def on_hard_target_update(self) -> None:
        """The learner copied its targets (TD7): LAP resets its max priority, the other samplers ignore it."""
        self.sampler.on_hard_target_update()

    def size(self) -> int:
        return len(self.storage)
