"""Deterministic evaluation: the policy without exploration noise on its own env instance."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from gymnasium.vector import VectorEnv

Policy = Callable[[np.ndarray], np.ndarray]


def run_episodes(env: VectorEnv, policy: Policy, episodes: int, seed: int | None) -> list[float]:
    """Scores of the first ``episodes`` episodes that finish, stepping all envs together."""
    obs, _ = env.reset(seed=seed)
    running = np.zeros(env.num_envs, dtype=np.float64)
    finished: list[float] = []
    while len(finished) < episodes:
        obs, reward, terminated, truncated, _ = env.step(policy(obs))
        running += reward
        done = np.logical_or(terminated, truncated)
        if done.any():
            finished.extend(running[done].tolist())
            running[done] = 0.0
    return finished[:episodes]
