"""Per-network Polyak factors (the Reacher PER notebook's ``p_tau``/``q_tau``) and weight decay on linear weights."""

import numpy as np
import pytest
import torch

from polyak.agent import Agent
from polyak.algorithms import ActorCritic as Learner
from polyak.config import AgentConfig, NetworkConfig, NoiseConfig
from polyak.errors import ConfigError
from polyak.types import Batch


def make_learner(actor: NetworkConfig, critic: NetworkConfig, **agent) -> Learner:
    config = AgentConfig(device="cpu", **agent)
    return Agent(3, 2, 1, config, actor, critic, NoiseConfig(), np.random.SeedSequence(0)).learner


def make_batch(size: int = 32) -> Batch:
    g = torch.Generator().manual_seed(3)
    return Batch(obs=torch.randn(size, 3, generator=g), action=torch.rand(size, 2, generator=g) * 2 - 1,
                 reward=torch.randn(size, generator=g), next_obs=torch.randn(size, 3, generator=g),
                 terminated=torch.zeros(size), discount=torch.full((size,), 0.9))


def snapshot(module: torch.nn.Module) -> list[torch.Tensor]:
    return [t.detach().clone() for t in module.state_dict().values() if t.is_floating_point()]


@pytest.mark.parametrize(("actor_tau", "critic_tau", "expected"), [(0.1, 0.3, (0.1, 0.3)), (None, 0.3, (0.02, 0.3)),
                                                                   (0.1, None, (0.1, 0.02))])
def test_each_target_moves_by_its_own_tau(actor_tau, critic_tau, expected):
    net = {"hidden_sizes": (8,), "hidden_batchnorm": True}  # running statistics are averaged too
    learner = make_learner(NetworkConfig(tau=actor_tau, **net), NetworkConfig(tau=critic_tau, **net), tau=0.02)
    old = {name: snapshot(learner.networks[name]) for name in ("actor_target", "critic_target")}
    learner.update(make_batch())
    for (online, target), tau in zip((("actor", "actor_target"), ("critic", "critic_target")), expected, strict=True):
        new_online, new_target = snapshot(learner.networks[online]), snapshot(learner.networks[target])
        for before, theta, after in zip(old[target], new_online, new_target, strict=True):
            assert not torch.equal(before, theta)  # the online network moved away from its target
            torch.testing.assert_close(after, (1 - tau) * before + tau * theta, rtol=0, atol=1e-7)


def test_network_tau_is_validated():
    with pytest.raises(ConfigError, match="tau"):
        NetworkConfig(tau=0.0)
    with pytest.raises(ConfigError, match="tau"):
        NetworkConfig(tau=1.5)


def decayed_by_name(name: str) -> bool:
    """Linear weight matrices: the backbone's ``linear.weight`` and the head's ``weight`` (NoisyNet's mu)."""
    return name.endswith("linear.weight") or name == "head.weight"


def shrinks(learner: Learner, network: str) -> dict[str, bool]:
    """Which parameters an optimizer step with zero loss gradient shrinks (only weight decay acts)."""
    module, optimizer = learner.networks[network], getattr(learner, f"{network}_optim")
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.rand(p.shape, generator=g) + 0.5)  # all positive, none zero
            p.grad = torch.zeros_like(p)
    before = {n: p.detach().clone() for n, p in module.named_parameters()}
    optimizer.step()
    result = {}
    for n, p in module.named_parameters():
        smaller, same = bool((p < before[n]).all()), torch.equal(p, before[n])
        assert smaller or same, n
        result[n] = smaller
    return result


@pytest.mark.parametrize("network", ["actor", "critic"])
def test_weight_decay_reaches_linear_weights_only(network):
    actor = NetworkConfig(hidden_sizes=(8, 8), layer_norm=True, noisy=True, weight_decay=0.1, lr=1e-6)
    critic = NetworkConfig(hidden_sizes=(8, 8), input_batchnorm=True, hidden_batchnorm=True, weight_decay=0.1, lr=1e-6)
    learner = make_learner(actor, critic, n_critics=2)
    result = shrinks(learner, network)
    names = set(result)
    if network == "actor":  # NoisyNet sigma and LayerNorm present, and kept
        assert {"head.weight_sigma", "backbone.0.norm.weight", "backbone.0.norm.bias"} <= names
    else:  # BatchNorm on the input and the hidden layers, stacked ensemble weights
        assert {"input_norm.weight", "backbone.1.norm.bias"} <= names
    assert result == {n: decayed_by_name(n) for n in names}
    assert any(result.values()) and not all(result.values())


@pytest.mark.parametrize("network", ["actor", "critic"])
def test_decay_all_parameters_shrinks_every_parameter(network):
    actor = NetworkConfig(hidden_sizes=(8,), layer_norm=True, noisy=True, weight_decay=0.1, lr=1e-6,
                          decay_all_parameters=True)
    critic = NetworkConfig(hidden_sizes=(8,), hidden_batchnorm=True, weight_decay=0.1, lr=1e-6,
                           decay_all_parameters=True)
    assert all(shrinks(make_learner(actor, critic), network).values())


def test_without_weight_decay_one_group_and_nothing_moves():
    learner = make_learner(NetworkConfig(hidden_sizes=(8,), layer_norm=True), NetworkConfig(hidden_sizes=(8,)))
    assert len(learner.actor_optim.param_groups) == 1
    assert not any(shrinks(learner, "actor").values())


def test_a_one_group_checkpoint_resumes_into_split_groups():
    """Optimizer state saved with one group (before the split) lands on the same parameters."""
    net = {"hidden_sizes": (8,), "layer_norm": True}
    old = make_learner(NetworkConfig(**net, weight_decay=0.1, decay_all_parameters=True), NetworkConfig(**net))
    old.update(make_batch())
    state = old.state_dict()
    new = make_learner(NetworkConfig(**net, weight_decay=0.1), NetworkConfig(**net))
    new.load_state_dict(state)
    assert len(new.actor_optim.param_groups) == 2
    for p_old, p_new in zip(old.actor.parameters(), new.actor.parameters(), strict=True):
        torch.testing.assert_close(new.actor_optim.state[p_new]["exp_avg"], old.actor_optim.state[p_old]["exp_avg"])
    new.update(make_batch())  # steps with the regrouped state
