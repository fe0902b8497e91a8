"""Pure tensor functions of the DDPG/TD3 update (Lillicrap et al. 2015; Fujimoto et al. 2018)."""

from __future__ import annotations

from collections.abc import Sequence

import torch


def td_target(
    reward: torch.Tensor, discount: torch.Tensor | float, terminated: torch.Tensor, next_q: torch.Tensor
) -> torch.Tensor:
    """y = r + discount * (1 - terminated) * Q'(s', mu'(s')).

    ``terminated`` is 1 only for true terminal states; a time-limit truncation keeps
    ``terminated = 0`` and therefore bootstraps. ``discount`` is gamma, or gamma^k per sample
    for k-step returns.
    """
    return reward + discount * (1.0 - terminated) * next_q


def clipped_min(q_values: torch.Tensor) -> torch.Tensor:
    """TD3's clipped double-Q: the minimum over the critic axis (dim 0) of shape (n, batch)."""
    return q_values.min(dim=0).values


def smoothing_noise(
    shape: tuple[int, ...], noise_std: float, noise_clip: float, generator: torch.Generator | None,
    device: torch.device | None = None,
) -> torch.Tensor:
    """TD3 target policy smoothing noise: clip(N(0, std), -c, c)."""
    noise = torch.randn(shape, generator=generator, device=device)
    return (noise * noise_std).clamp(-noise_clip, noise_clip)


def critic_loss(q_values: torch.Tensor, target: torch.Tensor, weights: torch.Tensor | None = None) -> torch.Tensor:
    """Mean squared TD error summed over critics; ``q_values`` (n, batch), ``target`` (batch,).

    ``weights`` are per-sample importance weights (prioritized replay); None means uniform.
    """
    squared = (q_values - target.unsqueeze(0)).pow(2)
    if weights is not None:
        squared = squared * weights.unsqueeze(0)
    return squared.mean(dim=1).sum()


def actor_loss(q_values: torch.Tensor) -> torch.Tensor:
    """Deterministic policy gradient objective: maximise Q(s, mu(s)) of the first critic."""
    return -q_values.mean()


@torch.no_grad()
def polyak_update(target: Sequence[torch.Tensor], online: Sequence[torch.Tensor], tau: float) -> None:
    """target <- (1 - tau) * target + tau * online, in place, for floating tensors.

    Integer tensors (BatchNorm's ``num_batches_tracked``) are copied.
    """
    floats_t = [t for t in target if t.is_floating_point()]
    floats_o = [o for t, o in zip(target, online, strict=True) if t.is_floating_point()]
    if floats_t:
        torch._foreach_lerp_(floats_t, floats_o, tau)
    integers = [(t, o) for t, o in zip(target, online, strict=True) if not t.is_floating_point()]
    if integers:
        torch._foreach_copy_([t for t, _ in integers], [o for _, o in integers])
