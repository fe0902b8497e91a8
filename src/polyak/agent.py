"""An agent for one process: a :class:`~polyak.learner.Learner` and the :class:`~polyak.explorer.Explorer`
that acts with its actor (DDPG, Lillicrap et al. 2015, with TD3's switches, Fujimoto et al. 2018).

The trainer and an Ape-X worker each build one; the two parts stay apart, so the learner never
sees exploration and the explorer never sees a loss. ``state_dict`` merges both into the one
checkpoint dict (network names, optimizers, noise and RNG state).

With ``AgentConfig.checkpoint_policy`` (TD7, Fujimoto et al. 2023) the agent also keeps the checkpoint
assessment: :meth:`Agent.end_step` sees every env step's rewards and episode ends, and :meth:`Agent.greedy` (what
evaluation runs) acts with the learner's checkpoint actor.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from polyak.config import AgentConfig, NetworkConfig, NoiseConfig, ReplayConfig
from polyak.explorer import Explorer
from polyak.learner import Learner
from polyak.td7 import CheckpointAssessor


class CheckpointPolicy:
    """TD7's checkpoint assessment over the training episodes.

    Episodes are assessed once training is allowed: from the first episode that ends after an episode end at
    which learning could start (TD7's ``allow_train``, set at an episode end after the start steps). Each assessed
    episode goes to :class:`~polyak.td7.CheckpointAssessor`; when it decides to update the checkpoint, the learner
    copies its actor (and fixed state encoder) into the checkpoint actor. :meth:`end_step` returns the training
    steps the assessor asks for (as many as the finished assessment's env steps): the trainer runs them with
    ``AgentConfig.checkpoint_training`` (TD7's schedule) and otherwise keeps training every env step, so the
    assessor's training-step count (which moves its 750k switch) is then the env steps of the assessed episodes.
    """

    def __init__(self, learner: Learner, num_envs: int, config: AgentConfig) -> None:
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

    @torch.no_grad()
    def act(self, obs: np.ndarray) -> np.ndarray:
        """The checkpoint actor's deterministic action (the learner's actor until the first checkpoint)."""
        learner = self.learner
        actor = learner.checkpoint_actor if self.checkpoints else learner.actor
        assert actor is not None
        if actor.training:
            actor.eval()
        obs_t = torch.as_tensor(obs, dtype=torch.float32, device=learner.device)
        return actor(obs_t).cpu().numpy().astype(np.float64)

    def state_dict(self) -> dict[str, Any]:
        return {"assessor": self.assessor.state_dict(), "returns": self.returns.copy(),
                "lengths": self.lengths.copy(), "checkpoints": self.checkpoints, "allowed": self.allowed}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.assessor.load_state_dict(state["assessor"])
        self.returns = np.asarray(state["returns"], dtype=np.float64).copy()
        self.lengths = np.asarray(state["lengths"], dtype=np.int64).copy()
        self.checkpoints = int(state["checkpoints"])
        self.allowed = bool(state["allowed"])


class Agent:
    """The learner and the explorer built from one seed."""

    def __init__(
        self, obs_dim: int, action_dim: int, num_envs: int, agent: AgentConfig, actor: NetworkConfig,
        critic: NetworkConfig, noise: NoiseConfig, seed: np.random.SeedSequence, replay: ReplayConfig | None = None,
    ) -> None:
        init_seed, noise_seed, torch_seed, noisy_seed = seed.spawn(4)
        self.learner = Learner(obs_dim, action_dim, agent, actor, critic, init_seed, torch_seed, noisy_seed, replay)
        self.explorer = Explorer(self.learner.actor, noise, num_envs, obs_dim, np.random.default_rng(noise_seed),
                                 self.learner.noisy_generator)
        self.checkpoint_policy = CheckpointPolicy(self.learner, num_envs, agent) if agent.checkpoint_policy else None

    @property
    def device(self) -> torch.device:
        return self.learner.device

    def act(self, obs: np.ndarray, explore: bool) -> np.ndarray:
        return self.explorer.act(obs, explore)

    def greedy(self, obs: np.ndarray) -> np.ndarray:
        """What evaluation runs: the deterministic policy, or TD7's checkpoint policy when it is on."""
        if self.checkpoint_policy is not None:
            return self.checkpoint_policy.act(obs)
        return self.explorer.greedy(obs)

    @property
    def trains_at_episode_ends(self) -> bool:
        """TD7's schedule (``AgentConfig.checkpoint_training``): updates only when an assessment ends."""
        return self.checkpoint_policy is not None and self.learner.config.checkpoint_training

    def end_step(self, reward: np.ndarray, done: np.ndarray, can_learn: bool = True) -> int:
        """A training env step's rewards and episode ends, for the checkpoint assessment (a no-op otherwise).

        Returns the training steps to run now when :attr:`trains_at_episode_ends`, else 0."""
        if self.checkpoint_policy is None:
            return 0
        steps = self.checkpoint_policy.end_step(reward, done, can_learn)
        return steps if self.trains_at_episode_ends else 0

    def state_dict(self) -> dict[str, Any]:
        state = {**self.learner.state_dict(), **self.explorer.state_dict()}
        if self.checkpoint_policy is not None:
            state["checkpoint_policy"] = self.checkpoint_policy.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.learner.load_state_dict(state)
        self.explorer.load_state_dict(state)
        if self.checkpoint_policy is not None:
            self.checkpoint_policy.load_state_dict(state["checkpoint_policy"])
