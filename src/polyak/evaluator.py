"""Evaluation during training: an acting policy on its own env instance, new start states each time."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from gymnasium.vector import VectorEnv

from polyak.config import TrainerConfig
from polyak.evaluation import Policy, cut_warning, evaluation_seed, never, run_episodes, time_limit

CAP_BINDING = "TrainerConfig.eval_max_episode_steps"


class Evaluator:
    """Evaluation number ``index`` resets its env from ``evaluation_seed(stream_seed, index)``.

    The policy is an argument, not the training actor: any acting policy (a deterministic actor,
    a checkpoint policy as in TD7) can be scored. On an env without a time limit of its own, episodes are
    cut at ``max_episode_steps`` (one warning, the first time it happens).
    """

    def __init__(self, env: VectorEnv, episodes: int, stream_seed: int,
                 max_episode_steps: int = TrainerConfig.eval_max_episode_steps) -> None:
        self.env, self.episodes, self.stream_seed = env, episodes, stream_seed
        self.max_episode_steps = None if time_limit(env) is not None else max_episode_steps
        self._warned = False

    def evaluate(self, policy: Policy, index: int, should_stop: Callable[[], bool] = never) -> float:
        """The mean score of ``episodes`` episodes of ``policy``; :class:`~polyak.evaluation.EvaluationStopped`
        when ``should_stop`` returns True first."""
        scores = run_episodes(self.env, policy, self.episodes, evaluation_seed(self.stream_seed, index),
                              self.max_episode_steps, should_stop, self._warn_cut)
        return float(np.mean(scores))

    def _warn_cut(self) -> None:
        if not self._warned:
            self._warned = True
            print(cut_warning(self.env, self.max_episode_steps, "evaluation", CAP_BINDING), flush=True)

    def close(self) -> None:
        self.env.close()

