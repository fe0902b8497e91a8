"""The explorer: acts with the learner's actor and adds exploration (the actor side of Acme's split).

Three kinds of exploration, any of which a config switches on: action noise (OU or Gaussian,
scaled by an epsilon schedule), a NoisyNet actor (Fortunato et al. 2018) whose noisy weights act
only when exploring, and adaptive parameter-space noise (Plappert et al. 2018), where a perturbed
copy of the actor acts and the perturbation's scale adapts to a target action distance.
``act(obs, explore=False)`` is always the deterministic policy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from polyak.config import NoiseConfig
from polyak.modes import frozen_copy, mode_sensitive
from polyak.networks import Actor, SquashedGaussianActor, exploring, perturbable_parameters
from polyak.noise import ExplorationNoise


class Explorer:
    """Turns observations into actions in [-1, 1] for ``num_envs`` envs, with or without exploration."""

    def __init__(
        self, policy: Actor, noise: NoiseConfig, num_envs: int, obs_dim: int, rng: np.random.Generator,
        noisy_generator: torch.Generator | None = None,
    ) -> None:
        self.policy = policy
        self.obs_dim = obs_dim
        self.device = next(policy.parameters()).device
        self.noisy = noisy_generator is not None
        self._mode_matters = mode_sensitive(policy)
        # A stochastic (SAC) actor explores by sampling its policy, with N(0, 1) draws from this generator.
        self.sampling_rng = rng if isinstance(policy, SquashedGaussianActor) else None
        self.noise = ExplorationNoise(noise, num_envs, int(policy.head.out_features), rng)
        # Parameter-space noise: the perturbed actor acts; a scratch copy measures the distance.
        self.perturbed_actor: Actor | None = None
        self._recent_obs: list[np.ndarray] = []
        self._explore_steps = 0
        if self.noise.parameter is not None:
            self.perturbed_actor = frozen_copy(policy, noisy_generator)
            self._distance_actor = frozen_copy(policy, noisy_generator)
            self.perturb()

    @torch.no_grad()
    def perturb(self, destination: Actor | None = None) -> None:
        """Copy the actor into ``destination`` (default: the acting perturbed actor), then add parameter noise."""
        assert self.noise.parameter is not None
        destination = self.perturbed_actor if destination is None else destination
        assert destination is not None
        destination.load_state_dict(self.policy.state_dict())
        params = perturbable_parameters(destination)
        self.noise.parameter.perturb(params, params)

    @torch.no_grad()
    def adapt_parameter_noise(self, obs: np.ndarray) -> float:
        """One adaptation of sigma from the RMS action distance of a fresh perturbation on ``obs``."""
        assert self.noise.parameter is not None
        self.perturb(self._distance_actor)
        self.policy.eval()
        obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        distance = float((self.policy(obs_t) - self._distance_actor(obs_t)).pow(2).mean().sqrt())
        self.noise.parameter.adapt(distance)
        return distance

    @torch.no_grad()
    def act(self, obs: np.ndarray, explore: bool) -> np.ndarray:
        """Actions in [-1, 1] for a batch of observations.

        Exploring: the perturbed actor acts (parameter noise), NoisyNet layers use noisy weights,
        and scaled action noise is added. Not exploring: the actor's deterministic output.
        """
        actor = self.perturbed_actor if explore and self.perturbed_actor is not None else self.policy
        if self.policy.training and self._mode_matters:  # eval(): BatchNorm uses running statistics
            self.policy.eval()
        obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        if explore and self.sampling_rng is not None:
            assert isinstance(actor, SquashedGaussianActor)
            draws = self.sampling_rng.standard_normal((obs_t.shape[0], int(actor.head.out_features)))
            action, _ = actor.sample(obs_t, torch.as_tensor(draws, dtype=torch.float32, device=self.device))
            return action.cpu().numpy().astype(np.float64)
        if self.noisy:
            with exploring(actor, explore):
                action = actor(obs_t).cpu().numpy().astype(np.float64)
        else:  # no NoisyLinear layers: skip the module walk on every step
            action = actor(obs_t).cpu().numpy().astype(np.float64)
        if explore:
            action = np.clip(action + self.noise.sample(), -1.0, 1.0)
            if self.perturbed_actor is not None:
                self._track_parameter_noise(np.asarray(obs))
        return action

    def greedy(self, obs: np.ndarray) -> np.ndarray:
        """The deterministic policy: what evaluation runs."""
        return self.act(obs, explore=False)

    def _track_parameter_noise(self, obs: np.ndarray) -> None:
        """Collect the states seen while exploring; adapt sigma every ``param_adapt_every`` steps."""
        self._recent_obs.append(obs.reshape(-1, self.obs_dim))
        self._explore_steps += 1
        if self._explore_steps % self.noise.config.param_adapt_every == 0:
            self.adapt_parameter_noise(np.concatenate(self._recent_obs))
            self._recent_obs.clear()

    def reset(self, mask: np.ndarray | None = None) -> None:
        """Episode start for the envs in ``mask``; parameter noise re-perturbs its shared actor copy."""
        self.noise.reset(mask)
        if self.perturbed_actor is not None and (mask is None or np.any(mask)):
            self.perturb()

    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {"noise": self.noise.state_dict()}
        if self.sampling_rng is not None:
            state["policy_sampling"] = {"rng": self.sampling_rng.bit_generator.state}
        if self.perturbed_actor is not None:
            state["perturbed_actor"] = self.perturbed_actor.state_dict()
            state["param_noise"] = {
                "explore_steps": self._explore_steps,
                "recent_obs": np.concatenate(self._recent_obs) if self._recent_obs
                else np.zeros((0, self.obs_dim), dtype=np.float32),
            }
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.noise.load_state_dict(state["noise"])
        if self.sampling_rng is not None:
            self.sampling_rng.bit_generator.state = state["policy_sampling"]["rng"]
        if self.perturbed_actor is not None:
            self.perturbed_actor.load_state_dict(state["perturbed_actor"])
            self._explore_steps = int(state["param_noise"]["explore_steps"])
            recent = np.asarray(state["param_noise"]["recent_obs"])
            self._recent_obs = [recent] if len(recent) else []
