"""NoisyNet layers (Fortunato et al. 2018) in the actor: learnt sigma, deterministic evaluation, OU drive."""

import math

import numpy as np
import pytest
import torch

from polyak.agent import Agent
from polyak.checkpoint import flatten_state, unflatten_state
from polyak.config import AgentConfig, NetworkConfig, NoiseConfig
from polyak.errors import ConfigError
from polyak.ginconf import build_configs_from_gin, parse_gin
from polyak.networks import Actor, NoisyLinear, exploring, noisy_layers
from polyak.types import Batch


def make_agent(**net) -> Agent:
    actor = NetworkConfig(hidden_sizes=(16, 16), noisy=True, input_batchnorm=True, **net)
    return Agent(3, 2, 2, AgentConfig(device="cpu"), actor, NetworkConfig(hidden_sizes=(16,)),
                 NoiseConfig(kind="none"), np.random.SeedSequence(0))


def test_noisy_linear_initial_sigma_and_mean_weights_in_eval_mode():
    layer = NoisyLinear(4, 3, 0.5, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(layer.weight_sigma, torch.full((3, 4), 0.25))
    x = torch.randn(5, 4)
    layer.eval()
    torch.testing.assert_close(layer(x), torch.nn.functional.linear(x, layer.weight, layer.bias))
    layer.train()
    a, b = layer(x), layer(x)
    assert not torch.allclose(a, b)  # fresh noise per training forward


def test_factorised_noise_has_the_expected_form():
    generator = torch.Generator().manual_seed(1)
    layer = NoisyLinear(4, 3, 0.5, generator=generator).train()
    state = generator.get_state()
    x = torch.randn(2, 4)
    out = layer(x)
    replay = torch.Generator().set_state(state)
    e_in, e_out = torch.randn(4, generator=replay), torch.randn(3, generator=replay)
    f_in, f_out = e_in.sign() * e_in.abs().sqrt(), e_out.sign() * e_out.abs().sqrt()
    weight = layer.weight + layer.weight_sigma * torch.outer(f_out, f_in)
    torch.testing.assert_close(out, x @ weight.T + layer.bias + layer.bias_sigma * f_out)


def test_sigma_receives_gradients_through_the_actor_update():
    agent = make_agent()
    g = torch.Generator().manual_seed(0)
    batch = Batch(obs=torch.randn(32, 3, generator=g), action=torch.rand(32, 2, generator=g), reward=torch.randn(32),
                  next_obs=torch.randn(32, 3, generator=g), terminated=torch.zeros(32), discount=0.99)
    agent.learner.actor.train()
    agent.learner._actor_step(batch)
    layers = noisy_layers(agent.learner.actor)
    assert len(layers) == 3  # two hidden layers and the head
    for layer in layers:
        assert layer.weight_sigma.grad is not None and layer.weight_sigma.grad.abs().sum() > 0
        assert layer.bias_sigma.grad is not None and layer.bias_sigma.grad.abs().sum() > 0


def test_evaluation_is_deterministic_and_exploration_is_noisy():
    agent = make_agent()
    obs = np.random.default_rng(0).normal(size=(2, 3))
    a = agent.act(obs, explore=False)
    agent.learner.update(Batch(obs=torch.randn(8, 3), action=torch.rand(8, 2), reward=torch.randn(8),
                       next_obs=torch.randn(8, 3), terminated=torch.zeros(8), discount=0.99))
    before = agent.act(obs, explore=False)
    np.testing.assert_array_equal(before, agent.act(obs, explore=False))
    explored = [agent.act(obs, explore=True) for _ in range(3)]
    assert not np.allclose(explored[0], before) and not np.allclose(explored[0], explored[1])
    np.testing.assert_array_equal(before, agent.act(obs, explore=False))  # the force flag was released
    assert not any(layer.explore for layer in noisy_layers(agent.learner.actor))
    assert not agent.learner.actor.training  # BatchNorm stays in eval mode while acting
    assert a.shape == (2, 2)


def test_ou_driven_noise_is_correlated_with_unit_variance():
    torch.manual_seed(0)
    layer = NoisyLinear(400, 300, 0.5, ou_theta=0.05, generator=torch.Generator().manual_seed(2)).eval()
    samples = []
    with exploring(layer):
        for _ in range(200):
            samples.append(layer.noise_inputs()[0].clone())
    x = torch.stack(samples[100:])  # after the burn-in (the state starts at 0)
    assert float(x.var()) == pytest.approx(1.0, rel=0.1)
    lag1 = float((x[1:] * x[:-1]).mean() / x.var())
    assert lag1 == pytest.approx(0.95, abs=0.03)
    # training forwards use fresh, uncorrelated noise
    layer.train()
    a, b = layer.noise_inputs()[0], layer.noise_inputs()[0]
    assert abs(float((a * b).mean())) < 0.2


def test_ou_state_is_part_of_the_checkpointed_actor():
    config = NetworkConfig(hidden_sizes=(8,), noisy=True, noisy_ou_theta=0.01)
    actor = Actor(3, 2, config, torch.Generator().manual_seed(0))
    assert {"head.ou_in", "head.ou_out", "backbone.0.linear.ou_in"} <= set(actor.state_dict())


def test_agent_noisy_state_round_trip():
    a, b = make_agent(noisy_ou_theta=0.1), make_agent(noisy_ou_theta=0.1)
    obs = np.random.default_rng(3).normal(size=(2, 3))
    for _ in range(3):
        a.act(obs, explore=True)
    tensors, tree = flatten_state(a.state_dict())  # through the checkpoint format
    b.load_state_dict(unflatten_state(tree, tensors))
    np.testing.assert_array_equal(a.act(obs, explore=True), b.act(obs, explore=True))


def test_noisy_critic_is_refused():
    parse_gin(None, ["critic/NetworkConfig.noisy = True"])
    with pytest.raises(ConfigError, match="actor only"):
        build_configs_from_gin()
    assert math.isclose(NetworkConfig(noisy=True).noisy_sigma0, 0.5)
