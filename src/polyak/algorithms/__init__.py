"""One module per learning algorithm, chosen by ``AgentConfig.algorithm``:

* :mod:`~polyak.algorithms.ddpg`: DDPG and TD3 (TD3 is DDPG with three switches);
* :mod:`~polyak.algorithms.td7`: TD7 (SALE, value clipping, hard targets, checkpoint policy);
* :mod:`~polyak.algorithms.crossq`: CrossQ (no targets, a joint batch-renormalized critic pass);
* :mod:`~polyak.algorithms.sac`: SAC and CrossQ in its SAC mode (a squashed-Gaussian actor, a learned temperature).

Each implements :class:`~polyak.algorithms.base.Learner`; :func:`make_learner` is the one place that picks.
docs/architecture.md walks through adding an algorithm.
"""

from __future__ import annotations

import numpy as np
import torch

from polyak.algorithms.base import ActorCritic, Learner
from polyak.algorithms.crossq import CrossQ
from polyak.algorithms.ddpg import DDPG
from polyak.algorithms.sac import SAC, CrossQSAC
from polyak.algorithms.td7 import TD7
from polyak.config import AgentConfig, Algorithm, NetworkConfig, ReplayConfig, SACConfig, TD7Config
from polyak.networks import Actor, SquashedGaussianActor
from polyak.sale import StateEncoder

__all__ = ["DDPG", "SAC", "TD7", "ActorCritic", "CrossQ", "CrossQSAC", "Learner", "build_actor",
           "evaluation_actor_key", "make_learner"]
STOCHASTIC = (Algorithm.SAC, Algorithm.CROSSQ_SAC)


def make_learner(
    obs_dim: int, action_dim: int, num_envs: int, agent: AgentConfig, actor: NetworkConfig, critic: NetworkConfig,
    seeds: tuple[np.random.SeedSequence, np.random.SeedSequence, np.random.SeedSequence],
    replay: ReplayConfig | None = None, td7: TD7Config | None = None, sac: SACConfig | None = None,
) -> ActorCritic:
    """The learner of ``agent.algorithm``; ``seeds`` are the (weights, smoothing noise, NoisyNet) streams."""
    init_seed, torch_seed, noisy_seed = seeds
    if agent.algorithm is Algorithm.TD7:
        return TD7(obs_dim, action_dim, num_envs, agent, td7 or TD7Config(), actor, critic, init_seed, torch_seed,
                   noisy_seed, replay)
    if agent.algorithm in STOCHASTIC:
        stochastic = SAC if agent.algorithm is Algorithm.SAC else CrossQSAC
        return stochastic(obs_dim, action_dim, agent, sac or SACConfig(), actor, critic, init_seed, torch_seed,
                          noisy_seed, replay)
    learner = CrossQ if agent.algorithm is Algorithm.CROSSQ else DDPG
    return learner(obs_dim, action_dim, agent, actor, critic, init_seed, torch_seed, noisy_seed, replay)


def build_actor(obs_dim: int, action_dim: int, agent: AgentConfig, actor: NetworkConfig,
                td7: TD7Config | None = None, generator: torch.Generator | None = None) -> Actor:
    """An actor shaped like the learner's, for loading a checkpoint's ``actor`` (or ``checkpoint_actor``) weights
    outside a learner: with TD7's SALE it owns a frozen state encoder, saved with its weights."""
    td7 = td7 or TD7Config()
    encoder = None
    if agent.algorithm is Algorithm.TD7 and td7.sale:
        encoder = StateEncoder(obs_dim, td7.sale_dim, td7.sale_hidden).requires_grad_(False)
    actor_class = SquashedGaussianActor if agent.algorithm in STOCHASTIC else Actor
    return actor_class(obs_dim, action_dim, actor, torch.Generator() if generator is None else generator,
                       state_encoder=encoder)


def evaluation_actor_key(agent: AgentConfig, td7: TD7Config | None = None) -> str:
    """The checkpoint entry holding the policy that evaluation runs: ``actor_average`` with
    ``AgentConfig.actor_average``, TD7's ``checkpoint_actor`` when its checkpoint policy is on, else ``actor``."""
    if agent.actor_average is not None:
        return "actor_average"
    on = agent.algorithm is Algorithm.TD7 and (td7 or TD7Config()).checkpoint_policy
    return "checkpoint_actor" if on else "actor"
