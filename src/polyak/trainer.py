"""The training loop: collect -> store -> learn -> evaluate -> log -> checkpoint.

The trainer owns the env, agent, replay, logger and checkpoints; it never computes a loss.
"""

from __future__ import annotations

import json
import math
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from polyak import __version__
from polyak.agent import Agent
from polyak.checkpoint import (
    complete_checkpoints,
    describe_mismatch,
    load_checkpoint,
    prune_checkpoints,
    save_checkpoint,
    step_name,
)
from polyak.config import Configs
from polyak.envs import final_observations, make_env
from polyak.errors import CheckpointError, PolyakError
from polyak.evaluation import evaluation_seed, run_episodes
from polyak.logger import Logger
from polyak.replay import Replay
from polyak.scores import ScoreBoard

HISTORY_LIMIT = 100_000  # env.step calls since the last full reset kept for an exact mid-episode resume


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
        self.env = make_env(cfg.env_id, cfg.num_envs, **cfg.env_kwargs)
        self.eval_env = make_env(cfg.env_id, cfg.num_envs, **cfg.env_kwargs) if cfg.eval_interval is not None else None
        self.obs_dim = int(self.env.single_observation_space.shape[0])
        self.action_dim = int(self.env.single_action_space.shape[0])
        self.env_seed = int(env_seq.generate_state(1)[0] % 2**31)
        self.eval_seed = int(eval_seq.generate_state(1)[0] % 2**31)
        self.agent = build_agent(configs, self.obs_dim, self.action_dim, agent_seq)
        self.explore_rng = np.random.default_rng(explore_seq)
        self.replay = Replay(configs.replay, configs.agent.gamma, cfg.num_envs, self.obs_dim, self.action_dim,
                             np.random.default_rng(sampler_seq), self.agent.td_errors)
        self.scores = ScoreBoard(cfg.num_envs, cfg.solve_window, cfg.score_mean_over_envs)
        self.env_steps = 0
        self.iterations = 0
        self.episodes_to_solve: int | None = None
        self.eval_scores: list[float] = []
        self.resets = 0  # full resets: every env finished its episode at the same step
        self.history: list[np.ndarray] | None = []  # actions since the last full reset
        self.obs: np.ndarray | None = None
        self.elapsed = 0.0
        self.metrics_bytes = 0
        self._stop_signal: str | None = None
        self.metrics: dict[str, torch.Tensor] = {}  # of the newest learning step
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
            if operative_config:
                (run_dir / "config.gin").write_text(operative_config)
        except OSError as error:
            self.env.close()
            raise PolyakError(f"cannot write run directory {run_dir}: {error.strerror or error}") from None

    def _random_actions(self) -> np.ndarray:
        return self.explore_rng.uniform(-1.0, 1.0, size=(self.configs.trainer.num_envs, self.action_dim))

    def _learn(self) -> dict[str, torch.Tensor]:
        metrics: dict[str, torch.Tensor] = {}
        batch_size = self.configs.agent.batch_size
        for _ in range(self.configs.trainer.learn_steps):
            if len(self.replay) < self.configs.replay.min_size:  # buffer_life emptied it
                break
            batch = self.replay.sample(batch_size, self.agent.device)
            metrics = self.agent.update(batch)
            self.replay.update_priorities(batch.indices, metrics["td_error"])
        return metrics

    def evaluate(self) -> float:
        assert self.eval_env is not None
        scores = run_episodes(
            self.eval_env, lambda obs: self.agent.act(obs, explore=False), self.configs.trainer.eval_episodes,
            evaluation_seed(self.eval_seed, len(self.eval_scores)),
        )
        return float(np.mean(scores))

    def _evaluate_and_log(self, logger: Logger) -> bool:
        """One evaluation: keep the best agent, log it; True when it reaches ``eval_stop_score``."""
        cfg = self.configs.trainer
        score = self.evaluate()
        if not self.eval_scores or score > max(self.eval_scores):
            self._save_best()
        self.eval_scores.append(score)
        logger.evaluation(self.env_steps, self.scores.episodes, score)
        if cfg.eval_stop_score is not None and score >= cfg.eval_stop_score:
            logger.message(f"evaluation mean {score:.2f} >= {cfg.eval_stop_score}: stopping")
            return True
        return False

    # ------------------------------------------------------------------ environment state
    def _reset_seed(self, index: int) -> int:
        return int(np.random.SeedSequence(self.env_seed, spawn_key=(index,)).generate_state(1)[0] % 2**31)

    def _full_reset(self) -> np.ndarray:
        """Reset every env with a seed derived from the reset count, so resume can rebuild the state."""
        obs, _ = self.env.reset(seed=self._reset_seed(self.resets))
        self.history = []
        return obs

    def _replay_history(self, history: np.ndarray | None, expected_obs: np.ndarray) -> np.ndarray:
        """Rebuild the env state of a checkpoint: the same reset seed, then the same actions."""
        if history is None:
            print("polyak: warning: too many steps since the last reset to restore the environment exactly; "
                  "starting fresh episodes", flush=True)
            self.scores.running[:] = 0.0
            return self._full_reset()
        obs, _ = self.env.reset(seed=self._reset_seed(self.resets))
        for action in history:
            obs, *_ = self.env.step(action)
        self.history = list(history)
        if not np.array_equal(obs, expected_obs):
            print("polyak: warning: the environment is not deterministic; the resumed run will differ from an "
                  "uninterrupted one", flush=True)
            return expected_obs
        return obs

    # ------------------------------------------------------------------ checkpoints
    def _state(self) -> dict[str, Any]:
        history = None if self.history is None else (
            np.stack(self.history) if self.history else np.zeros((0, self.configs.trainer.num_envs, self.action_dim))
        )
        return {
            "agent": self.agent.state_dict(),
            "replay": self.replay.state_dict(),
            "trainer": {
                "env_steps": self.env_steps, "iterations": self.iterations, "scores": self.scores.state_dict(),
                "explore_rng": self.explore_rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
                "resets": self.resets, "history": history, "obs": self.obs,
                "eval_scores": list(self.eval_scores), "episodes_to_solve": self.episodes_to_solve,
                "elapsed": self.elapsed, "metrics_bytes": self.metrics_bytes,
                "metrics": {k: v.detach().cpu() for k, v in self.metrics.items()},
            },
        }

    def _meta(self) -> dict[str, Any]:
        return {
            "polyak_version": __version__, "env_id": self.configs.trainer.env_id, "obs_dim": self.obs_dim,
            "action_dim": self.action_dim, "num_envs": self.configs.trainer.num_envs, "env_steps": self.env_steps,
        }

    def _check_parameters_finite(self) -> None:
        for name in ("actor", "critic"):
            module = getattr(self.agent, name)
            if not all(bool(torch.isfinite(p).all()) for p in module.parameters()):
                raise PolyakError(
                    f"training diverged: the {name} has NaN or Inf parameters at env step {self.env_steps}; "
                    "no checkpoint was written (the newest one in checkpoints/ is the last good state)"
                )

    def _checkpoint(self, logger: Logger | None = None) -> None:
        """Write a full checkpoint atomically (never one holding NaN), keep the newest N."""
        self._check_parameters_finite()
        if logger is not None:
            logger.flush()
        metrics = self.run_dir / "metrics.csv"
        self.metrics_bytes = metrics.stat().st_size if metrics.exists() else 0
        directory = self.run_dir / "checkpoints"
        try:
            save_checkpoint(directory, step_name(self.env_steps), self._state(), self._meta())
        except OSError as error:
            raise PolyakError(
                f"could not write a checkpoint to {directory}: {error.strerror or error}; "
                "the previous checkpoints are kept"
            ) from None
        prune_checkpoints(directory, self.configs.trainer.keep_checkpoints)

    def _save_best(self) -> None:
        """The agent alone (no replay) at its best evaluation, in ``checkpoints/best``."""
        try:
            save_checkpoint(self.run_dir / "checkpoints", "best", {"agent": self.agent.state_dict()}, self._meta())
        except OSError as error:
            raise PolyakError(f"could not write the best checkpoint: {error.strerror or error}") from None

    def restore(self, checkpoint: Path | None = None) -> Path:
        """Continue from ``checkpoint`` (default: the newest complete one in the run directory)."""
        if checkpoint is None:
            found = complete_checkpoints(self.run_dir / "checkpoints")
            if not found:
                raise CheckpointError(f"{self.run_dir} has no complete checkpoint to resume from")
            checkpoint = found[-1]
        state, meta = load_checkpoint(checkpoint)
        mine = self._meta()
        for key in ("env_id", "obs_dim", "action_dim", "num_envs"):
            if key in meta and meta[key] != mine[key]:
                raise CheckpointError(
                    f"checkpoint {checkpoint} was written for {key}={meta[key]!r} but the config gives {mine[key]!r}"
                )
        for net in ("actor", "critic"):
            mismatch = describe_mismatch(getattr(self.agent, net).state_dict(), state.get("agent", {}).get(net, {}))
            if mismatch:
                raise CheckpointError(f"checkpoint {checkpoint.name} does not match the {net} config: {mismatch}")
        try:
            self.agent.load_state_dict(state["agent"])
            self.replay.load_state_dict(state["replay"])
            trainer = state["trainer"]
        except (KeyError, TypeError) as error:
            raise CheckpointError(f"checkpoint {checkpoint} is incomplete (missing {error})") from None
        except (RuntimeError, ValueError) as error:
            first = str(error).strip().splitlines()[0]
            raise CheckpointError(f"checkpoint {checkpoint} does not match the config: {first}") from None
        self.env_steps, self.iterations = int(trainer["env_steps"]), int(trainer["iterations"])
        self.scores.load_state_dict(trainer["scores"])
        self.explore_rng.bit_generator.state = trainer["explore_rng"]
        torch.set_rng_state(trainer["torch_rng"])
        self.resets = int(trainer["resets"])
        self.eval_scores = [float(x) for x in trainer["eval_scores"]]
        self.episodes_to_solve = trainer["episodes_to_solve"]
        self.elapsed = float(trainer["elapsed"])
        self.metrics_bytes = int(trainer["metrics_bytes"])
        self.metrics = {k: v.to(self.agent.device) for k, v in trainer["metrics"].items()}
        self.obs = self._replay_history(trainer["history"], np.asarray(trainer["obs"]))
        metrics = self.run_dir / "metrics.csv"
        if metrics.exists():
            with open(metrics, "r+b") as handle:  # drop rows written after the checkpoint
                handle.truncate(self.metrics_bytes)
        return checkpoint

    # ------------------------------------------------------------------ the loop
    def _on_signal(self, signum: int, _frame: Any) -> None:
        self._stop_signal = signal.Signals(signum).name

    def run(self) -> Summary:
        cfg = self.configs.trainer
        started = time.perf_counter() - self.elapsed
        handlers = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                handlers[sig] = signal.signal(sig, self._on_signal)
        logger = Logger(self.run_dir, cfg.max_env_steps, cfg.progress_bar, initial_env_steps=self.env_steps)
        try:
            summary = self._loop(logger, started)
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
            logger.close()
            self.env.close()
            if self.eval_env is not None:
                self.eval_env.close()
        if summary.interrupted is None:
            (self.run_dir / "summary.json").write_text(json.dumps(summary.__dict__, indent=2) + "\n")
        return summary

    def _store(self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, next_obs: np.ndarray,
               terminated: np.ndarray, done: np.ndarray, info: dict) -> None:
        self.replay.add(obs, action, reward, final_observations(next_obs, done, info), terminated, done)

    def _step_env(self, action: np.ndarray, logger: Logger) -> tuple:
        try:
            return self.env.step(action)
        except Exception as error:
            self._checkpoint(logger)
            raise PolyakError(
                f"environment {self.configs.trainer.env_id} failed at env step {self.env_steps}: "
                f"{type(error).__name__}: {error}; a checkpoint was saved (resume with --resume)"
            ) from None

    def _loop(self, logger: Logger, started: float) -> Summary:
        cfg = self.configs.trainer
        obs = self._full_reset() if self.obs is None else self.obs
        losses: dict[str, float] = {}
        last_log_steps, last_log_time = self.env_steps, time.perf_counter()
        while self.env_steps < cfg.max_env_steps and self._stop_signal is None:
            explore = self.env_steps >= cfg.start_steps
            action = self.agent.act(obs, explore=True) if explore else self._random_actions()
            next_obs, reward, terminated, truncated, info = self._step_env(action, logger)
            done = np.logical_or(terminated, truncated)
            self._store(obs, action, reward, next_obs, terminated, done, info)
            if self.history is not None:
                self.history.append(np.array(action, copy=True))
                if len(self.history) > HISTORY_LIMIT:
                    self.history = None
            self.iterations += 1
            self.env_steps += cfg.num_envs
            logger.advance(cfg.num_envs)

            if len(self.replay) >= self.configs.replay.min_size and self.iterations % cfg.learn_every == 0:
                self.metrics = self._learn() or self.metrics

            recorded = self.scores.add(reward, done)
            if done.any():
                self.agent.reset_noise(done)
            if done.all():
                self.resets += 1
                next_obs = self._full_reset()
            obs = next_obs
            self.obs = obs
            if recorded:
                losses = {k: float(self.metrics[k]) for k in ("critic_loss", "actor_loss") if k in self.metrics}
                self._check_finite(losses)
            for score in recorded:
                logger.episode(
                    self.env_steps, self.scores.episodes, score, self.scores.window_mean,
                    self.scores.best_window_mean, self.scores.best_score, losses, self.agent.noise.epsilon,
                )

            stop = False
            if cfg.eval_interval is not None and self.env_steps % cfg.eval_interval < cfg.num_envs:
                stop = self._evaluate_and_log(logger)

            if self.env_steps - last_log_steps >= cfg.log_interval:
                now = time.perf_counter()
                scalars: dict[str, Any] = {
                    "time/env_steps_per_s": (self.env_steps - last_log_steps) / max(now - last_log_time, 1e-9),
                    "replay/size": len(self.replay),
                    "rollout/epsilon": self.agent.noise.epsilon,
                }
                scalars.update({f"train/{k}": float(v.mean()) for k, v in self.metrics.items()})
                logger.scalars(self.env_steps, scalars)
                logger.flush()
                last_log_steps, last_log_time = self.env_steps, now

            self.elapsed = time.perf_counter() - started
            if cfg.checkpoint_interval is not None and self.env_steps % cfg.checkpoint_interval < cfg.num_envs:
                self._checkpoint(logger)

            if self.episodes_to_solve is None and self.scores.solved(cfg.solve_score):
                self.episodes_to_solve = self.scores.episodes
                logger.message(
                    f"solved after {self.scores.episodes} episodes: {cfg.solve_window}-episode mean "
                    f"{self.scores.window_mean:.2f} >= {cfg.solve_score}"
                )
                stop = True
            if cfg.max_episodes is not None and self.scores.episodes >= cfg.max_episodes:
                stop = True
            if stop:
                break

        self.elapsed = time.perf_counter() - started
        self._checkpoint(logger)
        return Summary(
            solved=self.episodes_to_solve is not None,
            episodes_to_solve=self.episodes_to_solve,
            best_window_mean=_finite_or_none(self.scores.best_window_mean),
            final_window_mean=_finite_or_none(self.scores.window_mean),
            env_steps=self.env_steps,
            episodes=self.scores.episodes,
            updates=self.agent.updates,
            wall_seconds=round(self.elapsed, 3),
            seed=cfg.seed,
            env_id=cfg.env_id,
            final_eval=self.eval_scores[-1] if self.eval_scores else None,
            best_eval=max(self.eval_scores) if self.eval_scores else None,
            interrupted=self._stop_signal,
        )

    def _check_finite(self, losses: dict[str, float]) -> None:
        bad = [name for name, value in losses.items() if not math.isfinite(value)]
        if bad:
            raise PolyakError(
                f"training diverged at env step {self.env_steps}: {' and '.join(bad)} became NaN or Inf; "
                "the newest checkpoint in checkpoints/ is the last good state"
            )
