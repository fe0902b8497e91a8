"""A run's random streams, all derived from its one seed with NumPy's ``SeedSequence``.

Each part of a run (env resets, the agent's networks and noise, uniform start actions, replay sampling,
evaluation start states) draws from its own child of the run seed, so changing one part never shifts another's
numbers. The single-process trainer and the Ape-X learner derive them here, and so can a benchmark that scores
another library's run of the same seed on polyak's evaluation start states (:func:`run_streams`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from polyak.errors import ConfigError

MAX_SEED = 2**63 - 1
"""The largest run seed: ``torch.manual_seed`` takes the seed as a 64-bit integer."""
SEED_RANGE = "from 0 to 2**63 - 1"


def check_seed(seed: object, name: str = "seed") -> int:
    """``seed`` as an int if it is a whole number in [0, MAX_SEED]; a ConfigError naming ``name`` otherwise."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed <= MAX_SEED:
        raise ConfigError(f"{name} must be a whole number {SEED_RANGE}, got {seed!r}")
    return int(seed)


def int_seed(sequence: np.random.SeedSequence) -> int:
    """A 31-bit integer seed drawn from ``sequence`` (what gymnasium's ``reset(seed=...)`` takes)."""
    return int(sequence.generate_state(1)[0] % 2**31)


def indexed_seed(seed: int, index: int) -> int:
    """Seed number ``index`` of the stream ``seed``: a fresh, reproducible seed per reset or evaluation."""
    return int_seed(np.random.SeedSequence(seed, spawn_key=(index,)))


@dataclass(frozen=True)
class RunStreams:
    """The independent children of one run seed, in the order the trainer has always spawned them."""

    env: np.random.SeedSequence
    agent: np.random.SeedSequence
    exploration: np.random.SeedSequence
    sampler: np.random.SeedSequence
    evaluation: np.random.SeedSequence

    @property
    def env_seed(self) -> int:
        """The collector's env seed; its resets draw from it with :func:`indexed_seed`."""
        return int_seed(self.env)

    @property
    def evaluation_seed(self) -> int:
        """The evaluator's stream seed; evaluation number i resets from ``indexed_seed(evaluation_seed, i)``."""
        return int_seed(self.evaluation)


def run_streams(seed: int) -> RunStreams:
    """The random streams of a run with this seed."""
    return RunStreams(*np.random.SeedSequence(seed).spawn(5))
