"""The resolved configuration as plain JSON: what a run dir, checkpoint or exported agent carries.

Loading reads this file only; gin (which executes ``import`` and follows ``include``) is never run
on a file that came with a run. Values are checked by the configs' own validation, so a wrong
type or an unknown key is a :class:`ConfigError` naming the field.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polyak.config import AgentConfig, Configs, NetworkConfig, NoiseConfig, ReplayConfig, TrainerConfig
from polyak.errors import CheckpointError, ConfigError
from polyak.safe_files import read_json

if TYPE_CHECKING:
    from polyak.distributed.apex_config import ApexConfig

CONFIG_FILE = "config.json"
FORMAT_VERSION = 1
MAX_CONFIG_BYTES = 1 << 20
_SECTIONS: dict[str, tuple[type, str]] = {
    "trainer": (TrainerConfig, "TrainerConfig"),
    "agent": (AgentConfig, "AgentConfig"),
    "actor": (NetworkConfig, "actor/NetworkConfig"),
    "critic": (NetworkConfig, "critic/NetworkConfig"),
    "replay": (ReplayConfig, "ReplayConfig"),
    "noise": (NoiseConfig, "NoiseConfig"),
}


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _section(config: Any) -> dict[str, Any]:
    return {f.name: _plain(getattr(config, f.name)) for f in dataclasses.fields(config)}


def configs_to_dict(configs: Configs, apex: ApexConfig | None = None) -> dict[str, Any]:
    """Every config field as JSON-able data (enums as their values, tuples as lists)."""
    data: dict[str, Any] = {"format_version": FORMAT_VERSION}
    for key in _SECTIONS:
        data[key] = _section(getattr(configs, key))
    if apex is not None:
        data["apex"] = _section(apex)
    return data


def configs_to_json(configs: Configs, apex: ApexConfig | None = None) -> str:
    return json.dumps(configs_to_dict(configs, apex), indent=2, sort_keys=True) + "\n"


def _default(field: dataclasses.Field) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def _build(cls: type, label: str, values: Any) -> Any:
    if not isinstance(values, dict):
        raise ConfigError(f"{label} must be a JSON object, got {type(values).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"{label}.{unknown[0]} is not a setting of this polyak version")
    # Missing fields take today's defaults (a file written before they existed); passing every field
    # explicitly also keeps any gin bindings parsed in this process out of it.
    complete = {f.name: _default(f) for f in dataclasses.fields(cls)}
    complete.update(values)
    try:
        return cls(**complete)
    except ConfigError as error:
        message = str(error).splitlines()[0]
        name = cls.__name__
        if label != name and message.startswith(name + "."):
            message = label + message[len(name):]
        raise ConfigError(message) from None


def configs_from_dict(data: Any) -> tuple[Configs, ApexConfig | None]:
    """Inverse of :func:`configs_to_dict`; validates every value."""
    if not isinstance(data, dict):
        raise ConfigError("the configuration must be a JSON object")
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        raise ConfigError(f"configuration format version {version!r}; this polyak reads version {FORMAT_VERSION}")
    unknown = sorted(set(data) - set(_SECTIONS) - {"format_version", "apex"})
    if unknown:
        raise ConfigError(f"unknown configuration section {unknown[0]!r}")
    missing = [key for key in _SECTIONS if key not in data]
    if missing:
        raise ConfigError(f"the configuration has no {missing[0]!r} section")
    sections = {key: _build(cls, label, data[key]) for key, (cls, label) in _SECTIONS.items()}
    configs = Configs(**sections)
    configs.validate()
    apex = None
    if data.get("apex") is not None:
        apex = _build(_apex_class(), "ApexConfig", data["apex"])
    return configs, apex


def _apex_class() -> type:
    """``ApexConfig`` (pure Python, no ray)."""
    import polyak.config

    if hasattr(polyak.config, "ApexConfig"):
        return polyak.config.ApexConfig
    from polyak.distributed.apex_config import ApexConfig

    return ApexConfig


def with_bindings(configs: Configs, bindings: list[str]) -> Configs:
    """``configs`` with the user's own ``--gin-param`` bindings applied; gin parses those bindings only."""
    if not bindings:
        return configs
    import gin

    from polyak.ginconf import parse_gin

    parse_gin(None, bindings)
    sections = {}
    try:
        for key, (cls, label) in _SECTIONS.items():
            config = getattr(configs, key)
            names = [f"{label}.{{}}", f"{cls.__name__}.{{}}"] if "/" in label else [f"{label}.{{}}"]
            overrides = {}
            for field in dataclasses.fields(config):
                for name in names:
                    try:
                        overrides[field.name] = gin.query_parameter(name.format(field.name))
                        break
                    except ValueError:
                        continue
            sections[key] = _build(cls, label, {**_section(config), **overrides}) if overrides else config
    finally:
        gin.clear_config()
    updated = Configs(**sections)
    updated.validate()
    return updated


def configs_from_json(text: str) -> tuple[Configs, ApexConfig | None]:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        raise ConfigError(f"the configuration is not valid JSON ({str(error).splitlines()[0]})") from None
    return configs_from_dict(data)


def write_config(directory: Path, configs: Configs, apex: ApexConfig | None = None) -> Path:
    """Write ``config.json`` atomically into ``directory``."""
    path = directory / CONFIG_FILE
    temporary = directory / f".{CONFIG_FILE}.tmp"
    temporary.write_text(configs_to_json(configs, apex))
    temporary.replace(path)
    return path


def read_config(directory: Path) -> tuple[Configs, ApexConfig | None]:
    """The configs of a run dir or exported agent, from its ``config.json`` only (never gin)."""
    if not directory.is_dir():
        raise CheckpointError(f"{directory} does not exist")
    path = directory / CONFIG_FILE
    if not path.exists() and not path.is_symlink():
        if (directory / "config.gin").is_file():
            raise CheckpointError(
                f"{directory} was written by an older polyak (config.gin only, which is not loaded because gin "
                f"runs code); if you trust it, convert it once with: polyak upgrade {directory}"
            )
        raise CheckpointError(f"{directory} is not a polyak run directory (no {CONFIG_FILE})")
    data = read_json(path, directory, MAX_CONFIG_BYTES)
    try:
        return configs_from_dict(data)
    except ConfigError as error:
        raise CheckpointError(f"{path} is damaged: {error}") from None
