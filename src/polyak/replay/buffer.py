"""The replay the trainer talks to: n-step assembly -> storage -> sampler, plus an optional buffer life.

Prioritized replay never calls the learner: new transitions come with their TD errors when
``initial_priority='td_error'`` (the caller computes them, see :meth:`Replay.wants_td_errors`),
and a learning step's TD errors come back through :meth:`Replay.update_priorities`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from polyak.config import InitialPriority, ReplayConfig
from polyak.replay.lap_sampler import LapSampler
from polyak.replay.nstep import NStepAssembler, Transitions
from polyak.replay.samplers import PrioritizedSampler, UniformSampler
from polyak.replay.storage import ReplayStorage
from polyak.types import Batch


class Replay:
    """Feeds vector-env steps through the n-step assembler into storage and samples batches.

    One env step: ``transitions = assemble(...)``, then ``insert(transitions, td_errors)``; ``add``
    does both when no TD errors are wanted. With ``buffer_life`` (the Reacher n-step/prioritized
    notebook's ``buf_life``) the storage is emptied once that many batches have been sampled, after
    their priorities came back.

    ``config.lap`` samples with TD7's :class:`~polyak.replay.lap_sampler.LapSampler`; with ``max_priority_reset``
    (the agent's ``hard_target_every``) its ``max_priority`` goes back to the stored maximum after every that many
    priority updates, i.e. at the learner's hard target updates, as in TD7.
    """

    def __init__(
        self, config: ReplayConfig, gamma: float, num_envs: int, obs_dim: int, action_dim: int,
        rng: np.random.Generator, max_priority_reset: int | None = None,
    ) -> None:
        self.config = config
        self.gamma = gamma
        self.storage = ReplayStorage(config.capacity, obs_dim, action_dim, per_sample_discount=config.n_step > 1)
        self.sampler: UniformSampler | PrioritizedSampler | LapSampler
        if config.lap:
            self.sampler = LapSampler(config.capacity, rng, alpha=config.lap_alpha,
                                      min_priority=config.lap_min_priority)
        elif config.prioritized:
            self.sampler = PrioritizedSampler(config.capacity, rng, alpha=config.alpha, beta_start=config.beta_start,
                                              beta_steps=config.beta_steps, epsilon=config.priority_epsilon)
        else:
            self.sampler = UniformSampler(rng)
        self.max_priority_reset = max_priority_reset if config.lap else None
        self.priority_updates = 0  # LAP: priority updates so far (for the max-priority resets)
        self.assembler = NStepAssembler(config.n_step, gamma, num_envs, obs_dim, action_dim)
        self.wants_td_errors = config.initial_priority is InitialPriority.TD_ERROR
        """Whether :meth:`insert` needs the TD errors of new transitions."""
        self.samples = 0

    def __len__(self) -> int:
        return 0 if self._flush_due else len(self.storage)

    @property
    def _flush_due(self) -> bool:
        return self.config.buffer_life is not None and self.samples >= self.config.buffer_life

    def _flush_if_due(self) -> None:
        if self._flush_due:
            self.storage.clear()
            self.sampler.clear()
            self.samples = 0

    def assemble(
        self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, next_obs: np.ndarray,
        terminated: np.ndarray, done: np.ndarray,
    ) -> Transitions:
        """One vector-env step (``next_obs``: true successors) -> the n-step transitions it completes."""
        self._flush_if_due()
        return self.assembler.push(obs, action, reward, next_obs, terminated, done)

    def insert(self, transitions: Transitions, td_errors: np.ndarray | None = None) -> np.ndarray:
        """Store ``transitions`` (with their |TD errors| when :attr:`wants_td_errors`); returns the rows."""
        if not len(transitions):
            return np.zeros(0, dtype=np.int64)
        if self.wants_td_errors and td_errors is None:
            raise ValueError("initial_priority='td_error' needs the TD errors of new transitions")
        out = transitions
        discount = out.discount if self.storage.discount is not None else None
        rows = self.storage.add(out.obs, out.action, out.reward, out.next_obs, out.terminated, discount)
        self.sampler.on_add(rows, td_errors if self.wants_td_errors else None)
        return rows

    def add(
        self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, next_obs: np.ndarray,
        terminated: np.ndarray, done: np.ndarray,
    ) -> np.ndarray:
        """:meth:`assemble` then :meth:`insert`, for replays that take new rows at the largest priority."""
        return self.insert(self.assemble(obs, action, reward, next_obs, terminated, done))

    def sample(self, batch_size: int, device: torch.device) -> Batch:
        """A batch with importance weights (prioritized) and storage indices."""
        self._flush_if_due()
        indices, weights = self.sampler.sample(len(self.storage), batch_size)
        batch = self.storage.gather(indices, self.gamma, device)
        if weights is not None:
            batch.weights = torch.from_numpy(weights.astype(np.float32)).to(device, non_blocking=True)
        self.samples += 1
        return batch

    def update_priorities(self, indices: np.ndarray, td_errors: torch.Tensor) -> None:
        """Hand a learning step's per-sample TD errors back (one host copy, prioritized only)."""
        if self.sampler.prioritized:
            self.sampler.update(indices, td_errors.detach().cpu().numpy())
            if self.max_priority_reset is not None and isinstance(self.sampler, LapSampler):
                self.priority_updates += 1
                if self.priority_updates % self.max_priority_reset == 0:
                    self.sampler.reset_max_priority()
        self._flush_if_due()

    def state_dict(self) -> dict[str, Any]:
        state = {"storage": self.storage.state_dict(), "sampler": self.sampler.state_dict(),
                 "nstep": self.assembler.state_dict(), "samples": self.samples}
        if self.config.lap:
            state["priority_updates"] = self.priority_updates
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.storage.load_state_dict(state["storage"])
        self.sampler.load_state_dict(state["sampler"])
        self.assembler.load_state_dict(state["nstep"])
        self.samples = int(state["samples"])
        if self.config.lap:
            self.priority_updates = int(state["priority_updates"])
