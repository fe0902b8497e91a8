"""Build vector environments with actions normalised to [-1, 1] (rescaled per dimension at the boundary)."""

from __future__ import annotations

import importlib

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.wrappers.vector import RescaleAction

from polyak.errors import EnvError


def resolve_env_id(env_id: str) -> str:
    """Gymnasium's ``module:EnvId`` convention: import ``module`` (which registers the env), return ``EnvId``."""
    module, separator, name = env_id.partition(":")
    if not separator:
        return env_id
    if not module or not name:
        raise EnvError(f"environment id {env_id!r} must be 'EnvId' or 'module:EnvId'")
    try:
        importlib.import_module(module)
    except ImportError as error:
        raise EnvError(f"environment {env_id!r} needs module {module!r}, which cannot be imported: {error}") from None
    return name


def _spec(env_id: str) -> gym.envs.registration.EnvSpec:
    try:
        return gym.spec(env_id)
    except gym.error.Error as error:
        raise EnvError(f"unknown environment id {env_id!r}: {error}") from None


def make_env(env_id: str, num_envs: int, render_mode: str | None = None, **env_kwargs: object) -> VectorEnv:
    """``num_envs`` copies of a Gymnasium env with a Box action space, stepped synchronously.

    Envs registered with a SAME_STEP ``vector_entry_point`` (polyak/UnityReacher-v0) use it: one
    model for all copies; others get a ``SyncVectorEnv``. Autoreset is SAME_STEP: a finished
    episode's last observation is in ``info["final_obs"]`` and the returned observation already
    starts the next episode. The returned env takes actions in [-1, 1]. ``env_id`` may be
    ``module:EnvId`` (the module is imported first). ``env_kwargs`` go to the env's constructor
    (``TrainerConfig.env_kwargs``, or ``width``/``height`` of rendered frames).
    """
    env_id = resolve_env_id(env_id)
    spec = _spec(env_id)
    kwargs = dict(env_kwargs) if render_mode is None else {"render_mode": render_mode, **env_kwargs}
    try:
        env = None
        if spec.vector_entry_point is not None:
            env = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)
            if env.metadata.get("autoreset_mode") is not AutoresetMode.SAME_STEP:
                env.close()
                env = None
        if env is None:
            env = gym.make_vec(
                env_id, num_envs=num_envs, vectorization_mode="sync",
                vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}, **kwargs,
            )
    except gym.error.Error as error:
        raise EnvError(f"cannot create environment {env_id!r}: {error}") from None
    except TypeError as error:  # an unknown keyword argument
        raise EnvError(f"cannot create environment {env_id!r} with {kwargs}: {error}") from None
    except ImportError as error:
        raise EnvError(f"environment {env_id!r} needs a package that is not installed: {error}") from None
    space = env.single_action_space
    if not isinstance(space, gym.spaces.Box):
        env.close()
        raise EnvError(
            f"environment {env_id!r} has a {type(space).__name__} action space; polyak needs a continuous Box"
        )
    if not (np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
        env.close()
        raise EnvError(f"environment {env_id!r} has unbounded actions; polyak needs finite low/high bounds")
    if not isinstance(env.single_observation_space, gym.spaces.Box) or len(env.single_observation_space.shape) != 1:
        env.close()
        raise EnvError(f"environment {env_id!r} needs a flat Box observation space")
    if np.all(space.low == -1.0) and np.all(space.high == 1.0):
        return env
    low = np.full(space.shape, -1.0, dtype=space.dtype)
    return RescaleAction(env, min_action=low, max_action=-low)


def final_observations(next_obs: np.ndarray, done: np.ndarray, info: dict) -> np.ndarray:
    """The true successor states: ``next_obs`` with finished envs' rows replaced by their final obs."""
    if not done.any():
        return next_obs
    real = np.array(next_obs, copy=True)
    mask = info["_final_obs"]
    real[mask] = np.stack(info["final_obs"][mask])
    return real
