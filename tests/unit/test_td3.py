"""TD3's target (Fujimoto et al. 2018): min over the target critics at a smoothed, clipped target action."""

import numpy as np
import torch

from polyak.agent import Agent
from polyak.config import AgentConfig, NetworkConfig, NoiseConfig
from polyak.types import Batch


def make_agent(**kwargs) -> Agent:
    net = NetworkConfig(hidden_sizes=(16, 16))
    options = {"n_critics": 2, "policy_delay": 2, "target_policy_noise": 0.2, "target_noise_clip": 0.5} | kwargs
    config = AgentConfig(device="cpu", **options)
    return Agent(3, 2, 1, config, net, net, NoiseConfig(), np.random.SeedSequence(0))


def make_batch(size: int = 64) -> Batch:
    g = torch.Generator().manual_seed(3)
    return Batch(obs=torch.randn(size, 3, generator=g), action=torch.rand(size, 2, generator=g) * 2 - 1,
                 reward=torch.randn(size, generator=g), next_obs=torch.randn(size, 3, generator=g),
                 terminated=(torch.rand(size, generator=g) < 0.2).float(), discount=torch.full((size,), 0.9))


def test_td3_target_is_min_over_critics_at_the_clipped_smoothed_action():
    agent = make_agent()
    batch = make_batch()
    state = agent.learner.generator.get_state()
    target = agent.learner.td_target(batch)
    # Reproduce the smoothing noise from the same generator state, by hand.
    generator = torch.Generator().set_state(state)
    with torch.no_grad():
        mean_action = agent.learner.actor_target(batch.next_obs)
        noise = (torch.randn(mean_action.shape, generator=generator) * 0.2).clamp(-0.5, 0.5)
        action = (mean_action + noise).clamp(-1, 1)
        q1 = agent.learner.critic_target.member(0)(batch.next_obs, action)
        q2 = agent.learner.critic_target.member(1)(batch.next_obs, action)
    expected = batch.reward + 0.9 * (1 - batch.terminated) * torch.minimum(q1, q2)
    torch.testing.assert_close(target, expected)
    assert not torch.equal(q1, q2)  # the two critics differ, so the min matters
    assert (torch.minimum(q1, q2) < torch.maximum(q1, q2)).any()


def test_smoothing_noise_is_clipped_even_when_large():
    agent = make_agent(target_policy_noise=50.0)  # std 50, clip 0.5
    agent.learner.generator.manual_seed(0)
    batch = make_batch(256)
    batch.next_obs = torch.zeros(256, 3)
    with torch.no_grad():
        mean_action = agent.learner.actor_target(batch.next_obs)
    # Record the smoothed action the target critics are asked about.
    seen = []

    def spy(obs, action):
        seen.append(action.clone())
        return torch.zeros(2, len(obs))

    agent.learner.critic_target.forward = spy  # type: ignore[method-assign]
    agent.learner.td_target(batch)
    deviation = (seen[0] - mean_action).abs()
    assert deviation.max() <= 0.5 + 1e-6
    assert deviation.max() > 0.45  # std 50: nearly every draw hits the clip


def test_ddpg_switches_reduce_td3_to_one_critic_without_smoothing():
    net = NetworkConfig(hidden_sizes=(8,))
    agent = Agent(3, 2, 1, AgentConfig(device="cpu"), net, net, NoiseConfig(), np.random.SeedSequence(0))
    batch = make_batch()
    with torch.no_grad():
        next_q = agent.learner.critic_target(batch.next_obs, agent.learner.actor_target(batch.next_obs))[0]
    torch.testing.assert_close(agent.learner.td_target(batch), batch.reward + 0.9 * (1 - batch.terminated) * next_q)
    assert agent.learner.critic.n == 1
