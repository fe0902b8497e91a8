"""An agent for one process: a :class:`~polyak.learner.Learner` and the :class:`~polyak.explorer.Explorer`
that acts with its actor (DDPG, Lillicrap et al. 2015, with TD3's switches, Fujimoto et al. 2018).

The trainer and an Ape-X worker each build one; the two parts stay apart, so the learner never
sees exploration and the explorer never sees a loss. ``state_dict`` merges both into the one
checkpoint dict (network names, optimizers, noise and RNG state).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from polyak.config import AgentConfig, NetworkConfig, NoiseConfig
from polyak.explorer import Explorer
from polyak.learner import Learner


class Agent:
    """The learner and the explorer built from one seed."""

    def __init__(
        self, obs_dim: int, action_dim: int, num_envs: int, agent: AgentConfig, actor: NetworkConfig,
        critic: NetworkConfig, noise: NoiseConfig, seed: np.random.SeedSequence,
    ) -> None:
        init_seed, noise_seed, torch_seed, noisy_seed = seed.spawn(4)
        self.learner = Learner(obs_dim, action_dim, agent, actor, critic, init_seed, torch_seed, noisy_seed)
        self.explorer = Explorer(self.learner.actor, noise, num_envs, obs_dim, np.random.default_rng(noise_seed),
                                 self.learner.noisy_generator)

    @property
    def device(self) -> torch.device:
        return self.learner.device

    def act(self, obs: np.ndarray, explore: bool) -> np.ndarray:
        return self.explorer.act(obs, explore)

    def state_dict(self) -> dict[str, Any]:
        return {**self.learner.state_dict(), **self.explorer.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.learner.load_state_dict(state)
        self.explorer.load_state_dict(state)
