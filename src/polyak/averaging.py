"""An exponential moving average of the actor's weights, the policy that evaluation and a trained agent's users
run when ``AgentConfig.actor_average`` is set (Polyak and Juditsky 1992, "Acceleration of stochastic
approximation by averaging": the iterate average is steadier than the last iterate).

The live actor still explores and learns; the average only acts greedily. It averages the parameters and the
floating-point buffers (BatchRenorm's running statistics, which the averaged weights were trained against) and
copies integer buffers (BatchRenorm's step count). It draws no random numbers, so turning it on leaves training
unchanged.

Early in a run the actor changes fast, and an average over its last ``1 / rate`` updates would hand users a policy
well behind it (a 10,000-step Pendulum run has fewer than 2,000 actor updates), so the rate starts high and decays
to ``rate`` as TensorFlow's ``ExponentialMovingAverage`` does with ``num_updates``: the ``n``-th update moves
``max(rate, WARMUP / (WARMUP + n))`` of the way (0.9 at the first, 0.0054 at the 1,667th; with ``rate = 0.002``
the plain rate rules from the 4,491st on). Its weight on the first updates then vanishes: by the 20,000th actor
update (a 100,000-step run of the recommended config has 31,666) the averages with and without the warm-up agree to
float32 precision.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

WARMUP = 9  # TensorFlow caps the decay at (1 + k) / (10 + k) after k updates: a rate of 9 / (9 + n) at the n-th


class ActorAverage:
    """``average <- average + rate_n * (actor - average)`` after the ``n``-th actor update, from a copy of the
    initial actor, with ``rate_n = max(rate, WARMUP / (WARMUP + n))``: about the last ``1 / rate`` actor updates
    weigh in once the warm-up is over."""

    def __init__(self, actor: nn.Module, rate: float) -> None:
        self.rate = rate
        self.actor = copy.deepcopy(actor).eval().requires_grad_(False)

    def rate_at(self, count: int) -> float:
        """The rate of the ``count``-th actor update (1-based)."""
        return max(self.rate, WARMUP / (WARMUP + count))

    @torch.no_grad()
    def update(self, actor: nn.Module, count: int) -> None:
        """One averaging step towards ``actor``'s current weights and statistics after its ``count``-th update."""
        live = dict(actor.named_parameters()) | dict(actor.named_buffers())
        averages, targets = [], []
        for name, average in (*self.actor.named_parameters(), *self.actor.named_buffers()):
            if average.is_floating_point():
                averages.append(average)
                targets.append(live[name])
            else:
                average.copy_(live[name])
        torch._foreach_lerp_(averages, targets, self.rate_at(count))
