"""Optimizers of the learners: Adam with weight decay on linear weights only, one isolated step, and the
re-indexing of optimizer states saved with another parameter grouping."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from polyak.config import NetworkConfig
from polyak.ensemble import EnsembleLinear
from polyak.networks import NoisyLinear

LINEAR = (nn.Linear, NoisyLinear, EnsembleLinear)


def decayed_parameters(module: nn.Module) -> tuple[list[nn.Parameter], list[nn.Parameter]]:
    """(decayed, not decayed): linear weight matrices (NoisyNet's mu, the ensemble's stacked weights) decay;
    biases, normalisation scales and offsets and NoisyNet's sigma do not (AdamW's usual exclusions)."""
    decayed = {id(m.weight) for m in module.modules() if isinstance(m, LINEAR)}
    params = list(module.parameters())
    return [p for p in params if id(p) in decayed], [p for p in params if id(p) not in decayed]


def make_optimizer(module: nn.Module, config: NetworkConfig, device: torch.device) -> torch.optim.Adam:
    """Adam as one fused kernel per step on CPU and CUDA (else the multi-tensor path).

    One parameter group unless weight decay applies to the linear weights only: then (decayed, not decayed).
    """
    fused = device.type in ("cpu", "cuda")
    groups: Any = module.parameters()
    if config.weight_decay > 0 and not config.decay_all_parameters:
        decayed, kept = decayed_parameters(module)
        groups = [{"params": decayed}, {"params": kept, "weight_decay": 0.0}]
    return torch.optim.Adam(groups, lr=config.lr, betas=(config.adam_beta1, 0.999), weight_decay=config.weight_decay,
                            fused=fused, foreach=None if fused else True)


def descend(optimizer: torch.optim.Optimizer, loss: torch.Tensor, params: list[torch.Tensor],
            grad_clip_norm: float | None) -> None:
    """One optimizer step on ``params`` alone: gradients never reach the other network's weights."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward(inputs=params)
    if grad_clip_norm is not None:
        nn.utils.clip_grad_norm_(params, grad_clip_norm, foreach=True)
    optimizer.step()


def regrouped(saved: dict[str, Any], optimizer: torch.optim.Optimizer, module: nn.Module) -> dict[str, Any]:
    """``saved`` re-indexed for ``optimizer``'s parameter groups when the two were grouped differently.

    Checkpoints written before weight decay skipped biases and normalisation hold one group (indices in
    ``module.parameters()`` order); a two-group optimizer lists the decayed weights first, and back.
    """
    if len(saved["param_groups"]) == len(optimizer.param_groups):
        return saved
    single = list(module.parameters())
    split = [p for group in decayed_parameters(module) for p in group]
    old_order = single if len(saved["param_groups"]) == 1 else split
    index = {id(p): i for i, p in enumerate(p for g in optimizer.param_groups for p in g["params"])}
    state = {index[id(old_order[int(i)])]: value for i, value in saved["state"].items()}
    return {"state": state, "param_groups": optimizer.state_dict()["param_groups"]}
