"""An agent for one process: a learner of :mod:`polyak.algorithms` and the :class:`~polyak.explorer.Explorer`
that acts with its actor.

The trainer and an Ape-X worker each build one; the two parts stay apart, so the learner never
sees exploration and the explorer never sees a loss. ``state_dict`` merges both into the one
checkpoint dict (network names, optimizers, noise and RNG state).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from polyak.algorithms import ActorCritic, make_learner
from polyak.config import AgentConfig, NetworkConfig, NoiseConfig, ReplayConfig, SACConfig, TD7Config
from polyak.explorer import Explorer


class Agent:
    """The learner and the explorer built from one seed."""

    def __init__(
        self, obs_dim: int, action_dim: int, num_envs: int, agent: AgentConfig, actor: NetworkConfig,
        critic: NetworkConfig, noise: NoiseConfig, seed: np.random.SeedSequence, replay: ReplayConfig | None = None,
        td7: TD7Config | None = None, sac: SACConfig | None = None,
    ) -> None:
        init_seed, noise_seed, torch_seed, noisy_seed = seed.spawn(4)
        self.learner: ActorCritic = make_learner(obs_dim, action_dim, num_envs, agent, actor, critic,
                                                 (init_seed, torch_seed, noisy_seed), replay, td7, sac)
        self.explorer = Explorer(self.learner.actor, noise, num_envs, obs_dim, np.random.default_rng(noise_seed),
                                 self.learner.noisy_generator)

    @property
    def device(self) -> torch.device:
        return self.learner.device

    def act(self, obs: np.ndarray, explore: bool) -> np.ndarray:
        return self.explorer.act(obs, explore)

    @torch.no_grad()
    def greedy(self, obs: np.ndarray) -> np.ndarray:
        """What evaluation runs: the deterministic policy, or the learner's evaluation actor (TD7's checkpoint)."""
        actor = self.learner.evaluation_actor()
        if actor is None:
            return self.explorer.greedy(obs)
        if actor.training:
            actor.eval()
        obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        return actor(obs_t).cpu().numpy().astype(np.float64)

    @property
    def trains_at_episode_ends(self) -> bool:
        """TD7's schedule (``TD7Config.checkpoint_training``): updates only when an assessment ends."""
        return self.learner.trains_at_episode_ends

    def end_step(self, reward: np.ndarray, done: np.ndarray, can_learn: bool = True) -> int:
        """A training env step's rewards and episode ends for the learner's per-step contract; returns the
        updates to run now when :attr:`trains_at_episode_ends`, else 0."""
        return self.learner.end_step(reward, done, can_learn)

    def state_dict(self) -> dict[str, Any]:
        return {**self.learner.state_dict(), **self.explorer.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.learner.load_state_dict(state)
        self.explorer.load_state_dict(state)
