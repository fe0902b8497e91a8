"""Network construction: initialisers, action insertion, BatchNorm modes."""

import math

import pytest
import torch

from polyak.config import NetworkConfig
from polyak.networks import Actor, Critic


def _gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


def test_reacher_report_actor_architecture_and_fan_in_init():
    config = NetworkConfig(hidden_sizes=(256, 128), input_batchnorm=True, hidden_batchnorm=True,
                           weight_init="fan_in", bias_init="zeros")
    actor = Actor(33, 4, config, _gen())
    assert isinstance(actor.input_norm, torch.nn.BatchNorm1d) and actor.input_norm.num_features == 33
    first, second = actor.backbone[0], actor.backbone[1]
    assert (first.linear.in_features, first.linear.out_features) == (33, 256)
    assert isinstance(first.norm, torch.nn.BatchNorm1d)
    assert first.linear.weight.abs().max() <= math.sqrt(2 / 33)
    assert first.linear.weight.abs().max() > 0.9 * math.sqrt(2 / 33)  # uses the whole range
    assert second.linear.weight.abs().max() <= math.sqrt(2 / 256)
    assert actor.head.weight.abs().max() <= 3e-3
    assert torch.all(first.linear.bias == 0)


def test_reacher_report_critic_joins_action_after_first_layer():
    config = NetworkConfig(hidden_sizes=(128, 128), input_batchnorm=True, action_layer=1)
    critic = Critic(33, 4, config, _gen())
    assert critic.backbone[0].linear.in_features == 33
    assert critic.backbone[1].linear.in_features == 128 + 4
    assert critic(torch.randn(5, 33), torch.randn(5, 4)).shape == (5,)


def test_action_layer_zero_joins_action_to_the_input():
    critic = Critic(3, 2, NetworkConfig(hidden_sizes=(8,), action_layer=0), _gen())
    assert critic.backbone[0].linear.in_features == 5


def test_critic_output_depends_on_action():
    critic = Critic(3, 2, NetworkConfig(hidden_sizes=(16, 16)), _gen())
    obs = torch.randn(4, 3)
    assert not torch.allclose(critic(obs, torch.zeros(4, 2)), critic(obs, torch.ones(4, 2)))


def test_actor_outputs_lie_in_unit_box():
    actor = Actor(3, 2, NetworkConfig(hidden_sizes=(16,), weight_init="xavier"), _gen())
    with torch.no_grad():
        out = actor(1000 * torch.randn(256, 3))
    assert out.abs().max() <= 1.0


@pytest.mark.parametrize("activation", ["relu", "leaky_relu", "tanh"])
def test_activations_and_layer_norm(activation):
    actor = Actor(3, 2, NetworkConfig(hidden_sizes=(8,), activation=activation, layer_norm=True), _gen())
    assert isinstance(actor.backbone[0].norm, torch.nn.LayerNorm)
    assert actor(torch.randn(2, 3)).shape == (2, 2)


def test_batchnorm_eval_mode_uses_running_stats_and_train_mode_updates_them():
    actor = Actor(3, 2, NetworkConfig(hidden_sizes=(8,), input_batchnorm=True, hidden_batchnorm=True), _gen())
    batch = 5 + 3 * torch.randn(64, 3)
    actor.eval()
    before = actor.input_norm.running_mean.clone()
    with torch.no_grad():
        single = actor(batch[:1])
        in_batch = actor(batch)[:1]
    torch.testing.assert_close(single, in_batch)  # eval: an observation's action ignores its batch-mates
    torch.testing.assert_close(actor.input_norm.running_mean, before)
    actor.train()
    actor(batch)
    assert not torch.allclose(actor.input_norm.running_mean, before)
