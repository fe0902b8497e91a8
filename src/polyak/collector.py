"""The collector: steps a vector env with the explorer's actions, hands each step's transitions to a sink
and keeps the episode scores. The single-process trainer and every Ape-X rollout worker use it.

All envs are reset together, with a seed derived from the number of full resets so far, and the
collector records the actions since the last full reset: a checkpoint can then rebuild the exact
env state by resetting with the same seed and replaying those actions (:meth:`Collector.restore`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv

from polyak.envs import final_observations
from polyak.envs.checked import EnvOutputError
from polyak.explorer import Explorer
from polyak.normalization import ObservationNormalizer
from polyak.scores import ScoreBoard
from polyak.seeding import indexed_seed

HISTORY_LIMIT = 100_000  # env.step calls since the last full reset kept for an exact mid-episode resume

Sink = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]
"""Receives one vector-env step: (obs, action, reward, true next_obs, terminated, done)."""


class EnvStepError(Exception):
    """The env raised inside ``reset`` or ``step``; ``__cause__`` holds its exception."""


def env_failure(error: Exception) -> EnvStepError:
    """``error`` raised by the env, as an :class:`EnvStepError` whose message says what happened: polyak's own
    check of the env's output (:mod:`polyak.envs.checked`) as it reads, anything else with its type."""
    return EnvStepError(str(error) if isinstance(error, EnvOutputError) else f"{type(error).__name__}: {error}")


@dataclass
class Step:
    """What one vector-env step produced, before its episode bookkeeping (:meth:`Collector.end_step`)."""

    next_obs: np.ndarray
    reward: np.ndarray
    done: np.ndarray


def reset_seed(env_seed: int, index: int) -> int:
    """The seed of full reset number ``index`` of a collector whose env seed is ``env_seed``."""
    return indexed_seed(env_seed, index)


class Collector:
    """Acts (uniform random actions for the first ``random_steps`` env steps, then the explorer),
    steps the env, stores through ``sink`` and records finished episodes on ``scores``.

    With ``random_until_episode_end`` the random actions go on until the first episode end at or after
    ``random_steps`` (TD7's main.py acts randomly until ``allow_train``, which is set at an episode end)."""

    def __init__(
        self, env: VectorEnv, explorer: Explorer, sink: Sink, scores: ScoreBoard, *, env_seed: int,
        random_steps: int, random_rng: np.random.Generator, keep_history: bool = True,
        on_restart: Callable[[], None] | None = None,
        normalizer: ObservationNormalizer | None = None, random_until_episode_end: bool = False,
    ) -> None:
        self.env, self.explorer, self.sink, self.scores = env, explorer, sink, scores
        self.num_envs = int(env.num_envs)
        self.action_dim = int(env.single_action_space.shape[0])
        self.env_seed, self.random_steps, self.random_rng = env_seed, random_steps, random_rng
        self.keep_history = keep_history
        self.on_restart = on_restart  # drops what the sink holds of abandoned episodes (pending n-step windows)
        self.normalizer = normalizer  # updated with every observation acted on; the explorer sees normalized ones
        self.env_steps = 0  # transitions collected: env.step calls x num_envs
        self.iterations = 0  # env.step calls
        self.resets = 0  # full resets so far
        self.history: list[np.ndarray] | None = []  # actions since the last full reset (None: too many)
        self.obs: np.ndarray | None = None
        self.random_episode = random_until_episode_end and random_steps > 0  # random to the next episode end

    def _full_reset(self) -> np.ndarray:
        try:
            obs, _ = self.env.reset(seed=reset_seed(self.env_seed, self.resets))
        except Exception as error:
            raise env_failure(error) from error
        self.history = [] if self.keep_history else None
        return obs

    def _action(self, obs: np.ndarray) -> np.ndarray:
        if self.env_steps < self.random_steps or self.random_episode:
            return self.random_rng.uniform(-1.0, 1.0, size=(self.num_envs, self.action_dim))
        if self.normalizer is not None:
            obs = self.normalizer.normalize(obs)
        return self.explorer.act(obs, explore=True)

    def step(self) -> Step:
        """Act, step the env, store the transitions; raises :class:`EnvStepError` when the env fails (its first
        reset included)."""
        if self.obs is None:
            self.obs = self._full_reset()
        if self.normalizer is not None:
            self.normalizer.update(self.obs)
        action = self._action(self.obs)
        try:
            next_obs, reward, terminated, truncated, info = self.env.step(action)
        except Exception as error:
            raise env_failure(error) from error
        done = np.logical_or(terminated, truncated)
        self.sink(self.obs, action, reward, final_observations(next_obs, done, info), terminated, done)
        if self.history is not None:
            self.history.append(np.array(action, copy=True))
            if len(self.history) > HISTORY_LIMIT:
                self.history = None
        self.iterations += 1
        self.env_steps += self.num_envs
        return Step(next_obs, reward, done)

    def end_step(self, step: Step) -> list[float]:
        """Score finished episodes, restart their exploration, reset when every env is done (an
        :class:`EnvStepError` when that reset fails).

        Separate from :meth:`step` so a learning step can run in between: a parameter-noise
        explorer then re-perturbs the freshly updated actor.
        """
        recorded = self.scores.add(step.reward, step.done)
        if step.done.any():
            self.explorer.reset(step.done)
            if self.random_episode and self.env_steps >= self.random_steps:
                self.random_episode = False
        next_obs = step.next_obs
        if step.done.all():
            self.resets += 1
            next_obs = self._full_reset()
        self.obs = next_obs
        return recorded

    def collect(self, steps: int) -> list[float]:
        """``steps`` env.step calls without learning in between; the episode scores they recorded."""
        recorded: list[float] = []
        for _ in range(steps):
            recorded.extend(self.end_step(self.step()))
        return recorded

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        history = None if self.history is None else (
            np.stack(self.history) if self.history else np.zeros((0, self.num_envs, self.action_dim))
        )
        return {"env_steps": self.env_steps, "iterations": self.iterations, "scores": self.scores.state_dict(),
                "explore_rng": self.random_rng.bit_generator.state, "resets": self.resets, "history": history,
                "obs": self.obs, "random_episode": self.random_episode}

    def load_state_dict(self, state: dict[str, Any]) -> list[str]:
        """Restore counters and scores, then rebuild the env state; returns warnings to show the user."""
        self.env_steps, self.iterations = int(state["env_steps"]), int(state["iterations"])
        self.scores.load_state_dict(state["scores"])
        self.random_rng.bit_generator.state = state["explore_rng"]
        self.resets = int(state["resets"])
        self.random_episode = bool(state.get("random_episode", False))  # absent from checkpoints before it
        return self._replay_history(state["history"], np.asarray(state["obs"]))

    def _replay_history(self, history: np.ndarray | None, expected_obs: np.ndarray) -> list[str]:
        """Rebuild the env state of a checkpoint: the same reset seed, then the same actions.

        When that is impossible (no history) or lands elsewhere (a non-deterministic env), the
        checkpoint's episodes are abandoned: see :meth:`_restart_episodes`.
        """
        if history is None:
            self._restart_episodes()
            return ["too many steps since the last reset to restore the environment exactly; "
                    "starting fresh episodes"]
        try:
            obs, _ = self.env.reset(seed=reset_seed(self.env_seed, self.resets))
            for action in history:
                obs, *_ = self.env.step(action)
        except Exception as error:
            raise env_failure(error) from error
        self.history = list(history)
        self.obs = obs
        if not np.array_equal(obs, expected_obs):
            self._restart_episodes()
            return ["the environment is not deterministic; starting fresh episodes, so the resumed run will "
                    "differ from an uninterrupted one"]
        return []

    def _restart_episodes(self) -> None:
        """Abandon the episodes in progress for new ones (the next full reset's seed), leaving nothing of them:
        running scores zeroed, exploration reset (OU state, a new parameter-noise perturbation), the sink's
        pending n-step windows dropped, and the observation that of the new reset."""
        self.resets += 1
        self.obs = self._full_reset()
        self.scores.running[:] = 0.0
        self.explorer.reset(None)
        if self.on_restart is not None:
            self.on_restart()
