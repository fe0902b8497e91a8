"""The learning device and numeric precision, resolved once per learner."""

from __future__ import annotations

import torch

from polyak.config import AgentConfig, Device, Precision
from polyak.errors import ConfigError


def resolve_device(device: Device) -> torch.device:
    """``auto`` picks CUDA when available; asking for CUDA without it is a config error."""
    if device is Device.AUTO:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device is Device.CUDA and not torch.cuda.is_available():
        raise ConfigError("AgentConfig.device is 'cuda' but no CUDA device is available")
    return torch.device(device.value)


def native_bfloat16_matmul() -> bool | None:
    """Whether this CPU multiplies bfloat16 natively (AVX512-BF16 or AMX, as oneDNN reports it); None if unknown."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # a torch build without the query
        return None


def slow_precision(agent: AgentConfig, device: torch.device) -> str | None:
    """Why ``agent.precision`` would slow learning down on ``device``, or None.

    bfloat16 is fast only where the CPU multiplies it natively (~1.3x float32's update rate); elsewhere oneDNN
    emulates it: 2 GFLOP/s against 34 in float32 on an AVX2 EPYC (``benchmarks/results/profile_update_avx2.json``).
    """
    if agent.precision is not Precision.BFLOAT16 or device.type != "cpu" or native_bfloat16_matmul() is not False:
        return None
    return ("AgentConfig.precision = 'bfloat16' on a CPU without native bfloat16 matmul (no AVX512-BF16 or AMX): "
            "updates will be many times slower than in float32; use precision = 'float32' here")
