"""An Ape-X rollout worker (Horgan et al. 2018): the shared collector, a CPU copy of the agent, its own noise scale.

Each request runs the worker's :class:`~polyak.collector.Collector` for ``steps`` env.step calls
(the same env stepping, exploration and episode scoring as ``polyak train``), assembles n-step
transitions, computes their initial priorities with the local (possibly stale) critic and writes
them to a replay shard. A plain class: the learner makes it a Ray actor; ``rollout`` works without
Ray (unit tests).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np
import torch

from polyak.agent import Agent
from polyak.collector import Collector
from polyak.config import Configs, Device
from polyak.envs import make_env
from polyak.replay import NStepAssembler, Transitions, wants_td_errors
from polyak.scores import ScoreBoard
from polyak.seeding import int_seed


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
        self.index, self.shards = index, shards
        # Ape-X: initial priorities from the worker's own networks (else the shard gives the max priority).
        self.initial_td = wants_td_errors(configs.replay)  # the shards' sampler says
        env_seed, agent_seed, explore_seed = np.random.SeedSequence(seed).spawn(3)
        env = make_env(cfg.env_id, cfg.num_envs, **cfg.env_kwargs)
        self.obs_dim = int(env.single_observation_space.shape[0])
        self.action_dim = int(env.single_action_space.shape[0])
        agent_config = dataclasses.replace(configs.agent, device=Device.CPU)
        self.agent = Agent(self.obs_dim, self.action_dim, cfg.num_envs, agent_config, configs.actor, configs.critic,
                           configs.noise, agent_seed, td7=configs.td7, sac=configs.sac)
        self.assembler = NStepAssembler(configs.replay.n_step, configs.agent.gamma, cfg.num_envs, self.obs_dim,
                                        self.action_dim)
        self._parts: list[Transitions] = []
        self.collector = Collector(
            env, self.agent.explorer, self._assemble, ScoreBoard(cfg.num_envs, cfg.solve_window,
                                                                 cfg.score_mean_over_envs),
            env_seed=int_seed(env_seed), random_steps=random_steps,
            random_rng=np.random.default_rng(explore_seed), keep_history=False,
        )
        self.version = -1
        self.requests = 0

    def _assemble(self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, next_obs: np.ndarray,
                  terminated: np.ndarray, done: np.ndarray) -> None:
        """The collector's sink: n-step transitions, kept until the request ends."""
        out = self.assembler.push(obs, action, reward, next_obs, terminated, done)
        if len(out):
            self._parts.append(out)

    def info(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "index": self.index, "noise_sigma": self.agent.explorer.noise.config.sigma}

    def set_weights(self, weights: dict[str, dict[str, torch.Tensor]], version: int) -> None:
        """The learner's networks (online and target): acting and initial priorities use them."""
        self.agent.learner.load_weights(weights)
        self.version = version

    def rollout(self, steps: int) -> tuple[Transitions, np.ndarray | None, dict[str, Any]]:
        """``steps`` env.step calls: the n-step transitions, their |TD errors| (prioritized) and statistics."""
        recorded = self.collector.collect(steps)
        batch = _concat(self._parts, self.obs_dim, self.action_dim)
        self._parts = []
        td = self.agent.learner.td_errors(batch) if self.initial_td and len(batch) else None
        stats = {"index": self.index, "env_steps": steps * self.collector.num_envs, "episodes": recorded,
                 "version": self.version, "epsilon": self.agent.explorer.noise.epsilon}
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
        self.collector.env.close()
