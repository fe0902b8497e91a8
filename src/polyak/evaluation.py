"""Deterministic evaluation: the policy without exploration noise on its own env instance.

Every evaluation draws new start states: its reset seed comes from a seeded stream indexed by the
evaluation's number (:func:`evaluation_seed`), so a run stays reproducible and resumable while no
two evaluations replay the same starts. With several envs, each env plays its own share of the
episodes, so tasks whose failures end an episode early are not scored on their short episodes.

An env without a time limit of its own (:func:`time_limit` is None) may never end an episode, so its
episodes are cut at a step cap and scored by their return so far; ``should_stop`` (checked before
every step) ends an evaluation early with :class:`EvaluationStopped`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from gymnasium.vector import VectorEnv

from polyak.seeding import indexed_seed

Policy = Callable[[np.ndarray], np.ndarray]


class EvaluationStopped(Exception):
    """``should_stop`` said stop (a signal) before the evaluation's ``episodes`` were all played."""

    def __init__(self, played: int, episodes: int) -> None:
        super().__init__(f"stopped after {played} of {episodes} episodes")
        self.played, self.episodes = played, episodes


def never() -> bool:
    """A ``should_stop`` that never stops."""
    return False


def evaluation_seed(stream_seed: int, index: int) -> int:
    """The reset seed of evaluation number ``index`` of the stream ``stream_seed``."""
    return indexed_seed(stream_seed, index)


def episode_shares(episodes: int, num_envs: int) -> np.ndarray:
    """How many episodes each env plays: ``episodes`` split as evenly as possible, the first envs first."""
    return np.array([episodes // num_envs + (i < episodes % num_envs) for i in range(num_envs)], dtype=np.int64)


def time_limit(env: VectorEnv) -> int | None:
    """The env's own episode step limit: its spec's ``max_episode_steps`` (gymnasium's TimeLimit), else a
    vector env's own ``max_episode_steps`` (polyak/UnityReacher-v0), else that of a TimeLimit wrapping its copies
    (``TimeLimit(MyEnv(), 200)``, which has no spec); None when it has none."""
    spec = getattr(env, "spec", None)
    limit = getattr(spec, "max_episode_steps", None)
    if limit is None:
        limit = getattr(env.unwrapped, "max_episode_steps", None)
    copies = getattr(env.unwrapped, "envs", None)  # a SyncVectorEnv's: a TimeLimit of an env made without a spec
    if limit is None and copies:
        try:
            limit = copies[0].get_wrapper_attr("_max_episode_steps")
        except AttributeError:
            limit = None
    return int(limit) if isinstance(limit, int | np.integer) and limit > 0 else None


def cut_warning(env: VectorEnv, cap: int | None, what: str, how: str) -> str:
    """The one line saying that ``env`` has no time limit, so ``what`` episodes are cut at ``cap`` steps and
    ``how`` changes that."""
    spec = getattr(env, "spec", None)
    name = f"environment {spec.id!r}" if spec is not None else "the environment"
    return (f"polyak: warning: {name} has no time limit (no max_episode_steps), so {what} episodes are cut at "
            f"{cap} steps and scored by their return so far ({how} changes it)")


def run_episodes(env: VectorEnv, policy: Policy, episodes: int, seed: int | None,
                 max_episode_steps: int | None = None, should_stop: Callable[[], bool] = never,
                 on_cut: Callable[[], None] | None = None) -> list[float]:
    """Scores of ``episodes`` episodes, each env playing its share; in env order, then episode order.

    ``max_episode_steps``: an episode still running after that many steps is cut (scored by its return so
    far, ``on_cut`` called) and its env reset; None: episodes end only when the env ends them.
    ``should_stop`` is checked before every step; when it returns True, :class:`EvaluationStopped` is raised.
    """
    shares = episode_shares(episodes, env.num_envs)
    obs, _ = env.reset(seed=seed)
    running = np.zeros(env.num_envs, dtype=np.float64)
    steps = np.zeros(env.num_envs, dtype=np.int64)
    scores: list[list[float]] = [[] for _ in range(env.num_envs)]
    remaining = shares.copy()
    while remaining.any():
        if should_stop():
            raise EvaluationStopped(sum(map(len, scores)), episodes)
        obs, reward, terminated, truncated, _ = env.step(policy(obs))
        running += reward
        done = np.logical_or(terminated, truncated)
        for index in np.flatnonzero(done):
            if remaining[index] > 0:
                scores[index].append(float(running[index]))
                remaining[index] -= 1
            running[index] = 0.0
        if max_episode_steps is not None:
            steps += 1
            steps[done] = 0
            obs = _cut(env, obs, steps >= max_episode_steps, running, steps, scores, remaining, on_cut)
    return [score for env_scores in scores for score in env_scores]


def _cut(env: VectorEnv, obs: np.ndarray, cut: np.ndarray, running: np.ndarray, steps: np.ndarray,
         scores: list[list[float]], remaining: np.ndarray, on_cut: Callable[[], None] | None) -> np.ndarray:
    """Score the episodes of the ``cut`` envs by their return so far and reset those envs that still owe
    episodes (every env at once when all of them need it: vector envs that step in lockstep)."""
    if not cut.any():
        return obs
    for index in np.flatnonzero(cut):
        if remaining[index] > 0:
            scores[index].append(float(running[index]))
            remaining[index] -= 1
            if on_cut is not None:
                on_cut()
    running[cut] = 0.0
    steps[cut] = 0
    restart = cut & (remaining > 0)
    if not restart.any():
        return obs
    reset = restart | (remaining == 0)  # envs done with their share may restart too: nobody reads them
    obs, _ = env.reset() if reset.all() else env.reset(options={"reset_mask": reset})
    return obs
