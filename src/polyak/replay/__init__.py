"""Experience replay: preallocated storage, samplers that pick indices, n-step assembly, and the batch they yield."""

from polyak.replay.buffer import Replay
from polyak.replay.nstep import NStepAssembler, Transitions
from polyak.replay.samplers import PrioritizedSampler, UniformSampler, beta_at, importance_weights
from polyak.replay.storage import Batch, ReplayStorage
from polyak.replay.sumtree import SumTree

__all__ = [
    "Batch",
    "NStepAssembler",
    "PrioritizedSampler",
    "Replay",
    "ReplayStorage",
    "SumTree",
    "Transitions",
    "UniformSampler",
    "beta_at",
    "importance_weights",
]
