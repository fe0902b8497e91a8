"""Gin-configurable, frozen configuration dataclasses: the only place defaults live.

Actor and critic share :class:`NetworkConfig` and are told apart by gin scope
(``actor/NetworkConfig.lr = 1e-4``), never by field prefixes.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import numbers
import sys
import types
import typing
from dataclasses import dataclass
from typing import Any

import gin
import numpy as np

from polyak.errors import ConfigError
from polyak.seeding import MAX_SEED, SEED_RANGE


class Activation(str, enum.Enum):
    RELU = "relu"
    LEAKY_RELU = "leaky_relu"
    TANH = "tanh"
    ELU = "elu"


class Algorithm(str, enum.Enum):
    """The learning algorithm: one module of :mod:`polyak.algorithms` each."""

    DDPG = "ddpg"
    TD7 = "td7"
    CROSSQ = "crossq"
    SAC = "sac"
    CROSSQ_SAC = "crossq_sac"


class ActorObjective(str, enum.Enum):
    """Which critics the actor ascends: ``first`` Q_1 (TD3), ``mean`` the mean over every critic (TD7),
    ``min`` the minimum over the critics (CrossQ's TD3 mode)."""

    FIRST = "first"
    MEAN = "mean"
    MIN = "min"


class WeightInit(str, enum.Enum):
    """Weight initialisers.

    ``fan_in``: uniform ±sqrt(2/fan_in) with fan_in the layer's number of inputs (the DDPG Reacher report
    wrote the output size by mistake; we use the inputs), output layer uniform ±``output_init``.
    ``xavier``: Glorot uniform. ``pytorch``: PyTorch's default ``nn.Linear`` init.
    """

    FAN_IN = "fan_in"
    XAVIER = "xavier"
    PYTORCH = "pytorch"


class BiasInit(str, enum.Enum):
    ZEROS = "zeros"
    UNIFORM = "uniform"


class NoiseKind(str, enum.Enum):
    """Exploration: action noise (``ou``, ``gaussian``), adaptive parameter-space noise
    (``parameter``, Plappert et al. 2018) or ``none`` (e.g. with a NoisyNet actor)."""

    OU = "ou"
    GAUSSIAN = "gaussian"
    PARAMETER = "parameter"
    NONE = "none"


class InitialPriority(str, enum.Enum):
    """Priority of a new transition: the largest priority so far (Schaul et al. 2016), or
    ``(|TD error| + epsilon)^alpha`` computed by the agent at insertion (the Reacher n-step/prioritized notebook)."""

    MAX = "max"
    TD_ERROR = "td_error"


class Sampler(str, enum.Enum):
    """Which stored rows a batch draws (:func:`polyak.replay.make_sampler` builds one): ``uniform`` (Lin 1992;
    Mnih et al. 2015), ``prioritized`` proportional replay (Schaul et al. 2016) or ``lap``, TD7's loss-adjusted
    prioritized replay (Fujimoto et al. 2020)."""

    UNIFORM = "uniform"
    PRIORITIZED = "prioritized"
    LAP = "lap"


class EpsilonSchedule(str, enum.Enum):
    CONSTANT = "constant"
    LINEAR = "linear"
    GEOMETRIC = "geometric"


class Device(str, enum.Enum):
    AUTO = "auto"
    CPU = "cpu"
    CUDA = "cuda"


class Precision(str, enum.Enum):
    FLOAT32 = "float32"
    BFLOAT16 = "bfloat16"


def _matches(value: Any, annotation: Any) -> bool:
    """Whether ``value`` fits a (simple) type annotation: scalars, enums, tuples, unions."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, arg) for arg in typing.get_args(annotation))
    if annotation is type(None):
        return value is None
    if origin is tuple:
        args = typing.get_args(annotation)
        if not isinstance(value, tuple | list):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_matches(v, args[0]) for v in value)
        return len(value) == len(args) and all(_matches(v, a) for v, a in zip(value, args, strict=True))
    if origin is dict:
        return isinstance(value, dict) and all(isinstance(k, str) for k in value)
    if annotation is float:
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if annotation is int:
        return whole_number(value) is not None
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return isinstance(value, annotation) or value in {m.value for m in annotation}
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    return True


def whole_number(value: Any) -> int | None:
    """``value`` as an int where an int is expected: an int, a numpy integer or a float that is a whole number
    (``5e3``, ``1000.0``); None for anything else (``True`` included)."""
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, float | np.floating) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    return None


def _describe(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(annotation))
    if annotation is type(None):
        return "None"
    if origin is dict:
        return "a dict with string keys"
    if origin is tuple:
        args = typing.get_args(annotation)
        inner = _describe(args[0]) if args else "value"
        return f"a tuple of {inner}"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of " + ", ".join(repr(m.value) for m in annotation)
    if annotation is float:
        return "a finite number"
    return getattr(annotation, "__name__", str(annotation))


def _coerce(value: Any, annotation: Any) -> Any:
    """Turn gin-friendly values into the declared types (str -> enum, list -> tuple, int -> float, a whole float
    such as ``5e3`` -> int)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            if arg is not type(None) and _matches(value, arg):
                return _coerce(value, arg)
        return value
    if origin is tuple and isinstance(value, list | tuple):
        args = typing.get_args(annotation)
        item = args[0] if args else Any
        return tuple(_coerce(v, item) for v in value)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum) and not isinstance(value, annotation):
        return annotation(value)
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if annotation is int and not isinstance(value, int) and whole_number(value) is not None:
        return whole_number(value)
    return value


class _Validated:
    """Type-checks and coerces every field after construction; subclasses add range checks.

    Enum fields default to their string value so that gin's operative config records them.
    """

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        name = type(self).__name__
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            annotation = hints[field.name]
            if not _matches(value, annotation):
                raise ConfigError(
                    f"{name}.{field.name} must be {_describe(annotation)}, got {value!r}{self._hint(field.name, value)}"
                )
            object.__setattr__(self, field.name, _coerce(value, annotation))
        self.validate()

    def validate(self) -> None:
        """Range checks; raise ConfigError with the binding's name."""

    def _hint(self, field: str, value: Any) -> str:
        """What to write instead of a ``value`` of the wrong kind for ``field`` ('' when nothing more to say)."""
        return ""

    def _require(self, ok: bool, field: str, what: str) -> None:
        if not ok:
            value = getattr(self, field)
            if isinstance(value, enum.Enum):
                value = value.value  # as written in gin: 'td_error', not <InitialPriority.TD_ERROR: ...>
            raise ConfigError(f"{type(self).__name__}.{field} must be {what}, got {value!r}")


@gin.configurable
@dataclass(frozen=True)
class NetworkConfig(_Validated):
    """One network (actor or critic); bind per network with the ``actor/`` or ``critic/`` scope.

    ``action_layer`` (critic only) is the index of the hidden layer whose input gets the action
    concatenated: 0 joins it to the observation, 1 (the DDPG Reacher report) joins it after the first layer,
    ``len(hidden_sizes)`` joins it to the head's input.

    ``noisy`` (actor only) makes every linear layer a factorised-Gaussian NoisyLinear
    (Fortunato et al. 2018) with initial sigma ``noisy_sigma0 / sqrt(fan_in)``; the noise is
    fresh in every training forward and, when acting with exploration, fresh per step or, with
    ``noisy_ou_theta`` set (the Reacher PER notebook), an OU process with unit stationary variance and mean
    reversion ``noisy_ou_theta`` per step. ``leaky_relu_slope`` is LeakyReLU's negative slope.

    ``tau`` (None: ``AgentConfig.tau``) is this network's own Polyak factor for its target, as the Reacher
    PER notebook soft-updates the actor and the critic with their own factors (``p_tau``, ``q_tau``).
    ``weight_decay`` (Adam's L2 term) reaches the linear layers' weight matrices only (NoisyNet's mu
    included); biases, BatchNorm/LayerNorm scales and offsets and NoisyNet's sigma (which would shrink
    exploration) are not decayed unless ``decay_all_parameters`` is True (decay every parameter).

    TD7 (Fujimoto et al. 2023): ``avg_l1_norm`` adds an input layer ``AvgL1Norm(Linear(input))`` of width
    ``hidden_sizes[0]`` (no activation; the critic's input is ``[s, a]``, so it needs ``action_layer = 0``) before the
    hidden layers, and SALE's embeddings (``AgentConfig.sale``) join its output; ``activation = 'elu'`` is TD7's
    critic activation. CrossQ (Bhatt et al. 2024): ``batch_renorm`` puts Batch Renormalization on the first linear
    layer's input (the critic's ``[s, a]``: ``action_layer = 0``) and after every hidden activation, with running
    statistics updated by ``batch_renorm_momentum`` per train-mode pass (PyTorch convention: 0.01 is the authors'
    Flax 0.99) and plain batch normalization for the first ``batch_renorm_warmup`` train-mode passes (100k).
    ``adam_beta1`` is Adam's first-moment decay (CrossQ: 0.5).
    """

    hidden_sizes: tuple[int, ...] = (256, 256)
    activation: Activation = Activation.RELU.value  # type: ignore[assignment]
    input_batchnorm: bool = False
    hidden_batchnorm: bool = False
    layer_norm: bool = False
    action_layer: int = 1
    weight_init: WeightInit = WeightInit.PYTORCH.value  # type: ignore[assignment]
    bias_init: BiasInit = BiasInit.UNIFORM.value  # type: ignore[assignment]
    output_init: float = 3e-3
    lr: float = 1e-3
    weight_decay: float = 0.0
    grad_clip_norm: float | None = None
    leaky_relu_slope: float = 0.01
    noisy: bool = False
    noisy_sigma0: float = 0.5
    noisy_ou_theta: float | None = None
    tau: float | None = None
    decay_all_parameters: bool = False
    avg_l1_norm: bool = False
    batch_renorm: bool = False
    batch_renorm_momentum: float = 0.01
    batch_renorm_warmup: int = 100_000
    adam_beta1: float = 0.9

    def validate(self) -> None:
        self._require(self.tau is None or 0.0 < self.tau <= 1.0, "tau", "in (0, 1] or None (AgentConfig.tau)")
        self._require(0.0 < self.batch_renorm_momentum <= 1.0, "batch_renorm_momentum",
                      "in (0, 1] (PyTorch convention: 0.01 is Flax's 0.99)")
        self._require(self.batch_renorm_warmup >= 0, "batch_renorm_warmup", ">= 0")
        self._require(0.0 <= self.adam_beta1 < 1.0, "adam_beta1", "in [0, 1)")
        self._require(not (self.batch_renorm and (self.input_batchnorm or self.hidden_batchnorm)), "batch_renorm",
                      "False when input_batchnorm or hidden_batchnorm is True (pick one normalisation)")
        self._require(self.leaky_relu_slope >= 0, "leaky_relu_slope", ">= 0")
        self._require(self.noisy_sigma0 >= 0, "noisy_sigma0", ">= 0")
        self._require(self.noisy_ou_theta is None or 0 < self.noisy_ou_theta <= 1, "noisy_ou_theta",
                      "in (0, 1] or None (fresh Gaussian noise)")
        self._require(len(self.hidden_sizes) > 0, "hidden_sizes", "a non-empty tuple")
        self._require(all(h > 0 for h in self.hidden_sizes), "hidden_sizes", "positive sizes")
        self._require(
            0 <= self.action_layer <= len(self.hidden_sizes),
            "action_layer",
            f"in [0, {len(self.hidden_sizes)}] (a hidden layer index, or the head)",
        )
        self._require(not (self.hidden_batchnorm and self.layer_norm), "layer_norm",
                      "False when hidden_batchnorm is True (pick one normalisation)")
        self._require(self.output_init > 0, "output_init", "> 0")
        self._require(self.lr > 0, "lr", "> 0")
        self._require(self.weight_decay >= 0, "weight_decay", ">= 0")
        self._require(self.grad_clip_norm is None or self.grad_clip_norm > 0, "grad_clip_norm",
                      "> 0 or None")


@gin.configurable
@dataclass(frozen=True)
class AgentConfig(_Validated):
    """The learning algorithm and the settings every actor-critic of the DDPG family shares.

    ``algorithm`` picks one module of :mod:`polyak.algorithms`:

    * ``ddpg``: DDPG (Lillicrap et al. 2015) with TD3's switches (Fujimoto et al. 2018):
      ``n_critics=1, policy_delay=1, target_policy_noise=None`` is DDPG; ``2, 2, 0.2`` is TD3. Target networks follow
      by Polyak averaging with ``tau`` every ``target_update_every`` actor updates; ``actor/NetworkConfig.tau`` or
      ``critic/NetworkConfig.tau`` gives one network its own factor.
    * ``td7``: TD7 (Fujimoto et al. 2023): TD3 with SALE embeddings, value clipping, hard target copies and a
      checkpoint policy; its own settings are :class:`TD7Config` (LAP is ``ReplayConfig.sampler = 'lap'``).
    * ``crossq``: CrossQ (Bhatt et al. 2024): no target networks; the critic evaluates ``(s, a)`` and ``(s', a')``
      in one train-mode pass (``a'`` from the actor in eval mode) so batch renormalization
      (``NetworkConfig.batch_renorm``) sees both, and the target is the detached second half; its actor loss puts
      the critic in eval mode.
    * ``sac``: SAC (Haarnoja et al. 2018): a tanh-squashed Gaussian actor that explores by sampling
      (``NoiseConfig.kind = 'none'``), the entropy bonus with a learned temperature (:class:`SACConfig`), target
      critics by Polyak averaging; the actor every update (``policy_delay = 1``).
    * ``crossq_sac``: CrossQ in its authors' SAC mode (the mode sb3-contrib ships): SAC's actor and temperature with
      CrossQ's critic step (no targets, the joint batch-renormalized pass); the actor every ``policy_delay`` updates.

    ``actor_objective``: the actor ascends Q_1 (``first``, TD3), the mean over the critics (``mean``, TD7) or their
    minimum (``min``, CrossQ-TD3).

    ``actor_average``: evaluate and ship an exponential moving average of the actor's weights instead of the live
    actor (:mod:`polyak.averaging`; Polyak and Juditsky 1992): ``average += rate * (actor - average)`` after each
    actor update, so about the last ``1 / actor_average`` actor updates weigh in; the rate starts at 0.9 and decays
    to ``actor_average`` (``max(actor_average, 9 / (9 + n))`` at the ``n``-th, TensorFlow's warm-up), so a short
    run's average is not left behind its actor. Exploration and learning keep the live actor; training is
    unchanged. None: off.

    ``device='auto'`` learns on CUDA when available. ``compile`` wraps the loss computations
    (forward and backward) in ``torch.compile`` (CUDA: mode ``reduce-overhead``, i.e. CUDA graphs);
    the first updates then take tens of seconds to compile. ``precision='bfloat16'`` runs the
    hidden layers' matmuls in bfloat16 autocast (parameters, optimizer state, the output layers
    and the losses stay float32): ~1.3x faster updates on CPUs with AVX512-BF16 or AMX.
    """

    algorithm: Algorithm = Algorithm.DDPG.value  # type: ignore[assignment]
    gamma: float = 0.99
    tau: float = 0.005
    target_update_every: int = 1
    batch_size: int = 256
    n_critics: int = 1
    policy_delay: int = 1
    target_policy_noise: float | None = None
    target_noise_clip: float = 0.5
    device: Device = Device.AUTO.value  # type: ignore[assignment]
    compile: bool = False
    precision: Precision = Precision.FLOAT32.value  # type: ignore[assignment]
    actor_objective: ActorObjective = ActorObjective.FIRST.value  # type: ignore[assignment]
    actor_average: float | None = None

    def _hint(self, field: str, value: Any) -> str:
        if field == "algorithm" and str(value).lower() == "td3":
            return ("; TD3 is 'ddpg' with n_critics = 2, policy_delay = 2 and target policy smoothing "
                    "(target_policy_noise), which --algo td3 or polyak.train(algo='td3') sets")
        return ""

    def validate(self) -> None:
        self._require(0.0 <= self.gamma <= 1.0, "gamma", "in [0, 1]")
        self._require(self.actor_average is None or 0.0 < self.actor_average <= 1.0, "actor_average",
                      "in (0, 1] or None (off)")
        self._require(0.0 < self.tau <= 1.0, "tau", "in (0, 1]")
        self._require(self.target_update_every >= 1, "target_update_every", ">= 1")
        self._require(self.batch_size >= 1, "batch_size", ">= 1")
        self._require(self.n_critics >= 1, "n_critics", ">= 1")
        self._require(self.policy_delay >= 1, "policy_delay", ">= 1")
        self._require(self.target_policy_noise is None or self.target_policy_noise > 0,
                      "target_policy_noise", "> 0 or None (off)")
        self._require(self.target_noise_clip > 0, "target_noise_clip", "> 0")


@gin.configurable
@dataclass(frozen=True)
class TD7Config(_Validated):
    """TD7's own settings (Fujimoto et al. 2023, "For SALE"), read when ``AgentConfig.algorithm = 'td7'``.

    The defaults are the authors' (sfujim/TD7 @ c1c280d); each part is a switch, for ablations:

    * ``hard_target_every = N``: the targets are copied every N updates (TD7: 250) instead of Polyak-averaged;
      the parts below move at these copies.
    * ``value_clipping``: the bootstrap ``min Q'`` is clipped to the range of every TD target computed up to the
      previous hard update (``[0, 0]`` before the first).
    * ``sale``: SALE's state encoder ``zs = f(s)`` and state-action encoder ``zsa = g(zs, a)`` (width
      ``sale_dim``, hidden ``sale_hidden``, ELU), trained by their own Adam (``sale_lr``) to predict ``f(s')``;
      the critic sees ``[zsa, zs]`` and the actor ``zs`` beside the raw inputs, from a fixed encoder copy (the
      target side from the copy before it). Best with ``NetworkConfig.avg_l1_norm``.
    * ``checkpoint_policy``: evaluation uses a checkpoint actor, replaced after an assessment of the current
      actor's exploring episodes whose worst return is not below the checkpoint's; one episode per assessment
      until ``checkpoint_after`` training steps, then ``checkpoint_episodes`` with the bar times
      ``checkpoint_reset_weight``. Assessment starts with the first episode that ends after learning could start
      (``ReplayConfig.min_size``). Training stays per env step unless ``checkpoint_training``: then, as in TD7,
      updates run only when an assessment ends, as many as the env steps it collected
      (``TrainerConfig.learn_every``/``learn_steps`` no longer apply).
    """

    hard_target_every: int = 250
    value_clipping: bool = True
    sale: bool = True
    sale_dim: int = 256
    sale_hidden: int = 256
    sale_lr: float = 3e-4
    checkpoint_policy: bool = True
    checkpoint_training: bool = True
    checkpoint_episodes: int = 20
    checkpoint_after: int = 750_000
    checkpoint_reset_weight: float = 0.9

    def validate(self) -> None:
        self._require(self.hard_target_every >= 1, "hard_target_every", ">= 1")
        self._require(self.sale_dim >= 1, "sale_dim", ">= 1")
        self._require(self.sale_hidden >= 1, "sale_hidden", ">= 1")
        self._require(self.sale_lr > 0, "sale_lr", "> 0")
        self._require(self.checkpoint_episodes >= 1, "checkpoint_episodes", ">= 1")
        self._require(self.checkpoint_policy or not self.checkpoint_training, "checkpoint_training",
                      "False unless checkpoint_policy is True")
        self._require(self.checkpoint_after >= 0, "checkpoint_after", ">= 0")
        self._require(0.0 < self.checkpoint_reset_weight <= 1.0, "checkpoint_reset_weight", "in (0, 1]")


class _Unset:
    """The default of a deprecated binding: not a literal, so gin's operative config never writes it."""

    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()
_DEPRECATED_SAMPLERS = {"prioritized": Sampler.PRIORITIZED, "lap": Sampler.LAP}
"""The booleans that named the sampler before ``ReplayConfig.sampler`` (gin files and old ``config.json``)."""


def sampler_from_booleans(sampler: Any, booleans: dict[str, Any]) -> Any:
    """The sampler that ``sampler`` and the deprecated ``ReplayConfig.prioritized``/``lap`` booleans name together.

    ``booleans`` maps ``'prioritized'``/``'lap'`` to the value bound. A True boolean picks its sampler unless
    ``sampler`` names another one than the default ``'uniform'``; a False one only rules its sampler out. A
    conflict is a :class:`ConfigError`. An invalid ``sampler`` comes back unchanged for the usual check.
    """
    for name, value in booleans.items():
        if not isinstance(value, bool):
            raise ConfigError(f"ReplayConfig.{name} must be True or False, got {value!r} (deprecated: bind "
                              f"ReplayConfig.sampler = {_DEPRECATED_SAMPLERS[name].value!r} instead)")
    try:
        chosen = Sampler(sampler)
    except ValueError:
        return sampler
    wanted = [name for name, value in booleans.items() if value]
    if len(wanted) > 1:
        raise ConfigError("ReplayConfig.prioritized and ReplayConfig.lap are both True (pick one: "
                          "ReplayConfig.sampler = 'prioritized' or 'lap')")
    for name in wanted:
        if chosen not in (Sampler.UNIFORM, _DEPRECATED_SAMPLERS[name]):
            raise ConfigError(f"ReplayConfig.{name} = True conflicts with ReplayConfig.sampler = {chosen.value!r}; "
                              "bind only ReplayConfig.sampler")
        chosen = _DEPRECATED_SAMPLERS[name]
    for name, value in booleans.items():
        if not value and chosen is _DEPRECATED_SAMPLERS[name]:
            raise ConfigError(f"ReplayConfig.{name} = False conflicts with ReplayConfig.sampler = {chosen.value!r}; "
                              "bind only ReplayConfig.sampler")
    return chosen


@gin.configurable
@dataclass(frozen=True)
class SACConfig(_Validated):
    """The entropy temperature of SAC and CrossQ's SAC mode (``AgentConfig.algorithm = 'sac'`` or
    ``'crossq_sac'``; Haarnoja et al. 2018, "Soft Actor-Critic Algorithms and Applications").

    alpha starts at ``initial_temperature`` and, with ``learn_temperature``, follows Adam (learning rate
    ``temperature_lr``, None: the actor's) on ``-log alpha * (log pi + target_entropy)``; ``target_entropy`` None is
    ``-action_dim`` (SB3's 'auto'). Without ``learn_temperature`` alpha stays fixed.
    """

    initial_temperature: float = 1.0
    learn_temperature: bool = True
    target_entropy: float | None = None
    temperature_lr: float | None = None

    def validate(self) -> None:
        self._require(self.initial_temperature > 0, "initial_temperature", "> 0")
        self._require(self.temperature_lr is None or self.temperature_lr > 0, "temperature_lr",
                      "> 0 or None (the actor's learning rate)")


@gin.configurable
@dataclass(frozen=True)
class ReplayConfig(_Validated):
    """Replay: preallocated ring buffer; learning starts once ``min_size`` transitions are stored.

    ``n_step`` > 1 stores k-step returns with their discount gamma^k (k <= n, shorter at episode
    ends). ``buffer_life`` (the Reacher PER notebook) empties the buffer after that many sampled
    batches (learning steps); None keeps it.

    ``sampler`` picks the rows of a batch (:func:`polyak.replay.make_sampler`):

    * ``uniform``: uniformly over the stored rows.
    * ``prioritized`` (Schaul et al. 2016): proportionally to ``(|TD error| + priority_epsilon)^alpha`` with
      importance weights ``(N P)^-beta`` normalised by their batch max, beta annealed linearly from ``beta_start``
      to 1 over ``beta_steps`` learning steps; new transitions get ``initial_priority``.
    * ``lap``, TD7's loss-adjusted prioritized replay (Fujimoto et al. 2020): proportionally to
      ``max(max over critics |delta|, lap_min_priority)^lap_alpha`` (TD7: 0.4 and 1) without importance weights,
      new rows at the largest priority so far (reset to the stored maximum at every hard target update), and the
      critics learn with the LAP Huber loss (quadratic below ``lap_min_priority``, linear above).

    ``prioritized = True`` and ``lap = True`` are the deprecated spellings of ``sampler = 'prioritized'`` and
    ``'lap'``: still accepted from gin, with a warning, and not fields (``config.json`` writes ``sampler``).
    """

    capacity: int = 1_000_000
    min_size: int = 1_000
    n_step: int = 1
    sampler: Sampler = Sampler.UNIFORM.value  # type: ignore[assignment]
    alpha: float = 0.6
    beta_start: float = 0.4
    beta_steps: int = 100_000
    priority_epsilon: float = 1e-6
    initial_priority: InitialPriority = InitialPriority.MAX.value  # type: ignore[assignment]
    buffer_life: int | None = None
    lap_alpha: float = 0.4
    lap_min_priority: float = 1.0
    prioritized: dataclasses.InitVar[bool] = _UNSET  # deprecated: sampler = 'prioritized'
    lap: dataclasses.InitVar[bool] = _UNSET  # deprecated: sampler = 'lap'

    def __post_init__(self, prioritized: Any, lap: Any) -> None:  # type: ignore[override]
        booleans = {name: value for name, value in (("prioritized", prioritized), ("lap", lap))
                    if value is not _UNSET}
        if booleans:
            sampler = sampler_from_booleans(self.sampler, booleans)
            object.__setattr__(self, "sampler", sampler)
            if isinstance(sampler, Sampler):
                bound = " and ".join(f"ReplayConfig.{name} = {value}" for name, value in booleans.items())
                verb = "are" if len(booleans) > 1 else "is"
                print(f"polyak: warning: {bound} {verb} deprecated; use ReplayConfig.sampler = {sampler.value!r}",
                      file=sys.stderr, flush=True)
        super().__post_init__()

    def validate(self) -> None:
        self._require(self.capacity >= 1, "capacity", ">= 1")
        self._require(1 <= self.min_size <= self.capacity, "min_size", f"in [1, capacity={self.capacity}]")
        self._require(self.n_step >= 1, "n_step", ">= 1 (1 = one-step returns)")
        self._require(self.alpha >= 0, "alpha", ">= 0")
        self._require(0.0 <= self.beta_start <= 1.0, "beta_start", "in [0, 1]")
        self._require(self.beta_steps >= 1, "beta_steps", ">= 1")
        self._require(self.priority_epsilon > 0, "priority_epsilon", "> 0")
        self._require(self.sampler is Sampler.PRIORITIZED or self.initial_priority is InitialPriority.MAX,
                      "initial_priority", "'max' unless sampler is 'prioritized'")
        self._require(self.buffer_life is None or self.buffer_life >= 1, "buffer_life", ">= 1 or None")
        self._require(self.lap_alpha >= 0, "lap_alpha", ">= 0")
        self._require(self.lap_min_priority > 0, "lap_min_priority", "> 0")


@gin.configurable
@dataclass(frozen=True)
class NoiseConfig(_Validated):
    """Exploration noise, scaled by epsilon.

    ``kind='parameter'`` acts with a perturbed copy of the actor (weights + N(0, s^2), s starting
    at ``sigma``), re-perturbed at each episode end; every ``param_adapt_every`` exploring steps s
    is multiplied by ``param_adapt_factor`` when the RMS action distance between the actor and a
    fresh perturbation on the states seen since is below ``param_target_distance``, else divided
    (Plappert et al. 2018). LayerNorm in the actor is recommended
    (``actor/NetworkConfig.layer_norm = True``). Epsilon does not scale parameter noise.

    Epsilon starts at ``epsilon_start`` and moves once per vector-env step: ``linear`` subtracts
    ``epsilon_decay`` (the DDPG Reacher report: 1e-5), ``geometric`` multiplies by ``epsilon_decay`` (e.g. 0.999);
    neither goes below ``epsilon_min`` (the DDPG Reacher report: 0.025).
    """

    kind: NoiseKind = NoiseKind.GAUSSIAN.value  # type: ignore[assignment]
    sigma: float = 0.1
    ou_theta: float = 0.15
    ou_mu: float = 0.0
    ou_dt: float = 1.0
    epsilon_schedule: EpsilonSchedule = EpsilonSchedule.CONSTANT.value  # type: ignore[assignment]
    epsilon_start: float = 1.0
    epsilon_decay: float = 1e-5
    epsilon_min: float = 0.025
    param_target_distance: float = 0.2
    param_adapt_factor: float = 1.01
    param_adapt_every: int = 50

    def validate(self) -> None:
        self._require(self.sigma >= 0, "sigma", ">= 0")
        self._require(self.param_target_distance > 0, "param_target_distance", "> 0")
        self._require(self.param_adapt_factor > 1, "param_adapt_factor", "> 1")
        self._require(self.param_adapt_every >= 1, "param_adapt_every", ">= 1")
        self._require(self.ou_theta >= 0, "ou_theta", ">= 0")
        self._require(self.ou_dt > 0, "ou_dt", "> 0")
        self._require(self.epsilon_start >= 0, "epsilon_start", ">= 0")
        self._require(self.epsilon_min >= 0, "epsilon_min", ">= 0")
        if self.epsilon_schedule is EpsilonSchedule.GEOMETRIC:
            self._require(0 < self.epsilon_decay <= 1, "epsilon_decay", "in (0, 1] for a geometric schedule")
        else:
            self._require(self.epsilon_decay >= 0, "epsilon_decay", ">= 0")


@gin.configurable
@dataclass(frozen=True)
class TrainerConfig(_Validated):
    """The training loop.

    Counting: ``env_steps`` are transitions, summed over the ``num_envs`` parallel envs
    (``max_env_steps``, ``start_steps``, ``eval_interval``, ``checkpoint_interval``);
    ``learn_every`` counts calls to ``env.step`` (each gives ``num_envs`` transitions), after
    which ``learn_steps`` gradient updates run (the DDPG Reacher report: every 20 steps, 10 updates).

    ``score_mean_over_envs`` records one episode score per round of ``num_envs`` finished
    episodes, their mean (the Udacity Reacher rule: score = mean over the 20 arms).
    Training ends at ``max_env_steps``, ``max_episodes``, when the ``solve_window``-episode mean
    reaches ``solve_score``, or when an evaluation mean reaches ``eval_stop_score``. With ``eval_interval`` set,
    the greedy policy is evaluated every ``eval_interval`` env steps and once more when training ends between two
    evaluations (not when a signal stops it), so the final policy always has a score.

    The first ``start_steps`` env steps act uniformly at random; with ``random_until_episode_end`` the random actions
    go on to the end of the episode running then (the first episode end of any env, with several), as TD7's code
    does (the policy first acts in the episode after learning is allowed).

    ``env_id`` is a Gymnasium id or ``module:EnvId`` (Gymnasium's convention: import ``module``, found in the
    current directory too as ``python -m`` finds it, then make ``EnvId``; ``polyak train --env ID`` sets it);
    ``env_kwargs`` go to the env's constructor, e.g. ``{'reset_noise_scale': 0.1}``.

    ``normalize_observations`` standardises observations with a running mean and variance of the collected
    data (frozen for evaluation; saved in checkpoints and exports), clipped to ±``observation_clip``.
    ``wandb_project`` also logs the scalars and the config to Weights & Biases (the ``wandb`` extra).

    ``eval_live_actor``: when evaluation runs another policy than the live actor (``AgentConfig.actor_average``,
    TD7's checkpoint policy), also score the live actor on the same start states (``eval/live_score``; rows of kind
    ``eval_live`` in ``metrics.csv``): what that policy adds, at twice the evaluation time.

    ``eval_max_episode_steps`` cuts evaluation episodes of an env without a time limit of its own (no
    ``max_episode_steps``), which might never end one; a cut episode is scored by its return so far. An env
    with a time limit ends its episodes itself and ignores it.

    ``threads``: torch's intra-op threads for the run (``polyak train --threads N``); None leaves torch's own choice
    (``OMP_NUM_THREADS``, else one per core). The default 1 is measured (``benchmarks/threads.py``,
    ``benchmarks/results/threads_2cores.json`` and ``threads_16cores.json``): more threads gained at most 1.6x on
    256-256 networks on an idle machine, while torch's default lost up to 67x when other processes kept every core
    busy (16 threads on 16 cores), and 2 threads lost 1.9x on 2 busy cores. Wide networks gain most from threads
    on an idle machine (2048-2048 critics: 1.9x with 2, 6x with 16), so set ``threads`` to your free cores there;
    1 stays the default for them too, as the shipped configs are at most 400 wide, these critics are a GPU setting,
    and 16 threads lost 2.3x on them on a busy machine. Ape-X (``--workers``) keeps its own learner rule.
    """

    env_id: str = "Pendulum-v1"
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    num_envs: int = 1
    seed: int = 0
    max_env_steps: int = 20_000
    max_episodes: int | None = None
    start_steps: int = 1_000
    random_until_episode_end: bool = False
    learn_every: int = 1
    learn_steps: int = 1
    solve_score: float | None = None
    solve_window: int = 100
    score_mean_over_envs: bool = False
    eval_interval: int | None = None
    eval_episodes: int = 5
    eval_stop_score: float | None = None
    checkpoint_interval: int | None = None
    keep_checkpoints: int = 3
    log_interval: int = 1_000
    run_name: str | None = None
    runs_root: str = "runs"
    progress_bar: bool = True
    normalize_observations: bool = False
    observation_clip: float = 10.0
    wandb_project: str | None = None
    eval_max_episode_steps: int = 1_000
    eval_live_actor: bool = True
    threads: int | None = 1

    def validate(self) -> None:
        self._require(bool(self.env_id.strip()), "env_id", "a non-empty Gymnasium id")
        self._require(self.observation_clip > 0, "observation_clip", "> 0")
        self._require(self.wandb_project is None or bool(self.wandb_project.strip()), "wandb_project",
                      "a non-empty W&B project name or None")
        self._require(self.num_envs >= 1, "num_envs", ">= 1")
        self._require(0 <= self.seed <= MAX_SEED, "seed", SEED_RANGE)
        self._require(self.max_env_steps >= 1, "max_env_steps", ">= 1")
        self._require(self.max_episodes is None or self.max_episodes >= 1, "max_episodes", ">= 1 or None")
        self._require(self.start_steps >= 0, "start_steps", ">= 0")
        self._require(self.learn_every >= 1, "learn_every", ">= 1")
        self._require(self.learn_steps >= 0, "learn_steps", ">= 0")
        self._require(self.solve_window >= 1, "solve_window", ">= 1")
        self._require(self.eval_interval is None or self.eval_interval >= 1, "eval_interval", ">= 1 or None")
        self._require(self.eval_episodes >= 1, "eval_episodes", ">= 1")
        self._require(self.eval_stop_score is None or self.eval_interval is not None, "eval_stop_score",
                      "None unless eval_interval is set")
        self._require(self.checkpoint_interval is None or self.checkpoint_interval >= 1,
                      "checkpoint_interval", ">= 1 or None")
        self._require(self.keep_checkpoints >= 1, "keep_checkpoints", ">= 1")
        self._require(self.log_interval >= 1, "log_interval", ">= 1")
        self._require(self.eval_max_episode_steps >= 1, "eval_max_episode_steps", ">= 1")
        self._require(self.threads is None or self.threads >= 1, "threads", ">= 1 or None (torch's own choice)")


APEX_DEFAULTS = (
    "ReplayConfig.sampler = 'prioritized'",
    "ReplayConfig.initial_priority = 'td_error'",
    "ReplayConfig.n_step = 3",
)
"""Bindings parsed before the config file in Ape-X mode (the file and ``--gin-param`` override them):
prioritized replay with initial priorities computed by the workers, and 3-step returns, as in Ape-X."""


@gin.configurable
@dataclass(frozen=True)
class ApexConfig(_Validated):
    """Ape-X DDPG: ``num_workers`` rollout actors, ``replay_shards`` prioritized replay actors, a learner.

    Each rollout worker steps its own vector env (``TrainerConfig.num_envs`` copies) for
    ``rollout_chunk`` env.step calls per request, assembles n-step transitions, computes their
    initial priorities with its local copy of the networks and writes them to a replay shard. The
    learner pushes fresh weights every ``weight_push_interval`` updates.

    Pacing: with ``decoupled = False`` the driver keeps the learner near ``replay_ratio`` updates
    per stored transition (after ``ReplayConfig.min_size``): the learner waits for data when ahead
    and workers wait for the learner when it falls more than one round of chunks behind. None takes
    the config's single-process schedule, ``TrainerConfig.learn_steps / (learn_every * num_envs)``,
    so a run compares step for step with ``polyak train``. ``decoupled = True`` is the paper's
    setting: workers and learner each run as fast as they can (many machines; on a few cores the
    workers then take CPU from the learner).

    Exploration: worker i of N uses Ape-X's epsilon_i = ``exploration_base`` ^ (1 + ``exploration_alpha``
    * i / (N - 1)) relative to epsilon_0, see :func:`polyak.distributed.apex_config.worker_noise_config`.

    Resources: each worker asks Ray for ``worker_cpus`` CPUs (shards ask for none); a worker that dies is
    replaced up to ``max_worker_restarts`` times in a run. ``object_store_mb`` sizes the object store
    of a local Ray node (not of a cluster joined with ``--address``).
    """

    num_workers: int = 2
    replay_shards: int = 1
    rollout_chunk: int = 50
    weight_push_interval: int = 50
    exploration_base: float = 0.4
    exploration_alpha: float = 7.0
    replay_ratio: float | None = None
    decoupled: bool = False
    worker_cpus: float = 1.0
    max_worker_restarts: int = 10
    object_store_mb: int = 256

    def validate(self) -> None:
        self._require(self.num_workers >= 1, "num_workers", ">= 1")
        self._require(self.replay_shards >= 1, "replay_shards", ">= 1")
        self._require(self.rollout_chunk >= 1, "rollout_chunk", ">= 1 (env.step calls per request)")
        self._require(self.weight_push_interval >= 1, "weight_push_interval", ">= 1 (learner updates)")
        self._require(0.0 < self.exploration_base <= 1.0, "exploration_base", "in (0, 1]")
        self._require(self.exploration_alpha >= 0, "exploration_alpha", ">= 0")
        self._require(self.replay_ratio is None or self.replay_ratio > 0, "replay_ratio",
                      "> 0 or None (the config's own updates per transition)")
        self._require(not (self.decoupled and self.replay_ratio is not None), "replay_ratio",
                      "None when decoupled is True (decoupled runs have no ratio)")
        self._require(self.worker_cpus > 0, "worker_cpus", "> 0")
        self._require(self.max_worker_restarts >= 0, "max_worker_restarts", ">= 0")
        self._require(self.object_store_mb >= 80, "object_store_mb", ">= 80 (Ray's minimum is 75 MB)")


@dataclass(frozen=True)
class Configs:
    """Everything one run needs, built once from gin at the edge."""

    trainer: TrainerConfig
    agent: AgentConfig
    actor: NetworkConfig
    critic: NetworkConfig
    replay: ReplayConfig
    noise: NoiseConfig
    td7: TD7Config = dataclasses.field(default_factory=TD7Config)
    sac: SACConfig = dataclasses.field(default_factory=SACConfig)

    def validate(self) -> None:
        if self.agent.algorithm in (Algorithm.SAC, Algorithm.CROSSQ_SAC):
            if self.noise.kind is not NoiseKind.NONE:
                raise ConfigError(f"NoiseConfig.kind must be 'none' with AgentConfig.algorithm = "
                                  f"'{self.agent.algorithm.value}' (the policy explores by sampling)")
            if self.agent.algorithm is Algorithm.SAC and self.agent.policy_delay != 1:
                raise ConfigError("AgentConfig.policy_delay must be 1 with AgentConfig.algorithm = 'sac' "
                                  "(use 'crossq_sac' for a delayed actor)")
            if self.actor.noisy:
                raise ConfigError("actor/NetworkConfig.noisy must be False with a stochastic (SAC) actor")
        if self.agent.algorithm is Algorithm.TD7 and (self.critic.batch_renorm or self.actor.batch_renorm):
            raise ConfigError("NetworkConfig.batch_renorm is CrossQ's (AgentConfig.algorithm = 'crossq'); "
                              "the td7 algorithm does not run it")
        if self.agent.algorithm is Algorithm.TD7 and self.td7.checkpoint_policy and self.agent.actor_average:
            raise ConfigError("AgentConfig.actor_average and TD7Config.checkpoint_policy each choose the policy that "
                              "evaluation runs; turn one off")
        if self.critic.noisy:
            raise ConfigError("critic/NetworkConfig.noisy must be False: NoisyNet applies to the actor only "
                              "(bind actor/NetworkConfig.noisy)")
        if (self.critic.avg_l1_norm or self.critic.batch_renorm) and self.critic.action_layer != 0:
            raise ConfigError("critic/NetworkConfig.action_layer must be 0 with avg_l1_norm or batch_renorm "
                              "(the critic's input layer takes [s, a])")
        if self.replay.sampler is Sampler.LAP and self.replay.initial_priority is not InitialPriority.MAX:
            raise ConfigError("ReplayConfig.initial_priority must be 'max' with sampler 'lap' (LAP's new rows take "
                              "the largest priority)")
        if self.agent.batch_size > self.replay.capacity:
            raise ConfigError(
                f"AgentConfig.batch_size ({self.agent.batch_size}) is larger than "
                f"ReplayConfig.capacity ({self.replay.capacity})"
            )


def build_configs() -> Configs:
    """Instantiate every config from the currently parsed gin bindings."""
    with gin.config_scope("actor"):
        actor = NetworkConfig()
    with gin.config_scope("critic"):
        critic = NetworkConfig()
    configs = Configs(
        trainer=TrainerConfig(),
        agent=AgentConfig(),
        actor=actor,
        critic=critic,
        replay=ReplayConfig(),
        noise=NoiseConfig(),
        td7=TD7Config(),
        sac=SACConfig(),
    )
    configs.validate()
    return configs
