"""CrossQ (Bhatt, Palenicek et al. 2024, "CrossQ: Batch Normalization in Deep Reinforcement Learning for Greater
Sample Efficiency and Simplicity") in the authors' TD3 mode (``AgentConfig.algorithm = 'crossq'``).

No target networks: ``a'`` comes from the actor in eval mode, then one train-mode critic pass over
``[(s, a); (s', a')]`` lets batch renormalization (``NetworkConfig.batch_renorm``) normalize both halves with the
same statistics (and update them once); the target is the detached second half. The actor's loss runs the critic
in eval mode.
"""

from __future__ import annotations

import contextlib

import torch

from polyak.algorithms.base import ActorCritic
from polyak.config import ActorObjective
from polyak.layers import joint_forward, module_mode
from polyak.losses import clipped_min, policy_loss, smoothed_action, td_target
from polyak.types import Batch, UpdateResult


class CrossQ(ActorCritic):
    """An actor and a batch-renormalized critic ensemble without targets."""

    def update(self, batch: Batch) -> UpdateResult:
        """The critics regress on the joint pass's target; the actor every ``policy_delay`` updates."""
        self._begin_update()
        critic_loss_value, q_values, target = self._critic_step(batch)
        if self.updates % self.config.policy_delay == 0:
            self._last_actor_loss = self._actor_step(batch)
        return self._result(critic_loss_value, q_values, target)

    def _critic_loss_eager(self, obs: torch.Tensor, action: torch.Tensor, reward: torch.Tensor,
                           next_obs: torch.Tensor, terminated: torch.Tensor, discount: torch.Tensor | float,
                           weights: torch.Tensor | None, noise: torch.Tensor | None
                           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(loss, detached Q of every critic, TD target) from one critic pass over ``[(s, a); (s', a')]``."""
        with torch.no_grad():
            next_action = smoothed_action(self._eval_actor(next_obs), noise)
        q_values, next_q = joint_forward(self.critic, (obs, action), (next_obs, next_action), output_dim=-1,
                                         train=None)
        with torch.no_grad():
            target = td_target(reward, discount, terminated, clipped_min(next_q.detach()))
        return self._regression_loss(q_values, target, weights), q_values.detach(), target

    def _actor_loss_eager(self, obs: torch.Tensor) -> torch.Tensor:
        """-min_i Q_i(s, mu(s)) (CrossQ's TD3 mode), or Q_1 / the mean (``AgentConfig.actor_objective``)."""
        with self._critic_in_eval():
            q_values = self.critic(obs, self.actor(obs), members=self._actor_members)
        return policy_loss(q_values, self.config.actor_objective is ActorObjective.MIN)

    def _eval_actor(self, obs: torch.Tensor) -> torch.Tensor:
        """The actor's action in eval mode (its batch statistics untouched)."""
        with module_mode(self.actor, False) if self._mode_matters[0] else contextlib.nullcontext():
            return self.actor(obs)

    @torch.no_grad()
    def td_target(self, batch: Batch) -> torch.Tensor:
        """y = r + gamma^k (1 - terminated) min_i Q_i(s', mu(s') [+ clipped noise]) with the critic in its current
        mode (eval when priorities of new transitions are computed)."""
        noise = self._smoothing_noise(batch.next_obs)
        next_action = smoothed_action(self._eval_actor(batch.next_obs), noise)
        return td_target(batch.reward, batch.discount, batch.terminated,
                         clipped_min(self.critic(batch.next_obs, next_action)))
