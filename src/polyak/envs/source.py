"""How a run's env was made: from an id (``TrainerConfig.env_id``), from an env instance or from a function that
makes one (:func:`polyak.train`'s ``env=``). A run records it in ``env.json`` so ``polyak test``, ``polyak record``
and ``--resume`` rebuild the same env, or say in one line what to pass when they cannot (an instance inside
wrappers of the user's, a lambda, an env registered by the training script itself)."""

from __future__ import annotations

import copy
import importlib
import inspect
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import gymnasium as gym
from gymnasium.vector import VectorEnv

from polyak.envs.factory import EnvMaker, import_user_module, make_env, resolve_env_id, vector_env_from
from polyak.errors import EnvError

ENV_FILE = "env.json"
MADE_BY = ("id", "instance", "callable")
MAKE_WRAPPERS = frozenset({"TimeLimit", "OrderEnforcing", "PassiveEnvChecker"})
"""The wrappers ``gym.make`` puts around every env: an instance inside these alone is rebuilt from its id."""


def qualified_name(obj: Any) -> str | None:
    """``module:qualname`` of a function or class, or None when it has none (a ``functools.partial``)."""
    module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return f"{module}:{name}" if isinstance(module, str) and isinstance(name, str) else None


def importable(name: str | None) -> bool:
    """Whether ``module:qualname`` can be imported by another process: not ``__main__``, not a lambda or local."""
    return name is not None and not name.startswith("__main__:") and "<" not in name


def _load(name: str, needed_by: str) -> Any:
    """The object ``module:qualname`` names; never one of the standard library's (a shared run's ``env.json`` is
    not trusted to call ``os:abort``)."""
    module, _, qualname = name.partition(":")
    if module.split(".")[0] in sys.stdlib_module_names or not qualname:
        raise EnvError(f"{needed_by} names {name!r}, which is not an env maker of a module of yours")
    import_user_module(module, needed_by)
    obj: Any = importlib.import_module(module)
    try:
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise EnvError(f"{needed_by} needs {name}, which module {module!r} no longer defines") from None
    return obj


def _wrappers(env: gym.Env) -> tuple[list[str], gym.Env]:
    """The names of the wrappers around ``env``, outermost first, and the env inside them."""
    names = []
    while isinstance(env, gym.Wrapper):
        names.append(type(env).__name__)
        env = env.env
    return names, env


def _json_able(value: Any) -> bool:
    try:
        return json.loads(json.dumps(value)) == value
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class EnvSource:
    """How the env of a run was made (``made_by``: ``id``, ``instance`` or ``callable``).

    ``env_id`` is the run's ``TrainerConfig.env_id`` (a registered id, or the env class's name when it has none);
    ``callable`` the ``module:qualname`` of the function given; ``wrappers`` the made env's wrappers, outermost
    first; ``entry_point``, ``max_episode_steps`` and ``kwargs`` the id's registration, so an env registered by a
    module of the user's can be registered again where it is missing. ``maker`` (this process only) makes the
    user's env again: the instance itself first, then copies.
    """

    env_id: str
    made_by: str = "id"
    callable: str | None = None
    wrappers: tuple[str, ...] = ()
    entry_point: str | None = None
    max_episode_steps: int | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    rebuild_from_id: bool = True
    run: str | None = field(default=None, compare=False)
    maker: EnvMaker | None = field(default=None, compare=False, repr=False)

    # ------------------------------------------------------------------ making one
    @classmethod
    def from_id(cls, env_id: str) -> EnvSource:
        """An env made from its id, with its registration when the id is registered (else left to make_env)."""
        try:
            spec = gym.spec(resolve_env_id(env_id))
        except (gym.error.Error, EnvError):
            return cls(env_id)
        entry = spec.entry_point if isinstance(spec.entry_point, str) else qualified_name(spec.entry_point)
        kwargs = dict(spec.kwargs) if _json_able(dict(spec.kwargs)) else {}
        return cls(env_id, entry_point=entry, max_episode_steps=spec.max_episode_steps, kwargs=kwargs)

    @classmethod
    def from_env(cls, env: gym.Env | Callable[[], gym.Env]) -> tuple[EnvSource, dict[str, Any]]:
        """The source of an env instance or of a function that makes one (called once here; the env it made is
        the first one training uses), and the ``env_kwargs`` its id needs to make it again (``gym.make``'s
        keyword arguments)."""
        if isinstance(env, gym.Env):
            made_by, name, instance = "instance", None, env
        elif callable(env) and not isinstance(env, VectorEnv):
            made_by, name = "callable", qualified_name(env)
            try:
                instance = env()
            except Exception as error:  # whatever the user's function raises
                raise EnvError(f"env= function {name or env!r} failed: {type(error).__name__}: {error}") from None
            if not isinstance(instance, gym.Env):
                raise EnvError(f"env= function {name or env!r} returned {type(instance).__name__}, not a gymnasium "
                               "Env")
        else:
            raise EnvError(f"env= takes an env id, a gymnasium Env or a function that makes one, got "
                           f"{type(env).__name__} (polyak makes its own vector envs: pass one env)")
        wrappers, inner = _wrappers(instance)
        spec = instance.spec
        env_id = spec.id if spec is not None else type(inner).__name__
        env_kwargs: dict[str, Any] = {}
        by_id = spec is not None and set(wrappers) <= MAKE_WRAPPERS and not spec.additional_wrappers
        if by_id:
            assert spec is not None
            try:
                registered = gym.spec(spec.id)
                extra = {k: v for k, v in spec.kwargs.items() if registered.kwargs.get(k, object()) != v
                         and k != "render_mode"}
                by_id = _json_able(extra)
                env_kwargs = extra if by_id else {}
            except gym.error.Error:
                by_id = False
        base = cls.from_id(env_id) if spec is not None else cls(env_id)
        source = replace(base, made_by=made_by, callable=name, wrappers=tuple(wrappers), rebuild_from_id=by_id,
                         maker=_maker(instance, env if made_by == "callable" else None, spec if by_id else None))
        return source, env_kwargs

    # ------------------------------------------------------------------ files
    def to_json(self) -> dict[str, Any]:
        return {"env_id": self.env_id, "made_by": self.made_by, "callable": self.callable,
                "wrappers": list(self.wrappers), "entry_point": self.entry_point,
                "max_episode_steps": self.max_episode_steps, "kwargs": self.kwargs,
                "rebuild_from_id": self.rebuild_from_id}

    @classmethod
    def from_json(cls, data: Any, run: str | None = None) -> EnvSource:
        """A source as ``env.json`` holds it; a damaged one is an EnvError."""
        try:
            made_by = data["made_by"]
            if made_by not in MADE_BY or not isinstance(data["env_id"], str):
                raise ValueError(made_by)
            return cls(data["env_id"], made_by, data.get("callable"), tuple(str(w) for w in data.get("wrappers", ())),
                       data.get("entry_point"), data.get("max_episode_steps"), dict(data.get("kwargs") or {}),
                       bool(data.get("rebuild_from_id", True)), run)
        except (KeyError, TypeError, ValueError):
            raise EnvError(f"{run or 'the run'}: {ENV_FILE} is damaged") from None

    # ------------------------------------------------------------------ rebuilding it
    def vector_env(self, num_envs: int, render_mode: str | None = None, **env_kwargs: Any) -> VectorEnv:
        """``num_envs`` copies of the env, actions in [-1, 1]: the user's maker in the process that got it, else
        rebuilt as recorded; an EnvError saying what to pass when it cannot be."""
        if self.maker is not None and render_mode is None:
            return vector_env_from(self.maker, num_envs, repr(self.env_id))
        if self.made_by == "callable" and importable(self.callable):
            assert self.callable is not None
            make = _load(self.callable, f"the env of {self.run or 'this run'}")
            if render_mode is not None and "render_mode" in _parameters(make):
                return vector_env_from(lambda: make(render_mode=render_mode), num_envs, repr(self.env_id))
            return vector_env_from(make, num_envs, repr(self.env_id))
        if self.made_by == "callable" or not self.rebuild_from_id:
            raise EnvError(self.cannot_rebuild())
        self.register()
        return make_env(self.env_id, num_envs, render_mode, **env_kwargs)

    def rebuildable(self) -> bool:
        """Whether another process can make this env without the user's objects."""
        if self.made_by == "callable":
            return importable(self.callable)
        return self.rebuild_from_id and (self._registered() or importable(self.entry_point))

    def register(self) -> None:
        """Register the env's id from the recorded registration when this process lacks it (an env registered by a
        module of the user's); an EnvError saying what to pass when the registration lived in the training script."""
        if self._registered() or self.entry_point is None:
            return  # registered, or unknown: make_env says so
        if not importable(self.entry_point):
            raise EnvError(self.cannot_rebuild())
        _load(self.entry_point, f"environment {self.env_id!r}")
        if not self._registered():
            gym.register(self.env_id, entry_point=self.entry_point, max_episode_steps=self.max_episode_steps,
                         kwargs=self.kwargs)

    def _registered(self) -> bool:
        try:
            gym.spec(resolve_env_id(self.env_id))
        except (gym.error.Error, EnvError):
            return False
        return True

    def cannot_rebuild(self, resume: bool = False) -> str:
        """One line: how the env was made, why it cannot be made here, and what to pass instead (to evaluate it, or
        with ``resume`` to continue training it)."""
        run = self.run or "RUN"
        python = (f"or continue it in Python with the same env: polyak.train(resume={run!r}, env=...)" if resume
                  else f"or evaluate in Python with the env: polyak.evaluate(polyak.load({run!r}), env)")
        if self.made_by == "callable":
            return (f"the env of {run} was made by {self.callable or 'a function'} passed to polyak.train, which "
                    "another process cannot import (a lambda, a local function or one defined in the script); define "
                    f"it in a module (my_envs.py) and pass that (env=my_envs.make_env), {python}")
        if self.made_by == "instance":
            wrapped = f" inside the wrappers {', '.join(self.wrappers)}" if self.wrappers else ""
            return (f"the env of {run} was an env instance ({self.env_id}{wrapped}) passed to polyak.train, which "
                    "polyak cannot make again; pass a function from a module that makes it (env=my_envs.make_env), "
                    f"{python}")
        return (f"environment {self.env_id!r} of {run} was registered by the training script itself (entry point "
                f"{self.entry_point}); register it in a module (my_envs.py) and train with env='my_envs:"
                f"{self.env_id}', {python}")


def _parameters(make: Any) -> set[str]:
    try:
        return set(inspect.signature(make).parameters)
    except (TypeError, ValueError):
        return set()


def _maker(instance: gym.Env, make: Callable[[], gym.Env] | None,
           spec: gym.envs.registration.EnvSpec | None) -> EnvMaker:
    """Makes the user's env: ``instance`` first, then new ones from ``make`` (a function given), ``gym.make`` of
    the instance's spec or deep copies of the instance as it was given."""
    given = [instance]
    pristine: gym.Env | None = None
    if make is None and spec is None:
        try:
            pristine = copy.deepcopy(instance)
        except Exception:  # an env holding something that cannot be copied
            pristine = None

    def maker() -> gym.Env:
        if given:
            return given.pop()
        if make is not None:
            return make()
        if spec is not None:
            return gym.make(spec)
        if pristine is None:
            raise EnvError("polyak needs more than one copy of the env (an evaluation env, num_envs > 1) and cannot "
                           "copy this env instance; pass a function that makes it: polyak.train(env=lambda: ...)")
        return copy.deepcopy(pristine)

    return maker
