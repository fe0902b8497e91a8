"""Evaluation during training: an acting policy on its own env instance, new start states each time."""

from __future__ import annotations

import numpy as np
from gymnasium.vector import VectorEnv

from polyak.evaluation import Policy, evaluation_seed, run_episodes


class Evaluator:
    """Evaluation number ``index`` resets its env from ``evaluation_seed(stream_seed, index)``.

    The policy is an argument, not the training actor: any acting policy (a deterministic actor,
    a checkpoint policy as in TD7) can be scored.
    """

    def __init__(self, env: VectorEnv, episodes: int, stream_seed: int) -> None:
        self.env, self.episodes, self.stream_seed = env, episodes, stream_seed

    def evaluate(self, policy: Policy, index: int) -> float:
        """The mean score of ``episodes`` episodes of ``policy``."""
        scores = run_episodes(self.env, policy, self.episodes, evaluation_seed(self.stream_seed, index))
        return float(np.mean(scores))

    def close(self) -> None:
        self.env.close()
