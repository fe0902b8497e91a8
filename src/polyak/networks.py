"""Actor and critic networks: an MLP backbone with BatchNorm/LayerNorm options and a small head.

Architecture follows DDPG (Lillicrap et al. 2015, sec. 7): BatchNorm on the inputs and before
hidden activations, the action joined to the critic after its first hidden layer, and small
uniform output weights so initial actions and values are near zero.
"""

from __future__ import annotations

import itertools
import math

import torch
from torch import nn

from polyak.config import Activation, BiasInit, NetworkConfig, WeightInit


def _activation(kind: Activation) -> nn.Module:
    if kind is Activation.RELU:
        return nn.ReLU()
    if kind is Activation.LEAKY_RELU:
        return nn.LeakyReLU()
    return nn.Tanh()


def init_linear(layer: nn.Linear, config: NetworkConfig, *, output: bool, generator: torch.Generator) -> None:
    """Initialise one layer in place with the configured scheme."""
    fan_in = layer.in_features
    with torch.no_grad():
        if config.weight_init is WeightInit.FAN_IN:
            limit = config.output_init if output else math.sqrt(2.0 / fan_in)
            layer.weight.uniform_(-limit, limit, generator=generator)
        elif config.weight_init is WeightInit.XAVIER:
            bound = math.sqrt(6.0 / (layer.in_features + layer.out_features))
            layer.weight.uniform_(-bound, bound, generator=generator)
        else:
            # nn.Linear's default, kaiming_uniform(a=sqrt(5)), reduces to this bound.
            bound = 1.0 / math.sqrt(fan_in)
            layer.weight.uniform_(-bound, bound, generator=generator)
        if config.bias_init is BiasInit.ZEROS:
            layer.bias.zero_()
        else:
            bound = config.output_init if output and config.weight_init is WeightInit.FAN_IN else 1 / math.sqrt(fan_in)
            layer.bias.uniform_(-bound, bound, generator=generator)


class HiddenLayer(nn.Module):
    """Linear -> optional BatchNorm/LayerNorm -> activation."""

    def __init__(self, in_features: int, out_features: int, config: NetworkConfig) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        if config.hidden_batchnorm:
            self.norm: nn.Module = nn.BatchNorm1d(out_features)
        elif config.layer_norm:
            self.norm = nn.LayerNorm(out_features)
        else:
            self.norm = nn.Identity()
        self.activation = _activation(config.activation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.activation(self.norm(self.linear(x)))


class Actor(nn.Module):
    """Deterministic policy mu(s) in [-1, 1]^action_dim (tanh head)."""

    def __init__(self, obs_dim: int, action_dim: int, config: NetworkConfig, generator: torch.Generator) -> None:
        super().__init__()
        self.input_norm = nn.BatchNorm1d(obs_dim) if config.input_batchnorm else nn.Identity()
        sizes = (obs_dim, *config.hidden_sizes)
        self.backbone = nn.Sequential(*(HiddenLayer(i, o, config) for i, o in itertools.pairwise(sizes)))
        self.head = nn.Linear(sizes[-1], action_dim)
        for layer in self.backbone:
            init_linear(layer.linear, config, output=False, generator=generator)
        init_linear(self.head, config, output=True, generator=generator)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.head(self.backbone(self.input_norm(obs))))


class Critic(nn.Module):
    """Action value Q(s, a); the action joins the input of hidden layer ``config.action_layer``."""

    def __init__(self, obs_dim: int, action_dim: int, config: NetworkConfig, generator: torch.Generator) -> None:
        super().__init__()
        self.input_norm = nn.BatchNorm1d(obs_dim) if config.input_batchnorm else nn.Identity()
        self.action_layer = config.action_layer
        layers = []
        in_features = obs_dim
        for index, size in enumerate(config.hidden_sizes):
            extra = action_dim if index == self.action_layer else 0
            layers.append(HiddenLayer(in_features + extra, size, config))
            in_features = size
        self.backbone = nn.ModuleList(layers)
        self.head = nn.Linear(in_features + (action_dim if self.action_layer == len(layers) else 0), 1)
        for layer in self.backbone:
            init_linear(layer.linear, config, output=False, generator=generator)
        init_linear(self.head, config, output=True, generator=generator)

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        x = self.input_norm(obs)
        for index, layer in enumerate(self.backbone):
            if index == self.action_layer:
                x = torch.cat((x, action), dim=-1)
            x = layer(x)
        if self.action_layer == len(self.backbone):
            x = torch.cat((x, action), dim=-1)
        return self.head(x).squeeze(-1)


class CriticEnsemble(nn.Module):
    """``n`` independent critics evaluated together; returns Q of shape (n, batch)."""

    def __init__(
        self, n: int, obs_dim: int, action_dim: int, config: NetworkConfig, generator: torch.Generator
    ) -> None:
        super().__init__()
        self.members = nn.ModuleList(Critic(obs_dim, action_dim, config, generator) for _ in range(n))

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return torch.stack([critic(obs, action) for critic in self.members])
