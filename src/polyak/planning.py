"""Planning a training run: the one way ``polyak train`` and :func:`polyak.train` turn a config, bindings, a seed
and a run directory into the configs and the directory a trainer runs with.

A new run parses gin (the config file, then the bindings; in Ape-X mode its defaults first) and records the
operative config; a resumed run reads its own ``config.json`` (gin never parses a run's file) and keeps its
``config.gin``. Gin's global state is cleared before the plan is returned, so nothing of one plan reaches the next.

Which config: ``config`` (a shipped name or a .gin file), else ``algo`` (``configs/suite/<algo>.gin``, the generic
per-algorithm settings), else, when an env is given, the recommended config for one env (``recommended.gin``), else
the default Reacher config. A config made for another env (it binds ``TrainerConfig.env_id`` to another id) warns
in one line naming the task-specific settings it keeps. A new run's budget too short to learn is refused (below
``ReplayConfig.min_size``: no update would ever run) before anything is written, or warned about in one line (every
action random, or under a quarter of the budget after learning starts). A finished run continues with a larger
``TrainerConfig.max_env_steps`` exactly as an interrupted one: from its final checkpoint, its state at the end.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gin

from polyak.checkpoint import complete_checkpoints
from polyak.config import APEX_DEFAULTS, Algorithm, ApexConfig, Configs
from polyak.config_json import plain, with_bindings
from polyak.envs.factory import check_env_id
from polyak.envs.source import EnvSource
from polyak.errors import ConfigError, EnvError
from polyak.ginconf import (
    SB3_NAMES,
    _gin_message,
    build_configs_from_gin,
    packaged_config,
    parse_gin,
    resolve_config,
)
from polyak.run_dir import RunDir, enclosing_run, unique_path
from polyak.runlock import RunLock
from polyak.seeding import check_seed

if TYPE_CHECKING:
    from polyak.trainer import EvaluationCallback, Trainer

DEFAULT_CONFIG = "unity_reacher.gin"
RECOMMENDED_CONFIG = "recommended.gin"
ALGORITHMS = ("ddpg", "td3", "td7", "crossq", "sac", "crossq_sac")
"""``--algo`` names: ``configs/suite/<name>.gin``, each algorithm with its paper's (or SB3's) settings."""
TASK_SETTINGS = ("num_envs", "max_env_steps", "solve_score", "eval_interval")
"""The TrainerConfig settings a config made for one env sets for that env alone."""
KEYWORDS: dict[str, tuple[str, ...]] = {
    "max_env_steps": ("TrainerConfig.max_env_steps",),
    "eval_interval": ("TrainerConfig.eval_interval",),
    "eval_episodes": ("TrainerConfig.eval_episodes",),
    "num_envs": ("TrainerConfig.num_envs",),
    "start_steps": ("TrainerConfig.start_steps",),
    "env_kwargs": ("TrainerConfig.env_kwargs",),
    "checkpoint_interval": ("TrainerConfig.checkpoint_interval",),
    "progress_bar": ("TrainerConfig.progress_bar",),
    "hidden_sizes": ("actor/NetworkConfig.hidden_sizes", "critic/NetworkConfig.hidden_sizes"),
    **SB3_NAMES,
}
""":func:`polyak.train`'s keyword settings (polyak's names and Stable-Baselines3's) and the bindings each sets."""
_ENV_BINDING = re.compile(r"^\s*TrainerConfig\.env_id\s*=", re.MULTILINE)
_NETWORK_BINDING = re.compile(r"^\s*(?:(actor|critic)/)?NetworkConfig\.(\w+)\s*=", re.MULTILINE)


@dataclass(frozen=True)
class RunPlan:
    """What a trainer needs: the configs, the run directory, the operative gin config to save ('' on resume:
    the run keeps its own ``config.gin``), the Ape-X settings with ``workers``, how to make the env (None: from
    ``TrainerConfig.env_id``) and the one-line warnings to print once the env is made (a config made for another
    env, a short budget)."""

    configs: Configs
    run_dir: Path
    operative_config: str
    resume: bool = False
    apex: ApexConfig | None = None
    env_source: EnvSource | None = None
    warnings: tuple[str, ...] = ()

    def warn(self) -> None:
        """Print the plan's warnings on stderr, one line each."""
        for text in self.warnings:
            print(f"polyak: warning: {text}", file=sys.stderr, flush=True)


def plan_run(config: str | Path | None = None, bindings: Sequence[str] = (), *, run_dir: str | Path | None = None,
             seed: int | None = None, resume: str | Path | None = None, workers: int | None = None,
             env: Any = None, algo: str | None = None, settings: Mapping[str, Any] | None = None) -> RunPlan:
    """The plan of a new run, or of continuing ``resume`` (interrupted, or finished and given a larger budget)
    with the user's ``bindings`` on top of its own config.

    ``config``: a shipped config's name or a .gin file; ``algo``: one of :data:`ALGORITHMS` instead; neither: the
    recommended config when ``env`` is given, else the Reacher's. ``env``: an env id (``TrainerConfig.env_id``),
    a gymnasium Env or a function that makes one. ``settings``: keyword settings (:data:`KEYWORDS`), after the
    bindings. ``seed`` overrides every seed. The run is named ``<env>_<config>[_seed_N]``; a given ``run_dir`` must
    not hold a run already.
    """
    bindings = [*bindings, *keyword_bindings(settings or {})]
    if config is not None and not isinstance(config, str | Path):  # polyak.train(gym.make(...)), as SB3's TD3(env)
        import gymnasium as gym
        from gymnasium.vector import VectorEnv

        if env is not None or not (isinstance(config, gym.Env | VectorEnv) or callable(config)):
            raise ConfigError(f"config must be a config name or a .gin file, got {type(config).__name__}")
        config, env = None, config
    if workers is not None:
        if workers < 1:
            raise ConfigError(f"--workers must be >= 1, got {workers}")
        if resume is not None:
            raise ConfigError("--workers cannot be combined with --resume: Ape-X runs cannot be resumed")
        if env is not None and not isinstance(env, str):
            raise ConfigError("--workers needs an env id: Ape-X workers make their own envs")
    if resume is not None:
        return _plan_resume(Path(resume), bindings, config, seed, run_dir, env, algo)
    if seed is not None:
        bindings.append(f"TrainerConfig.seed = {check_seed(seed)}")
    source = None
    if env is not None:
        if any(_ENV_BINDING.search(b) for b in bindings):
            raise ConfigError("the env is given twice (--env/env= and a TrainerConfig.env_id binding); give it once")
        if isinstance(env, str):
            env_id = env
        else:
            source, env_kwargs = EnvSource.from_env(env)
            env_id = source.env_id
            if env_kwargs:
                bindings.insert(0, f"TrainerConfig.env_kwargs = {env_kwargs!r}")
        bindings.insert(0, f"TrainerConfig.env_id = {env_id!r}")
    config_file = _config_file(config, algo, env is not None)
    try:
        apex = _parse_apex(config_file, bindings, workers) if workers is not None else None
        if apex is None:
            parse_gin(config_file, bindings)
        configs = build_configs_from_gin()
        operative = gin.operative_config_str()
        shadowed = _shadowed(bindings)
    finally:
        gin.clear_config()
    if source is None:  # an unknown env id is the mistake to name, before the budget's
        check_env_id(configs.trainer.env_id)
    warnings = [*_inherited(config_file, configs), *shadowed, *check_budget(configs)]
    path = _new_run_dir(configs, _config_label(config_file, configs), run_dir, seed, apex is not None)
    return RunPlan(configs, path, operative, apex=apex, env_source=source, warnings=tuple(warnings))


def _plan_resume(run_path: Path, bindings: list[str], config: Any, seed: int | None, run_dir: Any, env: Any,
                 algo: str | None) -> RunPlan:
    """Continue a run from its newest checkpoint: its own configs with ``bindings`` on top; a finished run only
    with a budget above the env steps it ended at. ``env`` (an Env or a function) stands in for an env the run
    cannot make again."""
    if config is not None or seed is not None or run_dir is not None or algo is not None:
        raise ConfigError("resuming uses the run's own config; do not combine --resume (resume=) with --config, "
                          "--algo, --seed or --run-dir (config=, algo=, seed=, run_dir=)")
    if isinstance(env, str):
        raise ConfigError("--resume keeps the run's env; do not combine it with --env")
    run = RunDir(run_path).require_resumable()
    check_writable(run.path)
    configs = with_bindings(run.configs(), bindings)
    _refuse_changed_meaning(run.configs(), configs, run.path)
    if env is not None:
        source = EnvSource.from_env(env)[0]
        if source.env_id != configs.trainer.env_id:
            raise ConfigError(f"{run.path} trained on {configs.trainer.env_id}; env= makes {source.env_id}")
    else:
        source = run.env_source()
        if not source.rebuildable():
            raise EnvError(source.cannot_rebuild(resume=True))
    summary = run.read_summary()
    if summary:
        done = summary.get("env_steps")
        budget = configs.trainer.max_env_steps
        if isinstance(done, int) and budget <= done:
            raise ConfigError(f"{run.path} already finished at {done} env steps (TrainerConfig.max_env_steps = "
                              f"{budget}); to train it further, give a larger budget: polyak train --resume "
                              f"{shlex.quote(str(run.path))} --gin-param TrainerConfig.max_env_steps={2 * done}")
    return RunPlan(configs, run.path, "", resume=True, env_source=source)


_NETWORK_FIXED = ("hidden_sizes", "activation", "input_batchnorm", "hidden_batchnorm", "layer_norm", "action_layer",
                  "leaky_relu_slope", "noisy", "batch_renorm")
FIXED_ON_RESUME: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # Configs field: (gin name, what it fixes, settings): what the checkpoint's weights compute, or on which task
    "trainer": ("TrainerConfig", "the task", ("env_id", "env_kwargs", "num_envs", "normalize_observations")),
    "agent": ("AgentConfig", "the algorithm", ("algorithm", "n_critics")),
    "actor": ("actor/NetworkConfig", "the actor's network", _NETWORK_FIXED),
    "critic": ("critic/NetworkConfig", "the critic's network", _NETWORK_FIXED),
    "td7": ("TD7Config", "TD7's encoder", ("sale", "sale_dim", "sale_hidden")),
}
"""Settings a resume cannot change: the run's checkpoints would be read as something they are not."""


def _refuse_changed_meaning(before: Configs, after: Configs, run_path: Path) -> None:
    """A ConfigError naming the first setting in :data:`FIXED_ON_RESUME` that the resume's bindings change."""
    for section, (gin_name, fixes, settings) in FIXED_ON_RESUME.items():
        for setting in settings:
            old, new = getattr(getattr(before, section), setting), getattr(getattr(after, section), setting)
            if plain(old) != plain(new):  # as config.json holds them: a binding's tuple is a run's list
                raise ConfigError(f"--resume cannot change {gin_name}.{setting} ({_shown(old)} in {run_path}, "
                                  f"{_shown(new)} given): it fixes {fixes} its checkpoints were trained with; "
                                  "start a new run instead")


def _shown(value: Any) -> str:
    return repr(value.value if hasattr(value, "value") else value)


def open_trainer(plan: RunPlan, on_evaluation: EvaluationCallback | None = None) -> tuple[Trainer, str]:
    """The single-process trainer of ``plan``, restored from the run's newest checkpoint when it resumes, and the
    line announcing it; the plan's warnings are printed once the trainer has made its env (an env that cannot be
    made is the one error line)."""
    from polyak.trainer import Trainer

    configs, run_dir = plan.configs, plan.run_dir
    trainer = Trainer(configs, run_dir, plan.operative_config, plan.env_source, on_evaluation)
    plan.warn()
    if not plan.resume:
        return trainer, f"polyak: training {configs.trainer.env_id} into {run_dir} (seed {configs.trainer.seed})"
    try:
        checkpoint = trainer.restore()  # refuses a budget below the run's env steps
        trainer.directory.write_configs(configs)
    except BaseException:
        trainer.close()  # the run stays as it was, and free for the next resume, in this process too
        raise
    return trainer, f"polyak: resuming {run_dir} from {checkpoint.name} ({trainer.env_steps} env steps)"


def keyword_bindings(settings: Mapping[str, Any]) -> list[str]:
    """Gin bindings for keyword settings (:data:`KEYWORDS`): ``learning_rate=1e-3`` binds both networks'
    ``NetworkConfig.lr``; an unknown name is a ConfigError with the closest known one, and so are two names for
    one setting given different values (``total_timesteps`` and ``max_env_steps``: neither would silently win)."""
    bindings = []
    set_by: dict[str, tuple[str, Any]] = {}
    for name, value in settings.items():
        if name not in KEYWORDS:
            close = difflib.get_close_matches(name, list(KEYWORDS), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"unknown setting {name}={value!r}; {hint}(keywords: {', '.join(KEYWORDS)}; any other "
                              "setting as a gin binding in overrides, e.g. overrides=['NoiseConfig.sigma = 0.2'])")
        values = _sb3_form(name, value)
        for binding, bound in values.items():
            earlier = set_by.setdefault(binding, (name, bound))
            if earlier[0] != name and _comparable(earlier[1]) != _comparable(bound):
                raise ConfigError(f"{earlier[0]}={earlier[1]!r} and {name}={value!r} both set {binding}; give one")
        bindings += [f"{binding} = {_literal(bound)!r}" for binding, bound in values.items()]
    return bindings


def _sb3_form(name: str, value: Any) -> dict[str, Any]:
    """The binding -> value pairs keyword ``name`` sets, with Stable-Baselines3's own forms of a value read as SB3
    means them (``net_arch=dict(pi=[64], qf=[256])``, ``train_freq=(4, "step")``); a ConfigError naming the
    keyword for a form polyak has no equivalent of, and for a value that is not a plain literal."""
    if name == "net_arch" and isinstance(value, dict):
        if not value or set(value) - {"pi", "qf"}:
            raise ConfigError(f"net_arch={value!r}: polyak takes a list of layer sizes for both networks or SB3's "
                              "dict with 'pi' (the actor) and/or 'qf' (the critic)")
        if not _plain(_literal(list(value.values()))):
            raise ConfigError(f"net_arch={value!r}: each of 'pi' and 'qf' takes a list of layer sizes")
        scope = {"pi": "actor", "qf": "critic"}
        return {f"{scope[key]}/NetworkConfig.hidden_sizes": sizes for key, sizes in value.items()}
    if name == "train_freq" and isinstance(value, tuple | list) and len(value) == 2 and isinstance(value[1], str):
        if value[1] != "step":
            raise ConfigError(f"train_freq={tuple(value)!r}: polyak trains every N env steps (train_freq=N or "
                              "(N, 'step')); SB3's training at episode ends has no equivalent")
        value = value[0]
    if name == "device" and type(value).__name__ == "device":  # torch.device("cuda"), as SB3 takes it
        value = str(value)
    if name == "gradient_steps" and isinstance(value, int | float) and value < 0:
        raise ConfigError(f"gradient_steps={value!r}: SB3's -1 (as many updates as env steps collected) has no "
                          "setting of its own here; give the number of updates each time it trains (with "
                          "train_freq=N, gradient_steps=N)")
    if not _plain(_literal(value)):
        raise ConfigError(f"{name}={value!r} is not a plain value: settings take numbers, strings, tuples, lists, "
                          "dicts, True/False or None (a function or object, such as a schedule, cannot be saved "
                          "in the run's config)")
    return dict.fromkeys(KEYWORDS[name], value)


def _plain(value: Any) -> bool:
    """Whether ``value`` is what a gin binding can hold: None, a bool, number or string, or a tuple, list or dict
    (string keys) of them."""
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, tuple | list):
        return all(_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _plain(item) for key, item in value.items())
    return False


def _comparable(value: Any) -> Any:
    """``value`` as a literal with lists as tuples: ``[64, 64]`` and ``(64, 64)`` name the same setting."""
    value = _literal(value)
    return tuple(_comparable(v) for v in value) if isinstance(value, tuple | list) else value


def _literal(value: Any) -> Any:
    """``value`` with numpy scalars and arrays as Python ones, so its repr is a gin literal."""
    if hasattr(value, "tolist") and callable(value.tolist):
        return value.tolist()
    if isinstance(value, tuple | list):
        return type(value)(_literal(v) for v in value)
    if isinstance(value, dict):
        return {k: _literal(v) for k, v in value.items()}
    return value


def _config_file(config: str | Path | None, algo: str | None, env_given: bool) -> Path:
    """The config file: ``config``, else ``configs/suite/<algo>.gin``, else the recommended config when an env is
    given, else the default (the Reacher)."""
    if config is not None and algo is not None:
        raise ConfigError("give --config or --algo, not both (--algo picks the config configs/suite/<algo>.gin)")
    if algo is not None:
        name = algo.strip().lower().replace("-", "_")
        if name not in ALGORITHMS:
            close = difflib.get_close_matches(name, ALGORITHMS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"unknown algorithm {algo!r}: choose one of {', '.join(ALGORITHMS)}{hint}")
        return packaged_config(f"suite/{name}.gin")
    if config is None:
        return packaged_config(RECOMMENDED_CONFIG if env_given else DEFAULT_CONFIG)
    try:
        return resolve_config(config)
    except ConfigError:
        if _is_env_id(str(config)):
            raise ConfigError(f"{str(config)!r} is an environment id, not a config: polyak train --env {config} "
                              f"(in Python: polyak.train(env={str(config)!r}))") from None
        raise


def _is_env_id(name: str) -> bool:
    import gymnasium as gym

    try:
        gym.spec(name)
    except (gym.error.Error, ValueError, TypeError):
        return False
    return True


def _file_settings(config_file: Path, names: Sequence[str]) -> dict[str, Any]:
    """The ``TrainerConfig`` settings among ``names`` that ``config_file`` (its includes too) binds, as it binds
    them."""
    found = {}
    try:
        parse_gin(config_file, [])
        for name in names:
            with contextlib.suppress(ValueError):  # not bound by the file
                found[name] = gin.query_parameter(f"TrainerConfig.{name}")
    finally:
        gin.clear_config()
    return found


def _shadowed(bindings: Sequence[str]) -> list[str]:
    """One warning per unscoped ``NetworkConfig.X`` binding of the user's that the config's ``actor/`` or
    ``critic/`` binding of the same setting overrides (gin's scoped bindings win, silently), with the bindings that
    would reach those networks. Reads the bindings gin holds, so it runs before the config is cleared."""
    given = [match.groups() for binding in bindings for match in _NETWORK_BINDING.finditer(binding)]
    warnings = []
    for name in dict.fromkeys(setting for scope, setting in given if scope is None):
        missed = []
        for scope in ("actor", "critic"):
            if (scope, name) in given:
                continue
            try:
                gin.query_parameter(f"{scope}/NetworkConfig.{name}")
            except ValueError:
                continue
            missed.append(scope)
        if missed:
            instead = " and ".join(f"{scope}/NetworkConfig.{name}" for scope in missed)
            warnings.append(f"NetworkConfig.{name} does not reach the {' and '.join(missed)} network"
                            f"{'s' if len(missed) > 1 else ''}: the config binds {instead}, and gin's scoped "
                            f"bindings win; bind {instead} instead")
    return warnings


def _inherited(config_file: Path, configs: Configs) -> list[str]:
    """The warning when ``config_file`` is made for another env than the run's and keeps settings made for that
    env (none otherwise): the :data:`TASK_SETTINGS` it binds, the user does not, and the recommended config for
    any env does not share (one env and no solve score are nobody's task-specific choice)."""
    env_id = configs.trainer.env_id
    made_for = _file_settings(config_file, ("env_id", *TASK_SETTINGS))
    if "env_id" not in made_for or made_for["env_id"] == env_id:
        return []
    general = _file_settings(packaged_config(RECOMMENDED_CONFIG), TASK_SETTINGS)
    kept = [f"{name} = {made_for[name]!r}" for name in TASK_SETTINGS
            if name in made_for and made_for[name] == getattr(configs.trainer, name)
            and made_for[name] != general.get(name, object())]
    if not kept:
        return []
    return [f"{config_file.name} is made for {made_for['env_id']}; on {env_id} the run keeps its task-specific "
            f"settings {', '.join(kept)} (bind them to change them, or give the env alone for the recommended config)"]


def check_budget(configs: Configs) -> list[str]:
    """Refuse a budget below ``ReplayConfig.min_size`` (no update would ever run); the warning when every action
    would be random (budget within ``TrainerConfig.start_steps``) or learning would be short (under a quarter of the
    budget after learning starts). A run that asks for no updates (``learn_steps = 0``) passes."""
    trainer, replay = configs.trainer, configs.replay
    budget, start, min_size = trainer.max_env_steps, trainer.start_steps, replay.min_size
    if trainer.learn_steps == 0:
        return []
    if budget < min_size:
        raise ConfigError(f"TrainerConfig.max_env_steps = {budget} is below ReplayConfig.min_size = {min_size}: "
                          "learning starts once the replay holds min_size transitions, so this run would never update "
                          "its networks; give a larger budget or lower ReplayConfig.min_size (and "
                          f"TrainerConfig.start_steps = {start})")
    learning = budget - max(start, min_size)
    if budget <= start:
        return [f"TrainerConfig.max_env_steps = {budget} is within TrainerConfig.start_steps = {start}: every action "
                "of this run is random, so the policy never acts while it learns; give a larger budget or fewer start "
                "steps"]
    if learning < budget / 4:
        return [f"only {learning} of the {budget} env steps come after learning starts (TrainerConfig.start_steps = "
                f"{start}, ReplayConfig.min_size = {min_size}): learning will be short; give a larger budget or lower "
                "both"]
    return []


def env_label(env_id: str) -> str:
    """An env id as part of a directory name: ``module:EnvId`` -> ``EnvId``, ``polyak/Reacher-v0`` ->
    ``polyak_Reacher-v0``, anything but letters, digits, ``.``, ``_`` and ``-`` -> ``_``."""
    name = env_id.rsplit(":", 1)[-1]
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).strip("._") or "env"


def algorithm_label(configs: Configs) -> str:
    """The algorithm's ``--algo`` name: td3 for DDPG with TD3's three switches."""
    agent = configs.agent
    if agent.algorithm is Algorithm.DDPG:
        td3 = agent.n_critics >= 2 and agent.policy_delay >= 2 and agent.target_policy_noise is not None
        return "td3" if td3 else "ddpg"
    return agent.algorithm.value


def _config_label(config_file: Path, configs: Configs) -> str:
    """The config's part of a run's name: its file's stem; the algorithm for the recommended config."""
    if config_file.resolve() == packaged_config(RECOMMENDED_CONFIG).resolve():
        return algorithm_label(configs)
    return config_file.stem


def _parse_apex(config_file: Path, bindings: list[str], workers: int) -> ApexConfig:
    """Ape-X defaults, then the config file, then the bindings and ``workers`` (later ones win). A config that
    binds its own sampler (TD7's LAP, uniform) keeps it and its initial priorities."""
    include = f"include {str(config_file)!r}"
    parse_gin(None, [include, *bindings])
    try:
        gin.query_parameter("ReplayConfig.sampler")
        defaults: Sequence[str] = [b for b in APEX_DEFAULTS if b.startswith("ReplayConfig.n_step")]
    except ValueError:
        defaults = APEX_DEFAULTS
    parse_gin(None, [*defaults, include, *bindings, f"ApexConfig.num_workers = {workers}"])
    try:
        return ApexConfig()
    except ConfigError as error:
        raise ConfigError(_gin_message(error)) from None


def _new_run_dir(configs: Configs, config_label: str, run_dir: str | Path | None, seed: int | None,
                 apex: bool) -> Path:
    """The given directory (refused when a run already wrote there), else ``runs/<env>_<config>[_apex][_seed_N]``
    (``TrainerConfig.run_name`` instead of ``<env>_<config>``) made unique."""
    from polyak.playback import ACTOR_FILE  # here: polyak's commands without a run need no torch

    if run_dir is not None:
        if not str(run_dir).strip():
            raise ConfigError("the run directory is empty; give a path (or leave it out: runs/<env>_<config>)")
        path = Path(run_dir)
        inside = enclosing_run(path)
        if inside is not None:
            raise ConfigError(f"{path} is inside the run directory {inside}; choose a directory outside it")
        if (path / ACTOR_FILE).is_file():
            raise ConfigError(f"{path} holds an exported agent (polyak export); choose another run directory")
        if path.is_dir():  # another process writing there is named as such (RunDirBusy), not as a finished run
            RunLock(path).acquire().release()
        used = RunDir(path)
        if used.holds_a_run() or used.metrics.exists():
            if not complete_checkpoints(used.checkpoints) and not used.summary.exists():
                raise ConfigError(f"run directory {path} already holds a run that stopped before its first "
                                  "checkpoint, so nothing there can be resumed; choose another run directory or "
                                  f"delete it (rm -r {shlex.quote(str(path))})")
            raise ConfigError(f"run directory {path} already holds a run; choose another run directory or "
                              f"continue it with: polyak train --resume {shlex.quote(str(path))}")
    else:
        name = configs.trainer.run_name or f"{env_label(configs.trainer.env_id)}_{config_label}"
        name += "_apex" if apex else ""
        name += f"_seed_{seed}" if seed is not None else ""
        path = unique_path(Path(configs.trainer.runs_root) / name)
    check_writable(path)
    return path


def check_writable(run_dir: Path) -> None:
    """Refuse a run directory that cannot be created or written, without creating anything yet."""
    existing = run_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(f"cannot write run directory {run_dir}: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"cannot write run directory {run_dir}: permission denied on {existing}")
