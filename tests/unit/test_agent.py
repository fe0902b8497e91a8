"""The agent's update: gradient isolation, BatchNorm handling of targets, state round-trip."""

import numpy as np
import pytest
import torch

from polyak.agent import Agent
from polyak.checkpoint import flatten_state, unflatten_state
from polyak.config import AgentConfig, NetworkConfig, NoiseConfig
from polyak.types import Batch


def make_agent(seed: int = 0, **agent_kwargs) -> Agent:
    net = NetworkConfig(hidden_sizes=(16, 16), input_batchnorm=True, hidden_batchnorm=True, lr=1e-2)
    return Agent(3, 2, 4, AgentConfig(device="cpu", tau=0.1, **agent_kwargs), net, net,
                 NoiseConfig(kind="ou", sigma=0.2), np.random.SeedSequence(seed))


def make_batch(seed: int = 0, size: int = 32) -> Batch:
    g = torch.Generator().manual_seed(seed)
    return Batch(obs=torch.randn(size, 3, generator=g), action=torch.rand(size, 2, generator=g) * 2 - 1,
                 reward=torch.randn(size, generator=g), next_obs=torch.randn(size, 3, generator=g),
                 terminated=(torch.rand(size, generator=g) < 0.1).float(), discount=0.99)


def _params(module: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in module.parameters()]


def _same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_actor_step_leaves_critic_gradients_and_weights_untouched():
    agent = make_agent()
    critic_before = _params(agent.learner.critic)
    agent.learner._actor_step(make_batch())
    assert all(p.grad is None for p in agent.learner.critic.parameters())
    assert _same(critic_before, _params(agent.learner.critic))
    assert all(p.grad is not None for p in agent.learner.actor.parameters())


def test_critic_step_leaves_actor_gradients_and_weights_untouched():
    agent = make_agent()
    actor_before = _params(agent.learner.actor)
    batch = make_batch()
    agent.learner._critic_step(batch)
    assert all(p.grad is None for p in agent.learner.actor.parameters())
    assert _same(actor_before, _params(agent.learner.actor))
    assert all(p.grad is not None for p in agent.learner.critic.parameters())


def test_td_target_matches_hand_computation_with_target_networks():
    agent = make_agent()
    batch = make_batch()
    with torch.no_grad():
        next_q = agent.learner.critic_target(batch.next_obs, agent.learner.actor_target(batch.next_obs))[0]
    expected = batch.reward + 0.99 * (1 - batch.terminated) * next_q
    torch.testing.assert_close(agent.learner.td_target(batch), expected)


def test_target_networks_polyak_average_batchnorm_running_stats():
    agent = make_agent()
    online_before = agent.learner.actor.input_norm.running_mean.clone()
    target_before = agent.learner.actor_target.input_norm.running_mean.clone()
    torch.testing.assert_close(online_before, target_before)
    batch = make_batch()
    batch.obs = batch.obs + 5.0  # move the online running mean
    agent.learner.update(batch)
    online_after = agent.learner.actor.input_norm.running_mean
    assert not torch.allclose(online_after, online_before)
    # tau = 0.1: the target's running mean moved a tenth of the way to the online one
    torch.testing.assert_close(agent.learner.actor_target.input_norm.running_mean,
                               0.9 * target_before + 0.1 * online_after)
    assert not agent.learner.actor_target.training and not agent.learner.critic_target.training


def test_act_uses_eval_mode_and_does_not_touch_running_stats():
    agent = make_agent()
    agent.learner.actor.train()
    before = agent.learner.actor.input_norm.running_mean.clone()
    obs = np.random.default_rng(0).normal(5, 1, size=(4, 3))
    deterministic = agent.act(obs, explore=False)
    torch.testing.assert_close(agent.learner.actor.input_norm.running_mean, before)
    np.testing.assert_allclose(agent.act(obs[:1], explore=False), deterministic[:1], rtol=1e-5, atol=1e-6)
    explored = agent.act(obs, explore=True)
    assert explored.shape == (4, 2) and np.abs(explored).max() <= 1.0
    assert not np.allclose(explored, deterministic)


def test_update_returns_tensor_metrics_and_counts():
    agent = make_agent(policy_delay=2)
    result = agent.learner.update(make_batch())
    assert set(result.metrics) >= {"critic_loss", "actor_loss", "q_mean"}
    assert all(isinstance(v, torch.Tensor) for v in result.metrics.values())
    assert result.td_errors is not None and result.td_errors.shape == (32,)
    assert agent.learner.updates == 1


def test_policy_delay_skips_actor_updates():
    agent = make_agent(policy_delay=2)
    before = _params(agent.learner.actor)
    agent.learner.update(make_batch(0))
    assert _same(before, _params(agent.learner.actor))
    assert agent.learner.actor_updates == 0
    agent.learner.update(make_batch(1))
    assert not _same(before, _params(agent.learner.actor))
    assert agent.learner.actor_updates == 1


def test_state_dict_round_trip_continues_identically():
    a = make_agent(seed=1, n_critics=2, target_policy_noise=0.2)
    for i in range(3):
        a.learner.update(make_batch(i))
        a.act(np.ones((4, 3)), explore=True)
    tensors, tree = flatten_state(a.state_dict())
    b = make_agent(seed=2, n_critics=2, target_policy_noise=0.2)
    b.load_state_dict(unflatten_state(tree, tensors))
    obs = np.random.default_rng(3).normal(size=(4, 3))
    np.testing.assert_array_equal(a.act(obs, explore=True), b.act(obs, explore=True))
    ma, mb = a.learner.update(make_batch(7)), b.learner.update(make_batch(7))
    assert torch.equal(ma.metrics["critic_loss"], mb.metrics["critic_loss"])
    for name in ("actor", "critic", "actor_target", "critic_target"):
        assert _same(_params(a.learner.networks[name]), _params(b.learner.networks[name])), name


@pytest.mark.parametrize("n_critics", [1, 2, 3])
def test_critics_learn_to_regress_rewards_when_nothing_is_bootstrapped(n_critics):
    agent = make_agent(n_critics=n_critics)
    batch = make_batch(size=64)
    batch.discount = 0.0  # the target is the reward alone: plain regression
    first = float(agent.learner.update(batch).metrics["critic_loss"])
    for _ in range(300):
        last = float(agent.learner.update(batch).metrics["critic_loss"])
    assert last < 0.2 * first
