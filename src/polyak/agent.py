"""The DDPG agent (Lillicrap et al. 2015) with TD3's switches (Fujimoto et al. 2018).

``update(batch)`` is one learning step; it never logs, samples replay or touches the env.
BatchNorm: the online networks learn in train mode and act in eval mode; target networks
always run in eval mode and Polyak-average the online BatchNorm running statistics along
with the weights, so a target network is a slow copy of the whole online network.

Exploration: action noise (OU/Gaussian), a NoisyNet actor (Fortunato et al. 2018) whose noisy
weights act when exploring, or adaptive parameter-space noise (Plappert et al. 2018) through a
perturbed copy of the actor. ``act(obs, explore=False)`` is always the deterministic policy.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from polyak.config import AgentConfig, Device, NetworkConfig, NoiseConfig, Precision
from polyak.ensemble import CriticEnsemble, EnsembleBatchNorm
from polyak.errors import ConfigError
from polyak.losses import actor_loss, clipped_min, critic_loss, polyak_update, smoothing_noise, td_target
from polyak.networks import Actor, NoisyLinear, exploring, perturbable_parameters, share_noise_generator
from polyak.noise import ExplorationNoise
from polyak.replay import Batch

FIRST = slice(0, 1)  # the actor ascends the first critic (Fujimoto et al. 2018)


def resolve_device(device: Device) -> torch.device:
    """``auto`` picks CUDA when available; asking for CUDA without it is a config error."""
    if device is Device.AUTO:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device is Device.CUDA and not torch.cuda.is_available():
        raise ConfigError("AgentConfig.device is 'cuda' but no CUDA device is available")
    return torch.device(device.value)


def _optimizer(module: nn.Module, config: NetworkConfig, device: torch.device) -> torch.optim.Adam:
    """Adam as one fused kernel per step on CPU and CUDA (else the multi-tensor path)."""
    fused = device.type in ("cpu", "cuda")
    return torch.optim.Adam(module.parameters(), lr=config.lr, weight_decay=config.weight_decay,
                            fused=fused, foreach=None if fused else True)


def _mode_sensitive(module: nn.Module) -> bool:
    """Whether train() and eval() change what ``module`` computes (BatchNorm statistics, NoisyNet noise)."""
    return any(isinstance(m, nn.modules.batchnorm._BatchNorm | NoisyLinear | EnsembleBatchNorm)
               for m in module.modules())


def _target_pairs(target: nn.Module, online: nn.Module) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Parameters then buffers of both modules, in the same order, for Polyak averaging."""
    return [*target.parameters(), *target.buffers()], [*online.parameters(), *online.buffers()]


class Agent:
    """Actor, critics, their targets and optimizers, exploration noise and counters."""

    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        num_envs: int,
        agent: AgentConfig,
        actor: NetworkConfig,
        critic: NetworkConfig,
        noise: NoiseConfig,
        seed: np.random.SeedSequence,
    ) -> None:
        self.config = agent
        self.actor_config = actor
        self.critic_config = critic
        self.obs_dim, self.action_dim = obs_dim, action_dim
        self.device = resolve_device(agent.device)
        init_seed, noise_seed, torch_seed, noisy_seed = seed.spawn(4)
        init_generator = torch.Generator().manual_seed(int(init_seed.generate_state(1)[0]))
        self.noisy_generator = (
            torch.Generator(device=self.device).manual_seed(int(noisy_seed.generate_state(1)[0]))
            if actor.noisy else None
        )

        self.actor = Actor(obs_dim, action_dim, actor, init_generator, self.noisy_generator).to(self.device)
        self.critic = CriticEnsemble(agent.n_critics, obs_dim, action_dim, critic, init_generator).to(self.device)
        self.actor_target = self._actor_copy()
        self.critic_target = copy.deepcopy(self.critic).eval().requires_grad_(False)
        self.actor_optim = _optimizer(self.actor, actor, self.device)
        self.critic_optim = _optimizer(self.critic, critic, self.device)
        self._actor_params = list(self.actor.parameters())
        self._critic_params = list(self.critic.parameters())
        targets, online = zip(_target_pairs(self.actor_target, self.actor),
                              _target_pairs(self.critic_target, self.critic), strict=True)
        self._target_tensors = [t for group in targets for t in group]
        self._online_tensors = [t for group in online for t in group]
        hidden_dtype = torch.bfloat16 if agent.precision is Precision.BFLOAT16 else None
        for network in (self.actor, self.actor_target, self.critic, self.critic_target):
            network.hidden_dtype = hidden_dtype
        # Train/eval mode changes only BatchNorm and NoisyLinear; without them, skip the module walks per step.
        self._mode_matters = tuple(_mode_sensitive(net) for net in (self.actor, self.critic))
        self._critic_loss = self._compiled(self._critic_loss_eager)
        self._actor_loss = self._compiled(self._actor_loss_eager)
        self.noise = ExplorationNoise(noise, num_envs, action_dim, np.random.default_rng(noise_seed))
        self.generator = torch.Generator(device=self.device).manual_seed(int(torch_seed.generate_state(1)[0]))
        self.updates = 0
        self._last_actor_loss = torch.zeros((), device=self.device)
        # Parameter-space noise: the perturbed actor acts; a scratch copy measures the distance.
        self.perturbed_actor: Actor | None = None
        self._recent_obs: list[np.ndarray] = []
        self._explore_steps = 0
        if self.noise.parameter is not None:
            self.perturbed_actor = self._actor_copy()
            self._distance_actor = self._actor_copy()
            self.perturb()

    def _actor_copy(self) -> Actor:
        actor = copy.deepcopy(self.actor).eval().requires_grad_(False)
        share_noise_generator(actor, self.noisy_generator)
        return actor

    @torch.no_grad()
    def perturb(self, destination: Actor | None = None) -> None:
        """Copy the actor into ``destination`` (default: the acting perturbed actor), then add parameter noise."""
        assert self.noise.parameter is not None
        destination = self.perturbed_actor if destination is None else destination
        assert destination is not None
        destination.load_state_dict(self.actor.state_dict())
        params = perturbable_parameters(destination)
        self.noise.parameter.perturb(params, params)

    @torch.no_grad()
    def adapt_parameter_noise(self, obs: np.ndarray) -> float:
        """One adaptation of sigma from the RMS action distance of a fresh perturbation on ``obs``."""
        assert self.noise.parameter is not None
        self.perturb(self._distance_actor)
        self.actor.eval()
        obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        distance = float((self.actor(obs_t) - self._distance_actor(obs_t)).pow(2).mean().sqrt())
        self.noise.parameter.adapt(distance)
        return distance
    @torch.no_grad()
    def act(self, obs: np.ndarray, explore: bool) -> np.ndarray:
        """Actions in [-1, 1] for a batch of observations.

        Exploring: the perturbed actor acts (parameter noise), NoisyNet layers use noisy weights,
        and scaled action noise is added. Not exploring: the actor's deterministic output.
        """
        actor = self.perturbed_actor if explore and self.perturbed_actor is not None else self.actor
        if self.actor.training and self._mode_matters[0]:  # eval(): BatchNorm uses running statistics
            self.actor.eval()
        obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        if self.actor_config.noisy:
            with exploring(actor, explore):
                action = actor(obs_t).cpu().numpy().astype(np.float64)
        else:  # no NoisyLinear layers: skip the module walk on every step
            action = actor(obs_t).cpu().numpy().astype(np.float64)
        if explore:
            action = np.clip(action + self.noise.sample(), -1.0, 1.0)
            if self.perturbed_actor is not None:
                self._track_parameter_noise(np.asarray(obs))
        return action

    def _track_parameter_noise(self, obs: np.ndarray) -> None:
        """Collect the states seen while exploring; adapt sigma every ``param_adapt_every`` steps."""
        self._recent_obs.append(obs.reshape(-1, self.obs_dim))
        self._explore_steps += 1
        if self._explore_steps % self.noise.config.param_adapt_every == 0:
            self.adapt_parameter_noise(np.concatenate(self._recent_obs))
            self._recent_obs.clear()

    def reset_noise(self, mask: np.ndarray | None = None) -> None:
        """Episode start for the envs in ``mask``; parameter noise re-perturbs its shared actor copy."""
        self.noise.reset(mask)
        if self.perturbed_actor is not None and (mask is None or np.any(mask)):
            self.perturb()

    @torch.no_grad()
    def td_errors(
        self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, next_obs: np.ndarray, terminated: np.ndarray,
        discount: np.ndarray | float,
    ) -> np.ndarray:
        """|y - Q(s, a)| per transition (mean over critics), in eval mode: priorities at insertion (seed 004)."""
        if self.critic.training and self._mode_matters[1]:
            self.critic.eval()

        def tensor(array: np.ndarray | float) -> torch.Tensor | float:
            if isinstance(array, float):
                return array
            return torch.as_tensor(np.asarray(array), dtype=torch.float32, device=self.device)

        batch = Batch(obs=tensor(obs), action=tensor(action), reward=tensor(reward),  # type: ignore[arg-type]
                      next_obs=tensor(next_obs), terminated=tensor(terminated),  # type: ignore[arg-type]
                      discount=tensor(discount))
        q_values = self.critic(batch.obs, batch.action)
        return (self.td_target(batch).unsqueeze(0) - q_values).abs().mean(dim=0).cpu().numpy()

    def _compiled(self, function: Callable[..., Any]) -> Callable[..., Any]:
        if not self.config.compile:
            return function
        mode = "reduce-overhead" if self.device.type == "cuda" else None  # CUDA graphs on GPU
        return torch.compile(function, mode=mode, dynamic=False)

    def update(self, batch: Batch) -> dict[str, torch.Tensor]:
        """One learning step; returns detached metric tensors (no host synchronisation)."""
        cfg = self.config
        self.updates += 1
        for module, matters in zip((self.actor, self.critic), self._mode_matters, strict=True):
            if matters and not module.training:
                module.train()

        loss_q, q_values, target = self._critic_step(batch)
        if self.updates % cfg.policy_delay == 0:
            self._last_actor_loss = self._actor_step(batch)

        if self.updates % (cfg.policy_delay * cfg.target_update_every) == 0:
            polyak_update(self._target_tensors, self._online_tensors, cfg.tau)

        return {
            "critic_loss": loss_q,
            "actor_loss": self._last_actor_loss,
            "q_mean": q_values.mean(),
            "td_error": (target.unsqueeze(0) - q_values).abs().mean(dim=0),
        }

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

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly: networks, targets, optimizers, noise, RNG, counters."""
        return {
            "actor": self.actor.state_dict(),
            "actor_target": self.actor_target.state_dict(),
            "critic": self.critic.state_dict(),
            "critic_target": self.critic_target.state_dict(),
            "actor_optim": self.actor_optim.state_dict(),
            "critic_optim": self.critic_optim.state_dict(),
            "noise": self.noise.state_dict(),
            "generator": self.generator.get_state(),
            "updates": self.updates,
            "last_actor_loss": self._last_actor_loss.detach().clone(),
            **self._exploration_state(),
        }

    def _exploration_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {}
        if self.noisy_generator is not None:
            state["noisy_generator"] = self.noisy_generator.get_state()
        if self.perturbed_actor is not None:
            state["perturbed_actor"] = self.perturbed_actor.state_dict()
            state["param_noise"] = {
                "explore_steps": self._explore_steps,
                "recent_obs": np.concatenate(self._recent_obs) if self._recent_obs
                else np.zeros((0, self.obs_dim), dtype=np.float32),
            }
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.actor.load_state_dict(state["actor"])
        self.actor_target.load_state_dict(state["actor_target"])
        self.critic.load_state_dict(state["critic"])
        self.critic_target.load_state_dict(state["critic_target"])
        self.actor_optim.load_state_dict(state["actor_optim"])
        self.critic_optim.load_state_dict(state["critic_optim"])
        self.noise.load_state_dict(state["noise"])
        self.generator.set_state(state["generator"].cpu())
        self.updates = int(state["updates"])
        self._last_actor_loss = state["last_actor_loss"].to(self.device)
        if self.noisy_generator is not None:
            self.noisy_generator.set_state(state["noisy_generator"].cpu())
        if self.perturbed_actor is not None:
            self.perturbed_actor.load_state_dict(state["perturbed_actor"])
            self._explore_steps = int(state["param_noise"]["explore_steps"])
            recent = np.asarray(state["param_noise"]["recent_obs"])
            self._recent_obs = [recent] if len(recent) else []
