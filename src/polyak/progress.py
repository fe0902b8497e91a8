"""A run's progress: episode scores, evaluations, the solve criterion and the summary they end in."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from polyak.config import TrainerConfig
from polyak.errors import PolyakError
from polyak.logger import Logger
from polyak.scores import ScoreBoard


@dataclass
class Summary:
    """What ``summary.json`` records about a finished run (``interrupted`` runs write none)."""

    solved: bool
    episodes_to_solve: int | None
    best_window_mean: float | None
    final_window_mean: float | None
    env_steps: int
    episodes: int
    updates: int
    wall_seconds: float
    seed: int
    env_id: str
    final_eval: float | None
    best_eval: float | None
    interrupted: str | None = None


def finite_or_none(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def losses_of(metrics: dict[str, torch.Tensor]) -> dict[str, float]:
    """The newest critic and actor losses; a PolyakError when either is NaN or Inf."""
    return {k: float(metrics[k]) for k in ("critic_loss", "actor_loss") if k in metrics}


class Progress:
    """Records episodes and evaluations to the logger and says when the run should stop."""

    def __init__(self, config: TrainerConfig, scores: ScoreBoard) -> None:
        self.config = config
        self.scores = scores
        self.eval_scores: list[float] = []
        self.last_eval_steps: int | None = None  # env steps of the newest evaluation
        self.episodes_to_solve: int | None = None

    def episodes(self, recorded: list[float], env_steps: int, metrics: dict[str, torch.Tensor], epsilon: float,
                 logger: Logger) -> None:
        """Log episodes the score board recorded (losses: the newest learning step's)."""
        if not recorded:
            return
        losses = losses_of(metrics)
        check_finite(losses, env_steps)
        for score in recorded:
            logger.episode(env_steps, self.scores.episodes, score, self.scores.window_mean,
                           self.scores.best_window_mean, self.scores.best_score, losses, epsilon)

    def solved_now(self, env_steps: int, logger: Logger) -> bool:
        """True once, when the window mean first reaches ``solve_score``."""
        cfg = self.config
        if self.episodes_to_solve is not None or not self.scores.solved(cfg.solve_score):
            return False
        self.episodes_to_solve = self.scores.episodes
        logger.message(f"solved after {self.scores.episodes} episodes: {cfg.solve_window}-episode mean "
                       f"{self.scores.window_mean:.2f} >= {cfg.solve_score}")
        return True

    def episode_limit_reached(self) -> bool:
        return self.config.max_episodes is not None and self.scores.episodes >= self.config.max_episodes

    def is_best(self, score: float) -> bool:
        return not self.eval_scores or score > max(self.eval_scores)

    def evaluation(self, score: float, env_steps: int, logger: Logger, live_score: float | None = None) -> bool:
        """Log one evaluation (and the live actor's score beside it); True when it reaches ``eval_stop_score``."""
        self.eval_scores.append(score)
        self.last_eval_steps = env_steps
        logger.evaluation(env_steps, self.scores.episodes, score, live_score)
        stop_score = self.config.eval_stop_score
        if stop_score is not None and score >= stop_score:
            logger.message(f"evaluation mean {score:.2f} >= {stop_score}: stopping")
            return True
        return False

    def summary(self, env_steps: int, updates: int, elapsed: float, interrupted: str | None) -> Summary:
        return Summary(
            solved=self.episodes_to_solve is not None, episodes_to_solve=self.episodes_to_solve,
            best_window_mean=finite_or_none(self.scores.best_window_mean),
            final_window_mean=finite_or_none(self.scores.window_mean), env_steps=env_steps,
            episodes=self.scores.episodes, updates=updates, wall_seconds=round(elapsed, 3), seed=self.config.seed,
            env_id=self.config.env_id, final_eval=self.eval_scores[-1] if self.eval_scores else None,
            best_eval=max(self.eval_scores) if self.eval_scores else None, interrupted=interrupted,
        )

    def state_dict(self) -> dict[str, Any]:
        return {"eval_scores": list(self.eval_scores), "episodes_to_solve": self.episodes_to_solve,
                "last_eval_steps": self.last_eval_steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.eval_scores = [float(x) for x in state["eval_scores"]]
        self.last_eval_steps = state.get("last_eval_steps")  # None in checkpoints of polyak before 2026-11-29
        self.episodes_to_solve = state["episodes_to_solve"]


def check_finite(losses: dict[str, float], env_steps: int) -> None:
    bad = [name for name, value in losses.items() if not math.isfinite(value)]
    if bad:
        raise PolyakError(
            f"training diverged at env step {env_steps}: {' and '.join(bad)} became NaN or Inf; "
            "no checkpoint is written from a diverged learner, so the newest one in checkpoints/, if the run saved "
            "one before, is the last good state"
        )
