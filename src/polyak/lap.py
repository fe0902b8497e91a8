"""LAP, the loss-adjusted prioritized replay of TD7 (Fujimoto et al. 2020, "An Equivalence between Loss Functions
and Non-Uniform Sampling in Experience Replay"; used by TD7, Fujimoto et al. 2023).

Sampling proportionally to ``max(|delta|, 1)^alpha`` with a loss that is quadratic below 1 and linear above, and
with no importance-sampling weights, has the expected gradient of a uniformly sampled loss. Both functions take the
TD errors of all critic heads, with the heads on ``critic_dim``: polyak's convention is ``(n_critics, batch)``
(``critic_dim=0``, the default); TD7's own is ``(batch, 2)`` (``critic_dim=1``). A 1-D input is one head.
"""

from __future__ import annotations

import torch


def _heads_first(td: torch.Tensor, critic_dim: int) -> torch.Tensor:
    if td.dim() == 1:
        return td.unsqueeze(0)
    if td.dim() != 2:
        raise ValueError(f"expected (n_critics, batch) or (batch,) TD errors, got shape {tuple(td.shape)}")
    return td.movedim(critic_dim, 0)


def lap_huber(td: torch.Tensor, min_priority: float = 1.0, *, critic_dim: int = 0) -> torch.Tensor:
    """TD7's LAP loss of TD errors ``td``: per element ``x = |td|`` gives ``0.5 x^2`` if ``x < min_priority``
    else ``min_priority * x``; summed over the critic heads, averaged over the batch.

    Not ``smooth_l1``: above the threshold it is ``x``, not ``x - 0.5`` (it jumps from 0.5 to 1 at x = 1), but
    its gradient equals Huber's (``smooth_l1`` with beta = ``min_priority``) everywhere but at the threshold.
    """
    x = _heads_first(td, critic_dim).abs()
    loss = torch.where(x < min_priority, 0.5 * x.square(), min_priority * x)
    return loss.sum(dim=0).mean()


@torch.no_grad()
def lap_priority(td: torch.Tensor, alpha: float = 0.4, min_priority: float = 1.0, *,
                 critic_dim: int = 0) -> torch.Tensor:
    """LAP priorities, shape ``(batch,)``: ``max(max over heads of |td|, min_priority) ** alpha`` (no gradient).

    With ``min_priority = 1`` this equals ``max(|delta|^alpha, 1)``. TD7 writes these back to the sampled indices,
    keeps a running ``max_priority`` for new transitions (initially 1) and resets it to the stored maximum at each
    target update.
    """
    x = _heads_first(td, critic_dim).abs().amax(dim=0)
    return x.clamp(min=min_priority).pow(alpha)
