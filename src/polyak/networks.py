"""Actor and critic networks: an MLP backbone with BatchNorm/LayerNorm options and a small head.

Architecture follows DDPG (Lillicrap et al. 2015, sec. 7): BatchNorm on the inputs and before
hidden activations, the action joined to the critic after its first hidden layer, and small
uniform output weights so initial actions and values are near zero. The actor's linear layers
can be NoisyLinear (Fortunato et al. 2018) for exploration through learnt weight noise.

TD7 (Fujimoto et al. 2023) adds an input layer normalised by AvgL1Norm (``NetworkConfig.avg_l1_norm``) whose output
is joined by SALE embeddings; CrossQ (Bhatt et al. 2024) puts Batch Renormalization on the first layer's input and
after every hidden activation (``NetworkConfig.batch_renorm``). Both are off by default and then cost nothing.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Iterator

import torch
from torch import nn

from polyak.config import Activation, BiasInit, NetworkConfig, WeightInit
from polyak.layers import BatchRenorm1d, avg_l1_norm
from polyak.losses import squashed_gaussian_log_prob


def make_activation(config: NetworkConfig) -> nn.Module:
    if config.activation is Activation.RELU:
        return nn.ReLU()
    if config.activation is Activation.LEAKY_RELU:
        return nn.LeakyReLU(config.leaky_relu_slope)
    if config.activation is Activation.ELU:
        return nn.ELU()
    return nn.Tanh()


def batch_renorm(features: int, config: NetworkConfig, members: int | None = None) -> BatchRenorm1d:
    """CrossQ's Batch Renormalization layer with the config's momentum (PyTorch convention) and warmup."""
    return BatchRenorm1d(features, momentum=config.batch_renorm_momentum, warmup_steps=config.batch_renorm_warmup,
                         members=members)


def _scaled_noise(x: torch.Tensor) -> torch.Tensor:
    """f(x) = sgn(x) sqrt(|x|), the factorised-noise transform of Fortunato et al. (2018), eq. 11."""
    return x.sign() * x.abs().sqrt()


class NoisyLinear(nn.Linear):
    """Factorised Gaussian NoisyNet layer: w = mu_w + sigma_w * f(e_out) f(e_in)^T, b = mu_b + sigma_b * f(e_out).

    ``weight`` and ``bias`` are the means (so the usual initialisers apply); ``weight_sigma`` and
    ``bias_sigma`` are learnt, initialised to ``sigma0 / sqrt(fan_in)`` (Fortunato et al. 2018, sec. 3.2).
    Noise is on in training mode (fresh Gaussian per forward) and when ``explore`` is set (acting
    with exploration, independent of train/eval mode so BatchNorm still uses running statistics);
    otherwise the layer uses its mean weights and is deterministic. With ``ou_theta`` the exploring
    forwards draw the noise inputs from an OU process with unit stationary variance (the Reacher PER notebook).
    """

    def __init__(
        self, in_features: int, out_features: int, sigma0: float, *, ou_theta: float | None = None,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(in_features, out_features)
        init = sigma0 / math.sqrt(in_features)
        self.weight_sigma = nn.Parameter(torch.full((out_features, in_features), init))
        self.bias_sigma = nn.Parameter(torch.full((out_features,), init))
        self.ou_theta = ou_theta
        self.generator = generator
        self.explore = False
        if ou_theta is not None:
            self.register_buffer("ou_in", torch.zeros(in_features))
            self.register_buffer("ou_out", torch.zeros(out_features))

    def _gaussian(self, size: int) -> torch.Tensor:
        return torch.randn(size, generator=self.generator, device=self.weight.device, dtype=self.weight.dtype)

    @torch.no_grad()
    def _ou_step(self, state: torch.Tensor) -> torch.Tensor:
        """x <- (1 - theta) x + sqrt(1 - (1 - theta)^2) e: mean reversion theta, stationary N(0, 1)."""
        decay = 1.0 - float(self.ou_theta)  # type: ignore[arg-type]
        state.mul_(decay).add_(self._gaussian(state.numel()), alpha=math.sqrt(1.0 - decay * decay))
        return state.clone()

    def noise_inputs(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(e_in, e_out) for this forward: OU-driven when exploring with ``ou_theta``, else fresh."""
        if self.explore and not self.training and self.ou_theta is not None:
            return self._ou_step(self.ou_in), self._ou_step(self.ou_out)
        return self._gaussian(self.in_features), self._gaussian(self.out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not (self.training or self.explore):
            return super().forward(x)
        e_in, e_out = (_scaled_noise(e) for e in self.noise_inputs())
        weight = self.weight + self.weight_sigma * torch.outer(e_out, e_in)
        bias = self.bias + self.bias_sigma * e_out
        return nn.functional.linear(x, weight, bias)


def hidden_precision(dtype: torch.dtype | None, x: torch.Tensor) -> contextlib.AbstractContextManager:
    """Autocast for the hidden layers when ``dtype`` is set (e.g. bfloat16); output layers stay float32."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(x.device.type, dtype=dtype)


def noisy_layers(module: nn.Module) -> list[NoisyLinear]:
    return [m for m in module.modules() if isinstance(m, NoisyLinear)]


@contextlib.contextmanager
def exploring(module: nn.Module, enabled: bool = True) -> Iterator[None]:
    """Within the block the module's NoisyLinear layers use noisy weights even in eval mode."""
    layers = noisy_layers(module)
    for layer in layers:
        layer.explore = enabled
    try:
        yield
    finally:
        for layer in layers:
            layer.explore = False


def share_noise_generator(module: nn.Module, generator: torch.Generator | None) -> None:
    """Point every NoisyLinear of ``module`` at one generator (after a deepcopy made private copies)."""
    for layer in noisy_layers(module):
        layer.generator = generator


def perturbable_parameters(module: nn.Module) -> list[torch.Tensor]:
    """Weights and biases of the linear layers (NoisyLinear: their means); never normalisation parameters,
    never an attached SALE state encoder's."""
    encoder = getattr(module, "state_encoder", None)
    skip = {id(m) for m in encoder.modules()} if isinstance(encoder, nn.Module) else set()
    return [p for m in module.modules() if isinstance(m, nn.Linear) and id(m) not in skip for p in (m.weight, m.bias)]


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


def _linear(in_features: int, out_features: int, config: NetworkConfig,
            noise_generator: torch.Generator | None) -> nn.Linear:
    if config.noisy:
        return NoisyLinear(in_features, out_features, config.noisy_sigma0, ou_theta=config.noisy_ou_theta,
                           generator=noise_generator)
    return nn.Linear(in_features, out_features)


class HiddenLayer(nn.Module):
    """Linear -> optional BatchNorm/LayerNorm -> activation -> optional Batch Renormalization (CrossQ)."""

    def __init__(self, in_features: int, out_features: int, config: NetworkConfig,
                 noise_generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.linear = _linear(in_features, out_features, config, noise_generator)
        if config.hidden_batchnorm:
            self.norm: nn.Module = nn.BatchNorm1d(out_features)
        elif config.layer_norm:
            self.norm = nn.LayerNorm(out_features)
        else:
            self.norm = nn.Identity()
        self.activation = make_activation(config)
        self.renorm = batch_renorm(out_features, config) if config.batch_renorm else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.activation(self.norm(self.linear(x)))
        return x if self.renorm is None else self.renorm(x.float())  # statistics in float32 (bfloat16 autocast)


class Actor(nn.Module):
    """Deterministic policy mu(s) in [-1, 1]^action_dim (tanh head).

    ``generator`` initialises the weights; ``noise_generator`` drives NoisyLinear noise (``config.noisy``).

    TD7: ``config.avg_l1_norm`` adds an input layer ``AvgL1Norm(Linear(s))`` of width ``hidden_sizes[0]`` (no
    activation) before the hidden layers. With a ``state_encoder`` (SALE's f, a frozen copy owned by this actor and
    saved with it) the embedding ``zs = f(s)`` joins the input layer's output (or ``s`` without it): the actor is
    ``mu(s, zs)`` and ``forward(obs)`` computes ``zs`` itself unless given. CrossQ: ``config.batch_renorm`` puts
    Batch Renormalization on the first linear layer's input and after every hidden activation.
    """

    def __init__(self, obs_dim: int, action_dim: int, config: NetworkConfig, generator: torch.Generator,
                 noise_generator: torch.Generator | None = None, state_encoder: nn.Module | None = None) -> None:
        super().__init__()
        self.input_norm = nn.BatchNorm1d(obs_dim) if config.input_batchnorm else nn.Identity()
        self.input_renorm = batch_renorm(obs_dim, config) if config.batch_renorm else None
        self.input_layer = _linear(obs_dim, config.hidden_sizes[0], config, noise_generator) \
            if config.avg_l1_norm else None
        if self.input_layer is not None:
            init_linear(self.input_layer, config, output=False, generator=generator)
        self.state_encoder = state_encoder
        embedding = 0 if state_encoder is None else int(state_encoder.layers[-1].out_features)
        first = (config.hidden_sizes[0] if config.avg_l1_norm else obs_dim) + embedding
        sizes = (first, *config.hidden_sizes)
        self.backbone = nn.Sequential(
            *(HiddenLayer(i, o, config, noise_generator) for i, o in itertools.pairwise(sizes))
        )
        self.head = _linear(sizes[-1], action_dim, config, noise_generator)
        for layer in self.backbone:
            init_linear(layer.linear, config, output=False, generator=generator)
        init_linear(self.head, config, output=True, generator=generator)
        self.hidden_dtype: torch.dtype | None = None  # set by the agent for reduced-precision hidden layers

    def forward(self, obs: torch.Tensor, zs: torch.Tensor | None = None) -> torch.Tensor:
        return torch.tanh(self.head(self.latent(obs, zs)))

    def latent(self, obs: torch.Tensor, zs: torch.Tensor | None = None) -> torch.Tensor:
        """The last hidden layer's output (float32), what the head reads."""
        with hidden_precision(self.hidden_dtype, obs):
            x = self.input_norm(obs)
            if self.input_renorm is not None:
                x = self.input_renorm(x)
            if self.input_layer is not None:
                x = avg_l1_norm(self.input_layer(x))
            if self.state_encoder is not None:
                if zs is None:
                    zs = self.state_encoder(obs)
                x = torch.cat((x, zs.to(x.dtype)), dim=-1)
            x = self.backbone(x)
        return x.float()


LOG_STD_MIN, LOG_STD_MAX = -20.0, 2.0  # SAC's clamp of the policy's log standard deviation (as SB3)


class SquashedGaussianActor(Actor):
    """SAC's stochastic policy (Haarnoja et al. 2018): ``a = tanh(u)``, ``u ~ N(mu(s), sigma(s)^2)`` per dimension,
    from the same backbone as :class:`Actor` (``head`` gives the mean, ``log_std_head`` the log standard deviation,
    clamped to ``[-20, 2]``). ``forward`` is the deterministic action ``tanh(mu(s))`` (evaluation, export);
    :meth:`sample` draws with the reparameterization trick and gives ``log pi(a|s)``."""

    def __init__(self, obs_dim: int, action_dim: int, config: NetworkConfig, generator: torch.Generator,
                 noise_generator: torch.Generator | None = None, state_encoder: nn.Module | None = None) -> None:
        super().__init__(obs_dim, action_dim, config, generator, noise_generator, state_encoder)
        self.log_std_head = nn.Linear(self.head.in_features, action_dim)
        init_linear(self.log_std_head, config, output=True, generator=generator)

    def distribution(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(mean, log standard deviation) of the Gaussian before the tanh."""
        x = self.latent(obs)
        return self.head(x), self.log_std_head(x).clamp(LOG_STD_MIN, LOG_STD_MAX)

    def sample(self, obs: torch.Tensor, standard_normal: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(action, log pi(action|s)) for ``u = mean + std * standard_normal`` (gradients reach the weights)."""
        mean, log_std = self.distribution(obs)
        gaussian = mean + log_std.exp() * standard_normal
        return torch.tanh(gaussian), squashed_gaussian_log_prob(mean, log_std, gaussian)


class Critic(nn.Module):
    """Action value Q(s, a); the action joins the input of hidden layer ``config.action_layer``.

    TD7 (``config.avg_l1_norm``, needs ``action_layer = 0``): an input layer ``AvgL1Norm(Linear([s, a]))`` of width
    ``hidden_sizes[0]``; ``embedding_dim`` features (SALE's ``[zsa, zs]``, passed to ``forward``) join its output,
    or the first hidden layer's input without it. CrossQ (``config.batch_renorm``, needs ``action_layer = 0``):
    Batch Renormalization on the first linear layer's input ``[s, a]`` and after every hidden activation.
    """

    def __init__(self, obs_dim: int, action_dim: int, config: NetworkConfig, generator: torch.Generator,
                 embedding_dim: int = 0) -> None:
        super().__init__()
        self.input_norm = nn.BatchNorm1d(obs_dim) if config.input_batchnorm else nn.Identity()
        self.action_layer = config.action_layer
        if (config.avg_l1_norm or config.batch_renorm) and self.action_layer != 0:
            raise ValueError("a critic with avg_l1_norm or batch_renorm takes the action at its input (action_layer=0)")
        first_in = obs_dim + (action_dim if self.action_layer == 0 else 0)
        self.input_renorm = batch_renorm(first_in, config) if config.batch_renorm else None
        self.input_layer = nn.Linear(first_in, config.hidden_sizes[0]) if config.avg_l1_norm else None
        if self.input_layer is not None:
            init_linear(self.input_layer, config, output=False, generator=generator)
        self.embedding_dim = embedding_dim
        layers = []
        in_features = (config.hidden_sizes[0] if config.avg_l1_norm else obs_dim) + embedding_dim
        for index, size in enumerate(config.hidden_sizes):
            extra = action_dim if index == self.action_layer and not config.avg_l1_norm else 0
            layers.append(HiddenLayer(in_features + extra, size, config))
            in_features = size
        self.backbone = nn.ModuleList(layers)
        self.head = nn.Linear(in_features + (action_dim if self.action_layer == len(layers) else 0), 1)
        for layer in self.backbone:
            init_linear(layer.linear, config, output=False, generator=generator)
        init_linear(self.head, config, output=True, generator=generator)

    def forward(self, obs: torch.Tensor, action: torch.Tensor, embedding: torch.Tensor | None = None) -> torch.Tensor:
        x = self.input_norm(obs)
        joined = self.input_layer is not None or self.input_renorm is not None
        if joined and self.action_layer == 0:
            x = torch.cat((x, action), dim=-1)
        if self.input_renorm is not None:
            x = self.input_renorm(x)
        if self.input_layer is not None:
            x = avg_l1_norm(self.input_layer(x))
        if embedding is not None:
            x = torch.cat((x, embedding), dim=-1)
        for index, layer in enumerate(self.backbone):
            if index == self.action_layer and not joined:
                x = torch.cat((x, action), dim=-1)
            x = layer(x)
        if self.action_layer == len(self.backbone):
            x = torch.cat((x, action), dim=-1)
        return self.head(x).squeeze(-1)
