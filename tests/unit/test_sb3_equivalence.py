"""polyak's TD3 update equals Stable-Baselines3's, step for step, from identical weights and batches.

Both learners start from the same weights and see the same 20 minibatches (target policy smoothing off,
so no random draw differs); afterwards the actors, critics, target networks and TD targets agree to float
round-off. This guards every refactor of the update: a learning gap between the libraries must then come
from collection, exploration or evaluation. Runs when the `bench` extra (stable-baselines3) is installed.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from polyak.agent import Agent
from polyak.config import AgentConfig, NetworkConfig, NoiseConfig
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

sb3 = pytest.importorskip("stable_baselines3")
from stable_baselines3.common.logger import Logger  # noqa: E402

OBS, ACT, HIDDEN, BATCH, UPDATES, GAMMA, TAU, LR = 11, 3, (64, 48), 32, 20, 0.99, 0.005, 1e-3


def _sb3_td3() -> sb3.TD3:
    model = sb3.TD3("MlpPolicy", spaces_env(OBS, ACT), learning_rate=LR, batch_size=BATCH, tau=TAU, gamma=GAMMA,
                    policy_delay=2, target_policy_noise=0.0, target_noise_clip=0.0, learning_starts=0, device="cpu",
                    policy_kwargs={"net_arch": list(HIDDEN), "n_critics": 2}, seed=0)
    model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def _batches() -> list[Batch]:
    generator = torch.Generator().manual_seed(7)
    return [Batch(obs=torch.randn(BATCH, OBS, generator=generator),
                  action=torch.rand(BATCH, ACT, generator=generator) * 2 - 1,
                  reward=torch.randn(BATCH, generator=generator),
                  next_obs=torch.randn(BATCH, OBS, generator=generator),
                  terminated=(torch.rand(BATCH, generator=generator) < 0.1).float(),
                  discount=GAMMA) for _ in range(UPDATES)]


def test_td3_update_matches_stable_baselines3() -> None:
    network = NetworkConfig(hidden_sizes=HIDDEN, lr=LR, action_layer=0, weight_init="pytorch")
    config = AgentConfig(device="cpu", n_critics=2, policy_delay=2, target_policy_noise=None, tau=TAU, gamma=GAMMA,
                         batch_size=BATCH)
    learner = Agent(OBS, ACT, 1, config, network, network, NoiseConfig(), np.random.SeedSequence(0)).learner
    model = _sb3_td3()
    critics = [learner.critic.member(i) for i in range(2)]
    copy_layers(actor_layers(learner.actor), linears(model.actor.mu))
    copy_layers(actor_layers(learner.actor), linears(model.actor_target.mu))
    for index, critic in enumerate(critics):
        copy_layers(critic_layers(critic), linears(getattr(model.critic, f"qf{index}")))
        copy_layers(critic_layers(critic), linears(getattr(model.critic_target, f"qf{index}")))

    for batch in _batches():
        learner.update(batch)
        model.replay_buffer.sample = sampler(batch)
        model.train(gradient_steps=1, batch_size=BATCH)

    differences = {"actor": max_difference(actor_layers(learner.actor), linears(model.actor.mu)),
                   "actor_target": max_difference(actor_layers(learner.actor_target),
                                                   linears(model.actor_target.mu))}
    for index in range(2):
        differences[f"critic_{index}"] = max_difference(critic_layers(learner.critic.member(index)),
                                                         linears(getattr(model.critic, f"qf{index}")))
        differences[f"critic_target_{index}"] = max_difference(
            critic_layers(learner.critic_target.member(index)),
            linears(getattr(model.critic_target, f"qf{index}")))
    batch = _batches()[0]
    with torch.no_grad():
        next_q = torch.cat(model.critic_target(batch.next_obs, model.actor_target(batch.next_obs)), dim=1).min(1).values
        sb3_target = batch.reward + (1 - batch.terminated) * GAMMA * next_q
    differences["td_target"] = float((learner.td_target(batch) - sb3_target).abs().max())
    assert max(differences.values()) < 1e-6, differences  # 1.5e-7 measured at 1c7a914
    # the weights moved: the comparison is not between two untouched copies
    assert max_difference(linears(model.actor.mu), linears(model.actor_target.mu)) > 1e-4
