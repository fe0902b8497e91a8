"""Exploration noise processes and epsilon schedules; each process owns a numpy Generator."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import torch

from polyak.config import EpsilonSchedule, NoiseConfig, NoiseKind


def epsilon_at(config: NoiseConfig, step: int) -> float:
    """Noise scale after ``step`` decay steps (linear or geometric, floored at ``epsilon_min``)."""
    if config.epsilon_schedule is EpsilonSchedule.CONSTANT:
        return config.epsilon_start
    if config.epsilon_schedule is EpsilonSchedule.LINEAR:
        value = config.epsilon_start - config.epsilon_decay * step
    else:
        value = config.epsilon_start * config.epsilon_decay**step
    return max(config.epsilon_min, value)


class NoiseProcess(Protocol):
    def sample(self) -> np.ndarray: ...

    def reset(self, mask: np.ndarray | None = None) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class OrnsteinUhlenbeckNoise:
    """dx = theta (mu - x) dt + sigma sqrt(dt) N(0, 1), one state per parallel env (Uhlenbeck & Ornstein 1930).

    Increments are Gaussian (the Udacity code's uniform ``random.random()`` is a known bug).
    """

    def __init__(
        self, num_envs: int, action_dim: int, *, mu: float, theta: float, sigma: float, dt: float,
        rng: np.random.Generator,
    ) -> None:
        self.mu, self.theta, self.sigma, self.dt = mu, theta, sigma, dt
        self.rng = rng
        self.state = np.full((num_envs, action_dim), mu, dtype=np.float64)

    def sample(self) -> np.ndarray:
        shock = self.rng.standard_normal(self.state.shape)
        self.state += self.theta * (self.mu - self.state) * self.dt + self.sigma * np.sqrt(self.dt) * shock
        return self.state.copy()

    def reset(self, mask: np.ndarray | None = None) -> None:
        """Return the states of the envs in ``mask`` (all when None) to mu, at episode start."""
        if mask is None:
            self.state[:] = self.mu
        else:
            self.state[np.asarray(mask, dtype=bool)] = self.mu

    def state_dict(self) -> dict[str, Any]:
        return {"state": self.state.copy(), "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.state[:] = np.asarray(state["state"], dtype=np.float64)
        self.rng.bit_generator.state = state["rng"]


class GaussianNoise:
    """Independent N(0, sigma^2) per action dimension and env."""

    def __init__(self, num_envs: int, action_dim: int, *, sigma: float, rng: np.random.Generator) -> None:
        self.shape = (num_envs, action_dim)
        self.sigma = sigma
        self.rng = rng

    def sample(self) -> np.ndarray:
        return self.sigma * self.rng.standard_normal(self.shape)

    def reset(self, mask: np.ndarray | None = None) -> None:
        """Stateless: nothing to reset."""

    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]


class AdaptiveParameterNoise:
    """Adaptive parameter-space noise (Plappert et al. 2018, sec. 3).

    Perturbs weights with N(0, sigma^2) and adapts sigma so that the action-space distance
    d = sqrt(mean((mu(s) - mu~(s))^2)) tracks ``target``: sigma * factor when d < target, else
    sigma / factor. Owns the Generator that draws the perturbations.
    """

    def __init__(self, *, initial_sigma: float, target: float, factor: float, rng: np.random.Generator) -> None:
        self.sigma = initial_sigma
        self.target = target
        self.factor = factor
        self.rng = rng
        self.last_distance = float("nan")

    @torch.no_grad()
    def perturb(self, source: Sequence[torch.Tensor], destination: Sequence[torch.Tensor]) -> None:
        """destination <- source + N(0, sigma^2), elementwise, in place."""
        for src, dst in zip(source, destination, strict=True):
            shock = torch.from_numpy(self.rng.standard_normal(tuple(src.shape)))
            dst.copy_(src + self.sigma * shock.to(device=src.device, dtype=src.dtype))

    def adapt(self, distance: float) -> float:
        """Scale sigma towards the target distance; returns the new sigma."""
        self.last_distance = float(distance)
        self.sigma = self.sigma * self.factor if distance < self.target else self.sigma / self.factor
        return self.sigma

    def state_dict(self) -> dict[str, Any]:
        return {"sigma": self.sigma, "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.sigma = float(state["sigma"])
        self.rng.bit_generator.state = state["rng"]


class ExplorationNoise:
    """A noise process scaled by an epsilon that decays once per ``sample()`` (one vector-env step).

    With ``kind='parameter'`` the action noise is zero and ``parameter`` holds the adaptive
    parameter noise that the agent applies to its acting copy of the actor.
    """

    def __init__(self, config: NoiseConfig, num_envs: int, action_dim: int, rng: np.random.Generator) -> None:
        self.config = config
        self.steps = 0
        self.process: NoiseProcess | None
        if config.kind is NoiseKind.OU:
            self.process = OrnsteinUhlenbeckNoise(
                num_envs, action_dim, mu=config.ou_mu, theta=config.ou_theta, sigma=config.sigma,
                dt=config.ou_dt, rng=rng,
            )
        elif config.kind is NoiseKind.GAUSSIAN:
            self.process = GaussianNoise(num_envs, action_dim, sigma=config.sigma, rng=rng)
        else:
            self.process = None
        self.parameter = (
            AdaptiveParameterNoise(initial_sigma=config.sigma, target=config.param_target_distance,
                                   factor=config.param_adapt_factor, rng=rng)
            if config.kind is NoiseKind.PARAMETER else None
        )
        self.shape = (num_envs, action_dim)

    @property
    def epsilon(self) -> float:
        return epsilon_at(self.config, self.steps)

    def sample(self) -> np.ndarray:
        scale = self.epsilon
        self.steps += 1
        if self.process is None:
            return np.zeros(self.shape)
        return scale * self.process.sample()

    def reset(self, mask: np.ndarray | None = None) -> None:
        if self.process is not None:
            self.process.reset(mask)

    def state_dict(self) -> dict[str, Any]:
        process = self.process.state_dict() if self.process is not None else {}
        state: dict[str, Any] = {"steps": self.steps, "process": process}
        if self.parameter is not None:
            state["parameter"] = self.parameter.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.steps = int(state["steps"])
        if self.process is not None:
            self.process.load_state_dict(state["process"])
        if self.parameter is not None:
            self.parameter.load_state_dict(state["parameter"])
