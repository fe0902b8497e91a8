"""How the Ape-X driver paces the learner against the rollout workers, and the learner's side of the replay."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any


@dataclass
class Pace:
    """Keeps learner updates near ``ratio`` per transition stored after ``min_size`` (None: decoupled).

    The learner may update while it is behind the target; workers may start another request while
    the learner is less than ``slack`` transitions (one round of requests) behind. Before the replay
    holds ``min_size`` transitions the learner waits and the workers run freely, as in the core trainer.
    """

    ratio: float | None
    slack: int
    min_size: int
    learn_start: int | None = None

    def observe(self, stored: int, env_steps: int) -> None:
        """Learning starts at the env step where the replay first holds ``min_size`` transitions."""
        if self.learn_start is None and stored >= self.min_size:
            self.learn_start = env_steps

    def learner_may_update(self, updates: int, env_steps: int) -> bool:
        if self.learn_start is None:
            return False
        return self.ratio is None or updates < self.ratio * (env_steps - self.learn_start)

    def workers_may_run(self, updates: int, env_steps: int) -> bool:
        if self.learn_start is None or self.ratio is None:
            return True
        return updates >= self.ratio * (env_steps - self.learn_start - self.slack)


class ReplayClient:
    """The learner's view of the replay shards: sizes reported by workers, round-robin sampling with
    ``prefetch`` requests in flight, priorities sent back without waiting."""

    def __init__(self, shards: list[Any], batch_size: int, prefetch: int = 2) -> None:
        self.shards, self.batch_size, self.prefetch = shards, batch_size, prefetch
        self.sizes = [0] * len(shards)
        self.pending: deque[tuple[Any, int]] = deque()
        self._next = 0

    def note_size(self, shard: int, size: int) -> None:
        self.sizes[shard] = size

    def sample(self, get: Any) -> tuple[dict[str, Any], int]:
        """The next batch (``get`` resolves a Ray reference) and the shard it came from."""
        while len(self.pending) < self.prefetch:
            filled = [k for k, size in enumerate(self.sizes) if size > 0]
            shard = filled[self._next % len(filled)]
            self._next += 1
            # the request count is the learner's update count (ahead by at most ``prefetch``): every shard
            # anneals beta by it, so beta reaches 1 after ReplayConfig.beta_steps updates however many shards
            self.pending.append((self.shards[shard].sample.remote(self.batch_size, self._next - 1), shard))
        ref, shard = self.pending.popleft()
        return get(ref), shard

    def update_priorities(self, shard: int, indices: Any, td_errors: Any) -> None:
        self.shards[shard].update_priorities.remote(indices, td_errors)

    def on_hard_target_update(self) -> None:
        """The learner copied its targets (TD7): every shard's sampler hears it, after the priorities sent before."""
        for shard in self.shards:
            shard.on_hard_target_update.remote()
