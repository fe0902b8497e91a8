"""The learner: DDPG (Lillicrap et al. 2015) with TD3's switches (Fujimoto et al. 2018).

It owns the networks, their targets and optimizers, and one update step that takes a batch and
returns an :class:`~polyak.types.UpdateResult` (metrics and per-sample TD errors for the replay's
priorities); it never acts in an env, logs or samples replay (Acme's learner/actor split).

BatchNorm: the online networks learn in train mode and act in eval mode; target networks always
run in eval mode and Polyak-average the online BatchNorm running statistics along with the weights,
so a target network is a slow copy of the whole online network.

TD7 (Fujimoto et al. 2023) and CrossQ (Bhatt et al. 2024) are switches of this one learner (see
:class:`~polyak.config.AgentConfig`): SALE encoders (``networks['encoders']``, their own Adam), value clipping
(``networks['value_clipper']``), hard target copies, LAP's loss, a checkpoint actor; and for CrossQ no target
networks, with the critic's joint train-mode pass over ``(s, a)`` and ``(s', a')``.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from polyak.config import ActorObjective, AgentConfig, Device, NetworkConfig, Precision, ReplayConfig
from polyak.ensemble import CriticEnsemble, EnsembleBatchNorm, EnsembleLinear
from polyak.errors import ConfigError
from polyak.lap import lap_huber
from polyak.layers import BatchRenorm1d, joint_forward, module_mode
from polyak.losses import actor_loss, clipped_min, critic_loss, polyak_update, smoothing_noise, td_target
from polyak.networks import Actor, NoisyLinear, share_noise_generator
from polyak.replay.nstep import Transitions
from polyak.sale import SALEEncoder, SALEEncoders, StateEncoder
from polyak.td7 import ValueClipper
from polyak.types import Batch, UpdateResult

FIRST = slice(0, 1)  # the actor ascends the first critic (Fujimoto et al. 2018)


def resolve_device(device: Device) -> torch.device:
    """``auto`` picks CUDA when available; asking for CUDA without it is a config error."""
    if device is Device.AUTO:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device is Device.CUDA and not torch.cuda.is_available():
        raise ConfigError("AgentConfig.device is 'cuda' but no CUDA device is available")
    return torch.device(device.value)


def native_bfloat16_matmul() -> bool | None:
    """Whether this CPU multiplies bfloat16 natively (AVX512-BF16 or AMX, as oneDNN reports it); None if unknown."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # a torch build without the query
        return None


def slow_precision(agent: AgentConfig, device: torch.device) -> str | None:
    """Why ``agent.precision`` would slow learning down on ``device``, or None.

    bfloat16 is fast only where the CPU multiplies it natively (~1.3x float32's update rate); elsewhere oneDNN
    emulates it: 2 GFLOP/s against 34 in float32 on an AVX2 EPYC (``benchmarks/results/profile_update_avx2.json``).
    """
    if agent.precision is not Precision.BFLOAT16 or device.type != "cpu" or native_bfloat16_matmul() is not False:
        return None
    return ("AgentConfig.precision = 'bfloat16' on a CPU without native bfloat16 matmul (no AVX512-BF16 or AMX): "
            "updates will be many times slower than in float32; use precision = 'float32' here")


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
    return torch.optim.Adam(groups, lr=config.lr, betas=(config.adam_beta1, 0.999), weight_decay=config.weight_decay,
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


def build_actor(obs_dim: int, action_dim: int, agent: AgentConfig, actor: NetworkConfig,
                generator: torch.Generator | None = None) -> Actor:
    """An actor shaped like the learner's, for loading a checkpoint's ``actor`` (or ``checkpoint_actor``) weights
    outside a learner: with SALE (``agent.sale``) it owns a frozen state encoder, saved with its weights."""
    encoder = StateEncoder(obs_dim, agent.sale_dim, agent.sale_hidden).requires_grad_(False) if agent.sale else None
    return Actor(obs_dim, action_dim, actor, torch.Generator() if generator is None else generator,
                 state_encoder=encoder)


def evaluation_actor_key(agent: AgentConfig) -> str:
    """The checkpoint entry holding the policy that evaluation runs: TD7's ``checkpoint_actor`` when
    ``agent.checkpoint_policy`` is on, else ``actor``."""
    return "checkpoint_actor" if agent.checkpoint_policy else "actor"


def mode_sensitive(module: nn.Module) -> bool:
    """Whether train() and eval() change what ``module`` computes (BatchNorm statistics, NoisyNet noise)."""
    return any(isinstance(m, nn.modules.batchnorm._BatchNorm | NoisyLinear | EnsembleBatchNorm | BatchRenorm1d)
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
        replay: ReplayConfig | None = None,
    ) -> None:
        self.config, self.actor_config, self.critic_config = agent, actor, critic
        self.obs_dim, self.action_dim = obs_dim, action_dim
        self.device = resolve_device(agent.device)
        # LAP (TD7): the Huber-like loss and max-over-critics TD errors for the replay's priorities.
        self.lap_min_priority = replay.lap_min_priority if replay is not None and replay.lap else None
        init_generator = torch.Generator().manual_seed(int(init_seed.generate_state(1)[0]))
        self.noisy_generator = (
            torch.Generator(device=self.device).manual_seed(int(noisy_seed.generate_state(1)[0]))
            if actor.noisy else None
        )
        # SALE (TD7): the encoders first, then an actor owning a frozen copy of the fixed state encoder.
        self.encoders: SALEEncoders | None = None
        state_encoder, embedding_dim = None, 0
        if agent.sale:
            encoder = SALEEncoder(obs_dim, action_dim, agent.sale_dim, hidden_dim=agent.sale_hidden,
                                  generator=init_generator)
            self.encoders = SALEEncoders(encoder).to(self.device)
            state_encoder = copy.deepcopy(self.encoders.fixed_encoder.state_encoder)
            embedding_dim = encoder.zs_dim + encoder.zsa_dim
        self.actor = Actor(obs_dim, action_dim, actor, init_generator, self.noisy_generator,
                           state_encoder).to(self.device)
        self.critic = CriticEnsemble(agent.n_critics, obs_dim, action_dim, critic, init_generator,
                                     embedding_dim).to(self.device)
        self.networks: dict[str, nn.Module] = {"actor": self.actor}
        self.actor_target: Actor | None = None
        self.critic_target: CriticEnsemble | None = None
        if agent.target_networks:
            self.actor_target = frozen_copy(self.actor, self.noisy_generator)
            self.critic_target = copy.deepcopy(self.critic).eval().requires_grad_(False)
            self.networks["actor_target"] = self.actor_target
        self.networks["critic"] = self.critic
        if self.critic_target is not None:
            self.networks["critic_target"] = self.critic_target
        if self.encoders is not None:
            self.networks["encoders"] = self.encoders
        self.clipper = ValueClipper().to(self.device) if agent.value_clipping else None
        if self.clipper is not None:
            self.networks["value_clipper"] = self.clipper
        self.checkpoint_actor = frozen_copy(self.actor, self.noisy_generator) if agent.checkpoint_policy else None
        if self.checkpoint_actor is not None:
            self.networks["checkpoint_actor"] = self.checkpoint_actor
        self.actor_optim = _optimizer(self.actor, actor, self.device)
        self.critic_optim = _optimizer(self.critic, critic, self.device)
        self.encoder_optim = (
            torch.optim.Adam(self.encoders.encoder.parameters(), lr=agent.sale_lr,
                             fused=self.device.type in ("cpu", "cuda"))
            if self.encoders is not None else None
        )
        self._actor_params = [p for p in self.actor.parameters() if p.requires_grad]  # not the frozen encoder
        self._critic_params = list(self.critic.parameters())
        # One Polyak average per network, each with its own factor (the network's tau, else AgentConfig.tau).
        self._soft_updates = [] if self.actor_target is None or self.critic_target is None else [
            (*_target_pairs(self.actor_target, self.actor), agent.tau if actor.tau is None else actor.tau),
            (*_target_pairs(self.critic_target, self.critic), agent.tau if critic.tau is None else critic.tau),
        ]
        hidden_dtype = torch.bfloat16 if agent.precision is Precision.BFLOAT16 else None
        for network in self.networks.values():
            network.hidden_dtype = hidden_dtype
        # Train/eval mode changes only BatchNorm and NoisyLinear; without them, skip the module walks per step.
        self._mode_matters = tuple(mode_sensitive(net) for net in (self.actor, self.critic))
        self._critic_renorm = any(isinstance(m, BatchRenorm1d) for m in self.critic.modules())
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

        encoder_loss = self._encoder_step(batch) if self.encoders is not None else None
        loss_q, q_values, target = self._critic_step(batch)
        if self.updates % cfg.policy_delay == 0:
            self._last_actor_loss = self._actor_step(batch)

        if cfg.hard_target_every is not None:
            if self.updates % cfg.hard_target_every == 0:
                self.hard_update()
        elif self.updates % (cfg.policy_delay * cfg.target_update_every) == 0:
            for targets, online, tau in self._soft_updates:
                polyak_update(targets, online, tau)

        metrics = {"critic_loss": loss_q, "actor_loss": self._last_actor_loss, "q_mean": q_values.mean()}
        if encoder_loss is not None:
            metrics["encoder_loss"] = encoder_loss
        td = (target.unsqueeze(0) - q_values).abs()
        # LAP's priority reduces the critics with a max (TD7); otherwise the mean |TD error|.
        return UpdateResult(metrics, td_errors=td.amax(dim=0) if self.lap_min_priority is not None else td.mean(dim=0))

    @torch.no_grad()
    def hard_update(self) -> None:
        """TD7's update every ``hard_target_every`` steps, in its order: the targets become copies of the online
        networks (the target actor's state encoder becomes the old fixed encoder), the fixed encoders shift
        (``fixed_target <- fixed <- encoder``), the actor's state encoder follows the new fixed encoder, and the
        value clip range becomes the range of every target seen so far."""
        for targets, online, _ in self._soft_updates:
            torch._foreach_copy_(targets, online)
        if self.encoders is not None:
            self.encoders.update_fixed()
            assert self.actor.state_encoder is not None
            self.actor.state_encoder.load_state_dict(self.encoders.fixed_encoder.state_encoder.state_dict())
        if self.clipper is not None:
            self.clipper.update()

    @torch.no_grad()
    def update_checkpoint(self) -> None:
        """TD7's checkpoint: ``checkpoint_actor <- actor`` (with the actor's fixed state encoder)."""
        assert self.checkpoint_actor is not None, "AgentConfig.checkpoint_policy is off"
        self.checkpoint_actor.load_state_dict(self.actor.state_dict())
        if self.encoders is not None:
            self.encoders.update_checkpoint()

    def _encoder_step(self, batch: Batch) -> torch.Tensor:
        """SALE: the encoders learn to predict the live encoder's ``f(s')`` (their own Adam)."""
        assert self.encoders is not None and self.encoder_optim is not None
        loss = self.encoders.loss(batch.obs, batch.action, batch.next_obs)
        self.encoder_optim.zero_grad(set_to_none=True)
        loss.backward()
        self.encoder_optim.step()
        return loss.detach()

    def _embedding(self, obs: torch.Tensor, action: torch.Tensor, *, target: bool = False,
                   zs: torch.Tensor | None = None) -> torch.Tensor | None:
        """SALE's ``[zsa, zs]`` for the critic from the fixed encoder (``target``: the fixed target encoder);
        None without SALE. ``zs`` may be given (computed once per batch); gradients reach ``action`` only."""
        if self.encoders is None:
            return None
        encoder = self.encoders.fixed_encoder_target if target else self.encoders.fixed_encoder
        if zs is None:
            with torch.no_grad():
                zs = encoder.zs(obs)
        return torch.cat((encoder.zsa(zs, action), zs), dim=-1)

    def _smoothing_noise(self, next_obs: torch.Tensor) -> torch.Tensor | None:
        """TD3's target policy smoothing noise, clipped (drawn outside any compiled region)."""
        cfg = self.config
        if cfg.target_policy_noise is None:
            return None
        return smoothing_noise((next_obs.shape[0], self.action_dim), cfg.target_policy_noise, cfg.target_noise_clip,
                               self.generator, next_obs.device)

    def _next_action(self, next_obs: torch.Tensor, noise: torch.Tensor | None
                     ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(a', SALE's zs' or None): the target actor's action, or without targets the actor's in eval mode."""
        zs = None
        if self.encoders is not None:
            zs = self.encoders.fixed_encoder_target.zs(next_obs)
        if self.actor_target is not None:
            next_action = self.actor_target(next_obs) if zs is None else self.actor_target(next_obs, zs)
        else:
            with module_mode(self.actor, False) if self._mode_matters[0] else contextlib.nullcontext():
                next_action = self.actor(next_obs)
        if noise is not None:
            next_action = (next_action + noise).clamp(-1.0, 1.0)
        return next_action, zs

    def _bootstrap(self, reward: torch.Tensor, discount: torch.Tensor | float, terminated: torch.Tensor,
                   next_q: torch.Tensor, observe: bool) -> torch.Tensor:
        """The TD target from min_i Q'_i; value clipping (TD7) clips it and, in an update, records the target."""
        if self.clipper is None:
            return td_target(reward, discount, terminated, next_q)
        if observe:
            return self.clipper.target(reward, discount, terminated, next_q)
        return td_target(reward, discount, terminated, self.clipper.clip(next_q))

    def _target(self, reward: torch.Tensor, next_obs: torch.Tensor, terminated: torch.Tensor,
                discount: torch.Tensor | float, noise: torch.Tensor | None, observe: bool = True) -> torch.Tensor:
        with torch.no_grad():
            next_action, zs = self._next_action(next_obs, noise)
            critic = self.critic if self.critic_target is None else self.critic_target
            if zs is None:
                next_q = clipped_min(critic(next_obs, next_action))
            else:
                next_q = clipped_min(critic(next_obs, next_action, self._embedding(next_obs, next_action, target=True,
                                                                                      zs=zs)))
            return self._bootstrap(reward, discount, terminated, next_q, observe)

    def td_target(self, batch: Batch) -> torch.Tensor:
        """y = r + gamma^k (1 - terminated) min_i Q'_i(s', mu'(s') [+ clipped noise]) (no value-range update)."""
        return self._target(batch.reward, batch.next_obs, batch.terminated, batch.discount,
                            self._smoothing_noise(batch.next_obs), observe=False)

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
        q_values = self.critic(batch.obs, batch.action, self._embedding(batch.obs, batch.action))
        return (self.td_target(batch).unsqueeze(0) - q_values).abs().mean(dim=0).cpu().numpy()

    def _critic_loss_eager(
        self, obs: torch.Tensor, action: torch.Tensor, reward: torch.Tensor, next_obs: torch.Tensor,
        terminated: torch.Tensor, discount: torch.Tensor | float, weights: torch.Tensor | None,
        noise: torch.Tensor | None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(loss, detached Q of every critic, TD target): every critic regresses on the one target."""
        if self.critic_target is None:
            return self._joint_critic_loss(obs, action, reward, next_obs, terminated, discount, weights, noise)
        target = self._target(reward, next_obs, terminated, discount, noise)
        q_values = self.critic(obs, action, self._embedding(obs, action))
        return self._regression_loss(q_values, target, weights), q_values.detach(), target

    def _joint_critic_loss(
        self, obs: torch.Tensor, action: torch.Tensor, reward: torch.Tensor, next_obs: torch.Tensor,
        terminated: torch.Tensor, discount: torch.Tensor | float, weights: torch.Tensor | None,
        noise: torch.Tensor | None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """CrossQ without target networks: ``a'`` from the actor in eval mode, then one train-mode critic pass over
        ``[(s, a); (s', a')]`` so batch renormalization normalizes (and updates its statistics once) with both;
        the target is the detached second half."""
        with torch.no_grad():
            next_action, _ = self._next_action(next_obs, noise)
        q_values, next_q = joint_forward(self.critic, (obs, action), (next_obs, next_action), output_dim=-1,
                                         train=None)
        with torch.no_grad():
            target = self._bootstrap(reward, discount, terminated, clipped_min(next_q.detach()), observe=True)
        return self._regression_loss(q_values, target, weights), q_values.detach(), target

    def _regression_loss(self, q_values: torch.Tensor, target: torch.Tensor,
                         weights: torch.Tensor | None) -> torch.Tensor:
        """Squared TD error (importance-weighted), or LAP's Huber-like loss (TD7), summed over critics."""
        if self.lap_min_priority is None:
            return critic_loss(q_values, target, weights)
        return lap_huber(q_values - target.unsqueeze(0), self.lap_min_priority)

    def _actor_loss_eager(self, obs: torch.Tensor) -> torch.Tensor:
        """-Q(s, mu(s)) of the first critic (TD3), the mean over critics (TD7) or their minimum (CrossQ-TD3).

        With batch renormalization in the critic, the critic runs in eval mode here (CrossQ)."""
        objective = self.config.actor_objective
        if self.encoders is None and objective is ActorObjective.FIRST and not self._critic_renorm:
            return actor_loss(self.critic(obs, self.actor(obs), members=FIRST))
        zs = None
        if self.encoders is not None:
            with torch.no_grad():
                zs = self.encoders.fixed_encoder.zs(obs)
        action = self.actor(obs) if zs is None else self.actor(obs, zs)
        embedding = self._embedding(obs, action, zs=zs)
        members = FIRST if objective is ActorObjective.FIRST else slice(None)
        with module_mode(self.critic, False) if self._critic_renorm else contextlib.nullcontext():
            q_values = self.critic(obs, action, embedding, members=members)
        if objective is ActorObjective.MIN:
            return -clipped_min(q_values).mean()
        return actor_loss(q_values)  # the mean over the batch and the critics

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
        if self.encoder_optim is not None:
            state["encoder_optim"] = self.encoder_optim.state_dict()
        if self.noisy_generator is not None:
            state["noisy_generator"] = self.noisy_generator.get_state()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for name, net in self.networks.items():
            net.load_state_dict(state[name])
        self.actor_optim.load_state_dict(_regrouped(state["actor_optim"], self.actor_optim, self.actor))
        self.critic_optim.load_state_dict(_regrouped(state["critic_optim"], self.critic_optim, self.critic))
        if self.encoder_optim is not None:
            self.encoder_optim.load_state_dict(state["encoder_optim"])
        self.generator.set_state(state["generator"].cpu())
        self.updates = int(state["updates"])
        self._last_actor_loss = state["last_actor_loss"].to(self.device)
        if self.noisy_generator is not None:
            self.noisy_generator.set_state(state["noisy_generator"].cpu())
