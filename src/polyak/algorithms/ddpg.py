"""DDPG (Lillicrap et al. 2015) with TD3's switches (Fujimoto et al. 2018): ``n_critics``, ``policy_delay`` and
``target_policy_noise`` turn DDPG into TD3 (``AgentConfig.algorithm = 'ddpg'``).

BatchNorm: the online networks learn in train mode and act in eval mode; target networks always run in eval mode
and Polyak-average the online BatchNorm running statistics along with the weights, so a target network is a slow
copy of the whole online network.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from polyak.algorithms.base import ActorCritic
from polyak.config import ActorObjective, AgentConfig, NetworkConfig, ReplayConfig
from polyak.losses import clipped_min, policy_loss, polyak_update, smoothed_action, td_target
from polyak.modes import frozen_copy
from polyak.types import Batch, UpdateResult


def target_pairs(target: torch.nn.Module, online: torch.nn.Module) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Parameters then buffers of both modules, in the same order, for Polyak averaging and hard copies."""
    return [*target.parameters(), *target.buffers()], [*online.parameters(), *online.buffers()]


class DDPG(ActorCritic):
    """Actor, critic ensemble, their Polyak-averaged targets and the DDPG/TD3 update."""

    def __init__(
        self, obs_dim: int, action_dim: int, agent: AgentConfig, actor: NetworkConfig, critic: NetworkConfig,
        init_seed: np.random.SeedSequence, torch_seed: np.random.SeedSequence, noisy_seed: np.random.SeedSequence,
        replay: ReplayConfig | None = None,
    ) -> None:
        super().__init__(obs_dim, action_dim, agent, actor, critic, init_seed, torch_seed, noisy_seed, replay)
        self.actor_target = self._register("actor_target", frozen_copy(self.actor, self.noisy_generator))
        self.critic_target = self._register("critic_target", copy.deepcopy(self.critic).eval().requires_grad_(False))
        # One Polyak average per network, each with its own factor (the network's tau, else AgentConfig.tau).
        self._soft_updates = [
            (*target_pairs(self.actor_target, self.actor), agent.tau if actor.tau is None else actor.tau),
            (*target_pairs(self.critic_target, self.critic), agent.tau if critic.tau is None else critic.tau),
        ]

    def update(self, batch: Batch) -> UpdateResult:
        """Every critic regresses on the TD target; the actor every ``policy_delay`` updates, then the targets
        move by Polyak averaging every ``target_update_every`` actor updates."""
        cfg = self.config
        self._begin_update()
        critic_loss_value, q_values, target = self._critic_step(batch)
        if self.updates % cfg.policy_delay == 0:
            self._last_actor_loss = self._actor_step(batch)
        if self.updates % (cfg.policy_delay * cfg.target_update_every) == 0:
            for targets, online, tau in self._soft_updates:
                polyak_update(targets, online, tau)
        return self._result(critic_loss_value, q_values, target)

    def _critic_loss_eager(self, obs: torch.Tensor, action: torch.Tensor, reward: torch.Tensor,
                           next_obs: torch.Tensor, terminated: torch.Tensor, discount: torch.Tensor | float,
                           weights: torch.Tensor | None, noise: torch.Tensor | None
                           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(loss, detached Q of every critic, TD target): y = r + gamma^k (1 - terminated) min_i Q'_i(s', a'),
        a' = mu'(s') with clipped smoothing noise (TD3)."""
        with torch.no_grad():
            next_action = smoothed_action(self.actor_target(next_obs), noise)
            target = td_target(reward, discount, terminated, clipped_min(self.critic_target(next_obs, next_action)))
        q_values = self.critic(obs, action)
        return self._regression_loss(q_values, target, weights), q_values.detach(), target

    def _actor_loss_eager(self, obs: torch.Tensor) -> torch.Tensor:
        """-Q_1(s, mu(s)) (TD3), or the mean or minimum over the critics (``AgentConfig.actor_objective``)."""
        with self._critic_in_eval():
            q_values = self.critic(obs, self.actor(obs), members=self._actor_members)
        return policy_loss(q_values, self.config.actor_objective is ActorObjective.MIN)

    @torch.no_grad()
    def td_target(self, batch: Batch) -> torch.Tensor:
        """y = r + gamma^k (1 - terminated) min_i Q'_i(s', mu'(s') [+ clipped noise])."""
        noise = self._smoothing_noise(batch.next_obs)
        next_action = smoothed_action(self.actor_target(batch.next_obs), noise)
        return td_target(batch.reward, batch.discount, batch.terminated,
                         clipped_min(self.critic_target(batch.next_obs, next_action)))
