"""The replay the trainer talks to: n-step assembly -> storage -> sampler, plus seed 004's buffer_life."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from polyak.config import InitialPriority, ReplayConfig
from polyak.replay.nstep import NStepAssembler
from polyak.replay.samplers import PrioritizedSampler, UniformSampler
from polyak.replay.storage import Batch, ReplayStorage

TdErrorFn = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""(obs, action, reward, next_obs, terminated, discount) -> |TD error| per transition."""


class Replay:
    """Feeds vector-env steps through the n-step assembler into storage and samples batches.

    ``td_errors`` is needed only with ``initial_priority='td_error'``. With ``buffer_life`` the
    storage is emptied once that many batches have been sampled, after their priorities came back.
    """

    def __init__(
        self, config: ReplayConfig, gamma: float, num_envs: int, obs_dim: int, action_dim: int,
        rng: np.random.Generator, td_errors: TdErrorFn | None = None,
    ) -> None:
        self.config = config
        self.gamma = gamma
        self.storage = ReplayStorage(config.capacity, obs_dim, action_dim, per_sample_discount=config.n_step > 1)
        self.sampler: UniformSampler | PrioritizedSampler = (
            PrioritizedSampler(config.capacity, rng, alpha=config.alpha, beta_start=config.beta_start,
                               beta_steps=config.beta_steps, epsilon=config.priority_epsilon)
            if config.prioritized else UniformSampler(rng)
        )
        self.assembler = NStepAssembler(config.n_step, gamma, num_envs, obs_dim, action_dim)
        if config.initial_priority is InitialPriority.TD_ERROR and td_errors is None:
            raise ValueError("initial_priority='td_error' needs a td_errors function")
        self.td_errors = td_errors if config.initial_priority is InitialPriority.TD_ERROR else None
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

    def add(
        self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, next_obs: np.ndarray,
        terminated: np.ndarray, done: np.ndarray,
    ) -> np.ndarray:
        """One vector-env step (``next_obs``: true successors); returns the storage rows written."""
        self._flush_if_due()
        out = self.assembler.push(obs, action, reward, next_obs, terminated, done)
        if not len(out):
            return np.zeros(0, dtype=np.int64)
        discount = out.discount if self.storage.discount is not None else None
        rows = self.storage.add(out.obs, out.action, out.reward, out.next_obs, out.terminated, discount)
        td = None
        if self.td_errors is not None:
            td = self.td_errors(out.obs, out.action, out.reward, out.next_obs, out.terminated,
                                out.discount)
        self.sampler.on_add(rows, td)
        return rows

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
        self._flush_if_due()

    def state_dict(self) -> dict[str, Any]:
        return {"storage": self.storage.state_dict(), "sampler": self.sampler.state_dict(),
                "nstep": self.assembler.state_dict(), "samples": self.samples}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.storage.load_state_dict(state["storage"])
        self.sampler.load_state_dict(state["sampler"])
        self.assembler.load_state_dict(state["nstep"])
        self.samples = int(state["samples"])
