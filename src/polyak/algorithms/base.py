"""What every learning algorithm provides (:class:`Learner`), and :class:`ActorCritic`, the parts the
DDPG-family algorithms share: an actor, a critic ensemble, their optimizers, train/eval modes, the update
counter, priorities for new transitions and an exact state round trip.

A learner owns the networks and one update step that takes a batch and returns an
:class:`~polyak.types.UpdateResult` (metrics and per-sample TD errors for the replay's priorities); it never acts
in an env, logs or samples replay (Acme's learner/actor split). Each algorithm module writes its own ``update``
from the pure loss functions of :mod:`polyak.losses` and :mod:`polyak.lap`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import torch
from torch import nn

from polyak.averaging import ActorAverage
from polyak.config import ActorObjective, AgentConfig, NetworkConfig, Precision, ReplayConfig, Sampler
from polyak.device import resolve_device
from polyak.ensemble import CriticEnsemble
from polyak.lap import lap_huber
from polyak.layers import BatchRenorm1d, module_mode
from polyak.losses import critic_loss, smoothing_noise
from polyak.modes import mode_sensitive
from polyak.networks import Actor
from polyak.optim import descend, make_optimizer, regrouped
from polyak.replay.nstep import Transitions
from polyak.types import Batch, UpdateResult

FIRST = slice(0, 1)  # the actor ascends the first critic (Fujimoto et al. 2018)
ALL = slice(None)


class Learner(Protocol):
    """The contract between an algorithm and the training loops (single-process and Ape-X).

    ``actor`` is the network the explorer acts with. Per env step a loop calls :meth:`end_step`; when
    :attr:`trains_at_episode_ends` the loop runs only the updates it returns (TD7's schedule).
    """

    device: torch.device
    actor: Actor
    networks: dict[str, nn.Module]
    noisy_generator: torch.Generator | None
    updates: int
    trains_at_episode_ends: bool
    hard_target_every: int | None

    def update(self, batch: Batch) -> UpdateResult: ...

    def td_errors(self, transitions: Transitions) -> np.ndarray: ...

    def evaluation_actor(self) -> Actor | None: ...

    def end_step(self, reward: np.ndarray, done: np.ndarray, can_learn: bool) -> int: ...

    def parameters_finite(self) -> str | None: ...

    def weights(self) -> dict[str, dict[str, torch.Tensor]]: ...

    def load_weights(self, weights: dict[str, dict[str, torch.Tensor]]) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


def seeded_generator(seed: np.random.SeedSequence, device: torch.device | str = "cpu") -> torch.Generator:
    return torch.Generator(device=device).manual_seed(int(seed.generate_state(1)[0]))


class ActorCritic:
    """An actor and a critic ensemble with their Adam optimizers; the shared half of every algorithm here.

    ``networks`` names every module whose weights a checkpoint holds; algorithms add theirs with
    :meth:`_register`. Subclasses define ``update``, ``td_target``, ``_critic_loss_eager`` and
    ``_actor_loss_eager`` (wrapped by ``torch.compile`` with ``AgentConfig.compile``).
    """

    actor_class: type[Actor] = Actor
    trains_at_episode_ends = False
    hard_target_every: int | None = None  # updates between hard target copies (TD7), which LAP's replay follows

    def __init__(
        self, obs_dim: int, action_dim: int, agent: AgentConfig, actor: NetworkConfig, critic: NetworkConfig,
        init_seed: np.random.SeedSequence, torch_seed: np.random.SeedSequence, noisy_seed: np.random.SeedSequence,
        replay: ReplayConfig | None = None, *, init_generator: torch.Generator | None = None,
        state_encoder: nn.Module | None = None, embedding_dim: int = 0,
    ) -> None:
        self.config, self.actor_config, self.critic_config = agent, actor, critic
        self.obs_dim, self.action_dim = obs_dim, action_dim
        self.device = resolve_device(agent.device)
        # LAP (Fujimoto et al. 2020): the Huber-like loss and max-over-critics TD errors for the replay's priorities.
        self.lap_min_priority = (replay.lap_min_priority if replay is not None and replay.sampler is Sampler.LAP
                                 else None)
        generator = seeded_generator(init_seed) if init_generator is None else init_generator
        self.noisy_generator = seeded_generator(noisy_seed, self.device) if actor.noisy else None
        self.hidden_dtype = torch.bfloat16 if agent.precision is Precision.BFLOAT16 else None
        self.networks: dict[str, nn.Module] = {}
        self.actor = self._register("actor", self.actor_class(obs_dim, action_dim, actor, generator,
                                                              self.noisy_generator, state_encoder).to(self.device))
        self.critic = self._register("critic", CriticEnsemble(agent.n_critics, obs_dim, action_dim, critic, generator,
                                                              embedding_dim).to(self.device))
        self.actor_average = (ActorAverage(self.actor, agent.actor_average) if agent.actor_average is not None
                              else None)
        if self.actor_average is not None:
            self._register("actor_average", self.actor_average.actor)
        self.actor_optim = make_optimizer(self.actor, actor, self.device)
        self.critic_optim = make_optimizer(self.critic, critic, self.device)
        self._actor_params = [p for p in self.actor.parameters() if p.requires_grad]  # not a frozen encoder
        self._critic_params = list(self.critic.parameters())
        self._actor_members = FIRST if agent.actor_objective is ActorObjective.FIRST else ALL
        # Train/eval mode changes only BatchNorm and NoisyLinear; without them, skip the module walks per step.
        self._mode_matters = (mode_sensitive(self.actor), mode_sensitive(self.critic))
        self._critic_renorm = any(isinstance(m, BatchRenorm1d) for m in self.critic.modules())
        self._critic_loss = self._compiled(self._critic_loss_eager)
        self._actor_loss = self._compiled(self._actor_loss_eager)
        self.generator = seeded_generator(torch_seed, self.device)
        self.updates = 0
        self._last_actor_loss = torch.zeros((), device=self.device)

    def _register(self, name: str, network: Any) -> Any:
        network.hidden_dtype = self.hidden_dtype
        self.networks[name] = network
        return network

    def _compiled(self, function: Callable[..., Any]) -> Callable[..., Any]:
        if not self.config.compile:
            return function
        mode = "reduce-overhead" if self.device.type == "cuda" else None  # CUDA graphs on GPU
        return torch.compile(function, mode=mode, dynamic=False)

    # ------------------------------------------------------------------ pieces of an update
    def _critic_loss_eager(self, obs: torch.Tensor, action: torch.Tensor, reward: torch.Tensor,
                           next_obs: torch.Tensor, terminated: torch.Tensor, discount: torch.Tensor | float,
                           weights: torch.Tensor | None, noise: torch.Tensor | None
                           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def _actor_loss_eager(self, obs: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def td_target(self, batch: Batch) -> torch.Tensor:
        raise NotImplementedError

    def _begin_update(self) -> None:
        """Count the update; online networks learn in train mode (they act in eval mode)."""
        self.updates += 1
        for module, matters in zip((self.actor, self.critic), self._mode_matters, strict=True):
            if matters and not module.training:
                module.train()

    def _smoothing_noise(self, next_obs: torch.Tensor) -> torch.Tensor | None:
        """TD3's target policy smoothing noise, clipped (drawn outside any compiled region); None when off."""
        cfg = self.config
        if cfg.target_policy_noise is None:
            return None
        return smoothing_noise((next_obs.shape[0], self.action_dim), cfg.target_policy_noise, cfg.target_noise_clip,
                               self.generator, next_obs.device)

    def _critic_step(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Regress every critic on the TD target; gradients reach the critics only."""
        loss, q_values, target = self._critic_loss(
            batch.obs, batch.action, batch.reward, batch.next_obs, batch.terminated, batch.discount, batch.weights,
            self._smoothing_noise(batch.next_obs),
        )
        descend(self.critic_optim, loss, self._critic_params, self.critic_config.grad_clip_norm)
        return loss.detach(), q_values, target

    def _actor_step(self, batch: Batch) -> torch.Tensor:
        """Ascend the critics' value of the actor's action; gradients reach the actor only."""
        loss = self._actor_loss(batch.obs)
        descend(self.actor_optim, loss, self._actor_params, self.actor_config.grad_clip_norm)
        self._actor_stepped()
        return loss.detach()

    def _actor_stepped(self) -> None:
        """After every actor update: the averaged actor follows (``AgentConfig.actor_average``)."""
        if self.actor_average is not None:
            self.actor_average.update(self.actor, self.actor_updates)

    @property
    def actor_updates(self) -> int:
        """How many times the actor has stepped: every ``policy_delay``-th update (SAC: every update)."""
        return self.updates // self.config.policy_delay

    def _regression_loss(self, q_values: torch.Tensor, target: torch.Tensor,
                         weights: torch.Tensor | None) -> torch.Tensor:
        """Squared TD error (importance-weighted), or LAP's Huber-like loss, summed over critics."""
        if self.lap_min_priority is None:
            return critic_loss(q_values, target, weights)
        return lap_huber(q_values - target.unsqueeze(0), self.lap_min_priority)

    def _critic_in_eval(self) -> contextlib.AbstractContextManager:
        """The critic in eval mode for the actor's loss when it batch-renormalizes (CrossQ)."""
        return module_mode(self.critic, False) if self._critic_renorm else contextlib.nullcontext()

    def _result(self, critic_loss_value: torch.Tensor, q_values: torch.Tensor, target: torch.Tensor,
                **extra: torch.Tensor) -> UpdateResult:
        """Metrics and per-sample |TD errors|: LAP reduces the critics with a max (TD7), otherwise the mean."""
        metrics = {"critic_loss": critic_loss_value, "actor_loss": self._last_actor_loss, "q_mean": q_values.mean(),
                   **extra}
        td = (target.unsqueeze(0) - q_values).abs()
        return UpdateResult(metrics, td_errors=td.amax(dim=0) if self.lap_min_priority is not None else td.mean(dim=0))

    def _q_values(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """Every critic's Q(s, a)."""
        return self.critic(obs, action)

    @torch.no_grad()
    def td_errors(self, transitions: Transitions) -> np.ndarray:
        """|y - Q(s, a)| per transition (mean over critics), in eval mode: priorities of new transitions.

        The Reacher n-step/prioritized notebook and Ape-X (Horgan et al. 2018) insert transitions at
        their own TD error rather than the largest priority so far.
        """
        if self.critic.training and self._mode_matters[1]:
            self.critic.eval()

        def tensor(array: np.ndarray) -> torch.Tensor:
            return torch.as_tensor(np.asarray(array), dtype=torch.float32, device=self.device)

        batch = Batch(obs=tensor(transitions.obs), action=tensor(transitions.action),
                      reward=tensor(transitions.reward), next_obs=tensor(transitions.next_obs),
                      terminated=tensor(transitions.terminated), discount=tensor(transitions.discount))
        q_values = self._q_values(batch.obs, batch.action)
        return (self.td_target(batch).unsqueeze(0) - q_values).abs().mean(dim=0).cpu().numpy()

    # ------------------------------------------------------------------ the loops' per-step contract
    def evaluation_actor(self) -> Actor | None:
        """The actor evaluation runs when it is not the live one (the averaged actor, TD7's checkpoint); None: the
        live actor."""
        return None if self.actor_average is None else self.actor_average.actor

    def end_step(self, reward: np.ndarray, done: np.ndarray, can_learn: bool) -> int:
        """One training env step's rewards and episode ends; the updates to run now (TD7's schedule), else 0."""
        return 0

    # ------------------------------------------------------------------ state
    def parameters_finite(self) -> str | None:
        """The name of the first online network holding NaN or Inf, or None."""
        for name in ("actor", "critic"):
            if not all(bool(torch.isfinite(p).all()) for p in self.networks[name].parameters()):
                return name
        return None

    def weights(self) -> dict[str, dict[str, torch.Tensor]]:
        """CPU copies of every network's weights (what Ape-X workers act and prioritise with)."""
        return {name: {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}
                for name, net in self.networks.items()}

    def load_weights(self, weights: dict[str, dict[str, torch.Tensor]]) -> None:
        for name, net in self.networks.items():
            net.load_state_dict(weights[name])

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly: networks, optimizers, RNG, counters."""
        state: dict[str, Any] = {name: net.state_dict() for name, net in self.networks.items()}
        state.update({
            "actor_optim": self.actor_optim.state_dict(), "critic_optim": self.critic_optim.state_dict(),
            "generator": self.generator.get_state(), "updates": self.updates,
            "last_actor_loss": self._last_actor_loss.detach().clone(),
        })
        if self.noisy_generator is not None:
            state["noisy_generator"] = self.noisy_generator.get_state()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for name, net in self.networks.items():
            net.load_state_dict(state[name])
        self.actor_optim.load_state_dict(regrouped(state["actor_optim"], self.actor_optim, self.actor))
        self.critic_optim.load_state_dict(regrouped(state["critic_optim"], self.critic_optim, self.critic))
        self.generator.set_state(state["generator"].cpu())
        self.updates = int(state["updates"])
        self._last_actor_loss = state["last_actor_loss"].to(self.device)
        if self.noisy_generator is not None:
            self.noisy_generator.set_state(state["noisy_generator"].cpu())
