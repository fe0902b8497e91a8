"""An env's observation and action spaces as plain JSON (low, high, shape, dtype), so a trained agent knows
its action bounds and input size without constructing the env or importing its package."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv, VectorWrapper

from polyak.errors import CheckpointError


@dataclass(frozen=True)
class EnvSpaces:
    """A single env's observation and action ``Box`` spaces, in the env's own units."""

    observation: gym.spaces.Box
    action: gym.spaces.Box

    def to_json(self) -> dict[str, Any]:
        return {"observation_space": box_to_json(self.observation), "action_space": box_to_json(self.action)}

    @classmethod
    def from_json(cls, data: Any, where: str) -> EnvSpaces:
        if not isinstance(data, dict):
            raise CheckpointError(f"{where}: spaces must be a JSON object")
        return cls(box_from_json(data.get("observation_space"), where), box_from_json(data.get("action_space"), where))


def _number(value: float) -> float | str:
    return float(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")


def box_to_json(box: gym.spaces.Box) -> dict[str, Any]:
    return {"type": "Box", "shape": list(box.shape), "dtype": str(box.dtype),
            "low": [_number(v) for v in np.asarray(box.low, dtype=np.float64).reshape(-1)],
            "high": [_number(v) for v in np.asarray(box.high, dtype=np.float64).reshape(-1)]}


def box_from_json(data: Any, where: str) -> gym.spaces.Box:
    try:
        if data["type"] != "Box":
            raise ValueError
        shape = tuple(int(n) for n in data["shape"])
        dtype = np.dtype(data["dtype"])
        if dtype.kind != "f":
            raise ValueError
        low = np.array([float(v) for v in data["low"]], dtype=np.float64).reshape(shape)
        high = np.array([float(v) for v in data["high"]], dtype=np.float64).reshape(shape)
    except (KeyError, TypeError, ValueError):
        raise CheckpointError(f"{where}: a space is damaged (expected a float Box: low, high, shape, dtype)") from None
    return gym.spaces.Box(low.astype(dtype), high.astype(dtype), shape=shape, dtype=dtype)


def env_spaces(env: VectorEnv) -> EnvSpaces:
    """The spaces of one copy of ``env`` before polyak's action rescaling (the env's own units)."""
    inner = env
    while isinstance(inner, VectorWrapper):
        inner = inner.env
    return EnvSpaces(inner.single_observation_space, inner.single_action_space)  # type: ignore[arg-type]
