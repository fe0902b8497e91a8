"""Samplers choose storage rows; the storage turns rows into a batch.

Every sampler has the interface :class:`ReplaySampler`; :func:`polyak.replay.make_sampler` builds the one
``ReplayConfig.sampler`` names, for the single-process replay and for every Ape-X shard alike.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from polyak.config import InitialPriority, ReplayConfig
from polyak.replay.sumtree import SumTree


class ReplaySampler(Protocol):
    """What the replay (and an Ape-X shard) asks of a sampler.

    ``sample(size, batch_size) -> (indices, weights or None)`` over the ``size`` stored rows; ``on_add(rows,
    td_errors)`` when rows are written (``td_errors`` only when :attr:`wants_td_errors`); ``update(indices,
    td_errors)`` with a learning step's per-sample |TD errors| (called only when :attr:`prioritized`); ``clear()``
    when the storage is emptied. The learner's events reach it through two hooks that samplers without a use for
    them implement as no-ops: :meth:`set_step` (the learner's update count) and :meth:`on_hard_target_update`.
    """

    prioritized: bool
    """Whether a learning step's TD errors come back through :meth:`update` (worth a host copy)."""
    wants_td_errors: bool
    """Whether :meth:`on_add` needs the TD errors of new rows (computed by the caller)."""

    @classmethod
    def from_config(cls, config: ReplayConfig, capacity: int, rng: np.random.Generator) -> ReplaySampler: ...

    @classmethod
    def needs_td_errors(cls, config: ReplayConfig) -> bool:
        """:attr:`wants_td_errors` of the sampler ``config`` builds, without building it (Ape-X workers)."""
        ...

    def sample(self, size: int, batch_size: int) -> tuple[np.ndarray, np.ndarray | None]: ...

    def on_add(self, rows: np.ndarray, td_errors: np.ndarray | None = None) -> None: ...

    def update(self, indices: np.ndarray, td_errors: np.ndarray) -> None: ...

    def set_step(self, step: int) -> None:
        """The learner's update count (an Ape-X shard gets it over all shards with each sample request)."""
        ...

    def on_hard_target_update(self) -> None:
        """The learner copied its targets (TD7's hard target update, every ``TD7Config.hard_target_every``)."""
        ...

    def clear(self) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class UniformSampler:
    """Rows drawn uniformly with replacement from the filled part of the storage."""

    prioritized: bool = False
    wants_td_errors: bool = False

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    @classmethod
    def from_config(cls, config: ReplayConfig, capacity: int, rng: np.random.Generator) -> UniformSampler:
        return cls(rng)

    @classmethod
    def needs_td_errors(cls, config: ReplayConfig) -> bool:
        return False

    def sample(self, size: int, batch_size: int) -> tuple[np.ndarray, None]:
        return self.rng.integers(0, size, size=batch_size), None

    def on_add(self, rows: np.ndarray, td_errors: np.ndarray | None = None) -> None:
        """Uniform sampling keeps no per-row state."""

    def update(self, indices: np.ndarray, td_errors: np.ndarray) -> None:
        """Uniform sampling ignores TD errors."""

    def set_step(self, step: int) -> None:
        """Uniform sampling has no schedule."""

    def on_hard_target_update(self) -> None:
        """Uniform sampling ignores the learner's target updates."""

    def clear(self) -> None:
        """Nothing to forget."""

    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]


def beta_at(step: int, beta_start: float, beta_steps: int) -> float:
    """Importance-sampling exponent annealed linearly from ``beta_start`` to 1 over ``beta_steps`` steps."""
    return beta_start + (1.0 - beta_start) * min(1.0, step / beta_steps)


def importance_weights(probabilities: np.ndarray, size: int, beta: float) -> np.ndarray:
    """w_i = (N P(i))^-beta / max_j w_j over the batch (Schaul et al. 2016, sec. 3.4)."""
    weights = (size * probabilities) ** -beta
    return weights / weights.max()


class PrioritizedSampler:
    """Proportional prioritized replay (Schaul et al. 2016): P(i) = p_i / sum_k p_k, p_i = (|delta_i| + eps)^alpha.

    Sampling is stratified: the priority mass is cut into ``batch_size`` equal segments and one
    value is drawn uniformly in each. Rows written without a TD error get the largest priority
    seen so far, so every new transition is replayed at least once with high probability; with
    ``wants_td_errors`` (``ReplayConfig.initial_priority = 'td_error'``) the caller gives new rows their own.
    """

    prioritized: bool = True

    def __init__(
        self, capacity: int, rng: np.random.Generator, *, alpha: float, beta_start: float, beta_steps: int,
        epsilon: float, wants_td_errors: bool = False,
    ) -> None:
        self.tree = SumTree(capacity)
        self.rng = rng
        self.alpha, self.beta_start, self.beta_steps, self.epsilon = alpha, beta_start, beta_steps, epsilon
        self.wants_td_errors = wants_td_errors
        self.max_priority = 1.0
        self.steps = 0

    @classmethod
    def from_config(cls, config: ReplayConfig, capacity: int, rng: np.random.Generator) -> PrioritizedSampler:
        return cls(capacity, rng, alpha=config.alpha, beta_start=config.beta_start, beta_steps=config.beta_steps,
                   epsilon=config.priority_epsilon, wants_td_errors=cls.needs_td_errors(config))

    @classmethod
    def needs_td_errors(cls, config: ReplayConfig) -> bool:
        return config.initial_priority is InitialPriority.TD_ERROR

    @property
    def beta(self) -> float:
        return beta_at(self.steps, self.beta_start, self.beta_steps)

    def priorities(self, td_errors: np.ndarray) -> np.ndarray:
        return (np.abs(np.asarray(td_errors, dtype=np.float64)) + self.epsilon) ** self.alpha

    def sample(self, size: int, batch_size: int) -> tuple[np.ndarray, np.ndarray]:
        """Indices drawn with probability P(i) and their normalised importance weights; advances beta."""
        total = self.tree.total
        if size < 1 or total <= 0:
            raise ValueError("cannot sample from an empty prioritized replay")
        segment = total / batch_size
        values = (np.arange(batch_size) + self.rng.random(batch_size)) * segment
        indices = self.tree.find(np.minimum(values, np.nextafter(total, 0.0)))
        probabilities = self.tree.get(indices) / total
        weights = importance_weights(probabilities, size, self.beta)
        self.steps += 1
        return indices, weights

    def on_add(self, rows: np.ndarray, td_errors: np.ndarray | None = None) -> None:
        """New rows get the max priority so far, or their own priority from ``td_errors``."""
        if td_errors is None:
            self.tree.update(rows, np.full(len(rows), self.max_priority))
        else:
            self.update(rows, td_errors)

    def update(self, indices: np.ndarray, td_errors: np.ndarray) -> None:
        """Priorities of ``indices`` from their new TD errors (last one wins for repeated indices)."""
        priorities = self.priorities(td_errors)
        self.tree.update(indices, priorities)
        if priorities.size:
            self.max_priority = max(self.max_priority, float(priorities.max()))

    def set_step(self, step: int) -> None:
        """Beta's schedule point: Ape-X shards anneal by the learner's updates over all shards, not their own."""
        self.steps = step

    def on_hard_target_update(self) -> None:
        """Proportional replay ignores the learner's target updates."""

    def clear(self) -> None:
        self.tree.clear()

    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.bit_generator.state, "tree": self.tree.state_dict(),
                "max_priority": self.max_priority, "steps": self.steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.tree.load_state_dict(state["tree"])
        self.max_priority = float(state["max_priority"])
        self.steps = int(state["steps"])
