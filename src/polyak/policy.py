"""A trained deterministic policy: ``predict`` takes observations and returns actions in the env's own units."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
import torch

from polyak.errors import ConfigError
from polyak.networks import Actor
from polyak.normalization import ObservationNormalizer
from polyak.spaces import EnvSpaces

if TYPE_CHECKING:
    from gymnasium.vector import VectorEnv

    from polyak.envs.source import EnvSource


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

    ``predict`` is for users, shaped as Stable-Baselines3's (``action, state = policy.predict(obs)``): raw
    observations in, actions in the env's units out. Calling the policy (``policy(obs)``) gives the actor's actions
    in [-1, 1], what polyak's own envs (``make_env``, :meth:`make_env`) take. ``env_source`` says how the run's env
    was made (None: from ``env_id``); ``origin`` which checkpoint of a run the actor came from, at how many env steps
    (None for an exported agent).
    """

    env_id: str
    num_envs: int
    actor: Actor
    device: torch.device
    env_kwargs: dict = field(default_factory=dict)
    spaces: EnvSpaces | None = None
    normalizer: ObservationNormalizer | None = None
    env_source: EnvSource | None = None
    origin: str | None = None

    @property
    def observation_space(self) -> gym.spaces.Box:
        return self._spaces().observation

    @property
    def action_space(self) -> gym.spaces.Box:
        return self._spaces().action

    def _spaces(self) -> EnvSpaces:
        if self.spaces is None:  # a run of an older polyak stores none: ask the env once
            from polyak.spaces import env_spaces

            env = self.make_env(1)
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

    def make_env(self, num_envs: int | None = None, render_mode: str | None = None, **env_kwargs: Any) -> VectorEnv:
        """The policy's env as polyak trains on it (actions in [-1, 1]: step it with ``policy(obs)``), ``num_envs``
        copies (default: the run's), made as the run recorded; an EnvError saying what to pass when it cannot be
        made here (an env instance or a function of the training script)."""
        from polyak.envs.source import EnvSource

        source = self.env_source if self.env_source is not None else EnvSource(self.env_id)
        return source.vector_env(num_envs or self.num_envs, render_mode, **self.env_kwargs, **env_kwargs)

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, None]:
        """``(actions, None)``: actions in the env's units for one observation (shape ``(obs_dim,)``: one action)
        or a batch (``(n, obs_dim)``: ``n`` actions), as Stable-Baselines3's ``predict`` returns them, so
        ``action, _ = policy.predict(obs, deterministic=True)`` and SB3's ``evaluate_policy`` work unchanged.

        The policy has no recurrent state (the second item is None; ``state`` and ``episode_start`` are accepted and
        ignored) and acts deterministically: DDPG/TD3/TD7/CrossQ explore with noise only while training and SAC's
        policy gives its mean action, so ``deterministic`` changes nothing.
        """
        del state, episode_start, deterministic
        obs_dim = actor_obs_dim(self.actor)
        try:
            array = np.asarray(observation, dtype=np.float32)
        except (TypeError, ValueError):
            raise ConfigError(f"predict takes numbers: one observation of shape ({obs_dim},) or a batch of shape "
                              f"(n, {obs_dim}), got {type(observation).__name__} {observation!r:.60}") from None
        if np.isnan(array).any() or (self.normalizer is None and np.isinf(array).any()):  # the normalizer clips inf
            raise ConfigError("predict got an observation holding NaN or Inf; its actions would be NaN")
        single = array.ndim == 1
        if array.shape[-1:] != (obs_dim,) or array.ndim not in (1, 2):
            raise ConfigError(f"predict takes one observation of shape ({obs_dim},) or a batch of shape "
                              f"(n, {obs_dim}), got shape {array.shape}")
        actions = self(array[None] if single else array)
        return self.to_env_units(actions[0] if single else actions), None

    def to_env_units(self, actions: np.ndarray) -> np.ndarray:
        """[-1, 1] -> the action space's [low, high], per dimension (as the env boundary rescales them)."""
        space = self.action_space
        low, high = space.low.astype(np.float64), space.high.astype(np.float64)
        scaled = low + (np.clip(actions, -1.0, 1.0) + 1.0) * 0.5 * (high - low)
        return np.clip(scaled, low, high).astype(space.dtype)
