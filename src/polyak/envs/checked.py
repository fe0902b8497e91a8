"""Checks on what an env returns, so a fault of the env is named as one: an observation of the wrong shape would
otherwise surface as a shape error deep inside the vector env, and a NaN or Inf reward or observation as a learner
that diverged some steps later."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from polyak.errors import EnvError

REAL_KINDS = "biuf"  # numpy dtype kinds of bools, ints, unsigned ints and floats: not complex, str or object


class EnvOutputError(EnvError):
    """An env returned something polyak cannot train on: the message says what, and from which call."""


def observation_problem(observation: Any, space: gym.spaces.Box) -> str | None:
    """What is wrong with ``observation`` for a flat Box ``space`` (the end of a sentence), or None."""
    values = np.asarray(observation)
    if values.shape == space.shape and values.dtype.kind == "f" and np.isfinite(values).all():
        return None  # the common case, checked first: this runs on every env step
    if values.shape != space.shape:
        return f"an observation of shape {values.shape}; its observation space has shape {space.shape}"
    if values.dtype.kind not in REAL_KINDS:
        return f"an observation of dtype {values.dtype}; polyak needs real numbers"
    if not np.all(np.isfinite(values)):
        return "an observation holding NaN or Inf"
    return None


def reward_problem(reward: Any) -> str | None:
    """What is wrong with ``reward`` (the end of a sentence), or None: a reward is one finite number."""
    if isinstance(reward, float) and math.isfinite(reward):
        return None  # the common case, checked first
    value = np.asarray(reward)
    if value.shape != ():
        return f"a reward of shape {value.shape} ({type(reward).__name__}); a reward is one number"
    if value.dtype.kind not in REAL_KINDS:
        return f"the reward {reward!r} ({type(reward).__name__}); a reward is one real number"
    if not np.isfinite(value):
        return f"a reward of {value.item()}"
    return None


class CheckedOutputs(gym.Wrapper):
    """Raises :class:`EnvOutputError` when ``reset`` or ``step`` returns an observation that does not fit the
    env's (flat Box) observation space or is not finite, or a reward that is not one finite number."""

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        if (problem := observation_problem(observation, self.observation_space)) is not None:
            raise EnvOutputError(f"reset() returned {problem}")
        return observation, info

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        problem = reward_problem(reward) or observation_problem(observation, self.observation_space)
        if problem is not None:
            raise EnvOutputError(f"step() returned {problem}")
        return observation, reward, terminated, truncated, info
