"""SAC (Haarnoja et al. 2018, "Soft Actor-Critic Algorithms and Applications") and CrossQ in its authors' SAC mode
(Bhatt, Palenicek et al. 2024; the mode sb3-contrib ships): a tanh-squashed Gaussian actor that explores by
sampling, the entropy bonus with a learned temperature (``SACConfig``), and either Polyak-averaged target critics
(``AgentConfig.algorithm = 'sac'``) or CrossQ's joint batch-renormalized critic pass without targets
(``'crossq_sac'``). The order of each update is that of SB3's SAC and sb3-contrib's CrossQ.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import torch

from polyak.algorithms.base import ActorCritic
from polyak.algorithms.ddpg import target_pairs
from polyak.config import AgentConfig, NetworkConfig, ReplayConfig, SACConfig
from polyak.layers import joint_forward, module_mode
from polyak.losses import (
    clipped_min,
    polyak_update,
    sac_actor_loss,
    soft_critic_loss,
    soft_td_target,
    temperature_loss,
)
from polyak.networks import SquashedGaussianActor
from polyak.optim import descend
from polyak.types import Batch, UpdateResult


class SAC(ActorCritic):
    """A squashed-Gaussian actor, a critic ensemble with Polyak-averaged targets and the temperature alpha."""

    actor_class = SquashedGaussianActor
    actor: SquashedGaussianActor

    def __init__(
        self, obs_dim: int, action_dim: int, agent: AgentConfig, sac: SACConfig, actor: NetworkConfig,
        critic: NetworkConfig, init_seed: np.random.SeedSequence, torch_seed: np.random.SeedSequence,
        noisy_seed: np.random.SeedSequence, replay: ReplayConfig | None = None,
    ) -> None:
        super().__init__(obs_dim, action_dim, agent, actor, critic, init_seed, torch_seed, noisy_seed, replay)
        self.sac = sac
        self.target_entropy = -float(action_dim) if sac.target_entropy is None else sac.target_entropy
        self.log_alpha = torch.full((1,), math.log(sac.initial_temperature), device=self.device,
                                    requires_grad=sac.learn_temperature)
        self.alpha_optim = (torch.optim.Adam([self.log_alpha], lr=sac.temperature_lr or actor.lr)
                            if sac.learn_temperature else None)
        zero = torch.zeros((), device=self.device)
        self._last_policy_metrics = {"temperature_loss": zero, "entropy": zero}  # of the newest actor update
        self._add_targets()

    def _add_targets(self) -> None:
        self.critic_target = self._register("critic_target", copy.deepcopy(self.critic).eval().requires_grad_(False))
        tau = self.config.tau if self.critic_config.tau is None else self.critic_config.tau
        self._soft_update = (*target_pairs(self.critic_target, self.critic), tau)

    def update(self, batch: Batch) -> UpdateResult:
        """Temperature, critics, actor, then the target critics (SB3's SAC order): alpha from before this update
        weighs the entropy terms; the actor's sampled action and log-probability come first."""
        self._begin_update()
        alpha = self.log_alpha.detach().exp()
        action, log_prob = self.actor.sample(batch.obs, self._standard_normal(batch.obs))
        self._last_policy_metrics = {"temperature_loss": self._temperature_step(log_prob),
                                     "entropy": -log_prob.detach().mean()}
        with torch.no_grad():
            next_action, next_log_prob = self.actor.sample(batch.next_obs, self._standard_normal(batch.next_obs))
            next_q = clipped_min(self.critic_target(batch.next_obs, next_action))
            target = soft_td_target(batch.reward, batch.discount, batch.terminated, next_q, next_log_prob, alpha)
        q_values = self.critic(batch.obs, batch.action)
        critic_loss_value = self._critic_descend(q_values, target, batch.weights)
        actor_loss_value = sac_actor_loss(log_prob, clipped_min(self.critic(batch.obs, action)), alpha)
        descend(self.actor_optim, actor_loss_value, self._actor_params, self.actor_config.grad_clip_norm)
        self._actor_stepped()
        self._last_actor_loss = actor_loss_value.detach()
        if self.updates % self.config.target_update_every == 0:
            polyak_update(*self._soft_update)
        return self._result(critic_loss_value, q_values.detach(), target, alpha=alpha.squeeze(0),
                            **self._last_policy_metrics)

    def _standard_normal(self, obs: torch.Tensor) -> torch.Tensor:
        """N(0, 1) draws for one reparameterized action per observation, from the learner's generator."""
        return torch.randn((obs.shape[0], self.action_dim), generator=self.generator, device=obs.device)

    def _temperature_step(self, log_prob: torch.Tensor) -> torch.Tensor:
        """One Adam step on log alpha (nothing when the temperature is fixed); the loss, detached."""
        if self.alpha_optim is None:
            return torch.zeros((), device=self.device)
        loss = temperature_loss(self.log_alpha, log_prob, self.target_entropy)
        self.alpha_optim.zero_grad(set_to_none=True)
        loss.backward(inputs=[self.log_alpha])
        self.alpha_optim.step()
        return loss.detach()

    def _critic_descend(self, q_values: torch.Tensor, target: torch.Tensor, weights: torch.Tensor | None
                        ) -> torch.Tensor:
        loss = (soft_critic_loss(q_values, target, weights) if self.lap_min_priority is None
                else self._regression_loss(q_values, target, weights))
        descend(self.critic_optim, loss, self._critic_params, self.critic_config.grad_clip_norm)
        return loss.detach()

    @torch.no_grad()
    def td_target(self, batch: Batch) -> torch.Tensor:
        """The soft target with a' ~ pi(s') from the actor in eval mode (priorities of new transitions)."""
        with module_mode(self.actor, False):
            next_action, next_log_prob = self.actor.sample(batch.next_obs, self._standard_normal(batch.next_obs))
        next_q = clipped_min(self._next_critic()(batch.next_obs, next_action))
        return soft_td_target(batch.reward, batch.discount, batch.terminated, next_q, next_log_prob,
                              self.log_alpha.exp())

    def _next_critic(self) -> torch.nn.Module:
        return self.critic_target

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state["log_alpha"] = self.log_alpha.detach().clone()
        state["last_policy_metrics"] = {k: v.detach().clone() for k, v in self._last_policy_metrics.items()}
        if self.alpha_optim is not None:
            state["alpha_optim"] = self.alpha_optim.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        with torch.no_grad():
            self.log_alpha.copy_(state["log_alpha"].to(self.device))
        self._last_policy_metrics = {k: v.to(self.device) for k, v in state["last_policy_metrics"].items()}
        if self.alpha_optim is not None:
            self.alpha_optim.load_state_dict(state["alpha_optim"])


class CrossQSAC(SAC):
    """CrossQ's SAC mode: no target critics; one joint pass over ``[(s, a); (s', a')]`` (sb3-contrib's order)."""

    def _add_targets(self) -> None:
        """None: CrossQ drops the target networks."""

    def update(self, batch: Batch) -> UpdateResult:
        """Critics from the joint pass (``a' ~ pi(s')`` with the actor in eval mode); every ``policy_delay`` updates
        the actor samples in train mode, the temperature steps, and the actor ascends ``min Q`` with the critic in
        eval mode. alpha is the value from before this update throughout."""
        self._begin_update()
        alpha = self.log_alpha.detach().exp()
        with torch.no_grad(), module_mode(self.actor, False):
            next_action, next_log_prob = self.actor.sample(batch.next_obs, self._standard_normal(batch.next_obs))
        q_values, next_q = joint_forward(self.critic, (batch.obs, batch.action), (batch.next_obs, next_action),
                                         output_dim=-1, train=None)
        with torch.no_grad():
            target = soft_td_target(batch.reward, batch.discount, batch.terminated, clipped_min(next_q.detach()),
                                    next_log_prob, alpha)
        critic_loss_value = self._critic_descend(q_values, target, batch.weights)
        if self.updates % self.config.policy_delay == 0:
            action, log_prob = self.actor.sample(batch.obs, self._standard_normal(batch.obs))
            self._last_policy_metrics = {"temperature_loss": self._temperature_step(log_prob),
                                         "entropy": -log_prob.detach().mean()}
            with self._critic_in_eval():
                q_pi = clipped_min(self.critic(batch.obs, action))
            actor_loss_value = sac_actor_loss(log_prob, q_pi, alpha)
            descend(self.actor_optim, actor_loss_value, self._actor_params, self.actor_config.grad_clip_norm)
            self._actor_stepped()
            self._last_actor_loss = actor_loss_value.detach()
        return self._result(critic_loss_value, q_values.detach(), target, alpha=alpha.squeeze(0),
                            **self._last_policy_metrics)

    def _next_critic(self) -> torch.nn.Module:
        return self.critic
