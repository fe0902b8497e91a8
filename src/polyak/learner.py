"""The learner: DDPG (Lillicrap et al. 2015) with TD3's switches (Fujimoto et al. 2018).

It owns the networks, their targets and optimizers, and one update step that takes a batch and
returns an :class:`~polyak.types.UpdateResult` (metrics and per-sample TD errors for the replay's
priorities); it never acts in an env, logs or samples replay (Acme's learner/actor split).

BatchNorm: the online networks learn in train mode and act in eval mode; target networks always
run in eval mode and Polyak-average the online BatchNorm running statistics along with the weights,
so a target network is a slow copy of the whole online network.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from polyak.config import AgentConfig, Device, NetworkConfig, Precision
from polyak.ensemble import CriticEnsemble, EnsembleBatchNorm, EnsembleLinear
from polyak.errors import ConfigError
from polyak.losses import actor_loss, clipped_min, critic_loss, polyak_update, smoothing_noise, td_target
from polyak.networks import Actor, NoisyLinear, share_noise_generator
from polyak.replay.nstep import Transitions
from polyak.types import Batch, UpdateResult

FIRST = slice(0, 1)  # the actor ascends the first critic (Fujimoto et al. 2018)


def resolve_device(device: Device) -> torch.device:
    """``auto`` picks CUDA when available; asking for CUDA without it is a config error."""
    if device is Device.AUTO:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device is Device.CUDA and not torch.cuda.is_available():
        raise ConfigError("AgentConfig.device is 'cuda' but no CUDA device is available")
    return torch.device(device.value)


LINEAR = (nn.Linear, NoisyLinear, EnsembleLinear)


def decayed_parameters(module: nn.Module) -> tuple[list[nn.Parameter], list[nn.Parameter]]:
    """(decayed, not decayed): linear weight matrices (NoisyNet's mu, the ensemble's stacked weights) decay;
    biases, normalisation scales and offsets and NoisyNet's sigma do not (AdamW's usual exclusions)."""
    decayed = {id(m.weight) for m in module.modules() if isinstance(m, LINEAR)}
    params = list(module.parameters())
    return [p for p in params if id(p) in decayed], [p for p in params if id(p) not in decayed]


def _optimizer(module: nn.Module, config: NetworkConfig, device: torch.device) -> torch.optim.Adam:
    """Adam as one fused kernel per step on CPU and CUDA (else the multi-tensor path).

    One parameter group unless weight decay applies to the linear weights only: then (decayed, not decayed).
    """
    fused = device.type in ("cpu", "cuda")
    groups: Any = module.parameters()
    if config.weight_decay > 0 and not config.decay_all_parameters:
        decayed, kept = decayed_parameters(module)
        groups = [{"params": decayed}, {"params": kept, "weight_decay": 0.0}]
    return torch.optim.Adam(groups, lr=config.lr, weight_decay=config.weight_decay,
                            fused=fused, foreach=None if fused else True)


def _regrouped(saved: dict[str, Any], optimizer: torch.optim.Optimizer, module: nn.Module) -> dict[str, Any]:
    """``saved`` re-indexed for ``optimizer``'s parameter groups when the two were grouped differently.

    Checkpoints written before weight decay skipped biases and normalisation hold one group (indices in
    ``module.parameters()`` order); a two-group optimizer lists the decayed weights first, and back.
    """
    if len(saved["param_groups"]) == len(optimizer.param_groups):
        return saved
    single = list(module.parameters())
    split = [p for group in decayed_parameters(module) for p in group]
    old_order = single if len(saved["param_groups"]) == 1 else split
    index = {id(p): i for i, p in enumerate(p for g in optimizer.param_groups for p in g["params"])}
    state = {index[id(old_order[int(i)])]: value for i, value in saved["state"].items()}
    return {"state": state, "param_groups": optimizer.state_dict()["param_groups"]}


def mode_sensitive(module: nn.Module) -> bool:
    """Whether train() and eval() change what ``module`` computes (BatchNorm statistics, NoisyNet noise)."""
    return any(isinstance(m, nn.modules.batchnorm._BatchNorm | NoisyLinear | EnsembleBatchNorm)
               for m in module.modules())


def frozen_copy(actor: Actor, noisy_generator: torch.Generator | None) -> Actor:
    """An eval-mode copy of ``actor`` without gradients whose NoisyNet layers draw from ``noisy_generator``."""
    copied = copy.deepcopy(actor).eval().requires_grad_(False)
    share_noise_generator(copied, noisy_generator)
    return copied


def _target_pairs(target: nn.Module, online: nn.Module) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Parameters then buffers of both modules, in the same order, for Polyak averaging."""
    return [*target.parameters(), *target.buffers()], [*online.parameters(), *online.buffers()]


class Learner:
    """Actor, critic ensemble, their targets and optimizers, the update step and its counters.

    ``networks`` names every module whose weights a checkpoint holds; a learner with other
    networks (encoders, no targets) adds or drops entries there and state_dict follows.
    """

    def __init__(
        self, obs_dim: int, action_dim: int, agent: AgentConfig, actor: NetworkConfig, critic: NetworkConfig,
        init_seed: np.random.SeedSequence, torch_seed: np.random.SeedSequence, noisy_seed: np.random.SeedSequence,
    ) -> None:
        self.config, self.actor_config, self.critic_config = agent, actor, critic
        self.obs_dim, self.action_dim = obs_dim, action_dim
        self.device = resolve_device(agent.device)
        init_generator = torch.Generator().manual_seed(int(init_seed.generate_state(1)[0]))
        self.noisy_generator = (
            torch.Generator(device=self.device).manual_seed(int(noisy_seed.generate_state(1)[0]))
            if actor.noisy else None
        )
        self.actor = Actor(obs_dim, action_dim, actor, init_generator, self.noisy_generator).to(self.device)
        self.critic = CriticEnsemble(agent.n_critics, obs_dim, action_dim, critic, init_generator).to(self.device)
        self.actor_target = frozen_copy(self.actor, self.noisy_generator)
        self.critic_target = copy.deepcopy(self.critic).eval().requires_grad_(False)
        self.networks: dict[str, nn.Module] = {"actor": self.actor, "actor_target": self.actor_target,
                                               "critic": self.critic, "critic_target": self.critic_target}
        self.actor_optim = _optimizer(self.actor, actor, self.device)
        self.critic_optim = _optimizer(self.critic, critic, self.device)
        self._actor_params = list(self.actor.parameters())
        self._critic_params = list(self.critic.parameters())
        # One Polyak average per network, each with its own factor (the network's tau, else AgentConfig.tau).
        self._soft_updates = [
            (*_target_pairs(self.actor_target, self.actor), agent.tau if actor.tau is None else actor.tau),
            (*_target_pairs(self.critic_target, self.critic), agent.tau if critic.tau is None else critic.tau),
        ]
        hidden_dtype = torch.bfloat16 if agent.precision is Precision.BFLOAT16 else None
        for network in self.networks.values():
            network.hidden_dtype = hidden_dtype
        # Train/eval mode changes only BatchNorm and NoisyLinear; without them, skip the module walks per step.
        self._mode_matters = tuple(mode_sensitive(net) for net in (self.actor, self.critic))
        self._critic_loss = self._compiled(self._critic_loss_eager)
        self._actor_loss = self._compiled(self._actor_loss_eager)
        self.generator = torch.Generator(device=self.device).manual_seed(int(torch_seed.generate_state(1)[0]))
        self.updates = 0
        self._last_actor_loss = torch.zeros((), device=self.device)

    def _compiled(self, function: Callable[..., Any]) -> Callable[..., Any]:
        if not self.config.compile:
            return function
        mode = "reduce-overhead" if self.device.type == "cuda" else None  # CUDA graphs on GPU
        return torch.compile(function, mode=mode, dynamic=False)

    # ------------------------------------------------------------------ the update step
    def update(self, batch: Batch) -> UpdateResult:
        """One learning step: every critic regresses on the TD target, the actor every ``policy_delay`` steps."""
        cfg = self.config
        self.updates += 1
        for module, matters in zip((self.actor, self.critic), self._mode_matters, strict=True):
            if matters and not module.training:
                module.train()

        loss_q, q_values, target = self._critic_step(batch)
        if self.updates % cfg.policy_delay == 0:
            self._last_actor_loss = self._actor_step(batch)

        if self.updates % (cfg.policy_delay * cfg.target_update_every) == 0:
            for targets, online, tau in self._soft_updates:
                polyak_update(targets, online, tau)

        metrics = {"critic_loss": loss_q, "actor_loss": self._last_actor_loss, "q_mean": q_values.mean()}
        return UpdateResult(metrics, td_errors=(target.unsqueeze(0) - q_values).abs().mean(dim=0))

    def _smoothing_noise(self, next_obs: torch.Tensor) -> torch.Tensor | None:
        """TD3's target policy smoothing noise, clipped (drawn outside any compiled region)."""
        cfg = self.config
        if cfg.target_policy_noise is None:
            return None
        return smoothing_noise((next_obs.shape[0], self.action_dim), cfg.target_policy_noise, cfg.target_noise_clip,
                               self.generator, next_obs.device)

    def _target(self, reward: torch.Tensor, next_obs: torch.Tensor, terminated: torch.Tensor,
                discount: torch.Tensor | float, noise: torch.Tensor | None) -> torch.Tensor:
        with torch.no_grad():
            next_action = self.actor_target(next_obs)
            if noise is not None:
                next_action = (next_action + noise).clamp(-1.0, 1.0)
            next_q = clipped_min(self.critic_target(next_obs, next_action))
            return td_target(reward, discount, terminated, next_q)

    def td_target(self, batch: Batch) -> torch.Tensor:
        """y = r + gamma^k (1 - terminated) min_i Q'_i(s', mu'(s') [+ clipped noise])."""
        return self._target(batch.reward, batch.next_obs, batch.terminated, batch.discount,
                            self._smoothing_noise(batch.next_obs))

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
        q_values = self.critic(batch.obs, batch.action)
        return (self.td_target(batch).unsqueeze(0) - q_values).abs().mean(dim=0).cpu().numpy()

    def _critic_loss_eager(
        self, obs: torch.Tensor, action: torch.Tensor, reward: torch.Tensor, next_obs: torch.Tensor,
        terminated: torch.Tensor, discount: torch.Tensor | float, weights: torch.Tensor | None,
        noise: torch.Tensor | None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(loss, detached Q of every critic, TD target): every critic regresses on the one target."""
        target = self._target(reward, next_obs, terminated, discount, noise)
        q_values = self.critic(obs, action)
        return critic_loss(q_values, target, weights), q_values.detach(), target

    def _actor_loss_eager(self, obs: torch.Tensor) -> torch.Tensor:
        """-Q_1(s, mu(s)): the deterministic policy gradient through the first critic."""
        return actor_loss(self.critic(obs, self.actor(obs), members=FIRST))

    def _critic_step(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Regress every critic on the TD target; gradients reach the critics only."""
        loss, q_values, target = self._critic_loss(
            batch.obs, batch.action, batch.reward, batch.next_obs, batch.terminated, batch.discount, batch.weights,
            self._smoothing_noise(batch.next_obs),
        )
        self._descend(self.critic_optim, loss, self._critic_params, self.critic_config)
        return loss.detach(), q_values, target

    def _actor_step(self, batch: Batch) -> torch.Tensor:
        """Ascend Q_1(s, mu(s)); gradients reach the actor only."""
        loss = self._actor_loss(batch.obs)
        self._descend(self.actor_optim, loss, self._actor_params, self.actor_config)
        return loss.detach()

    @staticmethod
    def _descend(optimizer: torch.optim.Optimizer, loss: torch.Tensor, params: list[torch.Tensor],
                 config: NetworkConfig) -> None:
        """One optimizer step on ``params`` alone: gradients never reach the other network's weights."""
        optimizer.zero_grad(set_to_none=True)
        loss.backward(inputs=params)
        if config.grad_clip_norm is not None:
            nn.utils.clip_grad_norm_(params, config.grad_clip_norm, foreach=True)
        optimizer.step()

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
        self.actor_optim.load_state_dict(_regrouped(state["actor_optim"], self.actor_optim, self.actor))
        self.critic_optim.load_state_dict(_regrouped(state["critic_optim"], self.critic_optim, self.critic))
        self.generator.set_state(state["generator"].cpu())
        self.updates = int(state["updates"])
        self._last_actor_loss = state["last_actor_loss"].to(self.device)
        if self.noisy_generator is not None:
            self.noisy_generator.set_state(state["noisy_generator"].cpu())
