"""Experience replay: preallocated storage, samplers that pick indices and n-step assembly (batches: polyak.types)."""

from polyak.replay.buffer import Replay
from polyak.replay.factory import SAMPLERS, make_sampler, sampler_class, wants_td_errors
from polyak.replay.lap_sampler import LapSampler
from polyak.replay.nstep import NStepAssembler, Transitions
from polyak.replay.samplers import PrioritizedSampler, ReplaySampler, UniformSampler, beta_at, importance_weights
from polyak.replay.storage import ReplayStorage
from polyak.replay.sumtree import SumTree

__all__ = [
    "SAMPLERS",
    "LapSampler",
    "NStepAssembler",
    "PrioritizedSampler",
    "Replay",
    "ReplaySampler",
    "ReplayStorage",
    "SumTree",
    "Transitions",
    "UniformSampler",
    "beta_at",
    "importance_weights",
    "make_sampler",
    "sampler_class",
    "wants_td_errors",
]
