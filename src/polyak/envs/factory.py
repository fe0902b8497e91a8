"""Build vector environments with actions normalised to [-1, 1] (rescaled per dimension at the boundary)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.wrappers.vector import RescaleAction

from polyak.envs.checked import CheckedOutputs
from polyak.envs.gl_backend import backend_problem
from polyak.errors import EnvError, PolyakError
from polyak.user_modules import NOT_FOUND_HINT, search_current_directory

EnvMaker = Callable[[], gym.Env]


def import_user_module(module: str, needed_by: str) -> None:
    """Import ``module``, found in the current directory too (searched after the installed packages, unlike
    ``python -m``, so a file there never hides one). An EnvError starting with ``needed_by`` when it cannot be
    imported; one that cannot be found says how to make it found."""
    cwd = search_current_directory()
    why = f"{needed_by} needs module {module!r}, which cannot be imported"
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as error:
        root = module.split(".")[0]
        if error.name is not None and error.name.split(".")[0] == root:
            raise EnvError(f"{why}: no {root}.py in the current directory ({cwd}) or on the Python path; "
                           f"{NOT_FOUND_HINT}") from None
        raise EnvError(f"{why}: {error}") from None
    except ImportError as error:
        raise EnvError(f"{why}: {error}") from None


def resolve_env_id(env_id: str) -> str:
    """Gymnasium's ``module:EnvId`` convention: import ``module`` (which registers the env; the current directory
    is searched too, after the installed packages), return ``EnvId``."""
    module, separator, name = env_id.partition(":")
    if not separator:
        return env_id
    if not module or not name:
        raise EnvError(f"environment id {env_id!r} must be 'EnvId' or 'module:EnvId'")
    import_user_module(module, f"environment {env_id!r}")
    if name not in gym.registry:
        _refuse_entry_point(module, name)
    return name


def _refuse_entry_point(module: str, name: str) -> None:
    """An EnvError when ``module:name`` names an env class or function of the module (Gymnasium's entry-point
    form) rather than an id the module registers: polyak needs the id, to make the env again for test and record."""
    made_by = getattr(sys.modules.get(module), name, None)
    if made_by is None or not callable(made_by):
        return
    kind = "class" if isinstance(made_by, type) else "function"
    raise EnvError(f"environment id '{module}:{name}' names the {kind} {name} of {module}, not an env id it registers: "
                   f"register it in {module}.py (gymnasium.register('{name}-v0', entry_point={name}, "
                   f"max_episode_steps=...)) and give --env {module}:{name}-v0, or in Python pass "
                   f"polyak.train(env={module}.{name})")


def check_env_id(env_id: str) -> None:
    """An EnvError when ``env_id`` names no registered env (its module imported first, as :func:`make_env` does)."""
    _spec(resolve_env_id(env_id), given=env_id)


def _spec(env_id: str, given: str) -> gym.envs.registration.EnvSpec:
    """``env_id``'s spec; an EnvError naming the id as ``given`` (``module:EnvId`` or ``EnvId``) when unknown."""
    try:
        return gym.spec(env_id)
    except gym.error.Error as error:
        hint = ("; an env that a module of yours registers is given as module:EnvId (polyak imports the module "
                "first)" if ":" not in given else "")
        raise EnvError(f"unknown environment id {env_id!r}: {error}{hint}") from None


def make_env(env_id: str, num_envs: int, render_mode: str | None = None, **env_kwargs: object) -> VectorEnv:
    """``num_envs`` copies of a Gymnasium env with a Box action space, stepped synchronously.

    Envs registered with a SAME_STEP ``vector_entry_point`` (polyak/UnityReacher-v0) use it: one
    model for all copies; others get a ``SyncVectorEnv``. Autoreset is SAME_STEP: a finished
    episode's last observation is in ``info["final_obs"]`` and the returned observation already
    starts the next episode. The returned env takes actions in [-1, 1]. ``env_id`` may be
    ``module:EnvId`` (the module is imported first). ``env_kwargs`` go to the env's constructor
    (``TrainerConfig.env_kwargs``, or ``width``/``height`` of rendered frames).
    """
    given, env_id = env_id, resolve_env_id(env_id)
    spec = _spec(env_id, given)
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
                vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}, wrappers=[CheckedOutputs], **kwargs,
            )
    except gym.error.Error as error:
        raise EnvError(f"cannot create environment {env_id!r}: {error}") from None
    except TypeError as error:  # an unknown keyword argument
        if render_mode is not None and "render_mode" in str(error):
            raise EnvError(f"environment {env_id!r} cannot render: its constructor takes no render_mode (Gymnasium "
                           "envs that render take render_mode='rgb_array')") from None
        raise EnvError(f"cannot create environment {env_id!r} with {kwargs}: {error}") from None
    except (RuntimeError, AttributeError, ImportError) as error:
        if (problem := backend_problem(error)) is not None:
            raise EnvError(problem) from None
        if isinstance(error, ImportError):
            raise EnvError(f"environment {env_id!r} needs a package that is not installed: {error}") from None
        raise
    return _checked(env, repr(env_id))


def vector_env_from(make: EnvMaker, num_envs: int, name: str) -> VectorEnv:
    """``num_envs`` envs made by calling ``make`` (an env of the user's, wrappers included), stepped synchronously
    as :func:`make_env`'s: SAME_STEP autoreset, actions in [-1, 1]. ``name`` names the env in errors."""
    try:
        env = SyncVectorEnv([lambda: CheckedOutputs(make())] * num_envs, autoreset_mode=AutoresetMode.SAME_STEP)
    except PolyakError:
        raise
    except Exception as error:  # whatever the user's constructor raises
        raise EnvError(f"cannot create environment {name}: {type(error).__name__}: {error}") from None
    env.spec = env.envs[0].spec  # its time limit, if gym.make gave it one (see polyak.evaluation.time_limit)
    return _checked(env, name)


def _checked(env: VectorEnv, name: str) -> VectorEnv:
    """``env`` if polyak can train on it (a flat, bounded, float Box action space; flat float Box observations),
    rescaled to take actions in [-1, 1]; closed and an EnvError otherwise."""
    problem = space_problem(env.single_action_space, env.single_observation_space)
    if problem is not None:
        env.close()
        raise EnvError(f"environment {name} {problem}")
    space = env.single_action_space
    if np.all(space.low == -1.0) and np.all(space.high == 1.0):
        return env
    low = np.full(space.shape, -1.0, dtype=space.dtype)
    return RescaleAction(env, min_action=low, max_action=-low)


def space_problem(action_space: gym.Space, observation_space: gym.Space) -> str | None:
    """What keeps polyak from training on these spaces (the end of a sentence that starts with the env's name),
    or None. Checked before the first step, so an env polyak cannot use never leaves a run behind."""
    if not isinstance(action_space, gym.spaces.Box):
        return f"has a {type(action_space).__name__} action space; polyak needs a continuous Box"
    if len(action_space.shape) != 1:
        return (f"has actions of shape {action_space.shape}; polyak needs a flat Box (one dimension): flatten them "
                "in a wrapper of the env")
    if not np.issubdtype(action_space.dtype, np.floating):
        return f"has {action_space.dtype} actions; polyak needs a continuous Box of floats"
    if not (np.all(np.isfinite(action_space.low)) and np.all(np.isfinite(action_space.high))):
        return "has unbounded actions; polyak needs finite low/high bounds"
    if not isinstance(observation_space, gym.spaces.Box):
        return (f"has a {type(observation_space).__name__} observation space; polyak needs a flat Box of floats: "
                "wrap the env in gymnasium.wrappers.FlattenObservation(env)")
    if len(observation_space.shape) != 1:
        return (f"has observations of shape {observation_space.shape}; polyak needs a flat Box (one dimension): "
                "wrap the env in gymnasium.wrappers.FlattenObservation(env)")
    if observation_space.shape[0] == 0:
        return "has empty observations (shape (0,)); polyak needs at least one number to act on"
    if not np.issubdtype(observation_space.dtype, np.floating):
        return (f"has {observation_space.dtype} observations; polyak needs floats: wrap the env in "
                "gymnasium.wrappers.DtypeObservation(env, np.float32)")
    return None


def final_observations(next_obs: np.ndarray, done: np.ndarray, info: dict) -> np.ndarray:
    """The true successor states: ``next_obs`` with finished envs' rows replaced by their final obs."""
    if not done.any():
        return next_obs
    real = np.array(next_obs, copy=True)
    mask = info["_final_obs"]
    real[mask] = np.stack(info["final_obs"][mask])
    return real
