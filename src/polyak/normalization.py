"""Observation normalization: a running mean and variance of the observations the collector saw.

Updated from collected data only (never from evaluation episodes) and frozen everywhere else: the
explorer acts on normalized observations, replay keeps the raw ones and a sampled batch is normalized
with the current statistics, evaluation, ``polyak test``, ``record``, ``export`` and
:func:`polyak.load` use the statistics as saved. The state is plain float64 arrays, so it goes into
checkpoints (exact resume) and into an exported agent's JSON.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from polyak.errors import CheckpointError

CHECKPOINT_KEY = "obs_normalizer"  # the statistics in a checkpoint's agent dict and an export's info.json
EPSILON = 1e-8
DEFAULT_CLIP = 10.0


class ObservationNormalizer:
    """``clip((obs - mean) / sqrt(var + 1e-8), -clip, clip)`` with a parallel-Welford running mean and variance."""

    def __init__(self, obs_dim: int, clip: float = DEFAULT_CLIP) -> None:
        self.obs_dim, self.clip = int(obs_dim), float(clip)
        self.count = 0.0
        self.mean = np.zeros(self.obs_dim, dtype=np.float64)
        self.var = np.ones(self.obs_dim, dtype=np.float64)

    def update(self, obs: np.ndarray) -> None:
        """Fold a batch of observations (``(n, obs_dim)``) into the statistics (Chan et al.'s parallel update)."""
        batch = np.asarray(obs, dtype=np.float64).reshape(-1, self.obs_dim)
        n = float(len(batch))
        if n == 0:
            return
        batch_mean, batch_var = batch.mean(axis=0), batch.var(axis=0)
        if self.count == 0:
            self.mean, self.var, self.count = batch_mean, batch_var, n
            return
        total = self.count + n
        delta = batch_mean - self.mean
        m2 = self.var * self.count + batch_var * n + delta**2 * self.count * n / total
        self.mean = self.mean + delta * n / total
        self.var, self.count = m2 / total, total

    def _scale(self) -> tuple[np.ndarray, np.ndarray]:
        if self.count == 0:  # nothing seen yet: the identity
            return np.zeros(self.obs_dim), np.ones(self.obs_dim)
        return self.mean, np.sqrt(self.var + EPSILON)

    def normalize(self, obs: np.ndarray) -> np.ndarray:
        """Normalized float32 observations (any leading shape)."""
        mean, std = self._scale()
        out = np.clip((np.asarray(obs, dtype=np.float64) - mean) / std, -self.clip, self.clip)
        return out.astype(np.float32)

    def normalize_tensor(self, obs: torch.Tensor) -> torch.Tensor:
        """The same on a tensor, on its device and dtype (a new tensor)."""
        mean, std = self._scale()
        mean_t = torch.as_tensor(mean, dtype=obs.dtype, device=obs.device)
        std_t = torch.as_tensor(std, dtype=obs.dtype, device=obs.device)
        return ((obs - mean_t) / std_t).clamp(-self.clip, self.clip)

    def affine(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mean, std)`` as float32 arrays: what an exported graph subtracts and divides by."""
        mean, std = self._scale()
        return mean.astype(np.float32), std.astype(np.float32)

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict[str, Any]:
        return {"count": self.count, "mean": self.mean.copy(), "var": self.var.copy(), "clip": self.clip}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        try:
            mean = np.asarray(state["mean"], dtype=np.float64).reshape(-1)
            var = np.asarray(state["var"], dtype=np.float64).reshape(-1)
            count, clip = float(state["count"]), float(state.get("clip", DEFAULT_CLIP))
        except (KeyError, TypeError, ValueError):
            raise CheckpointError("observation normalization statistics are damaged") from None
        if mean.shape != (self.obs_dim,) or var.shape != (self.obs_dim,):
            raise CheckpointError(f"observation normalization statistics have {mean.shape[0]} entries, the policy "
                                  f"expects {self.obs_dim}")
        if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(var)) and np.all(var >= 0) and count >= 0
                and np.isfinite(clip) and clip > 0):
            raise CheckpointError("observation normalization statistics are not finite")
        self.mean, self.var, self.count, self.clip = mean, var, count, clip

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "mean": self.mean.tolist(), "var": self.var.tolist(), "clip": self.clip}

    @classmethod
    def from_state(cls, state: dict[str, Any], obs_dim: int) -> ObservationNormalizer:
        normalizer = cls(obs_dim)
        normalizer.load_state_dict(state)
        return normalizer
