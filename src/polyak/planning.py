"""Planning a training run: the one way ``polyak train`` and :func:`polyak.train` turn a config, bindings, a seed
and a run directory into the configs and the directory a trainer runs with.

A new run parses gin (the config file, then the bindings; in Ape-X mode its defaults first) and records the
operative config; a resumed run reads its own ``config.json`` (gin never parses a run's file) and keeps its
``config.gin``. Gin's global state is cleared before the plan is returned, so nothing of one plan reaches the next.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import gin

from polyak.config import APEX_DEFAULTS, ApexConfig, Configs
from polyak.config_json import with_bindings
from polyak.errors import ConfigError
from polyak.ginconf import _gin_message, build_configs_from_gin, packaged_config, parse_gin, resolve_config
from polyak.run_dir import RunDir, unique_path
from polyak.seeding import check_seed

DEFAULT_CONFIG = "unity_reacher.gin"


@dataclass(frozen=True)
class RunPlan:
    """What a trainer needs: the configs, the run directory, the operative gin config to save ('' on resume:
    the run keeps its own ``config.gin``), and the Ape-X settings with ``workers``."""

    configs: Configs
    run_dir: Path
    operative_config: str
    resume: bool = False
    apex: ApexConfig | None = None


def plan_run(config: str | Path | None = None, bindings: Sequence[str] = (), *, run_dir: str | Path | None = None,
             seed: int | None = None, resume: str | Path | None = None, workers: int | None = None) -> RunPlan:
    """The plan of a new run (``config``: a shipped config's name or a .gin file, default the Reacher's), or of
    continuing ``resume`` with the user's ``bindings`` on top of its own config. ``seed`` overrides every seed and
    names the run ``<config>_seed_N``; a given ``run_dir`` must not hold a run already."""
    bindings = list(bindings)
    if workers is not None:
        if workers < 1:
            raise ConfigError(f"--workers must be >= 1, got {workers}")
        if resume is not None:
            raise ConfigError("--workers cannot be combined with --resume: Ape-X runs cannot be resumed")
    if resume is not None:
        if config is not None or seed is not None or run_dir is not None:
            raise ConfigError("--resume uses the run's own config; do not combine it with --config, --seed, --run-dir")
        run = RunDir(resume).require_resumable()
        check_writable(run.path)
        return RunPlan(with_bindings(run.configs(), bindings), run.path, "", resume=True)
    if seed is not None:
        bindings.append(f"TrainerConfig.seed = {check_seed(seed)}")
    config_file = resolve_config(config) if config is not None else packaged_config(DEFAULT_CONFIG)
    try:
        apex = _parse_apex(config_file, bindings, workers) if workers is not None else None
        if apex is None:
            parse_gin(config_file, bindings)
        configs = build_configs_from_gin()
        operative = gin.operative_config_str()
    finally:
        gin.clear_config()
    path = _new_run_dir(configs, config_file, run_dir, seed, apex is not None)
    return RunPlan(configs, path, operative, apex=apex)


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


def _new_run_dir(configs: Configs, config_file: Path, run_dir: str | Path | None, seed: int | None,
                 apex: bool) -> Path:
    """The given directory (refused when a run already wrote there), else ``runs/<name>`` made unique."""
    if run_dir is not None:
        path = Path(run_dir)
        if RunDir(path).holds_a_run() or RunDir(path).metrics.exists():
            raise ConfigError(f"run directory {path} already holds a run; choose another run directory or "
                              f"continue it with: polyak train --resume {path}")
    else:
        name = (configs.trainer.run_name or config_file.stem) + ("_apex" if apex else "")
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
