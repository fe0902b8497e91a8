"""Adaptive parameter-space noise (Plappert et al. 2018)."""

import numpy as np
import pytest
import torch

from polyak.agent import Agent
from polyak.checkpoint import flatten_state, unflatten_state
from polyak.config import AgentConfig, NetworkConfig, NoiseConfig
from polyak.noise import AdaptiveParameterNoise


def make_agent(target: float = 0.2, sigma: float = 0.1, every: int = 5, **net) -> Agent:
    actor = NetworkConfig(hidden_sizes=(16, 16), layer_norm=True, **net)
    noise = NoiseConfig(kind="parameter", sigma=sigma, param_target_distance=target, param_adapt_every=every)
    return Agent(3, 2, 2, AgentConfig(device="cpu"), actor, NetworkConfig(hidden_sizes=(16,)), noise,
                 np.random.SeedSequence(0))


def test_sigma_grows_below_and_shrinks_above_the_target_distance():
    noise = AdaptiveParameterNoise(initial_sigma=0.1, target=0.2, factor=1.01, rng=np.random.default_rng(0))
    assert noise.adapt(0.1) == pytest.approx(0.101)
    assert noise.adapt(0.3) == pytest.approx(0.1)
    assert noise.adapt(0.3) == pytest.approx(0.1 / 1.01)


@pytest.mark.parametrize(("target", "grows"), [(10.0, True), (1e-6, False)])
def test_agent_adapts_sigma_from_the_measured_action_distance(target, grows):
    agent = make_agent(target=target)
    obs = np.random.default_rng(0).normal(size=(32, 3))
    distance = agent.explorer.adapt_parameter_noise(obs)
    assert 0 < distance < 2
    sigma = agent.explorer.noise.parameter.sigma
    assert sigma == pytest.approx(0.1 * 1.01 if grows else 0.1 / 1.01)


def test_larger_sigma_gives_larger_distance():
    obs = np.random.default_rng(0).normal(size=(64, 3))
    distances = [make_agent(sigma=s).explorer.adapt_parameter_noise(obs) for s in (0.01, 0.1, 1.0)]
    assert distances[0] < distances[1] < distances[2]


def test_exploring_acts_with_the_perturbed_actor_and_adapts_every_n_steps():
    agent = make_agent(target=10.0, every=5)
    obs = np.random.default_rng(1).normal(size=(2, 3))
    clean = agent.act(obs, explore=False)
    np.testing.assert_array_equal(clean, agent.act(obs, explore=False))
    explored = agent.act(obs, explore=True)
    assert not np.allclose(explored, clean)
    with torch.no_grad():
        perturbed = agent.explorer.perturbed_actor(torch.as_tensor(obs, dtype=torch.float32)).numpy()
    np.testing.assert_allclose(explored, perturbed, rtol=1e-6)  # no action noise on top
    for _ in range(4):
        agent.act(obs, explore=True)
    assert agent.explorer.noise.parameter.sigma == pytest.approx(0.101)  # 5 exploring steps: one adaptation


def test_perturbation_spares_layer_norm_and_is_redrawn_at_episode_end():
    agent = make_agent()
    norm_actor = agent.learner.actor.backbone[0].norm
    norm_perturbed = agent.explorer.perturbed_actor.backbone[0].norm
    torch.testing.assert_close(norm_actor.weight, norm_perturbed.weight)
    before = agent.explorer.perturbed_actor.head.weight.clone()
    assert not torch.equal(before, agent.learner.actor.head.weight)
    agent.explorer.reset(np.array([False, False]))
    assert torch.equal(before, agent.explorer.perturbed_actor.head.weight)
    agent.explorer.reset(np.array([True, False]))
    assert not torch.equal(before, agent.explorer.perturbed_actor.head.weight)
    # the new perturbation is centred on the actor: the difference has about sigma's scale
    diff = agent.explorer.perturbed_actor.backbone[1].linear.weight - agent.learner.actor.backbone[1].linear.weight
    assert float(diff.detach().std()) == pytest.approx(0.1, rel=0.2)


def test_state_dict_round_trip_restores_sigma_and_perturbation():
    a = make_agent(target=10.0)
    obs = np.random.default_rng(2).normal(size=(2, 3))
    for _ in range(7):
        a.act(obs, explore=True)
    b = make_agent(target=10.0)
    tensors, tree = flatten_state(a.state_dict())  # through the checkpoint format
    b.load_state_dict(unflatten_state(tree, tensors))
    assert b.explorer.noise.parameter.sigma == a.explorer.noise.parameter.sigma
    for _ in range(4):
        np.testing.assert_array_equal(a.act(obs, explore=True), b.act(obs, explore=True))
    a.explorer.reset()
    b.explorer.reset()
    np.testing.assert_array_equal(a.act(obs, explore=True), b.act(obs, explore=True))
