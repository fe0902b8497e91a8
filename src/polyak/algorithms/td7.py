"""TD7 (Fujimoto et al. 2023, "For SALE: State-Action Representation Learning for Deep Reinforcement Learning"):
TD3 with SALE embeddings, value clipping, hard target copies, LAP (``ReplayConfig.sampler = 'lap'``) and a
checkpoint policy (``AgentConfig.algorithm = 'td7'``; its settings are :class:`~polyak.config.TD7Config`).

Each TD7 part is a switch of :class:`~polyak.config.TD7Config`, for the paper's ablations; the pure pieces live in
:mod:`polyak.sale` (encoders) and :mod:`polyak.td7` (value-clip range, checkpoint assessment).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch

from polyak.algorithms.base import ActorCritic, seeded_generator
from polyak.algorithms.ddpg import target_pairs
from polyak.config import ActorObjective, AgentConfig, NetworkConfig, ReplayConfig, TD7Config
from polyak.device import resolve_device
from polyak.losses import clipped_min, policy_loss, smoothed_action, td_target
from polyak.modes import frozen_copy
from polyak.networks import Actor
from polyak.sale import SALEEncoder, SALEEncoders
from polyak.td7 import CheckpointAssessor, ValueClipper
from polyak.types import Batch, UpdateResult


class TD7(ActorCritic):
    """Actor, critics, their hard-copied targets, SALE's encoders, the value-clip range and the checkpoint actor."""

    def __init__(
        self, obs_dim: int, action_dim: int, num_envs: int, agent: AgentConfig, td7: TD7Config,
        actor: NetworkConfig, critic: NetworkConfig, init_seed: np.random.SeedSequence,
        torch_seed: np.random.SeedSequence, noisy_seed: np.random.SeedSequence, replay: ReplayConfig | None = None,
    ) -> None:
        self.td7 = td7
        self.hard_target_every = td7.hard_target_every
        generator = seeded_generator(init_seed)
        # SALE first: the actor owns a frozen copy of the fixed state encoder, the critic sees [zsa, zs].
        self.encoders: SALEEncoders | None = None
        state_encoder, embedding_dim = None, 0
        if td7.sale:
            encoder = SALEEncoder(obs_dim, action_dim, td7.sale_dim, hidden_dim=td7.sale_hidden, generator=generator)
            self.encoders = SALEEncoders(encoder).to(resolve_device(agent.device))
            state_encoder = copy.deepcopy(self.encoders.fixed_encoder.state_encoder)
            embedding_dim = encoder.zs_dim + encoder.zsa_dim
        super().__init__(obs_dim, action_dim, agent, actor, critic, init_seed, torch_seed, noisy_seed, replay,
                         init_generator=generator, state_encoder=state_encoder, embedding_dim=embedding_dim)
        self.actor_target = self._register("actor_target", frozen_copy(self.actor, self.noisy_generator))
        self.critic_target = self._register("critic_target", copy.deepcopy(self.critic).eval().requires_grad_(False))
        self._hard_copies = [target_pairs(self.actor_target, self.actor), target_pairs(self.critic_target, self.critic)]
        self.encoder_optim = None
        if self.encoders is not None:
            self._register("encoders", self.encoders)
            self.encoder_optim = torch.optim.Adam(self.encoders.encoder.parameters(), lr=td7.sale_lr,
                                                  fused=self.device.type in ("cpu", "cuda"))
        self.clipper = self._register("value_clipper", ValueClipper().to(self.device)) if td7.value_clipping else None
        self.checkpoint_actor: Actor | None = None
        self.checkpoint_policy: CheckpointPolicy | None = None
        if td7.checkpoint_policy:
            self.checkpoint_actor = self._register("checkpoint_actor", frozen_copy(self.actor, self.noisy_generator))
            self.checkpoint_policy = CheckpointPolicy(self, num_envs, td7)
        self.trains_at_episode_ends = td7.checkpoint_policy and td7.checkpoint_training

    def update(self, batch: Batch) -> UpdateResult:
        """SALE's encoders learn to predict f(s'); the critics regress on the clipped target; the actor every
        ``policy_delay`` updates; every ``hard_target_every`` updates the targets, encoders and clip range move."""
        self._begin_update()
        encoder_loss = self._encoder_step(batch) if self.encoders is not None else None
        critic_loss_value, q_values, target = self._critic_step(batch)
        if self.updates % self.config.policy_delay == 0:
            self._last_actor_loss = self._actor_step(batch)
        if self.updates % self.td7.hard_target_every == 0:
            self.hard_update()
        extra = {} if encoder_loss is None else {"encoder_loss": encoder_loss}
        return self._result(critic_loss_value, q_values, target, **extra)

    def _encoder_step(self, batch: Batch) -> torch.Tensor:
        """SALE: the encoders learn to predict the live encoder's ``f(s')`` (their own Adam)."""
        assert self.encoders is not None and self.encoder_optim is not None
        loss = self.encoders.loss(batch.obs, batch.action, batch.next_obs)
        self.encoder_optim.zero_grad(set_to_none=True)
        loss.backward()
        self.encoder_optim.step()
        return loss.detach()

    def _critic_loss_eager(self, obs: torch.Tensor, action: torch.Tensor, reward: torch.Tensor,
                           next_obs: torch.Tensor, terminated: torch.Tensor, discount: torch.Tensor | float,
                           weights: torch.Tensor | None, noise: torch.Tensor | None
                           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(loss, detached Q of every critic, TD target): the target side uses the fixed target encoder; value
        clipping clips ``min Q'`` and records the target."""
        with torch.no_grad():
            next_q = self._next_q(next_obs, noise)
            if self.clipper is None:
                target = td_target(reward, discount, terminated, next_q)
            else:
                target = self.clipper.target(reward, discount, terminated, next_q)
        q_values = self.critic(obs, action, self._embedding(obs, action))
        return self._regression_loss(q_values, target, weights), q_values.detach(), target

    def _actor_loss_eager(self, obs: torch.Tensor) -> torch.Tensor:
        """-mean_i Q_i(s, pi(s, zs)) (TD7), with SALE's embeddings from the fixed encoder."""
        zs = None
        if self.encoders is not None:
            with torch.no_grad():
                zs = self.encoders.fixed_encoder.zs(obs)
        action = self.actor(obs, zs)
        q_values = self.critic(obs, action, self._embedding(obs, action, zs=zs), members=self._actor_members)
        return policy_loss(q_values, self.config.actor_objective is ActorObjective.MIN)

    def _next_q(self, next_obs: torch.Tensor, noise: torch.Tensor | None) -> torch.Tensor:
        """min_i Q'_i(s', a') with a' = pi'(s', zs') [+ clipped noise], zs' from the fixed target encoder."""
        zs = self.encoders.fixed_encoder_target.zs(next_obs) if self.encoders is not None else None
        next_action = smoothed_action(self.actor_target(next_obs, zs), noise)
        embedding = self._embedding(next_obs, next_action, target=True, zs=zs)
        return clipped_min(self.critic_target(next_obs, next_action, embedding))

    def _embedding(self, obs: torch.Tensor, action: torch.Tensor, *, target: bool = False,
                   zs: torch.Tensor | None = None) -> torch.Tensor | None:
        """SALE's ``[zsa, zs]`` for the critic from the fixed encoder (``target``: the fixed target encoder);
        None without SALE. ``zs`` may be given (computed once per batch); gradients reach ``action`` only."""
        if self.encoders is None:
            return None
        encoder = self.encoders.fixed_encoder_target if target else self.encoders.fixed_encoder
        if zs is None:
            with torch.no_grad():
                zs = encoder.zs(obs)
        return torch.cat((encoder.zsa(zs, action), zs), dim=-1)

    def _q_values(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.critic(obs, action, self._embedding(obs, action))

    @torch.no_grad()
    def td_target(self, batch: Batch) -> torch.Tensor:
        """The clipped TD target without recording it in the value range."""
        next_q = self._next_q(batch.next_obs, self._smoothing_noise(batch.next_obs))
        if self.clipper is not None:
            next_q = self.clipper.clip(next_q)
        return td_target(batch.reward, batch.discount, batch.terminated, next_q)

    @torch.no_grad()
    def hard_update(self) -> None:
        """TD7's update every ``hard_target_every`` steps, in its order: the targets become copies of the online
        networks (the target actor's state encoder becomes the old fixed encoder), the fixed encoders shift
        (``fixed_target <- fixed <- encoder``), the actor's state encoder follows the new fixed encoder, and the
        value clip range becomes the range of every target seen so far."""
        for targets, online in self._hard_copies:
            torch._foreach_copy_(targets, online)
        if self.encoders is not None:
            self.encoders.update_fixed()
            assert self.actor.state_encoder is not None
            self.actor.state_encoder.load_state_dict(self.encoders.fixed_encoder.state_encoder.state_dict())
        if self.clipper is not None:
            self.clipper.update()

    @torch.no_grad()
    def update_checkpoint(self) -> None:
        """TD7's checkpoint: ``checkpoint_actor <- actor`` (with the actor's fixed state encoder)."""
        assert self.checkpoint_actor is not None, "TD7Config.checkpoint_policy is off"
        self.checkpoint_actor.load_state_dict(self.actor.state_dict())
        if self.encoders is not None:
            self.encoders.update_checkpoint()

    # ------------------------------------------------------------------ the loops' per-step contract
    def evaluation_actor(self) -> Actor | None:
        """The checkpoint actor once a checkpoint was taken, the live actor before; without the checkpoint policy,
        the averaged actor or None (the live actor)."""
        if self.checkpoint_policy is None:
            return super().evaluation_actor()
        return self.checkpoint_actor if self.checkpoint_policy.checkpoints else self.actor

    def end_step(self, reward: np.ndarray, done: np.ndarray, can_learn: bool) -> int:
        """The checkpoint assessment sees every training step; returns the updates to run now under TD7's
        schedule (``checkpoint_training``), else 0."""
        if self.checkpoint_policy is None:
            return 0
        steps = self.checkpoint_policy.end_step(reward, done, can_learn)
        return steps if self.trains_at_episode_ends else 0

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        if self.encoder_optim is not None:
            state["encoder_optim"] = self.encoder_optim.state_dict()
        if self.checkpoint_policy is not None:
            state["checkpoint_policy"] = self.checkpoint_policy.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        if self.encoder_optim is not None:
            self.encoder_optim.load_state_dict(state["encoder_optim"])
        if self.checkpoint_policy is not None:
            self.checkpoint_policy.load_state_dict(state["checkpoint_policy"])


class CheckpointPolicy:
    """TD7's checkpoint assessment over the training episodes.

    Episodes are assessed once training is allowed: from the first episode that ends after an episode end at
    which learning could start (TD7's ``allow_train``, set at an episode end after the start steps). Each assessed
    episode goes to :class:`~polyak.td7.CheckpointAssessor`; when it decides to update the checkpoint, the learner
    copies its actor (and fixed state encoder) into the checkpoint actor. :meth:`end_step` returns the training
    steps the assessor asks for (as many as the finished assessment's env steps): the loop runs them with
    ``TD7Config.checkpoint_training`` (TD7's schedule) and otherwise keeps training every env step, so the
    assessor's training-step count (which moves its 750k switch) is then the env steps of the assessed episodes.
    """

    def __init__(self, learner: TD7, num_envs: int, config: TD7Config) -> None:
        self.learner = learner
        self.assessor = CheckpointAssessor(config.checkpoint_episodes, config.checkpoint_after,
                                           config.checkpoint_reset_weight)
        self.returns = np.zeros(num_envs, dtype=np.float64)
        self.lengths = np.zeros(num_envs, dtype=np.int64)
        self.checkpoints = 0
        self.allowed = False  # TD7's allow_train

    def end_step(self, reward: np.ndarray, done: np.ndarray, can_learn: bool) -> int:
        """One vector-env step's rewards and episode ends (``can_learn``: the replay holds enough to learn);
        returns the training steps the finished assessments ask for."""
        self.returns += np.asarray(reward, dtype=np.float64)
        self.lengths += 1
        train_steps = 0
        for index in np.flatnonzero(done):
            if self.allowed:
                decision = self.assessor.end_episode(int(self.lengths[index]), float(self.returns[index]))
                if decision.update_checkpoint:
                    self.learner.update_checkpoint()
                    self.checkpoints += 1
                train_steps += decision.train_steps
            self.allowed = self.allowed or can_learn
            self.returns[index] = 0.0
            self.lengths[index] = 0
        return train_steps

    def state_dict(self) -> dict[str, Any]:
        return {"assessor": self.assessor.state_dict(), "returns": self.returns.copy(),
                "lengths": self.lengths.copy(), "checkpoints": self.checkpoints, "allowed": self.allowed}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.assessor.load_state_dict(state["assessor"])
        self.returns = np.asarray(state["returns"], dtype=np.float64).copy()
        self.lengths = np.asarray(state["lengths"], dtype=np.int64).copy()
        self.checkpoints = int(state["checkpoints"])
        self.allowed = bool(state["allowed"])
