"""Ape-X DDPG (Horgan et al. 2018): the learner loop in the driver, rollout workers and replay shards on Ray.

The learner samples prioritized batches from the replay shards (prefetching two requests), updates
the core :class:`~polyak.learner.Learner`, sends each batch's TD errors back as priorities and
publishes its weights every ``ApexConfig.weight_push_interval`` updates; a worker gets them with its
next request. :class:`ApexTrainer` composes the parts of the single-process trainer (run directory,
evaluator, progress, checkpointer, schedules); its workers collect with the same collector.
The run directory is a normal polyak run (config.gin, metrics.csv with episode and eval rows,
TensorBoard, checkpoints, summary.json) plus ``apex.json`` with throughput and restarts.
Ape-X runs cannot be resumed: their replay lives in the shards and is not checkpointed.

What this loop supports is said in one place, :data:`APEX_REFUSALS` (checked by :func:`check_apex_configs` before
Ray starts): the shards sample with the core sampler factory (uniform, prioritized or TD7's LAP, whose max priority
resets at the learner's hard target copies), but the episodes happen in the workers, so the loop never calls
``Agent.end_step`` and refuses what needs it (TD7's checkpoint policy).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from polyak.collector import EnvStepError
from polyak.config import Algorithm, ApexConfig, Configs
from polyak.distributed.apex_pace import Pace, ReplayClient
from polyak.distributed.apex_pool import WorkerPool
from polyak.distributed.apex_replay import ReplayShard
from polyak.envs import make_env
from polyak.errors import ConfigError, PolyakError
from polyak.logger import Logger
from polyak.progress import Progress, Summary
from polyak.replay import sampler_class
from polyak.run_dir import RunDir
from polyak.run_parts import build_run_parts
from polyak.schedule import Every
from polyak.scores import ScoreBoard
from polyak.trainer import evaluate_and_log, stop_signals
from polyak.types import Batch

PREFETCH = 2  # sample requests in flight while the learner updates
REQUESTS_PER_WORKER = 2  # rollout requests queued at each worker
_SHARD_SPAWN_KEY = 7002  # shard sampling seeds: SeedSequence(run seed, spawn_key=(_SHARD_SPAWN_KEY,))

APEX_REFUSALS: tuple[tuple[str, Callable[[Configs], bool], str], ...] = (
    ("ReplayConfig.buffer_life", lambda c: c.replay.buffer_life is not None,
     "ReplayConfig.buffer_life must be None with --workers (Ape-X keeps its replay in shards)"),
    ("TrainerConfig.normalize_observations", lambda c: c.trainer.normalize_observations,
     "TrainerConfig.normalize_observations is not supported with --workers (Ape-X workers would each need the "
     "learner's running statistics); train without --workers"),
    ("TD7Config.checkpoint_policy", lambda c: c.agent.algorithm is Algorithm.TD7 and c.td7.checkpoint_policy,
     "TD7Config.checkpoint_policy is not supported with --workers (TD7's checkpoint assessment needs the episode "
     "returns of the actor it would keep, and Ape-X's workers act with stale copies at their own noise scales); "
     "bind TD7Config.checkpoint_policy = False and TD7Config.checkpoint_training = False, or train without "
     "--workers"),
)
"""The switches the Ape-X loop cannot run: (binding, applies to these configs, the one line that refuses it).

Everything else is supported: every ``ReplayConfig.sampler`` (the shards use the core sampler factory; LAP's max
priority resets at the learner's hard target copies), ``initial_priority = 'td_error'`` (computed by the workers),
n-step returns, each algorithm's learner (TD7's SALE, value clipping and hard copies; CrossQ), every exploration
noise (scaled per worker), evaluation, checkpoints, the solve and stop criteria and Weights & Biases.
"""


def check_apex_configs(configs: Configs, apex: ApexConfig) -> None:
    """Refuse, as one line, the first setting of :data:`APEX_REFUSALS` that applies, or too small a replay."""
    for _, applies, message in APEX_REFUSALS:
        if applies(configs):
            raise ConfigError(message)
    if configs.replay.capacity < apex.replay_shards * configs.agent.batch_size:
        raise ConfigError(f"ReplayConfig.capacity ({configs.replay.capacity}) must hold at least batch_size "
                          f"({configs.agent.batch_size}) rows per replay shard ({apex.replay_shards} shards)")


def updates_per_transition(configs: Configs, apex: ApexConfig) -> float | None:
    """The pace the driver keeps (None: decoupled); default: the config's single-process schedule."""
    if apex.decoupled:
        return None
    if apex.replay_ratio is not None:
        return apex.replay_ratio
    cfg = configs.trainer
    return cfg.learn_steps / (cfg.learn_every * cfg.num_envs)


def learner_threads(cores: int, worker_cpus: float) -> int:
    """Torch threads for a learner sharing a machine with workers that reserve ``worker_cpus`` cores."""
    return max(1, cores - math.ceil(worker_cpus))


def to_batch(data: dict[str, Any], device: torch.device) -> Batch:
    """A shard's NumPy batch as tensors (copied: arrays from Ray's object store are read-only)."""
    def tensor(name: str) -> torch.Tensor:
        return torch.tensor(np.asarray(data[name], dtype=np.float32), device=device)

    return Batch(obs=tensor("obs"), action=tensor("action"), reward=tensor("reward"), next_obs=tensor("next_obs"),
                 terminated=tensor("terminated"), discount=tensor("discount"),
                 weights=None if data["weights"] is None else tensor("weights"), indices=np.asarray(data["indices"]))


def worker_failure(index: int, cause: BaseException) -> str:
    """One line for an exception raised inside rollout worker ``index``: the env's own failure as the
    single-process trainer words it, anything else with its type."""
    text = str(cause).strip()
    first = text.splitlines()[0] if text else ""
    if isinstance(cause, EnvStepError):
        return f"rollout worker {index}'s environment failed: {first}"
    return f"rollout worker {index} failed: {type(cause).__name__}: {first}"

class ApexTrainer:
    """The Ape-X loop: Ray workers and shards feed a learner; run dir, evaluation, progress and checkpoints
    are the single-process trainer's parts.

    The ``Agent.end_step`` contract: this loop never calls it (episodes end in the workers), which is why
    :func:`check_apex_configs` refuses every setting for which it does something (TD7's checkpoint policy). The
    sampler's learner events reach every shard: the update count with each sample request, hard target copies
    (TD7) as :meth:`ReplayShard.on_hard_target_update`.
    """

    def __init__(self, configs: Configs, apex: ApexConfig, run_dir: Path | RunDir, operative_config: str = "") -> None:
        check_apex_configs(configs, apex)
        self.configs, self.apex = configs, apex
        self.directory = run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
        self.run_dir = self.directory.path
        cfg = configs.trainer
        probe = make_env(cfg.env_id, cfg.num_envs, **cfg.env_kwargs)  # the workers step their own envs
        try:
            parts = build_run_parts(configs, self.directory, probe)
        finally:
            probe.close()
        self.obs_dim, self.action_dim = parts.obs_dim, parts.action_dim
        self.evaluator, self.agent, self.checkpointer = parts.evaluator, parts.agent, parts.checkpointer
        self.learner = self.agent.learner
        self.ratio = updates_per_transition(configs, apex)
        self.sends_priorities = sampler_class(configs.replay).prioritized
        self.hard_target_every = self.learner.hard_target_every  # TD7's hard target copies (else None)
        # Workers send finished episode scores (already averaged over their envs with score_mean_over_envs).
        self.scores = ScoreBoard(1, cfg.solve_window, mean_over_envs=False)
        self.progress = Progress(cfg, self.scores)
        self.env_steps = 0
        self.elapsed = 0.0
        self.metrics: dict[str, torch.Tensor] = {}  # of the newest learning step
        self._stop_signal: str | None = None
        self.worker_restarts = 0
        self.weight_version = 0
        self._first_data: float | None = None  # when the first rollout came back: rates exclude actor start-up
        self._worker_steps = [0] * apex.num_workers
        self._stored = 0  # transitions written to the shards
        self._updates = 0  # learner updates in this run
        self._weights_ref: Any = None  # the newest published weights (a Ray object reference)
        try:
            self.directory.create(operative_config, configs, apex)
        except PolyakError:
            if self.evaluator is not None:
                self.evaluator.close()
            raise

    # ------------------------------------------------------------------ checkpoints (no replay, no env state)
    def _state(self) -> dict[str, Any]:
        return {
            "agent": self.agent.state_dict(),
            "trainer": {"env_steps": self.env_steps, "scores": self.scores.state_dict(),
                        **self.progress.state_dict(), "elapsed": self.elapsed},
            "apex": {"worker_restarts": self.worker_restarts, "weight_version": self.weight_version},
        }

    def _checkpoint(self, logger: Logger) -> None:
        logger.flush()
        self.checkpointer.save(self._state(), self.learner, self.env_steps)

    def _evaluate_and_log(self, logger: Logger) -> bool:
        assert self.evaluator is not None
        return evaluate_and_log(self.evaluator, self.agent, self.progress, self.checkpointer, self.env_steps, logger)

    def _on_signal(self, name: str) -> None:
        self._stop_signal = name

    def run(self) -> Summary:
        cfg = self.configs.trainer
        started = time.perf_counter()
        logger = Logger(self.run_dir, cfg.max_env_steps, cfg.progress_bar)
        try:
            with stop_signals(self._on_signal):
                summary = self._loop(logger, started)
        finally:
            logger.close()
            if self.evaluator is not None:
                self.evaluator.close()
        if summary.interrupted is None:
            self.directory.write_summary(summary.__dict__)
        return summary

    # ------------------------------------------------------------------ the loop
    def _loop(self, logger: Logger, started: float) -> Summary:
        import ray

        cfg, apex, replay = self.configs.trainer, self.apex, self.configs.replay
        shard_class = ray.remote(ReplayShard).options(num_cpus=0)
        capacity = max(1, replay.capacity // apex.replay_shards)
        seeds = np.random.SeedSequence(cfg.seed, spawn_key=(_SHARD_SPAWN_KEY,)).generate_state(apex.replay_shards)
        shards = [shard_class.remote(replay, capacity, self.obs_dim, self.action_dim, int(seeds[k]))
                  for k in range(apex.replay_shards)]
        pool = WorkerPool(ray, self.configs, apex, shards)
        try:
            infos = pool.info()
            sigmas = ", ".join(f"{info['noise_sigma']:.3g}" for info in infos)
            pace = "decoupled" if self.ratio is None else f"{self.ratio:g} updates per transition"
            logger.message(f"polyak: Ape-X: {apex.num_workers} rollout workers (pids "
                           f"{', '.join(str(info['pid']) for info in infos)}; noise sigma {sigmas}), "
                           f"{apex.replay_shards} replay shard(s), learner on {self.learner.device}, {pace}")
            logger.scalars(0, {f"apex/worker_{i}_noise_scale": s for i, s in enumerate(pool.noise_scales)})
            return self._drive(logger, started, pool, shards)
        finally:
            pool.shutdown()
            for shard in shards:
                ray.kill(shard)

    def _drive(self, logger: Logger, started: float, pool: WorkerPool, shards: list[Any]) -> Summary:
        import ray

        cfg, apex = self.configs.trainer, self.apex
        pace = Pace(self.ratio, apex.rollout_chunk * cfg.num_envs * apex.num_workers, self.configs.replay.min_size)
        replay = ReplayClient(shards, self.configs.agent.batch_size, PREFETCH)
        self._weights_ref = ray.put(self.learner.weights())
        # Two requests per worker: a worker starts its next chunk while the driver is busy learning.
        in_flight = {pool.submit(i, apex.rollout_chunk, self._weights_ref, 0): (i, pool.generation[i])
                     for _ in range(REQUESTS_PER_WORKER) for i in range(apex.num_workers)}
        parked: list[int] = []
        self._stored, self._updates = 0, 0
        evaluate, checkpoint = Every(cfg.eval_interval), Every(cfg.checkpoint_interval)
        last_log = (self.env_steps, 0, time.perf_counter())
        stop = False
        while self.env_steps < cfg.max_env_steps and self._stop_signal is None and not stop:
            if in_flight and not pace.learner_may_update(self._updates, self.env_steps):
                ray.wait(list(in_flight), num_returns=1, timeout=1.0)  # nothing to learn: wait for data
            ready = ray.wait(list(in_flight), num_returns=len(in_flight), timeout=0)[0] if in_flight else []
            for ref in ready:
                index, generation = in_flight.pop(ref)
                stats = self._result(ref, index, generation, pool, logger)
                if stats is None:  # the worker died and was replaced: ask the new one at once
                    ref = pool.submit(index, apex.rollout_chunk, self._weights_ref, self.weight_version)
                    in_flight[ref] = (index, pool.generation[index])
                    continue
                stop = self._on_rollout(index, stats, pool, replay, logger) or stop
                pace.observe(self._stored, self.env_steps)
                parked.append(index)
            may_update = pace.learner_may_update(self._updates, self.env_steps)
            if pace.workers_may_run(self._updates, self.env_steps) or not (in_flight or may_update):
                for index in parked:
                    ref = pool.submit(index, apex.rollout_chunk, self._weights_ref, self.weight_version)
                    in_flight[ref] = (index, pool.generation[index])
                parked.clear()
            if may_update:
                self._learn_once(replay)

            if evaluate.due(self.env_steps):
                stop = self._evaluate_and_log(logger) or stop
            if self.env_steps - last_log[0] >= cfg.log_interval:
                last_log = self._log_speeds(logger, last_log, pool)
            self.elapsed = time.perf_counter() - started
            if checkpoint.due(self.env_steps):
                self._checkpoint(logger)

        ended_unscored = self.progress.last_eval_steps != self.env_steps  # workers' chunks overshoot the schedule
        if self._stop_signal is None and ended_unscored and self.evaluator is not None:
            self._evaluate_and_log(logger)
        self.elapsed = time.perf_counter() - started
        self._checkpoint(logger)
        self._write_apex_record(pool)
        return self.progress.summary(self.env_steps, self.learner.updates, self.elapsed, self._stop_signal)

    def _result(self, ref: Any, index: int, generation: int, pool: WorkerPool,
                logger: Logger) -> dict[str, Any] | None:
        """A worker's statistics; None when it died (replaced once, whatever its requests in flight); a
        failure inside it ends the run."""
        import ray
        from ray.exceptions import RayActorError, RayTaskError

        try:
            return ray.get(ref)
        except RayActorError:
            if generation != pool.generation[index]:
                return None  # another request of the same dead worker: it was replaced already
            pool.replace(index, self.env_steps)
            self.worker_restarts = pool.restarts
            logger.message(f"polyak: rollout worker {index} died at {self.env_steps} env steps; restarted it "
                           f"({pool.restarts} restart(s) so far)")
            logger.scalars(self.env_steps, {"apex/worker_restarts": pool.restarts})
            return None
        except RayTaskError as error:
            cause = error.cause if getattr(error, "cause", None) is not None else error
            raise PolyakError(worker_failure(index, cause)) from None

    def _on_rollout(self, index: int, stats: dict[str, Any], pool: WorkerPool, replay: ReplayClient,
                    logger: Logger) -> bool:
        """Count a request's env steps and log its finished episodes; True when training should stop."""
        if self._first_data is None:
            self._first_data = time.perf_counter()
        self.env_steps += stats["env_steps"]
        self._worker_steps[index] += stats["env_steps"]
        logger.advance(stats["env_steps"])
        self._stored += stats["stored"]
        if stats["shard_size"] is not None:
            replay.note_size(stats["shard"], stats["shard_size"])
        stop = False
        for score in stats["episodes"]:
            self.scores.add(np.array([score]), np.array([True]))
            self.progress.episodes([score], self.env_steps, self.metrics, pool.noise_scales[index] * stats["epsilon"],
                                   logger)
            stop = self.progress.solved_now(self.env_steps, logger) or stop
        return stop or self.progress.episode_limit_reached()

    def _learn_once(self, replay: ReplayClient) -> None:
        """One update on a shard's batch; TD errors go back as priorities (prioritized samplers), hard target
        copies to every shard; weights every K updates."""
        import ray
        from ray.exceptions import RayActorError

        try:
            data, shard = replay.sample(ray.get)
        except RayActorError:
            raise PolyakError("a replay shard died; its data is lost, so the run stops here "
                              "(the newest checkpoint holds the agent)") from None
        result = self.learner.update(to_batch(data, self.learner.device))
        assert result.td_errors is not None
        self.metrics = {**result.metrics, "td_error": result.td_errors}
        if self.sends_priorities:
            replay.update_priorities(shard, data["indices"], result.td_errors.detach().cpu().numpy())
        self._updates += 1
        if self.hard_target_every is not None and self._updates % self.hard_target_every == 0:
            replay.on_hard_target_update()  # after this update's priorities, as the single-process replay does
        if self._updates % self.apex.weight_push_interval == 0:
            self._weights_ref = ray.put(self.learner.weights())
            self.weight_version += 1

    def _log_speeds(self, logger: Logger, last: tuple[int, int, float], pool: WorkerPool) -> tuple[int, int, float]:
        now = time.perf_counter()
        seconds = max(now - last[2], 1e-9)
        scalars: dict[str, Any] = {
            "time/env_steps_per_s": (self.env_steps - last[0]) / seconds,
            "time/updates_per_s": (self._updates - last[1]) / seconds,
            "replay/size": min(self._stored, self.configs.replay.capacity),
            "apex/weight_version": self.weight_version,
            "apex/worker_restarts": pool.restarts,
        }
        scalars.update({f"train/{k}": float(v.mean()) for k, v in self.metrics.items()})
        logger.scalars(self.env_steps, scalars)
        logger.flush()
        return self.env_steps, self._updates, now

    def _write_apex_record(self, pool: WorkerPool) -> None:
        """``apex.json``: rates from the first rollout to the end (actor start-up excluded), restarts, noise."""
        now = time.perf_counter()
        seconds = max(now - (self._first_data or now), 1e-9)
        record = {
            "workers": self.apex.num_workers, "replay_shards": self.apex.replay_shards,
            "decoupled": self.apex.decoupled, "updates_per_transition": self.ratio,
            "worker_restarts": pool.restarts, "weight_version": self.weight_version,
            "env_steps": self.env_steps, "learner_updates": self._updates, "wall_seconds": round(self.elapsed, 3),
            "measured_seconds": round(seconds, 3),
            "env_steps_per_s": round(self.env_steps / seconds, 1),
            "updates_per_s": round(self._updates / seconds, 1),
            "worker_env_steps": list(self._worker_steps), "noise_scales": pool.noise_scales,
        }
        self.directory.write_apex_record(record)


def train_apex(configs: Configs, apex: ApexConfig, run_dir: Path, operative_config: str,
               address: str | None = None) -> Summary:
    """Start (or join) Ray and run Ape-X DDPG into ``run_dir``."""
    from polyak.distributed.ray_runtime import cluster_cpus, init_ray

    check_apex_configs(configs, apex)
    needed = apex.num_workers * apex.worker_cpus
    init_ray(address, num_cpus=max(os.cpu_count() or 1, math.ceil(needed)), object_store_mb=apex.object_store_mb)
    if not address and "OMP_NUM_THREADS" not in os.environ:
        # The workers take N cores of this machine; a learner with more threads than the free cores makes
        # OpenMP threads spin against descheduled peers (measured: 5-20x slower updates, in bursts).
        torch.set_num_threads(learner_threads(os.cpu_count() or 1, needed))
    available = cluster_cpus()
    if available < needed:
        raise ConfigError(f"--workers {apex.num_workers} needs {needed:g} CPUs (ApexConfig.worker_cpus = "
                          f"{apex.worker_cpus:g} each) but the Ray cluster has {available:g}")
    return ApexTrainer(configs, apex, run_dir, operative_config).run()

