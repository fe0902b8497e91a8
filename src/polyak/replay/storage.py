"""Preallocated NumPy ring buffer of transitions (Lin 1992; Mnih et al. 2015)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch


@dataclass
class Batch:
    """A minibatch of transitions as tensors on the learning device.

    ``terminated`` is 1.0 only for true terminal states (time-limit truncation stays 0 and
    bootstraps). ``discount`` is the per-sample bootstrap discount; ``weights`` are importance
    weights (None for uniform sampling); ``indices`` are storage rows, for priority updates.
    """

    obs: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor
    next_obs: torch.Tensor
    terminated: torch.Tensor
    discount: torch.Tensor | float
    weights: torch.Tensor | None = None
    indices: np.ndarray | None = None


class ReplayStorage:
    """Fixed-capacity ring of transitions; memory is reserved once and pages fill as rows are written.

    With ``per_sample_discount`` each row also stores its bootstrap discount (gamma^k of an n-step
    return) and batches carry it as a tensor; otherwise ``gather`` uses the one discount it is given.
    """

    def __init__(self, capacity: int, obs_dim: int, action_dim: int, *, per_sample_discount: bool = False) -> None:
        self.capacity = capacity
        self.obs = np.empty((capacity, obs_dim), dtype=np.float32)
        self.action = np.empty((capacity, action_dim), dtype=np.float32)
        self.reward = np.empty((capacity,), dtype=np.float32)
        self.next_obs = np.empty((capacity, obs_dim), dtype=np.float32)
        self.terminated = np.empty((capacity,), dtype=np.float32)
        self.discount = np.empty((capacity,), dtype=np.float32) if per_sample_discount else None
        self.FIELDS = ("obs", "action", "reward", "next_obs", "terminated") + (
            ("discount",) if per_sample_discount else ())
        self.position = 0
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def add(
        self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, next_obs: np.ndarray, terminated: np.ndarray,
        discount: np.ndarray | None = None,
    ) -> np.ndarray:
        """Append a batch of transitions (one per env), overwriting the oldest; returns their rows.

        Of a batch larger than the capacity only the newest ``capacity`` rows survive; the returned
        rows then repeat, and the last write to each row is the one kept.
        """
        count = len(reward)
        rows = (self.position + np.arange(count)) % self.capacity
        self.obs[rows] = obs
        self.action[rows] = action
        self.reward[rows] = reward
        self.next_obs[rows] = next_obs
        self.terminated[rows] = terminated
        if self.discount is not None:
            if discount is None:
                raise ValueError("this storage keeps a discount per row: pass discount=")
            self.discount[rows] = discount
        self.position = int((self.position + count) % self.capacity)
        self.size = min(self.size + count, self.capacity)
        return rows

    def clear(self) -> None:
        """Forget every row (seed 004's ``buffer_life``); memory stays reserved."""
        self.position = 0
        self.size = 0

    def gather(self, indices: np.ndarray, discount: float, device: torch.device) -> Batch:
        """Rows ``indices`` as tensors on ``device``; ``discount`` applies unless rows store their own."""
        def tensor(array: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(array[indices]).to(device, non_blocking=True)

        return Batch(
            obs=tensor(self.obs),
            action=tensor(self.action),
            reward=tensor(self.reward),
            next_obs=tensor(self.next_obs),
            terminated=tensor(self.terminated),
            discount=discount if self.discount is None else tensor(self.discount),
            indices=indices,
        )

    def state_dict(self) -> dict[str, Any]:
        """Stored rows (only the filled part) and the write position."""
        state: dict[str, Any] = {name: getattr(self, name)[: self.size] for name in self.FIELDS}
        state.update(position=self.position, size=self.size)
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        size = int(state["size"])
        if size > self.capacity:
            raise ValueError(f"replay holds {size} rows but capacity is {self.capacity}")
        for name in self.FIELDS:
            getattr(self, name)[:size] = state[name]
        self.size = size
        self.position = int(state["position"])
