"""The lean update path: no host synchronisation, reused replay tensors, compile and bfloat16 options."""

import contextlib

import numpy as np
import pytest
import torch

from polyak.agent import Agent
from polyak.config import AgentConfig, NetworkConfig, NoiseConfig, ReplayConfig
from polyak.replay import Replay

TD3 = {"n_critics": 2, "policy_delay": 2, "target_policy_noise": 0.2}


def make_agent(device: str = "cpu", **options) -> Agent:
    net = NetworkConfig(hidden_sizes=(32, 32), input_batchnorm=True, grad_clip_norm=1.0)
    config = AgentConfig(device=device, batch_size=16, **(TD3 | options))
    return Agent(4, 2, 1, config, net, net, NoiseConfig(), np.random.SeedSequence(0))


def make_replay(prioritized: bool = False, n_step: int = 1) -> Replay:
    config = ReplayConfig(capacity=500, min_size=1, sampler="prioritized" if prioritized else "uniform", n_step=n_step)
    replay = Replay(config, 0.99, 2, 4, 2, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    for step in range(100):
        obs = rng.normal(size=(2, 4)).astype(np.float32)
        done = np.array([step % 17 == 16, False])
        replay.add(obs, rng.uniform(-1, 1, (2, 2)), rng.normal(size=2), obs + 0.1, done, done)
    return replay


@contextlib.contextmanager
def host_reads_forbidden():
    """Any Python-level read of a tensor's value to the host raises (the CPU stand-in for a CUDA sync check)."""
    forbidden = ("item", "tolist", "cpu", "numpy", "__float__", "__int__", "__bool__")
    saved = {name: getattr(torch.Tensor, name) for name in forbidden}

    def refuse(name):
        def method(self, *args, **kwargs):
            raise AssertionError(f"host read Tensor.{name} inside the update")
        return method

    for name in forbidden:
        setattr(torch.Tensor, name, refuse(name))
    try:
        yield
    finally:
        for name, method in saved.items():
            setattr(torch.Tensor, name, method)


@pytest.mark.parametrize("prioritized", [False, True])
def test_update_reads_no_tensor_value_back_to_python(prioritized):
    agent, replay = make_agent(), make_replay(prioritized)
    for _ in range(4):  # both the critic-only and the actor+target steps of the policy delay
        batch = replay.sample(16, agent.device)
        with host_reads_forbidden():
            result = agent.learner.update(batch)
        replay.update_priorities(batch.indices, result.td_errors)
    assert all(isinstance(v, torch.Tensor) for v in result.metrics.values())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_update_performs_no_host_synchronisation_on_cuda():
    agent, replay = make_agent("cuda"), make_replay(prioritized=True, n_step=3)
    for _ in range(3):  # warm up: lazy state creation may synchronise once
        agent.learner.update(replay.sample(16, agent.device))
    torch.cuda.synchronize()
    for _ in range(4):
        batch = replay.sample(16, agent.device)
        torch.cuda.set_sync_debug_mode("error")
        try:
            agent.learner.update(batch)
        finally:
            torch.cuda.set_sync_debug_mode("default")


def test_sampled_batches_reuse_their_tensors_and_hold_the_right_rows():
    replay = make_replay(n_step=3)
    first = replay.sample(16, torch.device("cpu"))
    pointer = first.obs.data_ptr()
    rows = first.indices.copy()
    np.testing.assert_array_equal(first.obs.numpy(), replay.storage.obs[rows])
    second = replay.sample(16, torch.device("cpu"))
    assert second.obs.data_ptr() == pointer  # no new allocation per batch
    np.testing.assert_array_equal(second.obs.numpy(), replay.storage.obs[second.indices])
    np.testing.assert_array_equal(second.discount.numpy(), replay.storage.discount[second.indices])
    assert replay.sample(8, torch.device("cpu")).obs.shape == (8, 4)  # another batch size still works


def _run_updates(agent: Agent, replay: Replay, count: int) -> list[dict[str, torch.Tensor]]:
    updates = (agent.learner.update(replay.sample(16, agent.device)) for _ in range(count))
    return [{k: v.clone() for k, v in result.metrics.items()} for result in updates]


@pytest.mark.slow
def test_compiled_update_gives_the_eager_numbers():
    eager = _run_updates(make_agent(), make_replay(), 4)
    compiled = _run_updates(make_agent(compile=True), make_replay(), 4)
    for a, b in zip(eager, compiled, strict=True):
        for key in a:
            torch.testing.assert_close(a[key], b[key], rtol=1e-4, atol=1e-5, msg=key)


def test_bfloat16_hidden_layers_stay_close_to_float32_and_keep_float32_state():
    full = make_agent()
    half = make_agent(precision="bfloat16")
    replay = make_replay()
    batch = replay.sample(16, torch.device("cpu"))
    q_full = full.learner.critic(batch.obs, batch.action)
    q_half = half.learner.critic(batch.obs, batch.action)
    assert q_half.dtype == torch.float32
    torch.testing.assert_close(q_half, q_full, rtol=0.05, atol=0.05)
    assert not torch.equal(q_half, q_full)  # bfloat16 really ran
    half.learner.update(batch)
    assert all(p.dtype == torch.float32 for p in half.learner.critic.parameters())
    assert all(p.grad is None or p.grad.dtype == torch.float32 for p in half.learner.actor.parameters())
