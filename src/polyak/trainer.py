"""The training loop: collect -> store -> learn -> evaluate -> log -> checkpoint.

The trainer owns the env, agent, replay, logger and checkpoints; it never computes a loss.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from polyak import __version__
from polyak.agent import Agent
from polyak.checkpoint import prune_checkpoints, save_checkpoint, step_name
from polyak.config import Configs
from polyak.envs import final_observations, make_env
from polyak.errors import PolyakError
from polyak.evaluation import run_episodes
from polyak.logger import Logger
from polyak.replay import ReplayStorage, UniformSampler
from polyak.scores import ScoreBoard


@dataclass
class Summary:
    """What ``summary.json`` records about a finished run."""

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


def _finite_or_none(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def build_agent(configs: Configs, obs_dim: int, action_dim: int, seed: np.random.SeedSequence) -> Agent:
    return Agent(
        obs_dim, action_dim, configs.trainer.num_envs, configs.agent, configs.actor, configs.critic,
        configs.noise, seed,
    )


class Trainer:
    """Runs one training run into ``run_dir``."""

    def __init__(self, configs: Configs, run_dir: Path, operative_config: str = "") -> None:
        self.configs = configs
        self.run_dir = run_dir
        cfg = configs.trainer
        torch.manual_seed(cfg.seed)
        env_seq, agent_seq, explore_seq, sampler_seq, eval_seq = np.random.SeedSequence(cfg.seed).spawn(5)
        self.env = make_env(cfg.env_id, cfg.num_envs)
        self.eval_env = make_env(cfg.env_id, cfg.num_envs) if cfg.eval_interval is not None else None
        self.obs_dim = int(self.env.single_observation_space.shape[0])
        self.action_dim = int(self.env.single_action_space.shape[0])
        self.env_seed = int(env_seq.generate_state(1)[0] % 2**31)
        self.eval_seed = int(eval_seq.generate_state(1)[0] % 2**31)
        self.agent = build_agent(configs, self.obs_dim, self.action_dim, agent_seq)
        self.explore_rng = np.random.default_rng(explore_seq)
        self.storage = ReplayStorage(configs.replay.capacity, self.obs_dim, self.action_dim)
        self.sampler = UniformSampler(np.random.default_rng(sampler_seq))
        self.scores = ScoreBoard(cfg.num_envs, cfg.solve_window, cfg.score_mean_over_envs)
        self.env_steps = 0
        self.iterations = 0
        self.episodes_to_solve: int | None = None
        self.eval_scores: list[float] = []
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.gin").write_text(operative_config)

    def _random_actions(self) -> np.ndarray:
        return self.explore_rng.uniform(-1.0, 1.0, size=(self.configs.trainer.num_envs, self.action_dim))

    def _learn(self) -> dict[str, torch.Tensor]:
        metrics: dict[str, torch.Tensor] = {}
        batch_size = self.configs.agent.batch_size
        for _ in range(self.configs.trainer.learn_steps):
            indices, _ = self.sampler.sample(len(self.storage), batch_size)
            batch = self.storage.gather(indices, self.configs.agent.gamma, self.agent.device)
            metrics = self.agent.update(batch)
        return metrics

    def evaluate(self) -> float:
        assert self.eval_env is not None
        scores = run_episodes(
            self.eval_env, lambda obs: self.agent.act(obs, explore=False), self.configs.trainer.eval_episodes,
            self.eval_seed,
        )
        return float(np.mean(scores))

    def _checkpoint(self) -> None:
        directory = self.run_dir / "checkpoints"
        state = {
            "agent": self.agent.state_dict(),
            "trainer": {
                "env_steps": self.env_steps, "iterations": self.iterations, "scores": self.scores.state_dict(),
                "explore_rng": self.explore_rng.bit_generator.state,
            },
        }
        meta = {
            "polyak_version": __version__, "env_id": self.configs.trainer.env_id, "obs_dim": self.obs_dim,
            "action_dim": self.action_dim, "env_steps": self.env_steps,
        }
        save_checkpoint(directory, step_name(self.env_steps), state, meta)
        prune_checkpoints(directory, self.configs.trainer.keep_checkpoints)

    def run(self) -> Summary:
        cfg = self.configs.trainer
        started = time.perf_counter()
        logger = Logger(self.run_dir, cfg.max_env_steps, cfg.progress_bar)
        try:
            summary = self._loop(logger, started)
        finally:
            logger.close()
            self.env.close()
            if self.eval_env is not None:
                self.eval_env.close()
        (self.run_dir / "summary.json").write_text(json.dumps(summary.__dict__, indent=2) + "\n")
        return summary

    def _loop(self, logger: Logger, started: float) -> Summary:
        cfg = self.configs.trainer
        obs, _ = self.env.reset(seed=self.env_seed)
        metrics: dict[str, torch.Tensor] = {}
        losses: dict[str, float] = {}
        last_log_steps, last_log_time = 0, time.perf_counter()
        while self.env_steps < cfg.max_env_steps:
            action = self._random_actions() if self.env_steps < cfg.start_steps else self.agent.act(obs, explore=True)
            next_obs, reward, terminated, truncated, info = self.env.step(action)
            done = np.logical_or(terminated, truncated)
            self.storage.add(obs, action, reward, final_observations(next_obs, done, info), terminated)
            obs = next_obs
            self.iterations += 1
            self.env_steps += cfg.num_envs
            logger.advance(cfg.num_envs)

            if len(self.storage) >= self.configs.replay.min_size and self.iterations % cfg.learn_every == 0:
                metrics = self._learn() or metrics

            recorded = self.scores.add(reward, done)
            if done.any():
                self.agent.reset_noise(done)
            if recorded:
                losses = {k: float(metrics[k]) for k in ("critic_loss", "actor_loss") if k in metrics}
                self._check_finite(losses)
            for score in recorded:
                logger.episode(
                    self.env_steps, self.scores.episodes, score, self.scores.window_mean,
                    self.scores.best_window_mean, self.scores.best_score, losses, self.agent.noise.epsilon,
                )

            if cfg.eval_interval is not None and self.env_steps % cfg.eval_interval < cfg.num_envs:
                score = self.evaluate()
                self.eval_scores.append(score)
                logger.evaluation(self.env_steps, self.scores.episodes, score)
                if cfg.eval_stop_score is not None and score >= cfg.eval_stop_score:
                    logger.message(f"evaluation mean {score:.2f} >= {cfg.eval_stop_score}: stopping")
                    break

            if self.env_steps - last_log_steps >= cfg.log_interval:
                now = time.perf_counter()
                scalars: dict[str, Any] = {
                    "time/env_steps_per_s": (self.env_steps - last_log_steps) / max(now - last_log_time, 1e-9),
                    "replay/size": len(self.storage),
                    "rollout/epsilon": self.agent.noise.epsilon,
                }
                scalars.update({f"train/{k}": float(v.mean()) for k, v in metrics.items()})
                logger.scalars(self.env_steps, scalars)
                logger.flush()
                last_log_steps, last_log_time = self.env_steps, now

            if cfg.checkpoint_interval is not None and self.env_steps % cfg.checkpoint_interval < cfg.num_envs:
                self._checkpoint()

            if self.episodes_to_solve is None and self.scores.solved(cfg.solve_score):
                self.episodes_to_solve = self.scores.episodes
                logger.message(
                    f"solved after {self.scores.episodes} episodes: {cfg.solve_window}-episode mean "
                    f"{self.scores.window_mean:.2f} >= {cfg.solve_score}"
                )
                break
            if cfg.max_episodes is not None and self.scores.episodes >= cfg.max_episodes:
                break

        self._checkpoint()
        logger.flush()
        return Summary(
            solved=self.episodes_to_solve is not None,
            episodes_to_solve=self.episodes_to_solve,
            best_window_mean=_finite_or_none(self.scores.best_window_mean),
            final_window_mean=_finite_or_none(self.scores.window_mean),
            env_steps=self.env_steps,
            episodes=self.scores.episodes,
            updates=self.agent.updates,
            wall_seconds=round(time.perf_counter() - started, 3),
            seed=cfg.seed,
            env_id=cfg.env_id,
            final_eval=self.eval_scores[-1] if self.eval_scores else None,
            best_eval=max(self.eval_scores) if self.eval_scores else None,
        )

    @staticmethod
    def _check_finite(losses: dict[str, float]) -> None:
        bad = [name for name, value in losses.items() if not math.isfinite(value)]
        if bad:
            raise PolyakError(f"training diverged: {', '.join(bad)} is not finite")
