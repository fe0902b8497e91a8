"""SAC and CrossQ's SAC mode (Haarnoja et al. 2018; Bhatt, Palenicek et al. 2024): the tanh-squashed Gaussian's
log-probability and the temperature loss against numbers worked by hand, the soft target, exploration by sampling,
exact state round trips, and the updates step for step from identical weights, batches and Gaussian draws: SAC's
against Stable-Baselines3's SAC, CrossQ's SAC mode against sb3-contrib's CrossQ."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from polyak.agent import Agent
from polyak.config import AgentConfig, Configs, NetworkConfig, NoiseConfig, ReplayConfig, SACConfig, TrainerConfig
from polyak.errors import ConfigError
from polyak.layers import BatchRenorm1d
from polyak.losses import soft_td_target, squashed_gaussian_log_prob, temperature_loss
from polyak.networks import SquashedGaussianActor
from polyak.types import Batch

from .sb3_compare import (
    actor_layers,
    copy_layers,
    critic_layers,
    linears,
    max_difference,
    sampler,
    spaces_env,
)

OBS, ACT, BATCH, GAMMA, LR = 5, 2, 16, 0.99, 1e-3


def test_squashed_gaussian_log_prob_by_hand():
    # u = 0.5 in one dimension, mean 0, std 1: log N(0.5; 0, 1) = -0.125 - 0.5 log(2 pi) = -1.043939
    # tanh(0.5) = 0.462117, log(1 - 0.213552 + 1e-6) = -0.240227; log pi = -1.043939 + 0.240227 = -0.803712
    log_prob = squashed_gaussian_log_prob(torch.tensor([[0.0]]), torch.tensor([[0.0]]), torch.tensor([[0.5]]))
    torch.testing.assert_close(log_prob, torch.tensor([-0.803712]), atol=2e-6, rtol=0)
    # two dimensions add up: u = mean = 0 with std e^-1 gives log N = 1 - 0.918939 = 0.081061 and a squash term
    # log(1 + 1e-6); u = mean = 0.5 with std 1 gives -0.918939 + 0.240227 = -0.678712
    log_prob = squashed_gaussian_log_prob(torch.tensor([[0.0, 0.5]]), torch.tensor([[-1.0, 0.0]]),
                                          torch.tensor([[0.0, 0.5]]))
    torch.testing.assert_close(log_prob, torch.tensor([0.081061 - 1e-6 - 0.678712]), atol=2e-6, rtol=0)


def test_log_prob_matches_a_change_of_variables_by_sampling():
    """The density of a = tanh(u) integrates to 1 over (-1, 1): a numeric check of the tanh correction."""
    mean, log_std = torch.tensor([[0.3]]), torch.tensor([[-0.5]])
    grid = torch.linspace(-0.9999, 0.9999, 200_001, dtype=torch.float64)
    u = torch.atanh(grid).unsqueeze(-1)
    density = squashed_gaussian_log_prob(mean.double(), log_std.double(), u).exp()
    assert abs(float(torch.trapezoid(density, grid)) - 1.0) < 1e-3


def test_temperature_loss_by_hand_and_its_gradient_sign():
    log_alpha = torch.tensor([math.log(0.5)], requires_grad=True)
    log_prob = torch.tensor([-1.0, -3.0])  # entropy estimate 2 > target 1: alpha should fall
    loss = temperature_loss(log_alpha, log_prob, target_entropy=-1.0)
    # -(log 0.5 * mean(-1 - 1, -3 - 1)) = -(-0.693147 * -3) = -2.079442
    torch.testing.assert_close(loss, torch.tensor(-2.079442), atol=1e-6, rtol=0)
    loss.backward()
    assert log_alpha.grad.item() == pytest.approx(3.0)  # d/dlog_alpha = -mean(log_prob + target) = 3 > 0: descends


def test_soft_target_by_hand():
    y = soft_td_target(torch.tensor([1.0, 2.0]), 0.9, torch.tensor([0.0, 1.0]), torch.tensor([4.0, 4.0]),
                       torch.tensor([-2.0, -2.0]), 0.5)
    torch.testing.assert_close(y, torch.tensor([1.0 + 0.9 * (4.0 + 1.0), 2.0]))


def _agent(algorithm: str = "crossq_sac", **sac) -> Agent:
    renorm = algorithm == "crossq_sac"
    network = NetworkConfig(hidden_sizes=(32, 32), batch_renorm=renorm, adam_beta1=0.5 if renorm else 0.9,
                            action_layer=0, lr=LR, batch_renorm_warmup=3)
    agent = AgentConfig(algorithm=algorithm, device="cpu", n_critics=2, policy_delay=3 if renorm else 1,
                        batch_size=BATCH)
    return Agent(OBS, ACT, 1, agent, network, network, NoiseConfig(kind="none"), np.random.SeedSequence(0),
                 ReplayConfig(), sac=SACConfig(**sac))


def _batches(count: int, seed: int = 7) -> list[Batch]:
    g = torch.Generator().manual_seed(seed)
    return [Batch(obs=torch.randn(BATCH, OBS, generator=g), action=torch.rand(BATCH, ACT, generator=g) * 2 - 1,
                  reward=torch.randn(BATCH, generator=g), next_obs=torch.randn(BATCH, OBS, generator=g),
                  terminated=(torch.rand(BATCH, generator=g) < 0.1).float(), discount=GAMMA) for _ in range(count)]


@pytest.mark.parametrize("algorithm", ["sac", "crossq_sac"])
def test_temperature_learns_and_state_round_trips_exactly(algorithm):
    agent = _agent(algorithm)
    assert isinstance(agent.learner.actor, SquashedGaussianActor)
    batches = _batches(8)
    for batch in batches[:4]:
        result = agent.learner.update(batch)
    assert agent.learner.log_alpha.item() != 0.0  # alpha moved from its initial 1.0
    assert {"alpha", "entropy", "temperature_loss"} <= set(result.metrics)
    twin = _agent(algorithm)
    twin.load_state_dict(copy.deepcopy(agent.state_dict()))
    for batch in batches[4:]:
        a, b = agent.learner.update(batch), twin.learner.update(batch)
        torch.testing.assert_close(a.td_errors, b.td_errors, rtol=0, atol=0)
    for name in agent.learner.networks:
        for key, value in agent.learner.networks[name].state_dict().items():
            torch.testing.assert_close(value, twin.learner.networks[name].state_dict()[key], rtol=0, atol=0)


def test_fixed_temperature_does_not_move():
    agent = _agent("sac", learn_temperature=False, initial_temperature=0.2)
    for batch in _batches(3):
        agent.learner.update(batch)
    assert agent.learner.log_alpha.item() == pytest.approx(math.log(0.2))


def test_exploration_samples_the_policy_and_evaluation_is_its_mean():
    agent = _agent("sac")
    obs = np.random.default_rng(0).normal(size=(64, OBS))
    explored, greedy = agent.act(obs, True), agent.greedy(obs)
    with torch.no_grad():
        mean, _ = agent.learner.actor.distribution(torch.as_tensor(obs, dtype=torch.float32))
    np.testing.assert_allclose(greedy, torch.tanh(mean).numpy(), rtol=1e-6)
    assert np.all(np.abs(explored) <= 1.0) and np.abs(explored - greedy).mean() > 0.1  # initial std ~ 1


def test_sac_needs_no_action_noise_and_no_delay():
    base = dict(trainer=TrainerConfig(), actor=NetworkConfig(), critic=NetworkConfig(), replay=ReplayConfig())
    with pytest.raises(ConfigError, match=r"NoiseConfig\.kind must be 'none'"):
        Configs(agent=AgentConfig(algorithm="sac"), noise=NoiseConfig(kind="gaussian"), **base).validate()
    with pytest.raises(ConfigError, match="policy_delay must be 1"):
        Configs(agent=AgentConfig(algorithm="sac", policy_delay=2), noise=NoiseConfig(kind="none"), **base).validate()


# ---------------------------------------------------------------------------------------------- SB3, sb3-contrib
def _update_side_by_side(monkeypatch, learner, model, updates: int, draws_per_update) -> None:
    """``updates`` updates of polyak's learner and of the SB3 model on the same batches, each side given the same
    standard-normal draws in the order it asks for them (``draws_per_update(step)`` of them, step from 1)."""
    draws = torch.Generator().manual_seed(11)
    queue: list[torch.Tensor] = []
    monkeypatch.setattr(torch.distributions.normal, "_standard_normal", lambda *args, **kwargs: queue.pop(0))
    for step, batch in enumerate(_batches(updates), start=1):
        shared = [torch.randn(BATCH, ACT, generator=draws) for _ in range(draws_per_update(step))]
        polyak_draws = list(shared)
        monkeypatch.setattr(learner, "_standard_normal", lambda obs, draws=polyak_draws: draws.pop(0))
        learner.update(batch)
        queue[:] = list(shared)
        model.replay_buffer.sample = sampler(batch)
        model.train(gradient_steps=1, batch_size=BATCH)
        assert not polyak_draws and not queue  # both drew exactly the shared Gaussian numbers


def _actor_and_temperature_differences(learner, model, sb3_actor) -> dict[str, float]:
    return {"actor": max_difference(actor_layers(learner.actor), sb3_actor),
            "log_alpha": abs(learner.log_alpha.item() - model.log_ent_coef.item())}


def test_sac_update_matches_stable_baselines3_sac(monkeypatch):
    """Plain SAC (the suite's polyak_sac row) against SB3's SAC: identical weights, batches and Gaussian draws give
    the same actor, critics, target critics and temperature after 12 updates (SB3's order: temperature, critics,
    actor, Polyak-averaged targets; the actor's draw on s before the target's draw on s')."""
    stable_baselines3 = pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.logger import Logger

    hidden, updates, tau = (32, 24), 12, 0.1  # a large tau, so that the target critics move measurably
    network = NetworkConfig(hidden_sizes=hidden, action_layer=0, lr=LR)
    config = AgentConfig(algorithm="sac", device="cpu", n_critics=2, policy_delay=1, gamma=GAMMA, tau=tau,
                         batch_size=BATCH)
    learner = Agent(OBS, ACT, 1, config, network, network, NoiseConfig(kind="none"), np.random.SeedSequence(0),
                    ReplayConfig(), sac=SACConfig()).learner
    model = stable_baselines3.SAC("MlpPolicy", spaces_env(OBS, ACT), learning_rate=LR, batch_size=BATCH, gamma=GAMMA,
                                  tau=tau, learning_starts=0, device="cpu", seed=0,
                                  policy_kwargs={"net_arch": list(hidden), "n_critics": 2})
    model.set_logger(Logger(folder=None, output_formats=[]))
    sb3_actor = [*linears(model.actor.latent_pi), model.actor.mu, model.actor.log_std]
    copy_layers(actor_layers(learner.actor), sb3_actor)
    initial_target = copy.deepcopy(learner.critic_target)
    for index in range(2):
        for sb3_critic in (model.critic, model.critic_target):
            copy_layers(critic_layers(learner.critic.member(index)), linears(getattr(sb3_critic, f"qf{index}")))

    # two draws per update: a ~ pi(s) for the temperature and the actor, then a' ~ pi(s') for the target
    _update_side_by_side(monkeypatch, learner, model, updates, draws_per_update=lambda step: 2)
    differences = _actor_and_temperature_differences(learner, model, sb3_actor)
    for index in range(2):
        for name, ours, theirs in (("critic", learner.critic, model.critic),
                                   ("target", learner.critic_target, model.critic_target)):
            differences[f"{name}_{index}"] = max_difference(critic_layers(ours.member(index)),
                                                         linears(getattr(theirs, f"qf{index}")))
    assert max(differences.values()) < 1e-5, differences
    # the comparison is not between two untouched copies: the targets and the temperature moved
    moved = max_difference(critic_layers(initial_target.member(0)), critic_layers(learner.critic_target.member(0)))
    assert moved > 1e-3
    assert abs(learner.log_alpha.item()) > 1e-3


def test_crossq_sac_update_matches_sb3_contrib_crossq(monkeypatch):
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from stable_baselines3.common.logger import Logger

    hidden, updates, warmup = (32, 24), 12, 5  # past the warmup: renormalization is on for the last updates
    network = NetworkConfig(hidden_sizes=hidden, batch_renorm=True, batch_renorm_warmup=warmup, adam_beta1=0.5,
                            action_layer=0, lr=LR)
    config = AgentConfig(algorithm="crossq_sac", device="cpu", n_critics=2, policy_delay=3, gamma=GAMMA,
                         batch_size=BATCH)
    learner = Agent(OBS, ACT, 1, config, network, network, NoiseConfig(kind="none"), np.random.SeedSequence(0),
                    ReplayConfig(), sac=SACConfig()).learner
    for module in learner.networks.values():  # sb3-contrib's BatchRenorm uses the unbiased batch variance
        for layer in module.modules():
            if isinstance(layer, BatchRenorm1d):
                layer.unbiased = True
    model = sb3_contrib.CrossQ("MlpPolicy", spaces_env(OBS, ACT), learning_rate=LR, batch_size=BATCH, gamma=GAMMA,
                               policy_delay=3, learning_starts=0, device="cpu", seed=0,
                               policy_kwargs={"net_arch": list(hidden), "n_critics": 2,
                                              "renorm_warmup_steps": warmup - 1})  # it renormalizes once steps > w
    model.set_logger(Logger(folder=None, output_formats=[]))

    sb3_actor = [*linears(model.actor.latent_pi), model.actor.mu, model.actor.log_std]
    copy_layers(actor_layers(learner.actor), sb3_actor)
    initial_actor = copy.deepcopy(learner.actor)
    for index in range(2):
        copy_layers(critic_layers(learner.critic.member(index)), linears(getattr(model.critic, f"qf{index}")))

    # a' ~ pi(s') every update; a ~ pi(s) too on the actor's updates (policy delay 3)
    _update_side_by_side(monkeypatch, learner, model, updates, draws_per_update=lambda step: 2 if step % 3 == 0 else 1)
    differences = _actor_and_temperature_differences(learner, model, sb3_actor)
    for index in range(2):
        differences[f"critic_{index}"] = max_difference(critic_layers(learner.critic.member(index)),
                                                    linears(getattr(model.critic, f"qf{index}")))
    assert max(differences.values()) < 1e-5, differences
    # the comparison is not between two untouched copies
    assert max_difference(actor_layers(initial_actor), actor_layers(learner.actor)) > 1e-3
