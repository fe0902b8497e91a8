"""Pure tensor functions of the updates: DDPG/TD3 (Lillicrap et al. 2015; Fujimoto et al. 2018) and SAC (Haarnoja
et al. 2018)."""

from __future__ import annotations

import math
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


def smoothed_action(action: torch.Tensor, noise: torch.Tensor | None) -> torch.Tensor:
    """TD3's target policy smoothing: ``clamp(a' + noise, -1, 1)``; ``a'`` itself without noise."""
    return action if noise is None else (action + noise).clamp(-1.0, 1.0)


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


def policy_loss(q_values: torch.Tensor, take_min: bool) -> torch.Tensor:
    """The actor's loss from the critics it ascends, ``q_values`` (n, batch): their mean (Q_1 alone for TD3, every
    critic for TD7), or with ``take_min`` their minimum per sample (CrossQ's TD3 mode)."""
    return -clipped_min(q_values).mean() if take_min else actor_loss(q_values)


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


# ---------------------------------------------------------------------------------------------- SAC
# Soft Actor-Critic (Haarnoja et al. 2018, "Soft Actor-Critic Algorithms and Applications"): a tanh-squashed
# Gaussian policy, the entropy bonus in the target and the actor loss, a learned temperature alpha.
SQUASH_EPSILON = 1e-6  # inside log(1 - tanh(u)^2 + eps), as in SB3's SquashedDiagGaussianDistribution


def squashed_gaussian_log_prob(mean: torch.Tensor, log_std: torch.Tensor, gaussian_action: torch.Tensor
                               ) -> torch.Tensor:
    """log pi(a|s) of ``a = tanh(u)``, ``u ~ N(mean, exp(log_std)^2)`` per dimension: the Gaussian log-density of
    ``u`` summed over the action dimensions minus ``sum log(1 - tanh(u)^2 + eps)`` (the change of variables)."""
    std = log_std.exp()
    gaussian = -((gaussian_action - mean) ** 2) / (2 * std**2) - log_std - 0.5 * math.log(2 * math.pi)
    squash = torch.log(1 - torch.tanh(gaussian_action) ** 2 + SQUASH_EPSILON)
    return (gaussian - squash).sum(dim=-1)


def soft_td_target(reward: torch.Tensor, discount: torch.Tensor | float, terminated: torch.Tensor,
                   next_q: torch.Tensor, next_log_prob: torch.Tensor, alpha: torch.Tensor | float) -> torch.Tensor:
    """y = r + discount * (1 - terminated) * (min_i Q_i(s', a') - alpha * log pi(a'|s')), a' ~ pi(s')."""
    return td_target(reward, discount, terminated, next_q - alpha * next_log_prob)


def soft_critic_loss(q_values: torch.Tensor, target: torch.Tensor, weights: torch.Tensor | None = None
                     ) -> torch.Tensor:
    """1/2 the squared TD error, mean over the batch, summed over critics (SAC's J_Q)."""
    return 0.5 * critic_loss(q_values, target, weights)


def sac_actor_loss(log_prob: torch.Tensor, q_min: torch.Tensor, alpha: torch.Tensor | float) -> torch.Tensor:
    """J_pi = E[alpha * log pi(a|s) - min_i Q_i(s, a)], a ~ pi(s) reparameterized."""
    return (alpha * log_prob - q_min).mean()


def temperature_loss(log_alpha: torch.Tensor, log_prob: torch.Tensor, target_entropy: float) -> torch.Tensor:
    """J(alpha) = E[-log alpha * (log pi(a|s) + target entropy)] with the log-probabilities held fixed: alpha
    rises while the policy's entropy is below the target, falls above it."""
    return -(log_alpha * (log_prob + target_entropy).detach()).mean()
