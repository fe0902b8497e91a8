"""Experience replay: preallocated storage, samplers that pick indices, and the batch they yield."""

from polyak.replay.samplers import UniformSampler
from polyak.replay.storage import Batch, ReplayStorage

__all__ = ["Batch", "ReplayStorage", "UniformSampler"]
