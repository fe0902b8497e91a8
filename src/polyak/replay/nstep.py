"""n-step returns, assembled in one place (Sutton 1988; Mnih et al. 2016; Hessel et al. 2018).

The trainer feeds one vector-env step at a time; each env keeps a queue of its last steps. A
window of k steps starting at s_t becomes the transition

    (s_t, a_t, sum_{i<k} gamma^i r_{t+i}, s_{t+k}, terminated, gamma^k)

emitted once it holds n steps, and at an episode end every pending window is flushed with its
real length k <= n: after a termination the target does not bootstrap (``terminated = 1``); after
a truncation it bootstraps from the true final observation with gamma^k.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Transitions:
    """A batch of (possibly multi-step) transitions ready for storage."""

    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    next_obs: np.ndarray
    terminated: np.ndarray
    discount: np.ndarray

    def __len__(self) -> int:
        return len(self.reward)


class NStepAssembler:
    """Per-env queues of up to ``n`` steps, vectorised over the ``num_envs`` parallel envs."""

    def __init__(self, n: int, gamma: float, num_envs: int, obs_dim: int, action_dim: int) -> None:
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self.n, self.gamma, self.num_envs = n, gamma, num_envs
        self.obs = np.zeros((num_envs, n, obs_dim), dtype=np.float64)
        self.action = np.zeros((num_envs, n, action_dim), dtype=np.float64)
        self.reward = np.zeros((num_envs, n), dtype=np.float64)
        self.length = np.zeros(num_envs, dtype=np.int64)
        self._slots = np.arange(n)

    def push(
        self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, next_obs: np.ndarray,
        terminated: np.ndarray, done: np.ndarray,
    ) -> Transitions:
        """Add one step per env; return the windows completed by it (possibly none).

        ``next_obs`` must be the true successor (the final observation where an episode ended) and
        ``done = terminated | truncated``.
        """
        if self.n == 1:  # one-step returns: every step is a complete window
            return Transitions(obs=np.asarray(obs), action=np.asarray(action), reward=np.asarray(reward, np.float64),
                               next_obs=np.asarray(next_obs), terminated=np.asarray(terminated, np.float64),
                               discount=np.full(self.num_envs, self.gamma))
        envs = np.arange(self.num_envs)
        self.obs[envs, self.length] = obs
        self.action[envs, self.length] = action
        self.reward[envs, self.length] = reward
        self.length += 1
        done = np.asarray(done, dtype=bool)
        terminated = np.asarray(terminated, dtype=bool)

        live = self._slots[None, :] < self.length[:, None]                 # (envs, n)
        rewards = np.where(live, self.reward, 0.0)
        returns = np.zeros_like(rewards)                                   # G[e, j] = sum_i gamma^i r[e, j+i]
        running = np.zeros(self.num_envs)
        for slot in range(self.n - 1, -1, -1):
            running = rewards[:, slot] + self.gamma * running
            returns[:, slot] = running
        full = self.length == self.n
        emit = live & (done[:, None] | (full[:, None] & (self._slots[None, :] == 0)))
        env_index, slot_index = np.nonzero(emit)
        steps = self.length[env_index] - slot_index
        out = Transitions(
            obs=self.obs[env_index, slot_index],
            action=self.action[env_index, slot_index],
            reward=returns[env_index, slot_index],
            next_obs=np.asarray(next_obs)[env_index],
            terminated=terminated[env_index].astype(np.float64),
            discount=self.gamma ** steps.astype(np.float64),
        )
        # Drop what was emitted: finished envs start empty, full windows slide by one step.
        slide = full & ~done
        self.obs[slide, :-1] = self.obs[slide, 1:]
        self.action[slide, :-1] = self.action[slide, 1:]
        self.reward[slide, :-1] = self.reward[slide, 1:]
        self.length[slide] -= 1
        self.length[done] = 0
        return out

    def clear(self) -> None:
        """Drop every pending window (the episodes they belong to were abandoned)."""
        self.length[:] = 0

    def state_dict(self) -> dict[str, Any]:
        return {"obs": self.obs.copy(), "action": self.action.copy(), "reward": self.reward.copy(),
                "length": self.length.copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for name in ("obs", "action", "reward", "length"):
            getattr(self, name)[...] = np.asarray(state[name])
