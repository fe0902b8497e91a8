"""The policy as one ONNX graph: raw observations in, actions in the env's units out (the ``onnx`` extra)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from polyak.errors import ConfigError
from polyak.policy import Policy

OPSET = 17


def require_onnx() -> None:
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise ConfigError("--format onnx needs the onnx package: pip install 'polyak[onnx]'") from None


class _Exported(nn.Module):
    """Normalization (frozen statistics), the actor, and the rescaling to [low, high], in one module."""

    def __init__(self, policy: Policy) -> None:
        super().__init__()
        self.actor = policy.actor
        obs_dim = int(policy.observation_space.shape[0])
        mean, std = (policy.normalizer.affine() if policy.normalizer is not None
                     else (np.zeros(obs_dim, np.float32), np.ones(obs_dim, np.float32)))
        self.clip = float(policy.normalizer.clip) if policy.normalizer is not None else None
        low = policy.action_space.low.astype(np.float32)
        high = policy.action_space.high.astype(np.float32)
        self.register_buffer("mean", torch.from_numpy(mean))
        self.register_buffer("std", torch.from_numpy(std))
        self.register_buffer("low", torch.from_numpy(low))
        self.register_buffer("half_range", torch.from_numpy((high - low) * 0.5))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = (obs - self.mean) / self.std
        if self.clip is not None:
            x = x.clamp(-self.clip, self.clip)
        action = self.actor(x).clamp(-1.0, 1.0)
        return self.low + (action + 1.0) * self.half_range


def export_onnx(policy: Policy, path: Path) -> Path:
    """Write ``policy.onnx`` with input ``obs`` (batch, obs_dim) float32 and output ``action`` (batch, action_dim)."""
    require_onnx()
    module = _Exported(policy).to("cpu").eval()
    example = torch.zeros(1, int(policy.observation_space.shape[0]))
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (example,), str(path), input_names=["obs"], output_names=["action"],
                          dynamic_axes={"obs": {0: "batch"}, "action": {0: "batch"}}, opset_version=OPSET,
                          dynamo=False)
    return path
