"""Normalisation layers of TD7 and CrossQ, and the joint forward pass CrossQ's critic needs.

* :func:`avg_l1_norm` / :class:`AvgL1Norm`: TD7's AvgL1Norm (Fujimoto et al. 2023, "For SALE: State-Action
  Representation Learning for Deep Reinforcement Learning").
* :class:`BatchRenorm1d`: Batch Renormalization (Ioffe 2017) as CrossQ uses it (Bhatt et al. 2024, "CrossQ: Batch
  Normalization in Deep Reinforcement Learning for Greater Sample Efficiency and Simplicity").
* :func:`joint_forward` and :func:`module_mode`: CrossQ's single train-mode critic pass over ``[(s, a); (s', a')]``
  and the train/eval toggles around it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

import torch
from torch import nn

ALL = slice(None)


def avg_l1_norm(x: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """TD7's AvgL1Norm: ``x / max(mean(|x|, last dim), eps)`` (Fujimoto et al. 2023). No parameters."""
    return x / x.abs().mean(dim=-1, keepdim=True).clamp(min=eps)


class AvgL1Norm(nn.Module):
    """:func:`avg_l1_norm` as a module (TD7, Fujimoto et al. 2023)."""

    def __init__(self, eps: float = 1e-8) -> None:
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return avg_l1_norm(x, self.eps)

    def extra_repr(self) -> str:
        return f"eps={self.eps}"


def batch_moments(x: torch.Tensor, unbiased: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and variance of ``x`` over its batch dimension (``-2``), the variance in two passes.

    The same values as ``x.mean(-2)`` and ``x.var(-2)`` up to rounding, and several times faster on a CPU, where
    ``Tensor.var`` over a non-innermost dimension is slow (1.2 ms against 0.15 ms on a 512 x 256 batch on one core:
    it was a fifth of a CrossQ update). ``unbiased`` divides by ``n - 1`` instead of ``n``.
    """
    mean = x.mean(dim=-2)
    centered = x - mean.unsqueeze(-2)
    return mean, (centered * centered).sum(dim=-2) / (x.shape[-2] - int(unbiased))


def safe_sqrt(x: torch.Tensor) -> torch.Tensor:
    """``sqrt(x)`` for ``x >= 0`` whose gradient at 0 is 0 instead of infinite (so ``0 * grad`` is not NaN)."""
    positive = x > 0
    return torch.where(positive, torch.where(positive, x, torch.ones_like(x)).sqrt(), torch.zeros_like(x))


class BatchRenorm1d(nn.Module):
    """Batch Renormalization (Ioffe 2017) with CrossQ's settings (Bhatt et al. 2024).

    Train mode, with batch mean ``mu_B`` and **biased** batch variance ``var_B`` (as the CrossQ authors' Flax code;
    sb3-contrib uses the unbiased one, selectable with ``unbiased=True``), ``std_B = sqrt(var_B + eps)`` and
    ``std_R = sqrt(running_var + eps)``::

        r = stopgrad(clip(std_B / std_R, 1/r_max, r_max))
        d = stopgrad(clip((mu_B - running_mean) / std_R, -d_max, d_max))
        mean = mu_B - d * sqrt(var_B) / r;   var = var_B / r**2      (after warmup)
        mean = mu_B;                   var = var_B             (warmup: plain batch norm)
        y = (x - mean) / sqrt(var + eps) * weight + bias

    The mean term uses ``sqrt(var_B)`` without ``eps``, as both references do (the CrossQ authors' Flax
    ``BatchRenorm`` and sb3-contrib's); its gradient is taken as 0 where ``var_B = 0`` (a feature constant over the
    batch, e.g. a ReLU unit dead for the whole batch), where the references' gradient is NaN (``0 * inf``). The
    forward values are the references' everywhere.

    Warmup covers the first ``warmup_steps`` train-mode calls: renormalization is on once ``steps >= warmup_steps``
    (the reference's test; sb3-contrib's ``>`` starts one call later). Every train-mode call then updates
    ``running <- running + momentum * (batch - running)`` (PyTorch convention: 0.01 here is Flax's 0.99) with the
    same batch statistics it normalized with, and adds 1 to ``steps``. Eval mode normalizes with the running
    statistics and updates nothing. ``steps`` is a buffer, so it is saved and restored with ``state_dict``.

    Shapes: ``(batch, features)``. With ``members=n`` the layer keeps ``n`` independent sets of statistics and
    affine parameters (one per critic of an ensemble, as the reference's vmapped critics) and takes
    ``(n, batch, features)``, or ``(batch, features)`` shared by all members; ``forward(x, members=slice)`` uses a
    slice of them. The ``steps`` counter is one for all members (they are always called together).
    """

    running_mean: torch.Tensor
    running_var: torch.Tensor
    steps: torch.Tensor

    def __init__(
        self, num_features: int, *, momentum: float = 0.01, eps: float = 1e-3, r_max: float = 3.0,
        d_max: float = 5.0, warmup_steps: int = 100_000, affine: bool = True, unbiased: bool = False,
        members: int | None = None,
    ) -> None:
        super().__init__()
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"momentum must be in [0, 1] (PyTorch convention), got {momentum}")
        if r_max < 1.0 or d_max < 0.0:
            raise ValueError(f"need r_max >= 1 and d_max >= 0, got r_max={r_max}, d_max={d_max}")
        self.num_features = num_features
        self.momentum, self.eps, self.r_max, self.d_max = momentum, eps, r_max, d_max
        self.warmup_steps, self.unbiased, self.members = warmup_steps, unbiased, members
        shape = (num_features,) if members is None else (members, num_features)
        if affine:
            self.weight: nn.Parameter | None = nn.Parameter(torch.ones(shape))
            self.bias: nn.Parameter | None = nn.Parameter(torch.zeros(shape))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.register_buffer("running_mean", torch.zeros(shape))
        self.register_buffer("running_var", torch.ones(shape))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def extra_repr(self) -> str:
        return (f"{self.num_features}, momentum={self.momentum}, eps={self.eps}, r_max={self.r_max}, "
                f"d_max={self.d_max}, warmup_steps={self.warmup_steps}, affine={self.weight is not None}, "
                f"unbiased={self.unbiased}, members={self.members}")

    @property
    def warmed_up(self) -> bool:
        """Whether the next train-mode call renormalizes (reads the counter: a device sync on GPU)."""
        return int(self.steps) >= self.warmup_steps

    def forward(self, x: torch.Tensor, members: slice = ALL) -> torch.Tensor:
        running_mean, running_var = self.running_mean, self.running_var
        weight, bias = self.weight, self.bias
        if self.members is None:
            if x.dim() != 2:
                raise ValueError(f"BatchRenorm1d expects (batch, features), got shape {tuple(x.shape)}")
        else:
            running_mean, running_var = running_mean[members], running_var[members]  # views: updated in place
            if weight is not None and bias is not None:
                weight, bias = weight[members], bias[members]
            if x.dim() == 2:
                x = x.unsqueeze(0).expand(running_mean.shape[0], -1, -1)
            if x.dim() != 3 or x.shape[0] != running_mean.shape[0]:
                raise ValueError(f"expected ({running_mean.shape[0]}, batch, features), got {tuple(x.shape)}")
        if x.shape[-1] != self.num_features:
            raise ValueError(f"expected {self.num_features} features, got {x.shape[-1]}")

        if self.training:
            batch_mean, batch_var = batch_moments(x, self.unbiased)
            batch_std = (batch_var + self.eps).sqrt()
            with torch.no_grad():  # r and d are constants for autograd (stop-gradient)
                running_std = (running_var + self.eps).sqrt()
                r = (batch_std / running_std).clamp(1.0 / self.r_max, self.r_max)
                d = ((batch_mean - running_mean) / running_std).clamp(-self.d_max, self.d_max)
            renorm = self.steps >= self.warmup_steps  # 0-d bool tensor: no host sync
            mean = torch.where(renorm, batch_mean - d * safe_sqrt(batch_var) / r, batch_mean)
            var = torch.where(renorm, batch_var / r.square(), batch_var)
            with torch.no_grad():
                running_mean.lerp_(batch_mean.detach(), self.momentum)
                running_var.lerp_(batch_var.detach(), self.momentum)
                self.steps.add_(1)
        else:
            mean, var = running_mean, running_var
        # (x - mean) / sqrt(var + eps) * weight + bias as one pass over x: x * scale + shift
        scale = (var + self.eps).rsqrt()
        if weight is not None:
            scale = scale * weight
        shift = -mean * scale if bias is None else bias - mean * scale
        return torch.addcmul(shift.unsqueeze(-2), x, scale.unsqueeze(-2))


@contextlib.contextmanager
def module_mode(module: nn.Module, training: bool) -> Iterator[nn.Module]:
    """Put ``module`` (and its children) in train or eval mode for a block, then restore every submodule's mode.

    CrossQ's step toggles modes per pass: the next action with the actor in eval mode, the joint critic pass in
    train mode, the actor loss with the actor in train mode and the critic in eval mode (Bhatt et al. 2024).
    """
    previous = [(m, m.training) for m in module.modules()]
    module.train(training)
    try:
        yield module
    finally:
        for m, mode in previous:
            m.training = mode


def joint_forward(
    module: Callable[..., torch.Tensor], inputs: Sequence[torch.Tensor], next_inputs: Sequence[torch.Tensor], *,
    input_dim: int = 0, output_dim: int = 0, train: bool | None = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """CrossQ's joint pass (Bhatt et al. 2024): ``module(cat(s, s'), cat(a, a'))`` once, split into the two halves.

    ``inputs`` (e.g. ``(s, a)``, batch ``B``) and ``next_inputs`` (``(s', a')``, batch ``B'``) are concatenated
    pairwise along ``input_dim``; the module runs once on the ``B + B'`` batch, so its batch-norm layers normalize
    with, and update their running statistics (once) from, the statistics of the mixed batch. The output is split
    along ``output_dim`` (``-1`` for an ensemble critic's ``(n, batch)`` output). ``train=True`` runs the module
    in train mode and restores its modes afterwards; ``None`` leaves the modes alone (needs an ``nn.Module`` for
    anything but ``None``). Neither half is detached: detach the second (the target) yourself.
    """
    if len(inputs) != len(next_inputs):
        raise ValueError(f"{len(inputs)} inputs but {len(next_inputs)} next inputs")
    first = inputs[0].shape[input_dim]
    second = next_inputs[0].shape[input_dim]
    joined = [torch.cat([x, x_next], dim=input_dim) for x, x_next in zip(inputs, next_inputs, strict=True)]
    if train is None:
        out = module(*joined)
    else:
        if not isinstance(module, nn.Module):
            raise TypeError("train=True/False needs an nn.Module; pass train=None for a plain callable")
        with module_mode(module, train):
            out = module(*joined)
    if out.shape[output_dim] != first + second:
        raise ValueError(f"output dim {output_dim} has size {out.shape[output_dim]}, expected {first + second}")
    current, following = out.split([first, second], dim=output_dim)
    return current, following
