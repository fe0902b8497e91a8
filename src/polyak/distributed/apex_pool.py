"""The rollout workers of an Ape-X run as Ray actors; a worker that dies is replaced and training goes on."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Any

import numpy as np

from polyak.config import Configs
from polyak.distributed.apex_config import ApexConfig, worker_noise_config, worker_noise_scale
from polyak.distributed.apex_worker import RolloutWorker
from polyak.errors import PolyakError

_SPAWN_KEY = 7001  # worker seeds: SeedSequence(run seed, spawn_key=(_SPAWN_KEY, index, restart))


class WorkerPool:
    """``num_workers`` :class:`RolloutWorker` actors; remembers which weights each one holds."""

    def __init__(self, ray: Any, configs: Configs, apex: ApexConfig, shards: list[Any]) -> None:
        self.ray, self.configs, self.apex, self.shards = ray, configs, apex, shards
        self.actor_class = ray.remote(RolloutWorker).options(num_cpus=apex.worker_cpus, max_restarts=0)
        self.restarts = 0
        self.generation = [0] * apex.num_workers
        self.versions = [-1] * apex.num_workers
        self.noise_scales = [worker_noise_scale(i, apex.num_workers, apex.exploration_base, apex.exploration_alpha)
                             for i in range(apex.num_workers)]
        self.random_steps = math.ceil(configs.trainer.start_steps / apex.num_workers)
        self.workers = [self._start(i, self.random_steps) for i in range(apex.num_workers)]

    def _start(self, index: int, random_steps: int) -> Any:
        apex = self.apex
        noise = worker_noise_config(self.configs.noise, index, apex.num_workers, apex.exploration_base,
                                    apex.exploration_alpha)
        seed = np.random.SeedSequence(self.configs.trainer.seed, spawn_key=(_SPAWN_KEY, index, self.generation[index]))
        return self.actor_class.remote(dataclasses.replace(self.configs, noise=noise), index,
                                       int(seed.generate_state(1)[0]), random_steps, self.shards)

    def info(self) -> list[dict[str, Any]]:
        return self.ray.get([worker.info.remote() for worker in self.workers])

    def submit(self, index: int, steps: int, weights: Any, version: int) -> Any:
        """Ask worker ``index`` for ``steps`` env.step calls, sending ``weights`` only if it lacks ``version``."""
        send = weights if self.versions[index] != version else None
        self.versions[index] = version
        return self.workers[index].collect.remote(steps, send, version)

    def replace(self, index: int, env_steps: int) -> None:
        """Start a fresh worker in place of a dead one (new seed; random actions only while start_steps last)."""
        self.restarts += 1
        if self.restarts > self.apex.max_worker_restarts:
            raise PolyakError(f"rollout workers died {self.restarts} times (ApexConfig.max_worker_restarts = "
                              f"{self.apex.max_worker_restarts}); giving up")
        with contextlib.suppress(Exception):  # it is dead already
            self.ray.kill(self.workers[index], no_restart=True)
        self.generation[index] += 1
        self.versions[index] = -1
        left = max(0, self.configs.trainer.start_steps - env_steps)
        self.workers[index] = self._start(index, math.ceil(left / self.apex.num_workers))

    def shutdown(self) -> None:
        for worker in self.workers:
            with contextlib.suppress(Exception):  # already gone
                self.ray.kill(worker, no_restart=True)
