"""Types shared by replay, learner and trainer: the minibatch a learner consumes and what an update returns."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class Batch:
    """A minibatch of transitions as tensors on the learning device.

    ``terminated`` is 1.0 only for true terminal states (time-limit truncation stays 0 and
    bootstraps). ``discount`` is the per-sample bootstrap discount; ``weights`` are importance
    weights (None for uniform sampling); ``indices`` are storage rows, for priority updates.
    """

    obs: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor
    next_obs: torch.Tensor
    terminated: torch.Tensor
    discount: torch.Tensor | float
    weights: torch.Tensor | None = None
    indices: np.ndarray | None = None


@dataclass
class UpdateResult:
    """One learning step's outcome (Acme's ``update_step``: state in, metrics out).

    ``metrics`` are detached scalar tensors (no host synchronisation; read them when logging).
    ``td_errors`` are the batch's per-sample |TD errors|, which a prioritized sampler turns into
    new priorities (Schaul et al. 2016); None from a learner that gives no priorities.
    """

    metrics: dict[str, torch.Tensor]
    td_errors: torch.Tensor | None = None
