"""Helpers of the equivalence tests that run one of polyak's updates beside Stable-Baselines3's (or sb3-contrib's)
from identical weights and batches: the layers to copy and compare, a stand-in env and a stand-in replay sample."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from polyak.types import Batch


def linears(module: torch.nn.Module) -> list[torch.nn.Linear]:
    return [m for m in module.modules() if isinstance(m, torch.nn.Linear)]


def actor_layers(actor: torch.nn.Module) -> list[torch.nn.Linear]:
    """polyak's actor in SB3's layer order (a squashed-Gaussian actor's log-std head last)."""
    log_std = [actor.log_std_head] if hasattr(actor, "log_std_head") else []
    return [layer.linear for layer in actor.backbone] + [actor.head, *log_std]


def critic_layers(critic: torch.nn.Module) -> list[torch.nn.Linear]:
    return [layer.linear for layer in critic.backbone] + [critic.head]


def copy_layers(source: list[torch.nn.Linear], destination: list[torch.nn.Linear]) -> None:
    with torch.no_grad():
        for a, b in zip(source, destination, strict=True):
            b.weight.copy_(a.weight)
            b.bias.copy_(a.bias)


def max_difference(source: list[torch.nn.Linear], other: list[torch.nn.Linear]) -> float:
    with torch.no_grad():
        return max(max(float((a.weight - b.weight).abs().max()), float((a.bias - b.bias).abs().max()))
                   for a, b in zip(source, other, strict=True))


def spaces_env(obs_dim: int, action_dim: int) -> gym.Env:
    """An env for SB3's constructor: only its spaces matter (Pendulum with both spaces replaced)."""
    env = gym.make("Pendulum-v1")
    env.observation_space = gym.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
    env.action_space = gym.spaces.Box(-1.0, 1.0, (action_dim,), np.float32)
    return env


def sampler(batch: Batch) -> Callable[..., Any]:
    """A stand-in for an SB3 replay buffer's ``sample`` that returns ``batch``."""
    from stable_baselines3.common.type_aliases import ReplayBufferSamples

    samples = ReplayBufferSamples(batch.obs, batch.action, batch.next_obs, batch.terminated.unsqueeze(1),
                                  batch.reward.unsqueeze(1), None)
    return lambda *_args, **_kwargs: samples
