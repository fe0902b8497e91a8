"""Deterministic evaluation: the policy without exploration noise on its own env instance.

Every evaluation draws new start states: its reset seed comes from a seeded stream indexed by the
evaluation's number (:func:`evaluation_seed`), so a run stays reproducible and resumable while no
two evaluations replay the same starts. With several envs, each env plays its own share of the
episodes, so tasks whose failures end an episode early are not scored on their short episodes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from gymnasium.vector import VectorEnv

from polyak.seeding import indexed_seed

Policy = Callable[[np.ndarray], np.ndarray]


def evaluation_seed(stream_seed: int, index: int) -> int:
    """The reset seed of evaluation number ``index`` of the stream ``stream_seed``."""
    return indexed_seed(stream_seed, index)


def episode_shares(episodes: int, num_envs: int) -> np.ndarray:
    """How many episodes each env plays: ``episodes`` split as evenly as possible, the first envs first."""
    return np.array([episodes // num_envs + (i < episodes % num_envs) for i in range(num_envs)], dtype=np.int64)


def run_episodes(env: VectorEnv, policy: Policy, episodes: int, seed: int | None) -> list[float]:
    """Scores of ``episodes`` episodes, each env playing its share; in env order, then episode order."""
    shares = episode_shares(episodes, env.num_envs)
    obs, _ = env.reset(seed=seed)
    running = np.zeros(env.num_envs, dtype=np.float64)
    scores: list[list[float]] = [[] for _ in range(env.num_envs)]
    remaining = shares.copy()
    while remaining.any():
        obs, reward, terminated, truncated, _ = env.step(policy(obs))
        running += reward
        for index in np.flatnonzero(np.logical_or(terminated, truncated)):
            if remaining[index] > 0:
                scores[index].append(float(running[index]))
                remaining[index] -= 1
            running[index] = 0.0
    return [score for env_scores in scores for score in env_scores]
