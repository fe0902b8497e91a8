"""Samplers choose storage rows; the storage turns rows into a batch."""

from __future__ import annotations

from typing import Any

import numpy as np


class UniformSampler:
    """Rows drawn uniformly with replacement from the filled part of the storage."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def sample(self, size: int, batch_size: int) -> tuple[np.ndarray, None]:
        return self.rng.integers(0, size, size=batch_size), None

    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]
