"""TD7's bookkeeping outside the networks (Fujimoto et al. 2023, "For SALE: State-Action Representation Learning for
Deep Reinforcement Learning"): the value-target clipping range and the checkpoint-policy assessment schedule.

Both are pure pieces: :class:`ValueClipper` is a module of four scalar buffers; :class:`CheckpointAssessor` is a
state machine over plain numbers that tells the caller when to copy the checkpoint and how many training steps
to run. Both round-trip exactly through ``state_dict()`` / ``load_state_dict()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

_NO_RETURN = 1e8  # TD7's "no episode yet" value of the assessment's min_return
_NEVER = -1e8  # TD7's initial best_min_return, and the initial running maximum of the targets


class ValueClipper(nn.Module):
    """TD7's value clipping: ``y = r + gamma * (1 - terminated) * clamp(Q', min_target, max_target)``.

    The clip range starts at ``[0, 0]``, so until the first :meth:`update` (TD7's first hard target update, after
    250 training steps) the target is exactly ``r``. :meth:`observe` keeps the running minimum and maximum of
    *every* full target ever computed (reward included; never reset; they start at +1e8 / -1e8);
    :meth:`update` copies them into the clip range. So the clip of iteration k uses all targets up to the end of
    iteration k-1. (As in TD7, an :meth:`update` before any :meth:`observe` would give an empty range.)

    The state is four 0-d float32 buffers, so it moves with ``.to(device)`` and never syncs with the host.
    """

    min_target: torch.Tensor
    max_target: torch.Tensor
    seen_min: torch.Tensor
    seen_max: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("min_target", torch.tensor(0.0))
        self.register_buffer("max_target", torch.tensor(0.0))
        self.register_buffer("seen_min", torch.tensor(-_NEVER))
        self.register_buffer("seen_max", torch.tensor(_NEVER))

    def clip(self, next_q: torch.Tensor) -> torch.Tensor:
        """``clamp(next_q, min_target, max_target)``."""
        return torch.clamp(next_q, self.min_target.to(next_q.dtype), self.max_target.to(next_q.dtype))

    @torch.no_grad()
    def observe(self, target: torch.Tensor) -> None:
        """Fold a batch of full targets into the running extremes."""
        self.seen_min.copy_(torch.minimum(self.seen_min, target.min().to(self.seen_min.dtype)))
        self.seen_max.copy_(torch.maximum(self.seen_max, target.max().to(self.seen_max.dtype)))

    @torch.no_grad()
    def target(self, reward: torch.Tensor, discount: torch.Tensor | float, terminated: torch.Tensor,
               next_q: torch.Tensor) -> torch.Tensor:
        """The clipped TD target (argument order of :func:`polyak.losses.td_target`), observed before returning."""
        y = reward + discount * (1.0 - terminated) * self.clip(next_q)
        self.observe(y)
        return y

    @torch.no_grad()
    def update(self) -> None:
        """At each hard target update: the clip range becomes the range of all targets observed so far."""
        self.min_target.copy_(self.seen_min)
        self.max_target.copy_(self.seen_max)


@dataclass(frozen=True)
class CheckpointDecision:
    """What the caller does at an episode end, in this order: if ``update_checkpoint``, copy
    ``checkpoint_actor <- actor`` and ``checkpoint_encoder <- fixed_encoder``; then run ``train_steps`` training
    steps (0 while an assessment is still running)."""

    update_checkpoint: bool
    train_steps: int
    early_stop: bool


class CheckpointAssessor:
    """TD7's checkpoint policy schedule (online, ``use_checkpoints=True``), as a pure state machine.

    Call :meth:`end_episode` at every episode end once training is allowed (TD7 trains only there, never per env
    step). An assessment collects episodes with the current actor (plus exploration noise):

    * if the assessment's minimum return drops strictly below ``best_min_return``: stop early, train, keep the
      checkpoint (an equal return does not stop it);
    * else once ``max_eps_before_update`` episodes are done: ``best_min_return <- min return``, update the
      checkpoint, train.

    Training runs exactly as many steps as env steps the assessment collected. ``max_eps_before_update`` starts
    at 1 (every episode is an assessment) and ``best_min_return`` at -1e8. Just before the training step that
    finds ``training_steps == steps_before_checkpointing`` (750k *training* steps), ``best_min_return *= 0.9``
    (which makes a negative score a *stricter* bar) and ``max_eps_before_update <- 20``. The assessor counts the
    training steps it asks for in ``training_steps``; pass the starting count if training began elsewhere.
    """

    def __init__(self, max_eps_when_checkpointing: int = 20, steps_before_checkpointing: int = 750_000,
                 reset_weight: float = 0.9, training_steps: int = 0) -> None:
        self.max_eps_when_checkpointing = max_eps_when_checkpointing
        self.steps_before_checkpointing = steps_before_checkpointing
        self.reset_weight = reset_weight
        self.training_steps = training_steps
        self.max_eps_before_update = 1
        self.best_min_return = _NEVER
        self.eps_since_update = 0
        self.timesteps_since_update = 0
        self.min_return = _NO_RETURN

    def end_episode(self, length: int, episode_return: float) -> CheckpointDecision:
        """Record a finished episode of ``length`` env steps; say whether to checkpoint and how long to train."""
        if length < 0:
            raise ValueError(f"episode length must be >= 0, got {length}")
        self.eps_since_update += 1
        self.timesteps_since_update += length
        self.min_return = min(self.min_return, float(episode_return))
        if self.min_return < self.best_min_return:
            return CheckpointDecision(update_checkpoint=False, train_steps=self._train_and_reset(), early_stop=True)
        if self.eps_since_update == self.max_eps_before_update:
            self.best_min_return = self.min_return
            return CheckpointDecision(update_checkpoint=True, train_steps=self._train_and_reset(), early_stop=False)
        return CheckpointDecision(update_checkpoint=False, train_steps=0, early_stop=False)

    def _train_and_reset(self) -> int:
        steps = self.timesteps_since_update
        # TD7 checks `training_steps == steps_before_checkpointing` before each of these training steps; the schedule
        # does not read best_min_return or max_eps while training, so applying it here is the same.
        if self.training_steps <= self.steps_before_checkpointing < self.training_steps + steps:
            self.best_min_return *= self.reset_weight
            self.max_eps_before_update = self.max_eps_when_checkpointing
        self.training_steps += steps
        self.eps_since_update = 0
        self.timesteps_since_update = 0
        self.min_return = _NO_RETURN
        return steps

    def state_dict(self) -> dict[str, Any]:
        return {
            "max_eps_when_checkpointing": self.max_eps_when_checkpointing,
            "steps_before_checkpointing": self.steps_before_checkpointing,
            "reset_weight": self.reset_weight,
            "training_steps": self.training_steps,
            "max_eps_before_update": self.max_eps_before_update,
            "best_min_return": self.best_min_return,
            "eps_since_update": self.eps_since_update,
            "timesteps_since_update": self.timesteps_since_update,
            "min_return": self.min_return,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        missing = set(self.state_dict()) - set(state)
        if missing:
            raise KeyError(f"CheckpointAssessor state lacks {sorted(missing)}")
        for name in ("max_eps_when_checkpointing", "steps_before_checkpointing", "training_steps",
                     "max_eps_before_update", "eps_since_update", "timesteps_since_update"):
            setattr(self, name, int(state[name]))
        for name in ("reset_weight", "best_min_return", "min_return"):
            setattr(self, name, float(state[name]))
