"""An exponential moving average of the actor's weights, the policy that evaluation and a trained agent's users
run when ``AgentConfig.actor_average`` is set (Polyak and Juditsky 1992, "Acceleration of stochastic
approximation by averaging": the iterate average is steadier than the last iterate).

The live actor still explores and learns; the average only acts greedily. It averages the parameters and the
floating-point buffers (BatchRenorm's running statistics, which the averaged weights were trained against) and
copies integer buffers (BatchRenorm's step count). It draws no random numbers, so turning it on leaves training
unchanged.
"""

from __future__ import annotations

import copy

import torch
from torch import nn


class ActorAverage:
    """``average <- average + rate * (actor - average)`` after each actor update, from a copy of the initial
    actor: about the last ``1 / rate`` actor updates weigh in."""

    def __init__(self, actor: nn.Module, rate: float) -> None:
        self.rate = rate
        self.actor = copy.deepcopy(actor).eval().requires_grad_(False)

    @torch.no_grad()
    def update(self, actor: nn.Module) -> None:
        """One averaging step towards ``actor``'s current weights and statistics."""
        live = dict(actor.named_parameters()) | dict(actor.named_buffers())
        averages, targets = [], []
        for name, average in (*self.actor.named_parameters(), *self.actor.named_buffers()):
            if average.is_floating_point():
                averages.append(average)
                targets.append(live[name])
            else:
                average.copy_(live[name])
        torch._foreach_lerp_(averages, targets, self.rate)
