"""A trained deterministic policy: ``predict`` takes observations and returns actions in the env's own units."""

from __future__ import annotations

from dataclasses import dataclass, field

import gymnasium as gym
import numpy as np
import torch

from polyak.errors import ConfigError
from polyak.networks import Actor
from polyak.normalization import ObservationNormalizer
from polyak.spaces import EnvSpaces


def actor_obs_dim(actor: Actor) -> int:
    """The observation width ``actor`` takes: its input layer's (TD7's AvgL1Norm layer), else its SALE state
    encoder's, else its first hidden layer's (whose input is the observation alone then)."""
    if actor.input_layer is not None:
        return int(actor.input_layer.in_features)
    if actor.state_encoder is not None:
        return int(actor.state_encoder.layers[0].in_features)
    return int(actor.backbone[0].linear.in_features)


@dataclass
class Policy:
    """The actor of a trained agent, the observation statistics it was trained with, and its env's spaces.

    ``predict`` is for users: raw observations in, actions in the env's units out. Calling the policy
    (``policy(obs)``) gives the actor's actions in [-1, 1], what polyak's own envs (``make_env``) take.
    """

    env_id: str
    num_envs: int
    actor: Actor
    device: torch.device
    env_kwargs: dict = field(default_factory=dict)
    spaces: EnvSpaces | None = None
    normalizer: ObservationNormalizer | None = None

    @property
    def observation_space(self) -> gym.spaces.Box:
        return self._spaces().observation

    @property
    def action_space(self) -> gym.spaces.Box:
        return self._spaces().action

    def _spaces(self) -> EnvSpaces:
        if self.spaces is None:  # a run of an older polyak stores none: ask the env once
            from polyak.envs import make_env
            from polyak.spaces import env_spaces

            env = make_env(self.env_id, 1, **self.env_kwargs)
            try:
                self.spaces = env_spaces(env)
            finally:
                env.close()
        return self.spaces

    @torch.no_grad()
    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """Actions in [-1, 1] for a batch of raw observations (normalized here when the run normalized them)."""
        if self.normalizer is not None:
            obs = self.normalizer.normalize(obs)
        obs_t = torch.as_tensor(np.asarray(obs, dtype=np.float32), device=self.device)
        return self.actor(obs_t).cpu().numpy()

    def predict(self, obs: np.ndarray, deterministic: bool = True) -> np.ndarray:
        """Actions in the env's units for one observation (shape ``obs_dim``) or a batch (``(n, obs_dim)``).

        The policy is deterministic (DDPG/TD3 explore with noise only while training), so
        ``deterministic`` is accepted for Stable-Baselines3 compatibility and changes nothing. Unlike
        SB3's, it returns the actions alone, not an ``(actions, state)`` pair.
        """
        del deterministic
        array = np.asarray(obs, dtype=np.float32)
        obs_dim = actor_obs_dim(self.actor)
        single = array.ndim == 1
        if array.shape[-1:] != (obs_dim,) or array.ndim not in (1, 2):
            raise ConfigError(f"predict takes one observation of shape ({obs_dim},) or a batch of shape "
                              f"(n, {obs_dim}), got shape {array.shape}")
        actions = self(array[None] if single else array)
        return self.to_env_units(actions[0] if single else actions)

    def to_env_units(self, actions: np.ndarray) -> np.ndarray:
        """[-1, 1] -> the action space's [low, high], per dimension (as the env boundary rescales them)."""
        space = self.action_space
        low, high = space.low.astype(np.float64), space.high.astype(np.float64)
        scaled = low + (np.clip(actions, -1.0, 1.0) + 1.0) * 0.5 * (high - low)
        return np.clip(scaled, low, high).astype(space.dtype)
