"""Ape-X settings and the per-worker exploration schedule (Horgan et al. 2018, "Distributed Prioritized
Experience Replay"). Pure Python: importing this module never imports ray. ``ApexConfig`` itself lives
with the other configs in :mod:`polyak.config`, so gin knows it wherever configs are parsed."""

from __future__ import annotations

import dataclasses

from polyak.config import APEX_DEFAULTS, ApexConfig, NoiseConfig, NoiseKind

__all__ = ["APEX_DEFAULTS", "ApexConfig", "apex_epsilons", "worker_noise_config"]

def apex_epsilons(num_workers: int, base: float = 0.4, alpha: float = 7.0) -> list[float]:
    """Ape-X's per-actor exploration: epsilon_i = base^(1 + alpha * i / (N - 1)), i = 0..N-1.

    Horgan et al. 2018 (sec. 4.1) use base = 0.4 and alpha = 7 for epsilon-greedy DQN actors.
    One worker gets epsilon_0 = base (the formula divides by N - 1).
    """
    if num_workers < 1:
        raise ValueError(f"num_workers must be >= 1, got {num_workers}")
    if num_workers == 1:
        return [base]
    return [base ** (1.0 + alpha * i / (num_workers - 1)) for i in range(num_workers)]


def worker_noise_scale(index: int, num_workers: int, base: float = 0.4, alpha: float = 7.0) -> float:
    """epsilon_i / epsilon_0 = base^(alpha * i / (N - 1)): 1 for worker 0, base^alpha for the last one."""
    epsilons = apex_epsilons(num_workers, base, alpha)
    return epsilons[index] / epsilons[0]


def worker_noise_config(noise: NoiseConfig, index: int, num_workers: int, base: float = 0.4,
                        alpha: float = 7.0) -> NoiseConfig:
    """The Ape-X schedule adapted to DDPG's continuous actions (our adaptation, not the paper's).

    DDPG explores with action noise, not epsilon-greedy, so the schedule scales the noise:
    worker i uses ``epsilon_i / epsilon_0`` times the config's Gaussian/OU ``sigma`` (worker 0
    explores as a single-process run would, the last worker with base^alpha of it: 0.0016 with the
    paper's values), or times ``param_target_distance`` for parameter-space noise. ``kind='none'``
    (a NoisyNet actor) is left unchanged: its noise is learned.
    """
    scale = worker_noise_scale(index, num_workers, base, alpha)
    if noise.kind in (NoiseKind.GAUSSIAN, NoiseKind.OU):
        return dataclasses.replace(noise, sigma=noise.sigma * scale)
    if noise.kind is NoiseKind.PARAMETER:
        return dataclasses.replace(noise, param_target_distance=noise.param_target_distance * scale)
    return noise
