"""The parts every training loop of a run builds the same way (the single-process :class:`~polyak.trainer.Trainer`
and the Ape-X learner): seeded streams, the env's dimensions and spaces, the evaluator, the agent and the
checkpointer whose metadata lets a checkpoint be loaded without the env."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from gymnasium.vector import VectorEnv

from polyak import __version__
from polyak.agent import Agent
from polyak.checkpointer import Checkpointer
from polyak.config import Configs
from polyak.envs import make_env
from polyak.evaluator import Evaluator
from polyak.run_dir import RunDir
from polyak.seeding import RunStreams, run_streams
from polyak.spaces import EnvSpaces, env_spaces


def build_agent(configs: Configs, obs_dim: int, action_dim: int, seed: np.random.SeedSequence) -> Agent:
    return Agent(obs_dim, action_dim, configs.trainer.num_envs, configs.agent, configs.actor, configs.critic,
                 configs.noise, seed, configs.replay, configs.td7, configs.sac)


@dataclass
class RunParts:
    streams: RunStreams
    obs_dim: int
    action_dim: int
    spaces: EnvSpaces
    evaluator: Evaluator | None
    agent: Agent
    checkpointer: Checkpointer


def build_run_parts(configs: Configs, directory: RunDir, env: VectorEnv,
                    make_eval_env: Callable[[], VectorEnv] | None = None) -> RunParts:
    """The parts of a run whose training (or probe) env is ``env``: torch's seed, the run's streams, an evaluator
    on an env of its own (when ``eval_interval`` is set; ``make_eval_env`` makes it, default from the config's
    env id), the agent and the checkpointer (meta with the spaces)."""
    cfg = configs.trainer
    torch.manual_seed(cfg.seed)
    streams = run_streams(cfg.seed)
    obs_dim = int(env.single_observation_space.shape[0])
    action_dim = int(env.single_action_space.shape[0])
    spaces = env_spaces(env)
    if make_eval_env is None:
        def make_eval_env() -> VectorEnv:
            return make_env(cfg.env_id, cfg.num_envs, **cfg.env_kwargs)
    evaluator = (Evaluator(make_eval_env(), cfg.eval_episodes, streams.evaluation_seed, cfg.eval_max_episode_steps)
                 if cfg.eval_interval is not None else None)
    try:
        agent = build_agent(configs, obs_dim, action_dim, streams.agent)
    except BaseException:
        if evaluator is not None:
            evaluator.close()
        raise
    checkpointer = Checkpointer(directory, cfg.keep_checkpoints, {
        "polyak_version": __version__, "env_id": cfg.env_id, "obs_dim": obs_dim, "action_dim": action_dim,
        "num_envs": cfg.num_envs, "spaces": spaces.to_json(),
    })
    return RunParts(streams, obs_dim, action_dim, spaces, evaluator, agent, checkpointer)
