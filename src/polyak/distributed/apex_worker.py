"""An Ape-X rollout worker (Horgan et al. 2018): its own env, a CPU copy of the agent, its own noise scale.

Each request steps the worker's vector env ``steps`` times, assembles n-step transitions, computes
their initial priorities with the local (possibly stale) critic and writes them to a replay shard.
A plain class: the learner makes it a Ray actor; ``rollout`` works without Ray (unit tests).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np
import torch

from polyak.agent import Agent
from polyak.config import Configs, Device, InitialPriority
from polyak.envs import final_observations, make_env
from polyak.replay import NStepAssembler, Transitions
from polyak.scores import ScoreBoard


def _concat(parts: list[Transitions], obs_dim: int, action_dim: int) -> Transitions:
    if not parts:
        return Transitions(np.zeros((0, obs_dim)), np.zeros((0, action_dim)), np.zeros(0), np.zeros((0, obs_dim)),
                           np.zeros(0), np.zeros(0))
    return Transitions(*(np.concatenate([getattr(p, f.name) for p in parts])
                         for f in dataclasses.fields(Transitions)))


class RolloutWorker:
    """Worker ``index`` of ``num_workers``; ``noise`` in ``configs`` is already this worker's (see apex_config)."""

    def __init__(self, configs: Configs, index: int, seed: int, random_steps: int, shards: list[Any]) -> None:
        torch.set_num_threads(1)
        cfg = configs.trainer
        self.index, self.shards, self.random_steps = index, shards, random_steps
        # Ape-X: initial priorities from the worker's own networks (else the shard gives the max priority).
        self.initial_td = configs.replay.prioritized and configs.replay.initial_priority is InitialPriority.TD_ERROR
        env_seed, agent_seed, explore_seed = np.random.SeedSequence(seed).spawn(3)
        self.env = make_env(cfg.env_id, cfg.num_envs, **cfg.env_kwargs)
        self.obs_dim = int(self.env.single_observation_space.shape[0])
        self.action_dim = int(self.env.single_action_space.shape[0])
        agent_config = dataclasses.replace(configs.agent, device=Device.CPU)
        self.agent = Agent(self.obs_dim, self.action_dim, cfg.num_envs, agent_config, configs.actor, configs.critic,
                           configs.noise, agent_seed)
        self.assembler = NStepAssembler(configs.replay.n_step, configs.agent.gamma, cfg.num_envs, self.obs_dim,
                                        self.action_dim)
        self.scores = ScoreBoard(cfg.num_envs, cfg.solve_window, cfg.score_mean_over_envs)
        self.rng = np.random.default_rng(explore_seed)
        self.obs, _ = self.env.reset(seed=int(env_seed.generate_state(1)[0] % 2**31))
        self.transitions = 0
        self.version = -1
        self.requests = 0

    def info(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "index": self.index, "noise_sigma": self.agent.noise.config.sigma}

    def set_weights(self, weights: dict[str, dict[str, torch.Tensor]], version: int) -> None:
        """The learner's networks (online and target): acting and initial priorities use them."""
        for name in ("actor", "critic", "actor_target", "critic_target"):
            getattr(self.agent, name).load_state_dict(weights[name])
        self.version = version

    def rollout(self, steps: int) -> tuple[Transitions, np.ndarray | None, dict[str, Any]]:
        """``steps`` env.step calls: the n-step transitions, their |TD errors| (prioritized) and statistics."""
        num_envs = self.obs.shape[0]
        parts, recorded = [], []
        for _ in range(steps):
            if self.transitions < self.random_steps:
                action = self.rng.uniform(-1.0, 1.0, size=(num_envs, self.action_dim))
            else:
                action = self.agent.act(self.obs, explore=True)
            next_obs, reward, terminated, truncated, info = self.env.step(action)
            done = np.logical_or(terminated, truncated)
            out = self.assembler.push(self.obs, action, reward, final_observations(next_obs, done, info), terminated,
                                      done)
            if len(out):
                parts.append(out)
            recorded.extend(self.scores.add(reward, done))
            if done.any():
                self.agent.reset_noise(done)
            self.obs = next_obs
            self.transitions += num_envs
        batch = _concat(parts, self.obs_dim, self.action_dim)
        td = None
        if self.initial_td and len(batch):
            td = self.agent.td_errors(batch.obs, batch.action, batch.reward, batch.next_obs, batch.terminated,
                                      batch.discount)
        stats = {"index": self.index, "env_steps": steps * num_envs, "episodes": recorded, "version": self.version,
                 "epsilon": self.agent.noise.epsilon}
        return batch, td, stats

    def collect(self, steps: int, weights: dict[str, Any] | None = None, version: int = -1) -> dict[str, Any]:
        """One request (as a Ray actor): new weights if given, a rollout, the data written to a shard."""
        import ray

        if weights is not None:
            self.set_weights(weights, version)
        batch, td, stats = self.rollout(steps)
        shard = (self.index + self.requests) % len(self.shards)
        self.requests += 1
        stats["shard"] = shard
        stats["stored"] = len(batch)
        stats["shard_size"] = ray.get(self.shards[shard].add.remote(batch, td)) if len(batch) else None
        return stats

    def close(self) -> None:
        self.env.close()
