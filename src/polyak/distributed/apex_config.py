"""Ape-X settings and the per-worker exploration schedule (Horgan et al. 2018, "Distributed Prioritized
Experience Replay"). Pure Python: importing this module never imports ray."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import gin

from polyak.config import NoiseConfig, NoiseKind, _Validated

APEX_DEFAULTS = (
    "ReplayConfig.prioritized = True",
    "ReplayConfig.initial_priority = 'td_error'",
    "ReplayConfig.n_step = 3",
)
"""Bindings parsed before the config file in Ape-X mode (the file and ``--gin-param`` override them):
prioritized replay with initial priorities computed by the workers, and 3-step returns, as in Ape-X."""


@gin.configurable
@dataclass(frozen=True)
class ApexConfig(_Validated):
    """Ape-X DDPG: ``num_workers`` rollout actors, ``replay_shards`` prioritized replay actors, a learner.

    Each rollout worker steps its own vector env (``TrainerConfig.num_envs`` copies) for
    ``rollout_chunk`` env.step calls per request, assembles n-step transitions, computes their
    initial priorities with its local copy of the networks and writes them to a replay shard. The
    learner pushes fresh weights every ``weight_push_interval`` updates.

    Pacing: with ``decoupled = False`` the driver keeps the learner near ``replay_ratio`` updates
    per stored transition (after ``ReplayConfig.min_size``): the learner waits for data when ahead
    and workers wait for the learner when it falls more than one round of chunks behind. None takes
    the config's single-process schedule, ``TrainerConfig.learn_steps / (learn_every * num_envs)``,
    so a run compares step for step with ``polyak train``. ``decoupled = True`` is the paper's
    setting: workers and learner each run as fast as they can (many machines; on a few cores the
    workers then take CPU from the learner).

    Exploration: worker i of N uses Ape-X's epsilon_i = ``exploration_base`` ^ (1 + ``exploration_alpha``
    * i / (N - 1)) relative to epsilon_0, see :func:`worker_noise_config`.

    Resources: each worker asks Ray for ``worker_cpus`` CPUs (shards ask for none); a worker that dies is
    replaced up to ``max_worker_restarts`` times in a run. ``object_store_mb`` sizes the object store
    of a local Ray node (not of a cluster joined with ``--address``).
    """

    num_workers: int = 2
    replay_shards: int = 1
    rollout_chunk: int = 50
    weight_push_interval: int = 50
    exploration_base: float = 0.4
    exploration_alpha: float = 7.0
    replay_ratio: float | None = None
    decoupled: bool = False
    worker_cpus: float = 1.0
    max_worker_restarts: int = 10
    object_store_mb: int = 256

    def validate(self) -> None:
        self._require(self.num_workers >= 1, "num_workers", ">= 1")
        self._require(self.replay_shards >= 1, "replay_shards", ">= 1")
        self._require(self.rollout_chunk >= 1, "rollout_chunk", ">= 1 (env.step calls per request)")
        self._require(self.weight_push_interval >= 1, "weight_push_interval", ">= 1 (learner updates)")
        self._require(0.0 < self.exploration_base <= 1.0, "exploration_base", "in (0, 1]")
        self._require(self.exploration_alpha >= 0, "exploration_alpha", ">= 0")
        self._require(self.replay_ratio is None or self.replay_ratio > 0, "replay_ratio",
                      "> 0 or None (the config's own updates per transition)")
        self._require(not (self.decoupled and self.replay_ratio is not None), "replay_ratio",
                      "None when decoupled is True (decoupled runs have no ratio)")
        self._require(self.worker_cpus > 0, "worker_cpus", "> 0")
        self._require(self.max_worker_restarts >= 0, "max_worker_restarts", ">= 0")
        self._require(self.object_store_mb >= 80, "object_store_mb", ">= 80 (Ray's minimum is 75 MB)")


def apex_epsilons(num_workers: int, base: float = 0.4, alpha: float = 7.0) -> list[float]:
    """Ape-X's per-actor exploration: epsilon_i = base^(1 + alpha * i / (N - 1)), i = 0..N-1.

    Horgan et al. 2018 (sec. 4.1) use base = 0.4 and alpha = 7 for epsilon-greedy DQN actors.
    One worker gets epsilon_0 = base (the formula divides by N - 1).
    """
    if num_workers < 1:
        raise ValueError(f"num_workers must be >= 1, got {num_workers}")
    if num_workers == 1:
        return [base]
    return [base ** (1.0 + alpha * i / (num_workers - 1)) for i in range(num_workers)]


def worker_noise_scale(index: int, num_workers: int, base: float = 0.4, alpha: float = 7.0) -> float:
    """epsilon_i / epsilon_0 = base^(alpha * i / (N - 1)): 1 for worker 0, base^alpha for the last one."""
    epsilons = apex_epsilons(num_workers, base, alpha)
    return epsilons[index] / epsilons[0]


def worker_noise_config(noise: NoiseConfig, index: int, num_workers: int, base: float = 0.4,
                        alpha: float = 7.0) -> NoiseConfig:
    """The Ape-X schedule adapted to DDPG's continuous actions (our adaptation, not the paper's).

    DDPG explores with action noise, not epsilon-greedy, so the schedule scales the noise:
    worker i uses ``epsilon_i / epsilon_0`` times the config's Gaussian/OU ``sigma`` (worker 0
    explores as a single-process run would, the last worker with base^alpha of it: 0.0016 with the
    paper's values), or times ``param_target_distance`` for parameter-space noise. ``kind='none'``
    (a NoisyNet actor) is left unchanged: its noise is learned.
    """
    scale = worker_noise_scale(index, num_workers, base, alpha)
    if noise.kind in (NoiseKind.GAUSSIAN, NoiseKind.OU):
        return dataclasses.replace(noise, sigma=noise.sigma * scale)
    if noise.kind is NoiseKind.PARAMETER:
        return dataclasses.replace(noise, param_target_distance=noise.param_target_distance * scale)
    return noise
