"""SALE, TD7's state and state-action encoders (Fujimoto et al. 2023, "For SALE: State-Action Representation
Learning for Deep Reinforcement Learning").

``zs = f(s) = AvgL1Norm(W3 elu(W2 elu(W1 s)))`` (normalized) and ``zsa = g(zs, a) = W3' elu(W2' elu(W1' [zs, a]))``
(not normalized). The encoders learn only from :func:`sale_loss`, ``MSE(g(f(s), a), f(s'))`` with the target
computed by the *live* encoder under ``no_grad``; the Q and policy losses never train them.

TD7 keeps four copies (:class:`SALEEncoders`)::

    encoder               trained by sale_loss (its own Adam)
    fixed_encoder         zs, zsa of (s, a) for the critic loss and the actor loss; exploration actions
    fixed_encoder_target  zs', zsa' of the value target, and the zs' fed to the target actor
    checkpoint_encoder    evaluation with the checkpoint actor (a copy of fixed_encoder at checkpoint time)

At each hard target update: ``fixed_encoder_target <- fixed_encoder``, then ``fixed_encoder <- encoder``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional

from polyak.layers import avg_l1_norm

Activation = Callable[[torch.Tensor], torch.Tensor]


def _init_default(layer: nn.Linear, generator: torch.Generator | None) -> None:
    """nn.Linear's default distribution (uniform +-1/sqrt(fan_in) for weight and bias), from ``generator``."""
    if generator is None:
        return
    bound = 1.0 / math.sqrt(layer.in_features)
    with torch.no_grad():
        layer.weight.uniform_(-bound, bound, generator=generator)
        layer.bias.uniform_(-bound, bound, generator=generator)


def _mlp(in_dim: int, hidden_dim: int, out_dim: int, generator: torch.Generator | None) -> nn.ModuleList:
    layers = [nn.Linear(in_dim, hidden_dim), nn.Linear(hidden_dim, hidden_dim), nn.Linear(hidden_dim, out_dim)]
    for layer in layers:
        _init_default(layer, generator)
    return nn.ModuleList(layers)


class StateEncoder(nn.Module):
    """TD7's f: ``zs = AvgL1Norm(W3 act(W2 act(W1 s)))``."""

    def __init__(self, obs_dim: int, zs_dim: int = 256, hidden_dim: int = 256, activation: Activation = functional.elu,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.layers = _mlp(obs_dim, hidden_dim, zs_dim, generator)
        self.activation = activation

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        first, second, last = self.layers
        return avg_l1_norm(last(self.activation(second(self.activation(first(obs))))))


class StateActionEncoder(nn.Module):
    """TD7's g: ``zsa = W3' act(W2' act(W1' [zs, a]))``, a plain linear output (no AvgL1Norm)."""

    def __init__(self, zs_dim: int, action_dim: int, zsa_dim: int = 256, hidden_dim: int = 256,
                 activation: Activation = functional.elu, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.layers = _mlp(zs_dim + action_dim, hidden_dim, zsa_dim, generator)
        self.activation = activation

    def forward(self, zs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        first, second, last = self.layers
        return last(self.activation(second(self.activation(first(torch.cat([zs, action], dim=-1))))))


class SALEEncoder(nn.Module):
    """f and g together; ``zsa_dim`` defaults to ``zs_dim`` (TD7: both 256, hidden 256, ELU)."""

    def __init__(self, obs_dim: int, action_dim: int, zs_dim: int = 256, zsa_dim: int | None = None,
                 hidden_dim: int = 256, activation: Activation = functional.elu,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.obs_dim, self.action_dim = obs_dim, action_dim
        self.zs_dim, self.zsa_dim = zs_dim, zs_dim if zsa_dim is None else zsa_dim
        self.state_encoder = StateEncoder(obs_dim, zs_dim, hidden_dim, activation, generator)
        self.state_action_encoder = StateActionEncoder(zs_dim, action_dim, self.zsa_dim, hidden_dim, activation,
                                                       generator)

    def zs(self, obs: torch.Tensor) -> torch.Tensor:
        return self.state_encoder(obs)

    def zsa(self, zs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.state_action_encoder(zs, action)

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(zs, zsa)`` of ``(obs, action)``."""
        zs = self.zs(obs)
        return zs, self.zsa(zs, action)


def sale_loss(encoder: SALEEncoder, obs: torch.Tensor, action: torch.Tensor, next_obs: torch.Tensor) -> torch.Tensor:
    """``MSE(g(f(s), a), f(s'))``, mean over batch and features; the target ``f(s')`` comes from the same (live)
    encoder under ``no_grad``, not from a target encoder. Both f and g get gradients."""
    with torch.no_grad():
        next_zs = encoder.zs(next_obs)
    return functional.mse_loss(encoder.zsa(encoder.zs(obs), action), next_zs)


class SALEEncoders(nn.Module):
    """TD7's encoder copies (see the module docstring for which is used where).

    All copies start equal to ``encoder`` (deep copies). The copies other than ``encoder`` have
    ``requires_grad=False``: they get no optimizer step, and gradient still flows through them to their inputs
    (the actor loss differentiates ``fixed_encoder.zsa(zs, pi(s))`` with respect to the action).
    ``state_dict()`` holds all four copies.
    """

    def __init__(self, encoder: SALEEncoder) -> None:
        super().__init__()
        self.encoder = encoder
        self.fixed_encoder = self._frozen_copy(encoder)
        self.fixed_encoder_target = self._frozen_copy(encoder)
        self.checkpoint_encoder = self._frozen_copy(encoder)

    @staticmethod
    def _frozen_copy(encoder: SALEEncoder) -> SALEEncoder:
        clone = copy.deepcopy(encoder)
        clone.requires_grad_(False)
        return clone

    def loss(self, obs: torch.Tensor, action: torch.Tensor, next_obs: torch.Tensor) -> torch.Tensor:
        """:func:`sale_loss` of the live encoder."""
        return sale_loss(self.encoder, obs, action, next_obs)

    @torch.no_grad()
    def update_fixed(self) -> None:
        """At each hard target update (TD7: every 250 training steps), in this order:
        ``fixed_encoder_target <- fixed_encoder``, then ``fixed_encoder <- encoder``."""
        self.fixed_encoder_target.load_state_dict(self.fixed_encoder.state_dict())
        self.fixed_encoder.load_state_dict(self.encoder.state_dict())

    @torch.no_grad()
    def update_checkpoint(self) -> None:
        """``checkpoint_encoder <- fixed_encoder`` (with ``checkpoint_actor <- actor``, TD7's checkpoint update)."""
        self.checkpoint_encoder.load_state_dict(self.fixed_encoder.state_dict())
