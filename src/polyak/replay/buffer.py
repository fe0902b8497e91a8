"""The replay the trainer talks to: n-step assembly -> storage -> sampler, plus an optional buffer life.

The sampler is the one ``ReplayConfig.sampler`` names (:func:`polyak.replay.make_sampler`, shared with the
Ape-X shards). Prioritized replay never calls the learner: new transitions come with their TD errors when the
sampler wants them (the caller computes them, see :attr:`Replay.wants_td_errors`), and a learning step's TD
errors come back through :meth:`Replay.update_priorities`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from polyak.config import ReplayConfig
from polyak.replay.factory import make_sampler
from polyak.replay.nstep import NStepAssembler, Transitions
from polyak.replay.samplers import ReplaySampler
from polyak.replay.storage import ReplayStorage
from polyak.types import Batch


class Replay:
    """Feeds vector-env steps through the n-step assembler into storage and samples batches.

    One env step: ``transitions = assemble(...)``, then ``insert(transitions, td_errors)``; ``add``
    does both when no TD errors are wanted. With ``buffer_life`` (the Reacher n-step/prioritized
    notebook's ``buf_life``) the storage is emptied once that many batches have been sampled, after
    their priorities came back.

    ``hard_target_every`` (TD7's ``TD7Config.hard_target_every``; None for algorithms without hard target copies)
    is the learner's clock: every that many priority updates (one per learning step) the sampler hears
    :meth:`~polyak.replay.samplers.ReplaySampler.on_hard_target_update`, where LAP resets its ``max_priority`` to the
    stored maximum, as in TD7; the other samplers ignore it.
    """

    def __init__(
        self, config: ReplayConfig, gamma: float, num_envs: int, obs_dim: int, action_dim: int,
        rng: np.random.Generator, hard_target_every: int | None = None,
    ) -> None:
        self.config = config
        self.gamma = gamma
        self.storage = ReplayStorage(config.capacity, obs_dim, action_dim, per_sample_discount=config.n_step > 1)
        self.sampler: ReplaySampler = make_sampler(config, config.capacity, rng)
        self.hard_target_every = hard_target_every
        self.priority_updates = 0  # learning steps that handed priorities back (the hard target update clock)
        self.assembler = NStepAssembler(config.n_step, gamma, num_envs, obs_dim, action_dim)
        self.wants_td_errors = self.sampler.wants_td_errors
        """Whether :meth:`insert` needs the TD errors of new transitions (the sampler's choice)."""
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
            raise ValueError(f"the {self.config.sampler.value} sampler (initial_priority="
                             f"{self.config.initial_priority.value!r}) needs the TD errors of new transitions")
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
        """Hand a learning step's per-sample TD errors back (one host copy, prioritized samplers only); at
        the learner's hard target updates, tell the sampler."""
        if self.sampler.prioritized:
            self.sampler.update(indices, td_errors.detach().cpu().numpy())
        if self.hard_target_every is not None:
            self.priority_updates += 1
            if self.priority_updates % self.hard_target_every == 0:
                self.sampler.on_hard_target_update()
        self._flush_if_due()

    def state_dict(self) -> dict[str, Any]:
        state = {"storage": self.storage.state_dict(), "sampler": self.sampler.state_dict(),
                 "nstep": self.assembler.state_dict(), "samples": self.samples}
        if self.hard_target_every is not None:
            state["priority_updates"] = self.priority_updates
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.storage.load_state_dict(state["storage"])
        self.sampler.load_state_dict(state["sampler"])
        self.assembler.load_state_dict(state["nstep"])
        self.samples = int(state["samples"])
        if self.hard_target_every is not None:  # checkpoints before TD7's algorithm module kept it for LAP only
            self.priority_updates = int(state.get("priority_updates", 0))
