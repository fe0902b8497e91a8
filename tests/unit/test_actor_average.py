"""The averaged actor (``AgentConfig.actor_average``): the moving average against numbers worked by hand, that it
follows every actor update and only those, that it leaves training unchanged, that evaluation and checkpoints
use it, and the settings it refuses."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch import nn

from polyak.agent import Agent
from polyak.algorithms import evaluation_actor_key
from polyak.averaging import ActorAverage
from polyak.config import AgentConfig, Configs, NetworkConfig, NoiseConfig, ReplayConfig, TD7Config, TrainerConfig
from polyak.errors import ConfigError
from polyak.layers import BatchRenorm1d
from polyak.types import Batch

OBS, ACT, BATCH = 5, 2, 16


class Tiny(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(1, 1)
        self.register_buffer("running", torch.tensor([2.0]))
        self.register_buffer("steps", torch.tensor(3))


def test_one_step_moves_a_quarter_of_the_way_and_copies_integer_buffers():
    live = Tiny()
    with torch.no_grad():
        live.linear.weight.fill_(1.0)
        live.linear.bias.fill_(-1.0)
    average = ActorAverage(live, rate=0.25)
    with torch.no_grad():
        live.linear.weight.fill_(5.0)  # 1 + 0.25 * (5 - 1) = 2
        live.linear.bias.fill_(3.0)  # -1 + 0.25 * (3 + 1) = 0
        live.running.fill_(10.0)  # 2 + 0.25 * 8 = 4
        live.steps.fill_(7)
    average.update(live, count=100)  # past the warm-up: 9 / (9 + 100) < 0.25
    assert average.actor.linear.weight.item() == pytest.approx(2.0)
    assert average.actor.linear.bias.item() == pytest.approx(0.0)
    assert average.actor.running.item() == pytest.approx(4.0)
    assert average.actor.steps.item() == 7
    average.update(live, count=101)  # 2 + 0.25 * 3 = 2.75: geometric approach to the live weight
    assert average.actor.linear.weight.item() == pytest.approx(2.75)
    assert not any(p.requires_grad for p in average.actor.parameters()) and not average.actor.training


def test_the_rate_starts_high_and_decays_to_the_configured_one():
    average = ActorAverage(Tiny(), rate=0.002)
    assert average.rate_at(1) == pytest.approx(0.9)  # TensorFlow's cap (1 + 0) / (10 + 0) = 0.1 on the decay
    assert average.rate_at(2) == pytest.approx(9 / 11)
    assert average.rate_at(1667) == pytest.approx(9 / 1676)
    assert average.rate_at(4490) > 0.002 and average.rate_at(4491) == pytest.approx(0.002)
    assert average.rate_at(10**6) == 0.002
    live = Tiny()
    with torch.no_grad():
        live.linear.bias.fill_(0.0)
    average = ActorAverage(live, rate=0.002)
    with torch.no_grad():
        live.linear.bias.fill_(10.0)
    average.update(live, count=1)  # 0 + 0.9 * 10
    assert average.actor.linear.bias.item() == pytest.approx(9.0)


def test_the_warm_up_is_forgotten_long_before_a_suite_run_ends():
    """A 100k-step run of the recommended config steps its actor 31,666 times; by 20,000 the warmed-up average
    equals the plain one to float32 precision, so the warm-up changes only early evaluations."""
    torch.manual_seed(0)
    live = nn.Linear(8, 8)
    warmed, plain = ActorAverage(live, 0.002), ActorAverage(live, 0.002)
    plain.rate_at = lambda count: 0.002  # type: ignore[method-assign]
    gaps = {}
    for count in range(1, 20_001):
        with torch.no_grad():
            for parameter in live.parameters():
                parameter.add_(torch.randn_like(parameter), alpha=0.01)  # a random walk of the live weights
        warmed.update(live, count)
        plain.update(live, count)
        if count in (1000, 20_000):
            gaps[count] = max((a - b).abs().max().item()
                              for a, b in zip(warmed.actor.parameters(), plain.actor.parameters(), strict=True))
    assert gaps[1000] > 0.05  # early on the two differ
    assert gaps[20_000] < 1e-6


def _agent(algorithm: str, actor_average: float | None, **agent_settings) -> Agent:
    renorm = algorithm.startswith("crossq")
    network = NetworkConfig(hidden_sizes=(32, 32), batch_renorm=renorm, action_layer=0, batch_renorm_warmup=3)
    agent = AgentConfig(algorithm=algorithm, device="cpu", n_critics=2, batch_size=BATCH,
                        actor_average=actor_average, **agent_settings)
    return Agent(OBS, ACT, 1, agent, network, network, NoiseConfig(kind="none" if "sac" in algorithm else "gaussian"),
                 np.random.SeedSequence(0), ReplayConfig())


def _batches(count: int) -> list[Batch]:
    g = torch.Generator().manual_seed(3)
    return [Batch(obs=torch.randn(BATCH, OBS, generator=g), action=torch.rand(BATCH, ACT, generator=g) * 2 - 1,
                  reward=torch.randn(BATCH, generator=g), next_obs=torch.randn(BATCH, OBS, generator=g),
                  terminated=torch.zeros(BATCH), discount=0.99) for _ in range(count)]


def _state(module: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in module.state_dict().items()}


@pytest.mark.parametrize(("algorithm", "delay"), [("crossq_sac", 3), ("sac", 1), ("ddpg", 2), ("crossq", 3)])
def test_the_average_follows_each_actor_update_and_training_is_unchanged(algorithm, delay):
    rate = 0.3
    averaged, plain = _agent(algorithm, rate, policy_delay=delay), _agent(algorithm, None, policy_delay=delay)
    reference = _state(averaged.learner.actor)  # the hand-rolled average, updated where the actor changed
    for batch in _batches(7):
        before = _state(averaged.learner.actor)
        averaged.learner.update(batch)
        plain.learner.update(batch)
        after = _state(averaged.learner.actor)
        if any(not torch.equal(before[k], after[k]) for k in after if after[k].is_floating_point()):
            assert averaged.learner.updates % delay == 0
            step = max(rate, 9 / (9 + averaged.learner.updates // delay))  # the warm-up: 0.9, 9/11, ...
            reference = {k: (v + step * (after[k] - v)) if v.is_floating_point() else after[k].clone()
                         for k, v in reference.items()}
    for key, value in averaged.learner.actor_average.actor.state_dict().items():
        torch.testing.assert_close(value, reference[key], rtol=1e-6, atol=1e-7)
    for name in ("actor", "critic"):  # the same updates with and without the average
        for key, value in averaged.learner.networks[name].state_dict().items():
            torch.testing.assert_close(value, plain.learner.networks[name].state_dict()[key], rtol=0, atol=0)


def test_evaluation_acts_with_the_average_and_exploration_with_the_live_actor():
    agent = _agent("crossq", 0.5, policy_delay=1)
    for batch in _batches(4):
        agent.learner.update(batch)
    obs = np.random.default_rng(1).normal(size=(8, OBS))
    with torch.no_grad():
        averaged = agent.learner.actor_average.actor(torch.as_tensor(obs, dtype=torch.float32)).numpy()
        live = agent.learner.actor.eval()(torch.as_tensor(obs, dtype=torch.float32)).numpy()
    np.testing.assert_allclose(agent.greedy(obs), averaged, rtol=1e-6)
    assert np.abs(averaged - live).max() > 1e-4  # the two differ after updates at rate 0.5
    assert any(isinstance(m, BatchRenorm1d) for m in agent.learner.actor_average.actor.modules())


def test_the_average_is_in_checkpoints_and_round_trips():
    agent = _agent("crossq_sac", 0.1, policy_delay=1)
    for batch in _batches(3):
        agent.learner.update(batch)
    state = copy.deepcopy(agent.state_dict())
    assert "actor_average" in state
    twin = _agent("crossq_sac", 0.1, policy_delay=1)
    twin.load_state_dict(state)
    for batch in _batches(2):
        agent.learner.update(batch)
        twin.learner.update(batch)
    for key, value in agent.learner.actor_average.actor.state_dict().items():
        torch.testing.assert_close(value, twin.learner.actor_average.actor.state_dict()[key], rtol=0, atol=0)
    assert evaluation_actor_key(AgentConfig(actor_average=0.1)) == "actor_average"
    assert evaluation_actor_key(AgentConfig()) == "actor"


@pytest.mark.parametrize("rate", [0.0, 1.5, -0.1])
def test_a_rate_outside_zero_to_one_is_refused(rate):
    with pytest.raises(ConfigError, match=r"AgentConfig\.actor_average must be in \(0, 1\]"):
        AgentConfig(actor_average=rate)


def test_td7s_checkpoint_policy_and_the_average_are_not_both_allowed():
    configs = Configs(trainer=TrainerConfig(), agent=AgentConfig(algorithm="td7", actor_average=0.01),
                      actor=NetworkConfig(), critic=NetworkConfig(), replay=ReplayConfig(), noise=NoiseConfig(),
                      td7=TD7Config(checkpoint_policy=True))
    with pytest.raises(ConfigError, match=r"actor_average and TD7Config\.checkpoint_policy"):
        configs.validate()
