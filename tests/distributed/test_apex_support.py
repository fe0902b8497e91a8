"""What the Ape-X loop supports, said in one place (``APEX_REFUSALS``), and TD7 in it.

Every refused switch ends ``polyak train --workers 2`` with one line and exit code 2 before Ray starts; TD7's
config is refused for its checkpoint policy (the Ape-X loop never calls ``Agent.end_step``), and without it
trains with LAP sampling in the shards (the core sampler factory), whose max priority resets at the learner's
hard target copies. No test here starts Ray.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

from polyak.cli import main
from polyak.config import ApexConfig, Sampler
from polyak.distributed.apex_learner import APEX_REFUSALS, ApexTrainer, check_apex_configs
from polyak.distributed.apex_pace import ReplayClient
from polyak.distributed.apex_replay import ReplayShard
from polyak.distributed.apex_worker import RolloutWorker
from polyak.ginconf import build_configs_from_gin, packaged_config, parse_gin
from polyak.replay import LapSampler
from tests.distributed.helpers import PENDULUM

# Per refused binding: the arguments that turn it on (the TD7 config turns its checkpoint policy on).
REFUSED = {
    "ReplayConfig.buffer_life": ["--config", PENDULUM, "--gin-param", "ReplayConfig.buffer_life=10"],
    "TrainerConfig.normalize_observations": ["--config", PENDULUM, "--gin-param",
                                             "TrainerConfig.normalize_observations=True"],
    "TD7Config.checkpoint_policy": ["--config", "suite/td7"],
}
TINY_TD7 = ["TrainerConfig.progress_bar = False", "AgentConfig.device = 'cpu'", "AgentConfig.batch_size = 8",
            "NetworkConfig.hidden_sizes = (16, 16)", "TD7Config.sale_dim = 8", "TD7Config.sale_hidden = 16",
            "TD7Config.hard_target_every = 5", "ReplayConfig.capacity = 1000", "ReplayConfig.min_size = 10",
            "TrainerConfig.start_steps = 0"]
NO_CHECKPOINT_POLICY = ["TD7Config.checkpoint_policy = False", "TD7Config.checkpoint_training = False"]


def test_every_refusal_has_a_case_here():
    assert set(REFUSED) == {binding for binding, _, _ in APEX_REFUSALS}


@pytest.mark.parametrize("binding", sorted(REFUSED))
def test_a_refused_switch_is_one_line_exit_2_before_ray(capsys, tmp_path, binding):
    code = main(["train", *REFUSED[binding], "--workers", "2", "--run-dir", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("polyak: error: ") and err.count("\n") == 1, err
    assert binding in err and "--workers" in err, err
    assert not (tmp_path / "run").exists()
    ray = pytest.importorskip("ray")
    assert not ray.is_initialized()


def test_the_td7_config_is_refused_for_its_checkpoint_policy_only(capsys, tmp_path):
    assert main(["train", "--config", "suite/td7", "--workers", "2", "--run-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "TD7Config.checkpoint_policy is not supported with --workers" in err
    assert "TD7Config.checkpoint_policy = False and TD7Config.checkpoint_training = False" in err


def _td7_configs(*extra: str):
    parse_gin(packaged_config("suite/td7.gin"), [*TINY_TD7, *extra])
    return build_configs_from_gin()


def test_td7_without_its_checkpoint_policy_is_accepted_with_lap_sampling():
    configs = _td7_configs(*NO_CHECKPOINT_POLICY)
    check_apex_configs(configs, ApexConfig(num_workers=2))
    assert configs.replay.sampler is Sampler.LAP
    worker = RolloutWorker(configs, index=0, seed=1, random_steps=0, shards=[])
    batch, td, _ = worker.rollout(4)
    assert len(batch) == 4 and td is None  # LAP: new rows enter at the shard's max priority, no worker TD errors


class _InProcess:
    """A shard called like a Ray actor handle (``shard.method.remote(...)``) but in this process."""

    def __init__(self, shard: ReplayShard) -> None:
        self.shard = shard

    def __getattr__(self, name: str) -> Any:
        return types.SimpleNamespace(remote=getattr(self.shard, name))


class _InProcessClient(ReplayClient):
    def sample(self, get: Any) -> tuple[dict[str, Any], int]:
        return super().sample(lambda value: value)


def test_the_apex_learner_samples_by_lap_and_resets_every_shard_at_hard_target_copies(tmp_path):
    pytest.importorskip("ray")  # _learn_once imports ray's exception types; Ray itself never starts
    configs = _td7_configs(*NO_CHECKPOINT_POLICY)
    apex = ApexConfig(num_workers=1, replay_shards=2, weight_push_interval=10**6)
    trainer = ApexTrainer(configs, apex, tmp_path / "run")
    try:
        assert trainer.hard_target_every == 5 and trainer.sends_priorities
        shards = [ReplayShard(configs.replay, 500, trainer.obs_dim, trainer.action_dim, seed) for seed in (1, 2)]
        assert all(isinstance(shard.sampler, LapSampler) for shard in shards)
        worker = RolloutWorker(configs, index=0, seed=3, random_steps=50, shards=[])
        resets = [0, 0]
        for k, shard in enumerate(shards):
            batch, td, _ = worker.rollout(50)
            shard.add(batch, td)
            shard.on_hard_target_update = lambda k=k, hook=shard.on_hard_target_update: (  # type: ignore[method-assign]
                resets.__setitem__(k, resets[k] + 1), hook())
        client = _InProcessClient([_InProcess(shard) for shard in shards], configs.agent.batch_size, prefetch=1)
        for k, shard in enumerate(shards):
            client.note_size(k, shard.size())
        for _ in range(4):
            trainer._learn_once(client)
        assert resets == [0, 0]
        trainer._learn_once(client)  # the 5th update is a hard target copy: every shard hears it
        assert resets == [1, 1]
        for shard in shards:  # learning steps wrote LAP priorities max(|td|, 1)^0.4 (Pendulum: |td| > 1) into both
            leaves = shard.sampler.tree.nodes[shard.sampler.tree.leaves:][:shard.size()]
            assert np.all(leaves >= 1.0) and np.any(leaves > 1.0)
            assert shard.sampler.max_priority == leaves.max()  # reset to the stored maximum at the copy
    finally:
        if trainer.evaluator is not None:
            trainer.evaluator.close()


def test_both_loops_build_the_same_parts_and_checkpoint_meta(tmp_path):
    """The Ape-X learner builds its agent, evaluator and checkpointer as the single-process trainer does
    (``polyak.run_parts``): the same initial weights for one seed, and checkpoints that carry the env's spaces."""
    import torch

    from polyak.trainer import Trainer

    configs = _td7_configs(*NO_CHECKPOINT_POLICY)
    apex_trainer = ApexTrainer(configs, ApexConfig(num_workers=1), tmp_path / "apex")
    trainer = Trainer(configs, tmp_path / "single")
    try:
        assert apex_trainer.checkpointer.meta == trainer.checkpointer.meta
        assert apex_trainer.checkpointer.meta["spaces"] == trainer.spaces.to_json()
        for name, network in trainer.learner.networks.items():
            for key, value in network.state_dict().items():
                assert torch.equal(value, apex_trainer.learner.networks[name].state_dict()[key]), (name, key)
    finally:
        trainer._close_envs()
        if apex_trainer.evaluator is not None:
            apex_trainer.evaluator.close()
