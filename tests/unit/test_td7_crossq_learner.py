"""TD7 (Fujimoto et al. 2023) and CrossQ (Bhatt et al. 2024), each an algorithm module: which encoder copy
feeds which network, value clipping, hard target copies, LAP's loss and priorities, the checkpoint policy; no
target networks, one joint batch-renormalized critic pass per update, train/eval modes; exact state round trips."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from polyak.agent import Agent
from polyak.algorithms import build_actor, evaluation_actor_key
from polyak.config import AgentConfig, Configs, NetworkConfig, NoiseConfig, ReplayConfig, TD7Config, TrainerConfig
from polyak.errors import ConfigError
from polyak.lap import lap_huber
from polyak.layers import BatchRenorm1d
from polyak.replay import LapSampler, Replay
from polyak.types import Batch

OBS, ACT = 3, 2


TD7_FIELDS = set(TD7Config.__dataclass_fields__)


def td7_agent(hard: int = 4, **kwargs) -> Agent:
    options = {"n_critics": 2, "policy_delay": 2, "target_policy_noise": 0.2, "actor_objective": "mean",
               "algorithm": "td7"} | {k: v for k, v in kwargs.items() if k not in TD7_FIELDS}
    td7 = {"hard_target_every": hard, "sale_dim": 8, "sale_hidden": 16, "checkpoint_training": False} | {
        k: v for k, v in kwargs.items() if k in TD7_FIELDS}
    actor = NetworkConfig(hidden_sizes=(16, 16), avg_l1_norm=True, lr=3e-4)
    critic = NetworkConfig(hidden_sizes=(16, 16), avg_l1_norm=True, activation="elu", action_layer=0, lr=3e-4)
    return Agent(OBS, ACT, 1, AgentConfig(device="cpu", **options), actor, critic, NoiseConfig(),
                 np.random.SeedSequence(0), ReplayConfig(sampler="lap"), TD7Config(**td7))


def crossq_agent(**agent_kwargs) -> Agent:
    options = {"n_critics": 2, "policy_delay": 3, "target_policy_noise": 0.2, "algorithm": "crossq",
               "actor_objective": "min"} | agent_kwargs
    actor = NetworkConfig(hidden_sizes=(16, 16), batch_renorm=True, adam_beta1=0.5, batch_renorm_warmup=3)
    critic = NetworkConfig(hidden_sizes=(32, 32), batch_renorm=True, adam_beta1=0.5, action_layer=0,
                           batch_renorm_warmup=3)
    return Agent(OBS, ACT, 1, AgentConfig(device="cpu", **options), actor, critic, NoiseConfig(),
                 np.random.SeedSequence(0))


def make_batch(seed: int = 3, size: int = 32) -> Batch:
    g = torch.Generator().manual_seed(seed)
    return Batch(obs=torch.randn(size, OBS, generator=g), action=torch.rand(size, ACT, generator=g) * 2 - 1,
                 reward=torch.randn(size, generator=g) * 3, next_obs=torch.randn(size, OBS, generator=g),
                 terminated=(torch.rand(size, generator=g) < 0.2).float(), discount=torch.full((size,), 0.99),
                 indices=np.arange(size))


def _equal(a: torch.nn.Module, b: torch.nn.Module, skip: str = "\0") -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa if not k.startswith(skip))


# ---------------------------------------------------------------------------------------------------- TD7
def test_td7_networks_and_inputs():
    learner = td7_agent().learner
    assert list(learner.networks) == ["actor", "critic", "actor_target", "critic_target", "encoders",
                                      "value_clipper", "checkpoint_actor"]
    # The actor owns a frozen copy of the fixed state encoder: its optimizer never steps it.
    assert learner.actor.state_encoder is not None
    assert not any(p.requires_grad for p in learner.actor.state_encoder.parameters())
    assert all(p.requires_grad for p in learner._actor_params)
    # The critic's first layer is AvgL1Norm(Linear([s, a])) and [zsa, zs] joins its output.
    assert learner.critic.input_layer.weight.shape == (2, 16, OBS + ACT)
    assert learner.critic.backbone[0].linear.weight.shape == (2, 16, 16 + 8 + 8)


def test_td7_critic_sees_fixed_encoder_and_target_sees_fixed_target_encoder():
    agent = td7_agent(hard=2)
    learner = agent.learner
    for seed in range(3):  # one hard update: encoder, fixed and fixed target now all differ
        learner.update(make_batch(seed))
    enc = learner.encoders
    assert not _equal(enc.encoder, enc.fixed_encoder) and not _equal(enc.fixed_encoder, enc.fixed_encoder_target)
    seen = {}
    for name in ("critic", "critic_target"):
        module = learner.networks[name]
        original = module.forward

        def spy(obs, action, embedding=None, members=slice(None), _name=name, _original=original):
            seen[_name] = (obs, action, embedding)
            return _original(obs, action, embedding, members)

        module.forward = spy
    batch = make_batch(9)
    learner._critic_loss_eager(batch.obs, batch.action, batch.reward, batch.next_obs, batch.terminated,
                               batch.discount, None, None)
    with torch.no_grad():
        zs = enc.fixed_encoder.zs(batch.obs)
        expected = torch.cat((enc.fixed_encoder.zsa(zs, batch.action), zs), dim=-1)
        torch.testing.assert_close(seen["critic"][2], expected, rtol=0, atol=0)
        _, action_next, embedding_next = seen["critic_target"]
        zs_next = enc.fixed_encoder_target.zs(batch.next_obs)
        torch.testing.assert_close(embedding_next, torch.cat((enc.fixed_encoder_target.zsa(zs_next, action_next),
                                                              zs_next), dim=-1), rtol=0, atol=0)
        # The target actor acts on zs' of the fixed target encoder (without noise here).
        target_actor = learner.actor_target.__class__.forward(learner.actor_target, batch.next_obs, zs_next)
        torch.testing.assert_close(action_next, target_actor, rtol=0, atol=0)


def test_td7_hard_copies_every_n_updates_in_td7_order():
    learner = td7_agent(hard=3).learner
    actor_target0 = copy.deepcopy(learner.actor_target.state_dict())
    for seed in range(2):
        learner.update(make_batch(seed))
    for name, tensor in learner.actor_target.state_dict().items():  # untouched before the 3rd update
        assert torch.equal(tensor, actor_target0[name])
    fixed_before = copy.deepcopy(learner.encoders.fixed_encoder)
    learner.update(make_batch(2))
    # The targets are copies (the actor's own state encoder has moved on to the new fixed encoder since).
    assert _equal(learner.actor_target, learner.actor, skip="state_encoder.")
    assert _equal(learner.critic_target, learner.critic)
    enc = learner.encoders
    assert _equal(enc.fixed_encoder, enc.encoder)
    assert _equal(enc.fixed_encoder_target, fixed_before)
    assert _equal(learner.actor.state_encoder, enc.fixed_encoder.state_encoder)
    assert _equal(learner.actor_target.state_encoder, enc.fixed_encoder_target.state_encoder)


def test_td7_value_clipping_first_iteration_learns_reward_then_clips_to_seen_range():
    learner = td7_agent(hard=2).learner
    batch = make_batch(0)
    # Before the first hard update the clip range is [0, 0]: the target is r exactly.
    _, _, target = learner._critic_loss_eager(batch.obs, batch.action, batch.reward, batch.next_obs,
                                              batch.terminated, batch.discount, None, None)
    assert torch.equal(target, batch.reward)
    learner.update(make_batch(1))
    learner.update(make_batch(2))  # the hard update copies the seen extremes into the range
    clipper = learner.clipper
    assert float(clipper.min_target) == float(clipper.seen_min) <= float(batch.reward.min())
    assert float(clipper.max_target) == float(clipper.seen_max) >= float(batch.reward.max())
    # td_errors for insertion priorities do not move the seen range.
    seen = (float(clipper.seen_min), float(clipper.seen_max))
    learner.td_target(make_batch(5, size=8))
    assert seen == (float(clipper.seen_min), float(clipper.seen_max))


def test_td7_lap_loss_and_max_over_critics_td_errors():
    learner = td7_agent().learner
    batch = make_batch(0)
    loss, q_values, target = learner._critic_loss_eager(batch.obs, batch.action, batch.reward, batch.next_obs,
                                                        batch.terminated, batch.discount, None, None)
    torch.testing.assert_close(loss, lap_huber(q_values - target.unsqueeze(0), 1.0))
    result = learner.update(batch)
    assert result.td_errors.shape == (32,)
    assert "encoder_loss" in result.metrics


def test_td7_actor_objective_is_the_mean_over_both_critics():
    learner = td7_agent().learner
    batch = make_batch(0)
    with torch.no_grad():
        zs = learner.encoders.fixed_encoder.zs(batch.obs)
        action = learner.actor(batch.obs, zs)
        q = learner.critic(batch.obs, action, torch.cat((learner.encoders.fixed_encoder.zsa(zs, action), zs), -1))
        assert q.shape == (2, 32)
        torch.testing.assert_close(learner._actor_loss_eager(batch.obs), -q.mean())


def test_lap_replay_resets_max_priority_at_hard_updates():
    replay = Replay(ReplayConfig(sampler="lap", capacity=64, min_size=1), 0.99, 1, OBS, ACT,
                    np.random.default_rng(0), hard_target_every=3)
    assert isinstance(replay.sampler, LapSampler)
    for _ in range(20):
        replay.add(np.zeros((1, OBS)), np.zeros((1, ACT)), np.ones(1), np.zeros((1, OBS)), np.zeros(1, bool),
                   np.zeros(1, bool))
    batch = replay.sample(4, torch.device("cpu"))
    assert batch.weights is None  # LAP has no importance weights
    replay.update_priorities(batch.indices, torch.tensor([100.0, 0.0, 0.0, 0.0]))
    assert replay.sampler.max_priority == pytest.approx(100.0 ** 0.4)
    replay.update_priorities(batch.indices, torch.zeros(4))  # overwrites the large priority ...
    assert replay.sampler.max_priority == pytest.approx(100.0 ** 0.4)
    replay.update_priorities(batch.indices, torch.zeros(4))  # ... and the 3rd update resets to the stored max
    assert replay.sampler.max_priority == 1.0
    state = replay.state_dict()
    assert state["priority_updates"] == 3


def test_td7_checkpoint_policy_assesses_episodes_after_training_starts():
    agent = td7_agent()
    learner = agent.learner
    obs = np.random.default_rng(0).normal(size=(2, OBS))
    np.testing.assert_array_equal(agent.greedy(obs), agent.explorer.greedy(obs))  # no checkpoint yet
    agent.end_step(np.array([5.0]), np.array([True]), False)  # learning cannot start yet: not assessed
    agent.end_step(np.array([5.0]), np.array([True]))  # learning can start: assessed from the next episode on
    assert agent.learner.checkpoint_policy.checkpoints == 0 and agent.learner.checkpoint_policy.allowed
    learner.update(make_batch(0))
    agent.end_step(np.array([1.0]), np.array([False]))
    agent.end_step(np.array([2.0]), np.array([True]))  # return 3 > -1e8: the first assessment checkpoints
    assert agent.learner.checkpoint_policy.checkpoints == 1
    assert agent.learner.checkpoint_policy.assessor.best_min_return == 3.0
    assert _equal(learner.checkpoint_actor, learner.actor)
    for seed in range(1, 3):
        learner.update(make_batch(seed))
    assert not _equal(learner.checkpoint_actor, learner.actor)
    agent.end_step(np.array([2.0]), np.array([True]))  # 2 < 3: early stop, checkpoint kept
    assert agent.learner.checkpoint_policy.checkpoints == 1
    with torch.no_grad():
        expected = learner.checkpoint_actor(torch.as_tensor(obs, dtype=torch.float32)).numpy()
    np.testing.assert_allclose(agent.greedy(obs), expected)
    assert not np.allclose(agent.greedy(obs), agent.explorer.greedy(obs))


def test_td7_checkpoint_training_asks_for_the_assessed_env_steps():
    agent = td7_agent(checkpoint_training=True)
    assert agent.trains_at_episode_ends
    assert agent.end_step(np.array([1.0]), np.array([True])) == 0  # allows training from the next episode
    for _ in range(6):
        assert agent.end_step(np.array([1.0]), np.array([False])) == 0
    assert agent.end_step(np.array([1.0]), np.array([True])) == 7  # the assessment's 7 env steps
    assert agent.learner.checkpoint_policy.assessor.training_steps == 7
    per_step = td7_agent()
    per_step.end_step(np.array([1.0]), np.array([True]))
    assert not per_step.trains_at_episode_ends
    assert per_step.end_step(np.array([1.0]), np.array([True])) == 0  # assessed, but the trainer trains per step
    assert per_step.learner.checkpoint_policy.checkpoints == 1


def _round_trip(make, steps_before: int, steps_after: int, **episode) -> None:
    a, b = make(), make()
    for seed in range(steps_before):
        a.learner.update(make_batch(seed))
        a.end_step(np.array([float(seed)]), np.array([seed % 2 == 1]))
    state = copy.deepcopy(a.state_dict())
    b.load_state_dict(state)
    for seed in range(steps_before, steps_before + steps_after):
        ra, rb = a.learner.update(make_batch(seed)), b.learner.update(make_batch(seed))
        torch.testing.assert_close(ra.td_errors, rb.td_errors, rtol=0, atol=0)
        a.end_step(np.array([1.0]), np.array([True]))
        b.end_step(np.array([1.0]), np.array([True]))
    for name in a.learner.networks:
        assert _equal(a.learner.networks[name], b.learner.networks[name]), name
    assert a.state_dict().keys() == b.state_dict().keys()


def test_td7_state_round_trips_exactly():
    _round_trip(td7_agent, 5, 6)


def test_crossq_state_round_trips_exactly():
    _round_trip(crossq_agent, 5, 7)


def test_build_actor_loads_a_td7_checkpoint_actor_outside_the_learner():
    agent = td7_agent(hard=2)
    for seed in range(3):
        agent.learner.update(make_batch(seed))
    agent.end_step(np.array([1.0]), np.array([True]))  # allows assessments
    agent.end_step(np.array([1.0]), np.array([True]))  # the first one checkpoints
    assert agent.learner.checkpoint_policy.checkpoints == 1
    config, td7 = agent.learner.config, agent.learner.td7
    key = evaluation_actor_key(config, td7)
    assert key == "checkpoint_actor" and evaluation_actor_key(AgentConfig(), td7) == "actor"
    actor = build_actor(OBS, ACT, config, agent.learner.actor_config, td7)
    actor.load_state_dict(agent.state_dict()[key])
    obs = np.random.default_rng(1).normal(size=(4, OBS))
    with torch.no_grad():
        np.testing.assert_allclose(actor.eval()(torch.as_tensor(obs, dtype=torch.float32)).numpy(), agent.greedy(obs),
                                   rtol=1e-6)


# ---------------------------------------------------------------------------------------------------- CrossQ
def test_crossq_has_no_target_networks_and_adam_beta1():
    learner = crossq_agent().learner
    assert list(learner.networks) == ["actor", "critic"]
    assert not hasattr(learner, "actor_target") and not hasattr(learner, "critic_target")
    assert "actor_target" not in learner.state_dict()
    assert learner.critic_optim.param_groups[0]["betas"] == (0.5, 0.999)
    assert learner.actor_optim.param_groups[0]["betas"] == (0.5, 0.999)


def _renorms(module: torch.nn.Module) -> list[BatchRenorm1d]:
    return [m for m in module.modules() if isinstance(m, BatchRenorm1d)]


def test_crossq_one_joint_pass_per_update_and_actor_stats_per_actor_update():
    learner = crossq_agent().learner
    assert len(_renorms(learner.critic)) == 3 and len(_renorms(learner.actor)) == 3  # input + 2 hidden
    for seed in range(7):
        learner.update(make_batch(seed))
    assert all(int(m.steps) == 7 for m in _renorms(learner.critic))  # once per update, not once per half
    assert all(int(m.steps) == 2 for m in _renorms(learner.actor))  # only the actor loss is train mode
    learner.td_errors(type("T", (), dict(obs=np.zeros((2, OBS)), action=np.zeros((2, ACT)), reward=np.zeros(2),
                                         next_obs=np.zeros((2, OBS)), terminated=np.zeros(2),
                                         discount=np.full(2, 0.99)))())
    assert all(int(m.steps) == 7 for m in _renorms(learner.critic))  # eval mode: nothing updated


def test_crossq_joint_pass_equals_one_critic_call_on_the_concatenated_batch():
    learner = crossq_agent(target_policy_noise=None).learner
    for seed in range(4):  # past the warmup (3): renormalization is on
        learner.update(make_batch(seed))
    batch = make_batch(10)
    reference = copy.deepcopy(learner.critic).train()
    with torch.no_grad():
        next_action = copy.deepcopy(learner.actor).eval()(batch.next_obs)
        q_all = reference(torch.cat((batch.obs, batch.next_obs)), torch.cat((batch.action, next_action)))
    loss, q_values, target = learner._critic_loss_eager(batch.obs, batch.action, batch.reward, batch.next_obs,
                                                        batch.terminated, batch.discount, None, None)
    torch.testing.assert_close(q_values, q_all[:, :32], rtol=0, atol=0)
    expected = batch.reward + batch.discount * (1 - batch.terminated) * q_all[:, 32:].min(dim=0).values
    torch.testing.assert_close(target, expected, rtol=0, atol=0)
    torch.testing.assert_close(loss, (q_all[:, :32] - expected).pow(2).mean(dim=1).sum())
    for mine, theirs in zip(_renorms(learner.critic), _renorms(reference), strict=True):  # stats moved alike
        assert torch.equal(mine.running_mean, theirs.running_mean) and int(mine.steps) == int(theirs.steps)


def test_crossq_modes_next_action_eval_actor_loss_critic_eval():
    learner = crossq_agent().learner
    modes = {"actor": [], "critic": []}
    for name in ("actor", "critic"):
        module = learner.networks[name]
        original = module.forward

        def spy(*args, _name=name, _module=module, _original=original, **kwargs):
            modes[_name].append(_module.training)
            return _original(*args, **kwargs)

        module.forward = spy
    learner.update(make_batch(0))
    learner.update(make_batch(1))
    learner.update(make_batch(2))  # the 3rd update trains the actor
    # Each update: a' with the actor in eval mode, the joint critic pass in train mode.
    assert modes["actor"] == [False, False, False, True]
    assert modes["critic"] == [True, True, True, False]
    assert learner.critic.training and learner.actor.training  # modes restored after the passes


def test_crossq_actor_objective_is_the_min_over_critics():
    learner = crossq_agent().learner
    batch = make_batch(0)
    with torch.no_grad():
        actor = copy.deepcopy(learner.actor).train()
        critic = copy.deepcopy(learner.critic).eval()
        expected = -critic(batch.obs, actor(batch.obs)).min(dim=0).values.mean()
        torch.testing.assert_close(learner._actor_loss_eager(batch.obs), expected)


# ---------------------------------------------------------------------------------------------------- configs
def test_defaults_leave_the_td3_learner_unchanged():
    agent = AgentConfig()
    assert agent.algorithm.value == "ddpg" and agent.actor_objective.value == "first"
    net = NetworkConfig()
    assert not net.avg_l1_norm and not net.batch_renorm and net.adam_beta1 == 0.9
    assert ReplayConfig().sampler.value == "uniform"
    td7 = TD7Config()  # the TD7 authors' values
    assert (td7.hard_target_every, td7.sale_dim, td7.sale_lr, td7.checkpoint_episodes) == (250, 256, 3e-4, 20)


@pytest.mark.parametrize(("make", "message"), [
    (lambda: TD7Config(checkpoint_policy=False), "checkpoint_training"),
    (lambda: TD7Config(hard_target_every=0), "hard_target_every"),
    (lambda: AgentConfig(algorithm="td3"), "algorithm"),
    (lambda: Configs(TrainerConfig(), AgentConfig(algorithm="td7"), NetworkConfig(),
                     NetworkConfig(batch_renorm=True, action_layer=0), ReplayConfig(), NoiseConfig()).validate(),
     "batch_renorm"),
    (lambda: NetworkConfig(batch_renorm=True, hidden_batchnorm=True), "batch_renorm"),
    (lambda: NetworkConfig(batch_renorm_momentum=0.0), "batch_renorm_momentum"),
    (lambda: NetworkConfig(adam_beta1=1.0), "adam_beta1"),
    (lambda: Configs(TrainerConfig(), AgentConfig(), NetworkConfig(), NetworkConfig(batch_renorm=True),
                     ReplayConfig(), NoiseConfig()).validate(), "action_layer"),
])
def test_invalid_switch_combinations_are_config_errors(make, message):
    with pytest.raises(ConfigError, match=message):
        make()


@pytest.mark.parametrize("make", [td7_agent, crossq_agent], ids=["td7", "crossq"])
def test_bfloat16_hidden_layers_train(make):
    agent = make(precision="bfloat16")
    for seed in range(4):
        result = agent.learner.update(make_batch(seed))
    assert torch.isfinite(result.metrics["critic_loss"]) and result.td_errors.dtype == torch.float32
    assert agent.act(np.zeros((2, OBS)), True).shape == (2, ACT)


@pytest.mark.parametrize("name", ["td7", "crossq"])
def test_ensemble_equals_separate_critics_with_td7_and_crossq_layers(name):
    from polyak.ensemble import CriticEnsemble
    from polyak.networks import Critic

    if name == "td7":
        config, embedding = NetworkConfig(hidden_sizes=(16, 8), avg_l1_norm=True, activation="elu", action_layer=0), 6
    else:
        config, embedding = NetworkConfig(hidden_sizes=(16, 8), batch_renorm=True, batch_renorm_warmup=2,
                                          action_layer=0), 0
    ensemble = CriticEnsemble(2, OBS, ACT, config, torch.Generator().manual_seed(7), embedding)
    generator = torch.Generator().manual_seed(7)
    separate = [Critic(OBS, ACT, config, generator, embedding) for _ in range(2)]
    for step in range(4):  # train mode; CrossQ's renormalization starts after 2 passes
        batch = make_batch(step)
        extra = torch.randn(32, embedding, generator=torch.Generator().manual_seed(step)) if embedding else None
        expected = torch.stack([critic(batch.obs, batch.action, extra) for critic in separate])
        torch.testing.assert_close(ensemble(batch.obs, batch.action, extra), expected)
    ensemble.eval()
    for critic in separate:
        critic.eval()
    torch.testing.assert_close(ensemble(batch.obs, batch.action, extra),
                               torch.stack([critic(batch.obs, batch.action, extra) for critic in separate]))
    for index, critic in enumerate(separate):
        member = ensemble.member(index)
        for key, tensor in critic.state_dict().items():
            if not key.endswith("steps"):
                torch.testing.assert_close(member.state_dict()[key], tensor, msg=f"{name}: {index} {key}")
