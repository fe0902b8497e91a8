"""``n`` critics evaluated as one batched network (TD3's twin critics, Fujimoto et al. 2018).

Each member keeps its own weights, normalisation parameters and BatchNorm statistics, stacked
on a leading member axis, so one batched matmul per layer replaces ``n`` separate ones and the
numbers equal those of ``n`` independent :class:`~polyak.networks.Critic` modules (tested).
Activations have shape ``(members, batch, features)``; an input shared by every member stays
``(batch, features)`` and its first layer is one wide matmul. Every forward takes ``members``,
a slice of the member axis, so the actor's loss can read the first critic alone.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional

from polyak.config import NetworkConfig
from polyak.layers import BatchRenorm1d, avg_l1_norm
from polyak.networks import Critic, HiddenLayer, batch_renorm, hidden_precision, make_activation

ALL = slice(None)


def _take(tensor: torch.Tensor, members: slice) -> torch.Tensor:
    """The ``members`` rows of a stacked tensor; all of them without a slice op (its backward would copy)."""
    return tensor if members == ALL else tensor[members]


def _stack(tensors: list[torch.Tensor]) -> nn.Parameter:
    return nn.Parameter(torch.stack([t.detach() for t in tensors]).contiguous())


class EnsembleLinear(nn.Module):
    """Per-member affine maps: weight (n, out, in), bias (n, out)."""

    def __init__(self, layers: list[nn.Linear]) -> None:
        super().__init__()
        self.weight = _stack([layer.weight for layer in layers])
        self.bias = _stack([layer.bias for layer in layers])

    def forward(self, x: torch.Tensor, members: slice = ALL) -> torch.Tensor:
        weight, bias = _take(self.weight, members), _take(self.bias, members)
        if x.dim() == 2:  # the same input for every member: one (batch, in) x (in, n*out) matmul
            out = functional.linear(x, weight.reshape(-1, weight.shape[-1]), bias.reshape(-1))
            return out.view(x.shape[0], weight.shape[0], -1).transpose(0, 1)
        return torch.baddbmm(bias.unsqueeze(1), x, weight.transpose(1, 2))


class EnsembleBatchNorm(nn.Module):
    """BatchNorm1d per member and feature: member m's statistics come from member m's batch only."""

    def __init__(self, norms: list[nn.BatchNorm1d]) -> None:
        super().__init__()
        first = norms[0]
        self.eps, self.momentum = first.eps, first.momentum
        self.weight = _stack([n.weight for n in norms])
        self.bias = _stack([n.bias for n in norms])
        self.register_buffer("running_mean", torch.stack([n.running_mean for n in norms]).contiguous())
        self.register_buffer("running_var", torch.stack([n.running_var for n in norms]).contiguous())
        self.register_buffer("num_batches_tracked", first.num_batches_tracked.clone())

    def forward(self, x: torch.Tensor, members: slice = ALL) -> torch.Tensor:
        weight = _take(self.weight, members)
        count, features = weight.shape
        if x.dim() == 2:
            x = x.unsqueeze(0).expand(count, -1, -1)
        batch = x.shape[1]
        if self.training:
            self.num_batches_tracked.add_(1)
        # (n, B, F) -> (B, n*F): BatchNorm over n*F channels; running-stat slices are views, updated in place.
        flat = x.transpose(0, 1).reshape(batch, count * features)
        out = functional.batch_norm(
            flat, _take(self.running_mean, members).view(-1), _take(self.running_var, members).view(-1),
            weight.reshape(-1), _take(self.bias, members).reshape(-1), self.training, self.momentum, self.eps,
        )
        return out.view(batch, count, features).transpose(0, 1)


class EnsembleLayerNorm(nn.Module):
    """LayerNorm over features with a per-member affine."""

    def __init__(self, norms: list[nn.LayerNorm]) -> None:
        super().__init__()
        self.eps = norms[0].eps
        self.weight = _stack([n.weight for n in norms])
        self.bias = _stack([n.bias for n in norms])

    def forward(self, x: torch.Tensor, members: slice = ALL) -> torch.Tensor:
        x = functional.layer_norm(x, (x.shape[-1],), eps=self.eps)
        return x * _take(self.weight, members).unsqueeze(1) + _take(self.bias, members).unsqueeze(1)


class _Identity(nn.Module):
    def forward(self, x: torch.Tensor, members: slice = ALL) -> torch.Tensor:
        return x


def _ensemble_norm(norms: list[nn.Module]) -> nn.Module:
    if isinstance(norms[0], nn.BatchNorm1d):
        return EnsembleBatchNorm(norms)  # type: ignore[arg-type]
    if isinstance(norms[0], nn.LayerNorm):
        return EnsembleLayerNorm(norms)  # type: ignore[arg-type]
    return _Identity()


def _ensemble_renorm(norms: list[BatchRenorm1d | None], config: NetworkConfig) -> BatchRenorm1d | None:
    """One BatchRenorm1d with per-member statistics (a fresh BRN layer holds no random state)."""
    if norms[0] is None:
        return None
    return batch_renorm(norms[0].num_features, config, members=len(norms))


class EnsembleHiddenLayer(nn.Module):
    """Linear -> optional BatchNorm/LayerNorm -> activation -> optional BatchRenorm, for every member at once."""

    def __init__(self, layers: list[HiddenLayer], config: NetworkConfig) -> None:
        super().__init__()
        self.linear = EnsembleLinear([layer.linear for layer in layers])
        self.norm = _ensemble_norm([layer.norm for layer in layers])
        self.activation = make_activation(config)
        self.renorm = _ensemble_renorm([layer.renorm for layer in layers], config)

    def forward(self, x: torch.Tensor, members: slice = ALL) -> torch.Tensor:
        x = self.activation(self.norm(self.linear(x, members), members))
        return x if self.renorm is None else self.renorm(x.float(), members)  # float32 statistics under autocast


class CriticEnsemble(nn.Module):
    """``n`` independent critics Q_1..Q_n; ``forward`` returns Q of shape (n, batch).

    Members are initialised exactly as ``n`` :class:`Critic` modules built one after another
    from ``generator``; :meth:`member` rebuilds one as a standalone ``Critic``.
    """

    def __init__(
        self, n: int, obs_dim: int, action_dim: int, config: NetworkConfig, generator: torch.Generator,
        embedding_dim: int = 0,
    ) -> None:
        super().__init__()
        critics = [Critic(obs_dim, action_dim, config, generator, embedding_dim) for _ in range(n)]
        self.n, self.obs_dim, self.action_dim, self.config = n, obs_dim, action_dim, config
        self.embedding_dim = embedding_dim
        self.action_layer = config.action_layer
        self.input_norm = _ensemble_norm([c.input_norm for c in critics])
        self.input_renorm = _ensemble_renorm([c.input_renorm for c in critics], config)
        self.input_layer = EnsembleLinear([c.input_layer for c in critics]) \
            if critics[0].input_layer is not None else None  # type: ignore[misc]
        self.backbone = nn.ModuleList(
            EnsembleHiddenLayer([c.backbone[i] for c in critics], config)  # type: ignore[misc]
            for i in range(len(config.hidden_sizes))
        )
        self.head = EnsembleLinear([c.head for c in critics])
        self.hidden_dtype: torch.dtype | None = None  # set by the agent for reduced-precision hidden layers

    def forward(self, obs: torch.Tensor, action: torch.Tensor, embedding: torch.Tensor | None = None,
                members: slice = ALL) -> torch.Tensor:
        """Q of every member in ``members``, shape (n, batch); ``embedding`` (batch, embedding_dim): SALE's
        ``[zsa, zs]``, joined after the AvgL1Norm input layer (see :class:`~polyak.networks.Critic`)."""
        count = _take(self.head.weight, members).shape[0]
        with hidden_precision(self.hidden_dtype, obs):
            x = self.input_norm(obs, members)
            joined = self.input_layer is not None or self.input_renorm is not None
            if joined and self.action_layer == 0:
                x = self._join(x, action, count)
            if self.input_renorm is not None:
                x = self.input_renorm(x, members)
            if self.input_layer is not None:
                x = avg_l1_norm(self.input_layer(x, members))
            if embedding is not None:
                x = self._join(x, embedding.to(x.dtype), count)
            for index, layer in enumerate(self.backbone):
                if index == self.action_layer and not joined:
                    x = self._join(x, action, count)
                x = layer(x, members)
        if self.action_layer == len(self.backbone):
            x = self._join(x.float(), action, count)
        return self.head(x.float(), members).squeeze(-1)

    @staticmethod
    def _join(x: torch.Tensor, action: torch.Tensor, count: int) -> torch.Tensor:
        if x.dim() == 2:  # still shared by every member
            return torch.cat((x, action), dim=-1)
        return torch.cat((x, action.unsqueeze(0).expand(count, -1, -1)), dim=-1)

    @torch.no_grad()
    def member(self, index: int) -> Critic:
        """Member ``index`` as a standalone :class:`Critic` (a copy, in the same train/eval mode)."""
        critic = Critic(self.obs_dim, self.action_dim, self.config, torch.Generator(),
                        self.embedding_dim).to(self.head.weight.device)
        own = {name: tensor[index] for name, tensor in self._member_tensors().items()}
        critic.load_state_dict({name: own.get(name, tensor) for name, tensor in critic.state_dict().items()})
        return critic.train(self.training)

    def _member_tensors(self) -> dict[str, torch.Tensor]:
        """This ensemble's stacked tensors under the names a single Critic uses."""
        return {name: tensor for name, tensor in self.state_dict().items()
                if not name.endswith(("num_batches_tracked", "steps"))}
