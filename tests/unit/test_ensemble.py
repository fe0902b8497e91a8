"""The batched critic ensemble gives the numbers of n separate critics: outputs, gradients, BatchNorm statistics."""

import pytest
import torch

from polyak.config import NetworkConfig
from polyak.ensemble import CriticEnsemble
from polyak.networks import Critic

OBS, ACT, N = 5, 2, 3
CONFIGS = {
    "plain_action_at_input": NetworkConfig(hidden_sizes=(16, 8), action_layer=0),
    "report_input_bn_action_at_layer_1": NetworkConfig(hidden_sizes=(16, 8), input_batchnorm=True, action_layer=1,
                                                        weight_init="fan_in"),
    "hidden_batchnorm": NetworkConfig(hidden_sizes=(16, 8), input_batchnorm=True, hidden_batchnorm=True,
                                      action_layer=1),
    "layer_norm_leaky": NetworkConfig(hidden_sizes=(16, 8), layer_norm=True, activation="leaky_relu"),
    "action_at_head": NetworkConfig(hidden_sizes=(16, 8), action_layer=2, activation="tanh"),
}


def _pair(config: NetworkConfig) -> tuple[CriticEnsemble, list[Critic]]:
    ensemble = CriticEnsemble(N, OBS, ACT, config, torch.Generator().manual_seed(7))
    generator = torch.Generator().manual_seed(7)
    separate = [Critic(OBS, ACT, config, generator) for _ in range(N)]
    return ensemble, separate


def _batch(seed: int, size: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(size, OBS, generator=g) * 3 + 1, torch.rand(size, ACT, generator=g) * 2 - 1


@pytest.mark.parametrize("name", CONFIGS)
def test_ensemble_equals_separate_critics_in_train_and_eval_mode(name):
    ensemble, separate = _pair(CONFIGS[name])
    for step in range(3):  # train mode: batch statistics, running statistics move
        obs, action = _batch(step)
        expected = torch.stack([critic(obs, action) for critic in separate])
        torch.testing.assert_close(ensemble(obs, action), expected)
    ensemble.eval()
    for critic in separate:
        critic.eval()
    obs, action = _batch(10)
    torch.testing.assert_close(ensemble(obs, action), torch.stack([critic(obs, action) for critic in separate]))
    for index, critic in enumerate(separate):  # running statistics and weights agree member by member
        member = ensemble.member(index)
        for (key, mine), (other_key, theirs) in zip(member.state_dict().items(), critic.state_dict().items(),
                                                    strict=True):
            assert key == other_key
            if not key.endswith("num_batches_tracked"):
                torch.testing.assert_close(mine, theirs, msg=f"{name}: member {index} {key}")


@pytest.mark.parametrize("name", CONFIGS)
def test_ensemble_gradients_equal_separate_critic_gradients(name):
    ensemble, separate = _pair(CONFIGS[name])
    obs, action = _batch(3)
    target = torch.randn(32)
    (ensemble(obs, action) - target).pow(2).mean(dim=1).sum().backward()
    sum(((critic(obs, action) - target) ** 2).mean() for critic in separate).backward()
    stacked = dict(ensemble.named_parameters())
    for index, critic in enumerate(separate):
        for key, parameter in critic.named_parameters():
            torch.testing.assert_close(stacked[key].grad[index], parameter.grad, msg=f"{name}: {key}[{index}]")


def test_first_member_slice_equals_the_first_critic_and_its_action_gradient():
    ensemble, separate = _pair(CONFIGS["report_input_bn_action_at_layer_1"])
    ensemble.eval()
    separate[0].eval()
    obs, action = _batch(4)
    action_a = action.clone().requires_grad_(True)
    action_b = action.clone().requires_grad_(True)
    q_first = ensemble(obs, action_a, members=slice(0, 1))
    assert q_first.shape == (1, 32)
    q_first.sum().backward()
    separate[0](obs, action_b).sum().backward()
    torch.testing.assert_close(action_a.grad, action_b.grad)


def test_member_copy_is_independent_of_the_ensemble():
    ensemble, _ = _pair(CONFIGS["plain_action_at_input"])
    copy = ensemble.member(1)
    with torch.no_grad():
        copy.head.weight.add_(1.0)
    assert not torch.equal(copy.head.weight, ensemble.head.weight[1])
