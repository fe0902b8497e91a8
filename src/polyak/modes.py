"""Whether a network's train/eval mode matters, and frozen copies of an actor (targets, checkpoints, perturbed
actors for exploration)."""

from __future__ import annotations

import copy

import torch
from torch import nn

from polyak.ensemble import EnsembleBatchNorm
from polyak.layers import BatchRenorm1d
from polyak.networks import Actor, NoisyLinear, share_noise_generator


def mode_sensitive(module: nn.Module) -> bool:
    """Whether train() and eval() change what ``module`` computes (BatchNorm statistics, NoisyNet noise)."""
    return any(isinstance(m, nn.modules.batchnorm._BatchNorm | NoisyLinear | EnsembleBatchNorm | BatchRenorm1d)
               for m in module.modules())


def frozen_copy(actor: Actor, noisy_generator: torch.Generator | None) -> Actor:
    """An eval-mode copy of ``actor`` without gradients whose NoisyNet layers draw from ``noisy_generator``."""
    copied = copy.deepcopy(actor).eval().requires_grad_(False)
    share_noise_generator(copied, noisy_generator)
    return copied
