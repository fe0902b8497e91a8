"""Ape-X with several replay shards anneals beta by learner updates, not per shard (ReplayConfig.beta_steps)."""

import numpy as np

from polyak.config import ReplayConfig
from polyak.distributed.apex_pace import ReplayClient
from polyak.distributed.apex_replay import ReplayShard
from polyak.replay import Transitions


class _Remote:
    """Calls a shard's method at once, the way a Ray actor handle's ``.remote`` would later."""

    def __init__(self, shard: ReplayShard) -> None:
        self.shard = shard

    def __getattr__(self, name):
        method = getattr(self.shard, name)
        return type("Method", (), {"remote": staticmethod(method)})


def _transitions(count: int) -> Transitions:
    rng = np.random.default_rng(0)
    return Transitions(obs=rng.normal(size=(count, 3)).astype(np.float32),
                       action=rng.normal(size=(count, 1)).astype(np.float32),
                       reward=np.zeros(count, np.float32), next_obs=np.zeros((count, 3), np.float32),
                       terminated=np.zeros(count, np.float32), discount=np.full(count, 0.99, np.float32))


def test_beta_reaches_one_after_beta_steps_updates_with_three_shards():
    config = ReplayConfig(capacity=100, min_size=1, sampler='prioritized', beta_start=0.4, beta_steps=12)
    shards = [ReplayShard(config, 100, 3, 1, seed) for seed in range(3)]
    for shard in shards:
        shard.add(_transitions(20), None)
    client = ReplayClient([_Remote(s) for s in shards], batch_size=4, prefetch=1)
    for k in range(3):
        client.note_size(k, 20)
    for _ in range(12):
        client.sample(lambda batch: batch)
    # request k (k = 0..11, round robin) was weighted with beta_at(k); each shard now stands past its last one
    assert [shard.sampler.steps for shard in shards] == [10, 11, 12]
    assert shards[2].sampler.beta == 1.0  # per-shard counting would give 0.4 + 0.6 * 4 / 12 = 0.6
