"""One place that turns ``ReplayConfig.sampler`` into a sampler, for the single-process replay and the Ape-X shards.

A new replay scheme is a class with the :class:`~polyak.replay.samplers.ReplaySampler` interface, a member of
:class:`polyak.config.Sampler` and one entry in :data:`SAMPLERS`; nothing else chooses a sampler.
"""

from __future__ import annotations

import numpy as np

from polyak.config import ReplayConfig, Sampler
from polyak.replay.lap_sampler import LapSampler
from polyak.replay.samplers import PrioritizedSampler, ReplaySampler, UniformSampler

SAMPLERS: dict[Sampler, type[ReplaySampler]] = {
    Sampler.UNIFORM: UniformSampler,  # Lin 1992; Mnih et al. 2015
    Sampler.PRIORITIZED: PrioritizedSampler,  # Schaul et al. 2016
    Sampler.LAP: LapSampler,  # Fujimoto et al. 2020, as in TD7
}
"""The sampler class of each ``ReplayConfig.sampler``."""


def sampler_class(config: ReplayConfig) -> type[ReplaySampler]:
    """The class :func:`make_sampler` builds for ``config`` (its ``prioritized`` says whether priorities come back)."""
    return SAMPLERS[config.sampler]


def make_sampler(config: ReplayConfig, capacity: int, rng: np.random.Generator) -> ReplaySampler:
    """The sampler ``config.sampler`` names over ``capacity`` rows, drawing from ``rng`` (the caller's stream).

    The single-process :class:`~polyak.replay.Replay` passes ``config.capacity``, an Ape-X shard (Horgan et al.
    2018) its share of it.
    """
    return sampler_class(config).from_config(config, capacity, rng)


def wants_td_errors(config: ReplayConfig) -> bool:
    """Whether new transitions need their TD errors (an Ape-X worker computes them) without building a sampler."""
    return sampler_class(config).needs_td_errors(config)
