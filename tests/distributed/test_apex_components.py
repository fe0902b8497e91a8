"""Ape-X pieces without Ray: a rollout worker's n-step transitions and priorities, and a replay shard."""

import dataclasses

import numpy as np
import pytest
import torch

from polyak.config import AgentConfig, NetworkConfig, NoiseConfig, ReplayConfig, TrainerConfig
from polyak.config import Configs as CoreConfigs
from polyak.distributed.apex_replay import ReplayShard
from polyak.distributed.apex_worker import RolloutWorker
from polyak.replay import Transitions


def _configs(**replay):
    return CoreConfigs(
        TrainerConfig(env_id="Pendulum-v1", num_envs=2, start_steps=0), AgentConfig(gamma=0.9, batch_size=8),
        NetworkConfig(hidden_sizes=(16,)), NetworkConfig(hidden_sizes=(16,)),
        ReplayConfig(**{"capacity": 100, "min_size": 10, **replay}), NoiseConfig())


def test_worker_assembles_n_step_transitions_with_local_priorities():
    configs = _configs(n_step=3, sampler='prioritized', initial_priority="td_error")
    worker = RolloutWorker(configs, index=0, seed=1, random_steps=4, shards=[])
    batch, td, stats = worker.rollout(10)
    # 2 envs x 10 steps; a 3-step window completes from the 3rd step on: 2 x 8 transitions.
    assert len(batch) == 16 and stats["env_steps"] == 20
    assert np.allclose(batch.discount, 0.9**3)
    assert td is not None and td.shape == (16,) and np.all(td >= 0)
    expected = worker.agent.learner.td_errors(batch)
    assert np.allclose(td, expected)


def test_worker_without_td_priorities_leaves_them_to_the_shard():
    worker = RolloutWorker(_configs(), index=1, seed=1, random_steps=0, shards=[])
    batch, td, _ = worker.rollout(3)
    assert len(batch) == 6 and td is None and np.allclose(batch.discount, 0.9)


def test_worker_acts_with_pushed_weights():
    configs = _configs()
    a = RolloutWorker(configs, index=0, seed=1, random_steps=0, shards=[])
    b = RolloutWorker(configs, index=0, seed=2, random_steps=0, shards=[])
    b.set_weights(a.agent.learner.weights(), version=3)
    obs = np.zeros((2, 3))
    assert b.version == 3
    assert np.allclose(a.agent.act(obs, explore=False), b.agent.act(obs, explore=False))


def test_replay_shard_prioritizes_by_td_error():
    shard = ReplayShard(ReplayConfig(capacity=8, min_size=1, sampler='prioritized', alpha=1.0, priority_epsilon=1e-6),
                        8, obs_dim=1, action_dim=1, seed=0)
    rows = Transitions(obs=np.arange(4.0)[:, None], action=np.zeros((4, 1)), reward=np.arange(4.0),
                       next_obs=np.zeros((4, 1)), terminated=np.zeros(4), discount=np.full(4, 0.9))
    assert shard.add(rows, np.array([0.0, 0.0, 0.0, 1.0])) == 4
    batch = shard.sample(16)
    # Row 3 holds (1 + 1e-6) of the (1 + 4e-6) priority mass: every stratified draw lands on it.
    assert np.all(batch["indices"] == 3) and np.allclose(batch["reward"], 3.0)
    assert batch["discount"].dtype == np.float32 and batch["weights"] is not None
    shard.update_priorities(np.array([3, 0]), np.array([0.0, 1.0]))
    assert np.all(shard.sample(16)["indices"] == 0)


def test_replay_shard_uniform_without_priorities():
    shard = ReplayShard(ReplayConfig(capacity=8, min_size=1), 8, obs_dim=1, action_dim=1, seed=0)
    rows = Transitions(obs=np.zeros((3, 1)), action=np.zeros((3, 1)), reward=np.ones(3), next_obs=np.zeros((3, 1)),
                       terminated=np.zeros(3), discount=np.full(3, 0.9))
    shard.add(rows, None)
    batch = shard.sample(5)
    assert batch["weights"] is None and shard.size() == 3 and set(batch["indices"]) <= {0, 1, 2}


def test_learner_batches_are_writable_copies():
    from polyak.distributed.apex_learner import to_batch

    data = {name: np.ones((4, 2), dtype=np.float32) for name in ("obs", "action", "next_obs")}
    data.update(reward=np.ones(4, np.float32), terminated=np.zeros(4, np.float32), discount=np.full(4, 0.9,
                np.float32), weights=None, indices=np.arange(4))
    for value in data.values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    batch = to_batch(data, torch.device("cpu"))
    batch.obs += 1.0  # would fail on a read-only view
    assert batch.weights is None and batch.discount.shape == (4,)


@pytest.mark.parametrize("kind", ["gaussian", "ou", "parameter"])
def test_worker_noise_kinds_run(kind):
    configs = dataclasses.replace(_configs(), noise=NoiseConfig(kind=kind))
    worker = RolloutWorker(configs, index=0, seed=3, random_steps=0, shards=[])
    batch, _, _ = worker.rollout(5)
    assert len(batch) == 10 and np.all(np.abs(batch.action) <= 1.0)


def test_pace_keeps_the_learner_near_the_ratio_worked_by_hand():
    from polyak.distributed.apex_pace import Pace

    pace = Pace(ratio=1.0, slack=100, min_size=1000)
    assert not pace.learner_may_update(0, 500) and pace.workers_may_run(0, 500)  # filling the replay
    pace.observe(stored=990, env_steps=1000)
    assert pace.learn_start is None
    pace.observe(stored=1040, env_steps=1050)
    assert pace.learn_start == 1050
    pace.observe(stored=2000, env_steps=2000)
    assert pace.learn_start == 1050  # set once
    # At 1300 env steps the target is 1 * (1300 - 1050) = 250 updates.
    assert pace.learner_may_update(249, 1300) and not pace.learner_may_update(250, 1300)
    # Workers may run while the learner is within slack = 100 transitions: updates >= 250 - 100.
    assert pace.workers_may_run(150, 1300) and not pace.workers_may_run(149, 1300)
    quarter = Pace(ratio=0.25, slack=100, min_size=0, learn_start=0)
    assert quarter.learner_may_update(24, 100) and not quarter.learner_may_update(25, 100)
    assert quarter.workers_may_run(0, 100) and not quarter.workers_may_run(0, 101)
    free = Pace(ratio=None, slack=100, min_size=10, learn_start=10)
    assert free.learner_may_update(10**9, 11) and free.workers_may_run(0, 10**9)


def test_replay_client_samples_filled_shards_in_turn_and_prefetches():
    from polyak.distributed.apex_pace import ReplayClient

    calls = []

    class Method:
        def __init__(self, name, shard):
            self.name, self.shard = name, shard

        def remote(self, *args):
            calls.append((self.shard, self.name))
            return (self.shard, len(calls))

    class Shard:
        def __init__(self, k):
            self.sample, self.update_priorities = Method("sample", k), Method("update", k)

    client = ReplayClient([Shard(0), Shard(1), Shard(2)], batch_size=4, prefetch=2)
    client.note_size(0, 10)
    client.note_size(2, 5)  # shard 1 is still empty
    got = [client.sample(lambda ref: {"ref": ref}) for _ in range(4)]
    assert [shard for _, shard in got] == [0, 2, 0, 2]
    assert calls[:2] == [(0, "sample"), (2, "sample")]  # two requests in flight from the first call
    client.update_priorities(2, [1], [0.5])
    assert calls[-1] == (2, "update")


def test_learner_threads_use_the_cores_workers_leave_free():
    from polyak.distributed.apex_learner import learner_threads

    assert learner_threads(2, 2.0) == 1  # never fewer than one
    assert learner_threads(2, 1.0) == 1
    assert learner_threads(16, 4.0) == 12
    assert learner_threads(8, 2.5) == 5  # a fractional reservation still occupies its cores


def test_a_workers_env_failure_reads_as_the_single_process_trainer_words_it():
    from polyak.collector import EnvStepError
    from polyak.distributed.apex_learner import worker_failure

    configs = dataclasses.replace(_configs(), trainer=TrainerConfig(env_id="polyak-test/NaNReward-v0", num_envs=1,
                                                                    start_steps=0))
    worker = RolloutWorker(configs, index=2, seed=1, random_steps=0, shards=[])
    with pytest.raises(EnvStepError) as raised:
        worker.rollout(400)
    assert worker_failure(2, raised.value) == "rollout worker 2's environment failed: step() returned a reward of nan"
    assert worker_failure(0, RuntimeError("disk full\nmore")) == "rollout worker 0 failed: RuntimeError: disk full"
