"""The single-process training loop, composed of small parts: collect -> store -> learn -> evaluate -> log ->
checkpoint.

The :class:`~polyak.collector.Collector` steps the envs with the explorer and stores into the replay;
the :class:`~polyak.learner.Learner` updates from sampled batches and hands TD errors back as
priorities; :class:`~polyak.evaluator.Evaluator`, :class:`~polyak.progress.Progress`,
:class:`~polyak.checkpointer.Checkpointer` and :class:`~polyak.run_dir.RunDir` do the rest, on the
schedule of :class:`~polyak.schedule.Every`. The trainer never computes a loss and never sees gin.
"""

from __future__ import annotations

import dataclasses
import shlex
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch

from polyak.agent import Agent
from polyak.checkpoint import steps_of
from polyak.checkpointer import Checkpointer
from polyak.collector import Collector, EnvStepError
from polyak.config import Configs
from polyak.device import slow_precision
from polyak.envs.checked import EnvOutputError
from polyak.envs.source import EnvSource
from polyak.errors import CheckpointError, ConfigError, PolyakError
from polyak.evaluation import EvaluationStopped, never, time_limit
from polyak.evaluator import Evaluator
from polyak.logger import Logger
from polyak.normalization import CHECKPOINT_KEY as NORMALIZER_KEY
from polyak.normalization import ObservationNormalizer
from polyak.progress import Progress, Summary
from polyak.replay import Replay
from polyak.run_dir import RunDir
from polyak.run_parts import build_agent, build_run_parts
from polyak.schedule import Every
from polyak.scores import ScoreBoard

__all__ = ["Summary", "Trainer", "build_agent", "evaluate_and_log", "stop_signals"]


def agent_state(agent: Agent, normalizer: ObservationNormalizer | None) -> dict[str, Any]:
    """The agent's state dict, with the observation statistics when the run normalizes observations."""
    state = agent.state_dict()
    if normalizer is not None:
        state[NORMALIZER_KEY] = normalizer.state_dict()
    return state


def evaluate_and_log(evaluator: Evaluator, agent: Agent, progress: Progress, checkpointer: Checkpointer,
                     env_steps: int, logger: Logger, normalizer: ObservationNormalizer | None = None,
                     should_stop: Callable[[], bool] = never) -> bool:
    """One evaluation of the greedy policy: keep the best agent, log it; True when it reaches ``eval_stop_score``.
    EvaluationStopped, with nothing logged, when ``should_stop`` says so first.

    When that policy is not the live actor (the averaged actor, TD7's checkpoint) and
    ``TrainerConfig.eval_live_actor`` is on, the live actor plays the same start states too and its score is logged
    beside; ``should_stop`` during either stops the whole evaluation (a resumed run redoes both)."""
    index = len(progress.eval_scores)
    score = evaluator.evaluate(_normalized(agent.greedy, normalizer), index, should_stop)
    live_score = None
    if progress.config.eval_live_actor and agent.learner.evaluation_actor() not in (None, agent.learner.actor):
        live_score = evaluator.evaluate(_normalized(agent.explorer.greedy, normalizer), index, should_stop)
    if progress.is_best(score):
        checkpointer.save_best(agent_state(agent, normalizer), env_steps)
    return progress.evaluation(score, env_steps, logger, live_score)


def _normalized(greedy: Callable[[np.ndarray], np.ndarray], normalizer: ObservationNormalizer | None
                ) -> Callable[[np.ndarray], np.ndarray]:
    """``greedy`` on observations normalized with the frozen statistics, when the run normalizes them."""
    return greedy if normalizer is None else (lambda obs: greedy(normalizer.normalize(obs)))


@contextmanager
def stop_signals(on_signal: Any) -> Iterator[None]:
    """SIGINT and SIGTERM call ``on_signal(name)`` instead of killing the run (main thread only)."""
    handlers = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            handlers[sig] = signal.signal(sig, lambda signum, _frame: on_signal(signal.Signals(signum).name))
    try:
        yield
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


EvaluationCallback = Callable[[int, float], "bool | None"]
"""Called after each evaluation with (env steps, evaluation mean); returning False stops training."""


class Trainer:
    """Runs one training run into ``run_dir``.

    ``env_source`` says how the env is made (default: from ``TrainerConfig.env_id``; an env instance or function
    given to :func:`polyak.train` otherwise) and is recorded in the run's ``env.json``. ``on_evaluation`` is called
    after each evaluation with the env steps and the evaluation mean; when it returns False, training stops as at
    the end of its budget (a checkpoint and ``summary.json``), e.g. for early stopping or Optuna pruning.
    """

    def __init__(self, configs: Configs, run_dir: Path | RunDir, operative_config: str = "",
                 env_source: EnvSource | None = None, on_evaluation: EvaluationCallback | None = None) -> None:
        self.configs = configs
        self.directory = run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
        self.run_dir = self.directory.path
        self.on_evaluation = on_evaluation
        cfg = configs.trainer
        source = env_source if env_source is not None else EnvSource.from_id(cfg.env_id)
        env = source.vector_env(cfg.num_envs, **cfg.env_kwargs)
        try:
            parts = build_run_parts(configs, self.directory, env,
                                    lambda: source.vector_env(cfg.num_envs, **cfg.env_kwargs))
        except BaseException:
            env.close()
            raise
        streams = parts.streams
        self.obs_dim, self.action_dim, self.spaces = parts.obs_dim, parts.action_dim, parts.spaces
        self.evaluator, self.agent, self.checkpointer = parts.evaluator, parts.agent, parts.checkpointer
        self.normalizer = (ObservationNormalizer(self.obs_dim, cfg.observation_clip)
                           if cfg.normalize_observations else None)
        self.learner, self.explorer = self.agent.learner, self.agent.explorer
        self.replay = Replay(configs.replay, configs.agent.gamma, cfg.num_envs, self.obs_dim, self.action_dim,
                             np.random.default_rng(streams.sampler), hard_target_every=self.learner.hard_target_every)
        self.collector = Collector(
            env, self.explorer, self._store, ScoreBoard(cfg.num_envs, cfg.solve_window, cfg.score_mean_over_envs),
            env_seed=streams.env_seed, random_steps=cfg.start_steps,
            random_rng=np.random.default_rng(streams.exploration), normalizer=self.normalizer,
            on_restart=self.replay.assembler.clear,  # resume that abandons episodes drops their windows
            random_until_episode_end=cfg.random_until_episode_end,
        )
        self.progress = Progress(cfg, self.collector.scores)
        self.metrics: dict[str, torch.Tensor] = {}  # of the newest learning step
        self.elapsed = 0.0
        self.metrics_bytes = 0
        self._stop_signal: str | None = None
        self._eval_pending = False  # a signal cut the evaluation due at these env steps short: redo it first
        self._stop_due = False  # the newest evaluation reached eval_stop_score but the callback raised before the stop
        try:
            self.directory.create(operative_config, configs, env_source=source.to_json())
        except PolyakError:
            self._close_envs()
            raise

    @property
    def env_steps(self) -> int:
        return self.collector.env_steps

    # ------------------------------------------------------------------ the parts' glue
    def _store(self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, next_obs: np.ndarray,
               terminated: np.ndarray, done: np.ndarray) -> None:
        """The collector's sink: n-step transitions into replay, at their TD error when the config asks."""
        transitions = self.replay.assemble(obs, action, reward, next_obs, terminated, done)
        if len(transitions):
            td = None
            if self.replay.wants_td_errors:
                normalized = transitions if self.normalizer is None else dataclasses.replace(
                    transitions, obs=self.normalizer.normalize(transitions.obs),
                    next_obs=self.normalizer.normalize(transitions.next_obs))
                td = self.learner.td_errors(normalized)
            self.replay.insert(transitions, td)

    def _learn(self, steps: int | None = None) -> None:
        """``learn_steps`` (or ``steps``) updates; each batch's TD errors go back to the replay as priorities."""
        batch_size = self.configs.agent.batch_size
        for _ in range(self.configs.trainer.learn_steps if steps is None else steps):
            if len(self.replay) < self.configs.replay.min_size:  # buffer_life emptied it
                break
            batch = self.replay.sample(batch_size, self.learner.device)
            if self.normalizer is not None:  # replay keeps raw observations; today's statistics normalize them
                batch.obs = self.normalizer.normalize_tensor(batch.obs)
                batch.next_obs = self.normalizer.normalize_tensor(batch.next_obs)
            result = self.learner.update(batch)
            assert batch.indices is not None and result.td_errors is not None
            self.replay.update_priorities(batch.indices, result.td_errors)
            self.metrics = {**result.metrics, "td_error": result.td_errors}

    def _evaluate_and_log(self, logger: Logger) -> bool:
        assert self.evaluator is not None
        try:
            stop = evaluate_and_log(self.evaluator, self.agent, self.progress, self.checkpointer, self.env_steps,
                                    logger, self.normalizer, lambda: self._stop_signal is not None)
        except EvaluationStopped:  # a signal: the run checkpoints without it and a resume redoes it
            self._eval_pending = True
            return False
        except EnvOutputError as error:  # the evaluation env's fault: checkpointed without it, as for a signal
            self._eval_pending = True
            raise self._env_failed(str(error), logger, during="evaluation") from None
        self._eval_pending = False
        if self.on_evaluation is None:
            return stop
        try:
            carry_on = self.on_evaluation(self.env_steps, self.progress.eval_scores[-1])
        except BaseException as error:
            self._stop_due = stop  # a resume then ends where this run would have, instead of training on
            try:  # the evaluation is logged: a resume goes on from here, not from the start
                self._checkpoint(logger)
                saved = "a checkpoint was saved (resume the run to go on)"
            except Exception as checkpoint_error:  # the callback's exception is the one to raise
                saved = f"no checkpoint could be saved ({checkpoint_error})"
            logger.message(f"the evaluation callback raised {type(error).__name__} at {self.env_steps} env steps; "
                           f"{saved}")
            raise
        if carry_on is False:
            logger.message(f"the evaluation callback stopped training at {self.env_steps} env steps")
            return True
        return stop

    # ------------------------------------------------------------------ checkpoints
    def _state(self) -> dict[str, Any]:
        return {
            "agent": agent_state(self.agent, self.normalizer),
            "replay": self.replay.state_dict(),
            "trainer": {
                **self.collector.state_dict(), **self.progress.state_dict(), "torch_rng": torch.get_rng_state(),
                "elapsed": self.elapsed, "metrics_bytes": self.metrics_bytes, "eval_pending": self._eval_pending,
                "stop_due": self._stop_due,
                "metrics": {k: v.detach().cpu() for k, v in self.metrics.items()},
            },
        }

    def _checkpoint(self, logger: Logger | None = None) -> None:
        """A full checkpoint; metrics.csv is flushed first and its length recorded, so resume can cut it back."""
        if logger is not None:
            logger.flush()
        self.metrics_bytes = self.directory.metrics.stat().st_size if self.directory.metrics.exists() else 0
        self.checkpointer.save(self._state(), self.learner, self.env_steps)

    def restore(self, checkpoint: Path | None = None) -> Path:
        """Continue from ``checkpoint`` (default: the newest complete one in the run directory); a ConfigError, with
        nothing in the run directory changed, when it is past ``TrainerConfig.max_env_steps``."""
        checkpoint, state = self.checkpointer.load(checkpoint, self.learner)
        try:
            self.agent.load_state_dict(state["agent"])
            if self.normalizer is not None:
                self.normalizer.load_state_dict(state["agent"][NORMALIZER_KEY])
            self.replay.load_state_dict(state["replay"])
            trainer = state["trainer"]
            torch.set_rng_state(trainer["torch_rng"])
            self.progress.load_state_dict(trainer)
            self.elapsed = float(trainer["elapsed"])
            self.metrics_bytes = int(trainer["metrics_bytes"])
            self._eval_pending = bool(trainer.get("eval_pending", False))
            self._stop_due = bool(trainer.get("stop_due", False))  # absent before 2026-12-01
            self.metrics = {k: v.to(self.learner.device) for k, v in trainer["metrics"].items()}
            warnings = self.collector.load_state_dict(trainer)
        except EnvStepError as error:
            raise PolyakError(f"environment {self.configs.trainer.env_id} failed while the run's env state was "
                              f"rebuilt from checkpoint {checkpoint.name}: {error}; the checkpoint is kept") from None
        except (KeyError, TypeError) as error:
            raise CheckpointError(f"checkpoint {checkpoint} is incomplete (missing {error})") from None
        except (RuntimeError, ValueError) as error:
            first = str(error).strip().splitlines()[0]
            raise CheckpointError(f"checkpoint {checkpoint} does not match the config: {first}") from None
        budget = self.configs.trainer.max_env_steps
        if self.env_steps > budget:  # equal: a run stopped before its summary, finished; refused before any write
            raise ConfigError(f"{self.run_dir} is already at {self.env_steps} env steps, past "
                              f"TrainerConfig.max_env_steps = {budget}; resume with a larger budget, e.g. "
                              "--gin-param TrainerConfig.max_env_steps=...")
        for warning in warnings:
            print(f"polyak: warning: {warning}", flush=True)
        if self.directory.metrics.exists():
            with open(self.directory.metrics, "r+b") as handle:  # drop rows written after the checkpoint
                handle.truncate(self.metrics_bytes)
        return checkpoint

    # ------------------------------------------------------------------ the loop
    def _on_signal(self, name: str) -> None:
        self._stop_signal = name

    def _close_envs(self) -> None:
        self.collector.env.close()
        if self.evaluator is not None:
            self.evaluator.close()

    def close(self) -> None:
        """Close the envs and let go of the run directory: for a trainer that will not run (a refused resume)."""
        self._close_envs()
        self.directory.release()

    def run(self) -> Summary:
        cfg = self.configs.trainer
        if (slow := slow_precision(self.configs.agent, self.agent.learner.device)) is not None:
            print(f"polyak: warning: {slow}", flush=True)
        if time_limit(self.collector.env) is None:
            print(f"polyak: warning: environment {cfg.env_id} has no time limit (no max_episode_steps), so a training "
                  "episode ends only when the env itself ends it, and if it never does the run gives no episode "
                  "scores: register the env with max_episode_steps or wrap it in gymnasium.wrappers.TimeLimit",
                  flush=True)
        started = time.perf_counter() - self.elapsed
        self.directory.summary.unlink(missing_ok=True)  # a finished run trained further is unfinished until it ends
        try:
            logger = Logger(self.run_dir, cfg.max_env_steps, cfg.progress_bar, initial_env_steps=self.env_steps)
            try:
                with stop_signals(self._on_signal):
                    summary = self._loop(logger, started)
            finally:
                logger.close()
                self._close_envs()
            if summary.interrupted is None:
                self.directory.write_summary(summary.__dict__)
        finally:
            self.directory.release()
        return summary

    def _loop(self, logger: Logger, started: float) -> Summary:
        cfg = self.configs.trainer
        start = self.env_steps
        learn = Every(cfg.learn_every, self.collector.iterations)
        evaluate, checkpoint = Every(cfg.eval_interval, start), Every(cfg.checkpoint_interval, start)
        log = Every(cfg.log_interval, start)
        last_log_steps, last_log_time = start, time.perf_counter()
        redone = self._eval_pending and self.evaluator is not None and self._evaluate_and_log(logger)
        stop = redone or self._resumed_at_stop(logger)
        while not stop and self.env_steps < cfg.max_env_steps and self._stop_signal is None:
            try:
                step = self.collector.step()
            except EnvStepError as error:
                raise self._env_failed(str(error), logger) from None
            logger.advance(cfg.num_envs)
            can_learn = len(self.replay) >= self.configs.replay.min_size
            if learn.due(self.collector.iterations) and can_learn and not self.agent.trains_at_episode_ends:
                self._learn()
            try:
                recorded = self.collector.end_step(step)
            except EnvStepError as error:  # the reset after every copy's episode ended
                raise self._env_failed(str(error), logger, keep=False) from None
            burst = self.agent.end_step(step.reward, step.done, can_learn)  # TD7's checkpoints (0 otherwise)
            if burst:
                self._learn(burst)
            self.progress.episodes(recorded, self.env_steps, self.metrics, self.explorer.noise.epsilon, logger)

            stop = self._evaluate_and_log(logger) if evaluate.due(self.env_steps) else False
            if log.due(self.env_steps):
                now = time.perf_counter()
                self._log_scalars(logger, (self.env_steps - last_log_steps) / max(now - last_log_time, 1e-9))
                last_log_steps, last_log_time = self.env_steps, now
            self.elapsed = time.perf_counter() - started
            if checkpoint.due(self.env_steps):
                self._checkpoint(logger)
            stop = self.progress.solved_now(self.env_steps, logger) or stop
            if self.progress.episode_limit_reached():
                break

        ended_unscored = self.progress.last_eval_steps != self.env_steps  # between evaluations, or never evaluated
        if self._stop_signal is None and ended_unscored and self.evaluator is not None:
            self._evaluate_and_log(logger)  # training ended between evaluations: the final policy is scored too
        self.elapsed = time.perf_counter() - started
        self._checkpoint(logger)
        return self.progress.summary(self.env_steps, self.learner.updates, self.elapsed, self._stop_signal)

    def _env_failed(self, problem: str, logger: Logger, keep: bool = True, during: str = "") -> PolyakError:
        """The error that ends a run whose env failed with ``problem`` (``during`` an evaluation: its evaluation
        env), after a checkpoint when ``keep`` and the run had trained (a failure the env can get over, or that a
        fix of the env's code ends, then resumes from there)."""
        env = f"environment {self.configs.trainer.env_id}" + (f" ({during})" if during else "")
        what = f"{env} failed after {self.env_steps:,} env steps: {problem}"
        try:
            kept: int | None = steps_of(self.directory.newest_checkpoint())
        except CheckpointError:
            kept = None
        resume = f"once the env is fixed: polyak train --resume {shlex.quote(str(self.directory.path))}"
        if keep and self.env_steps > (kept or 0):
            self._checkpoint(logger)
            return PolyakError(f"{what}; a checkpoint was saved there ({resume})")
        if kept is not None:
            return PolyakError(f"{what}; the run's checkpoint at {kept:,} env steps is kept ({resume})")
        done = "nothing was trained" if self.env_steps == 0 else "this failure left no state to save"
        return PolyakError(f"{what}; {done}, so there is no checkpoint: fix the env and train again into another "
                           f"run directory (or delete {shlex.quote(str(self.directory.path))})")

    def _resumed_at_stop(self, logger: Logger) -> bool:
        """True when the checkpoint was saved at an evaluation that reached ``eval_stop_score`` (still reached under
        the resumed config) and the evaluation callback raised before the run could stop."""
        stop_score = self.configs.trainer.eval_stop_score
        due = (self._stop_due and stop_score is not None and bool(self.progress.eval_scores)
               and self.progress.eval_scores[-1] >= stop_score)
        self._stop_due = False
        if due:
            logger.message(f"the evaluation at {self.env_steps} env steps had reached eval_stop_score "
                           f"{stop_score}: the run ends there")
        return due

    def _log_scalars(self, logger: Logger, env_steps_per_s: float) -> None:
        scalars: dict[str, Any] = {"time/env_steps_per_s": env_steps_per_s, "replay/size": len(self.replay),
                                   "rollout/epsilon": self.explorer.noise.epsilon}
        scalars.update({f"train/{k}": float(v.mean()) for k, v in self.metrics.items()})
        logger.scalars(self.env_steps, scalars)
        logger.flush()
