"""Episode bookkeeping: per-env running scores, the moving window and the solve criterion."""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np


class ScoreBoard:
    """Accumulates rewards per env and records finished episodes.

    With ``mean_over_envs`` one episode is recorded per round of ``num_envs`` finished env
    episodes, scored by their mean (Udacity's Reacher: the score is the mean over 20 arms).
    """

    def __init__(self, num_envs: int, window: int, mean_over_envs: bool) -> None:
        self.num_envs = num_envs
        self.window_size = window
        self.mean_over_envs = mean_over_envs
        self.running = np.zeros(num_envs, dtype=np.float64)
        self.pending: list[float] = []
        self.window: deque[float] = deque(maxlen=window)
        self.episodes = 0
        self.best_score = -np.inf
        self.best_window_mean = -np.inf

    def add(self, rewards: np.ndarray, done: np.ndarray) -> list[float]:
        """Add one step of rewards; returns the scores of episodes recorded by this step."""
        self.running += rewards
        finished = self.running[done].tolist()
        self.running[done] = 0.0
        if not self.mean_over_envs:
            recorded = finished
        else:
            self.pending.extend(finished)
            recorded = []
            while len(self.pending) >= self.num_envs:
                recorded.append(float(np.mean(self.pending[: self.num_envs])))
                del self.pending[: self.num_envs]
        for score in recorded:
            self.episodes += 1
            self.window.append(score)
            self.best_score = max(self.best_score, score)
            if self.window_full:
                self.best_window_mean = max(self.best_window_mean, self.window_mean)
        return recorded

    @property
    def window_mean(self) -> float:
        """Mean of the last ``window`` episodes (of those so far while fewer)."""
        return float(np.mean(self.window)) if self.window else float("nan")

    @property
    def window_full(self) -> bool:
        return len(self.window) == self.window_size

    def solved(self, solve_score: float | None) -> bool:
        """A full window whose mean reaches ``solve_score``."""
        return solve_score is not None and self.window_full and self.window_mean >= solve_score

    def state_dict(self) -> dict[str, Any]:
        return {
            "running": self.running.copy(), "pending": list(self.pending), "window": list(self.window),
            "episodes": self.episodes, "best_score": float(self.best_score),
            "best_window_mean": float(self.best_window_mean),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.running[:] = state["running"]
        self.pending = [float(x) for x in state["pending"]]
        self.window = deque((float(x) for x in state["window"]), maxlen=self.window_size)
        self.episodes = int(state["episodes"])
        self.best_score = float(state["best_score"])
        self.best_window_mean = float(state["best_window_mean"])
