"""``polyak upgrade RUN``: give a run dir or exported agent of an older polyak its ``config.json``.

Older polyak kept only ``config.gin``. Parsing it runs gin, which executes ``import`` statements and
follows ``include``, so it happens here once, only after the user confirms (or passes ``--trust``);
every later load reads the JSON.

A ``config.json`` with settings of an older version (the replay booleans ``prioritized``/``lap``, now
``ReplayConfig.sampler``) loads as it is; ``upgrade`` rewrites those settings in place, one line of explanation
each, without asking (reading JSON runs no code).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polyak.config_json import CONFIG_FILE, MAX_CONFIG_BYTES, configs_from_dict, configs_to_json, legacy_rewrites
from polyak.errors import CheckpointError, ConfigError, not_a_directory
from polyak.safe_files import read_json

if TYPE_CHECKING:
    from polyak.config import Configs

WARNING = ("{path} has no {json}. Converting it parses its config.gin with gin, which can run code (gin executes "
           "'import' lines and follows 'include'). Do this only for a run you trust.")


def _ask(question: str) -> bool:
    if not sys.stdin.isatty():
        return False
    print(question, end=" ", flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def upgrade(path: Path, trust: bool = False, ask: Callable[[str], bool] = _ask,
            say: Callable[[str], None] = print) -> Path:
    """Write ``path/config.json`` from ``path/config.gin``, or rewrite the old settings of an existing
    ``config.json`` (each change explained through ``say``); returns the JSON file's path."""
    if not path.is_dir():
        raise CheckpointError(f"{path} {not_a_directory(path)}")
    target = path / CONFIG_FILE
    if target.exists():
        return _rewrite_json(path, target, say)
    config_file = path / "config.gin"
    if not config_file.is_file():
        raise CheckpointError(f"{path} is not a polyak run directory or exported agent (no config.gin)")
    if not trust:
        print(WARNING.format(path=path, json=CONFIG_FILE), file=sys.stderr)
        if not ask("Parse it? [y/N]"):
            raise ConfigError(f"not upgraded: confirm at the prompt, or pass --trust to convert {path}")
    configs, apex = _configs_from_gin(config_file)
    temporary = path / f".{CONFIG_FILE}.tmp"
    try:
        temporary.write_text(configs_to_json(configs, apex))
        temporary.replace(target)
    except OSError as error:
        raise CheckpointError(f"cannot write {target}: {error.strerror or error}") from None
    return target


def _rewrite_json(path: Path, target: Path, say: Callable[[str], None]) -> Path:
    """Today's names for the old settings of ``target``; the rest of the file stays as it is."""
    data = read_json(target, path, MAX_CONFIG_BYTES)
    if not isinstance(data, dict):
        raise CheckpointError(f"{target} is damaged: the configuration must be a JSON object")
    rewritten, notes = legacy_rewrites(data)
    if not notes:
        raise CheckpointError(f"{path} already has an up-to-date {CONFIG_FILE}; nothing to upgrade")
    try:
        configs_from_dict(rewritten)  # never write a file that does not load
    except ConfigError as error:
        raise CheckpointError(f"{target} is damaged: {error}") from None
    temporary = path / f".{CONFIG_FILE}.tmp"
    try:
        temporary.write_text(json.dumps(rewritten, indent=2, sort_keys=True) + "\n")
        temporary.replace(target)
    except OSError as error:
        raise CheckpointError(f"cannot write {target}: {error.strerror or error}") from None
    for note in notes:
        say(f"polyak: {target}: {note}")
    return target


def _configs_from_gin(config_file: Path) -> tuple[Configs, Any]:
    import gin

    from polyak.ginconf import _gin_message, build_configs_from_gin, parse_gin

    parse_gin(config_file, [])
    configs = build_configs_from_gin()
    apex = None
    if "ApexConfig." in config_file.read_text():
        from polyak.config_json import _apex_class

        try:
            apex = _apex_class()()
        except ConfigError as error:
            raise ConfigError(_gin_message(error)) from None
    gin.clear_config()
    return configs, apex
