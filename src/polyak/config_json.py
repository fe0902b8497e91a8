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
from typing import Any

from polyak.config import (
    AgentConfig,
    ApexConfig,
    Configs,
    NetworkConfig,
    NoiseConfig,
    ReplayConfig,
    SACConfig,
    Sampler,
    TD7Config,
    TrainerConfig,
    sampler_from_booleans,
)
from polyak.errors import CheckpointError, ConfigError
from polyak.safe_files import read_json

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
    "td7": (TD7Config, "TD7Config"),
    "sac": (SACConfig, "SACConfig"),
}
_SECTIONS_SINCE_V1 = ("td7", "sac")  # sections added to format version 1 later; older files lack them
# Files written before AgentConfig.algorithm held TD7's and CrossQ's switches as flat agent fields, with these
# defaults; :func:`_algorithm_from_switches` turns them into the algorithm and its TD7Config.
_OLD_AGENT_SWITCHES = {
    "target_networks": True, "hard_target_every": None, "value_clipping": False, "sale": False, "sale_dim": 256,
    "sale_hidden": 256, "sale_lr": 3e-4, "checkpoint_policy": False, "checkpoint_training": False,
    "checkpoint_episodes": 20, "checkpoint_after": 750_000, "checkpoint_reset_weight": 0.9,
}
# Files written before ReplayConfig.sampler named the sampler with these replay booleans; :func:`_sampler_from_booleans`
# turns them into the sampler.
_OLD_REPLAY_BOOLEANS = ("prioritized", "lap")


def plain(value: Any) -> Any:
    """``value`` as config.json holds it: enums as their values, tuples as lists, dict keys as strings."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


def _section(config: Any) -> dict[str, Any]:
    return {f.name: plain(getattr(config, f.name)) for f in dataclasses.fields(config)}


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


def _init_only(cls: type) -> dict[str, Any]:
    """A config's deprecated constructor-only arguments (``dataclasses.InitVar``, e.g. ``ReplayConfig.lap``) and
    their defaults: not fields, so never written, but gin may bind them (``--gin-param`` on ``--resume``)."""
    fields = getattr(cls, "__dataclass_fields__", {})
    return {name: field.default for name, field in fields.items()
            if isinstance(field.type, dataclasses.InitVar) or "InitVar" in str(field.type)}


def _build(cls: type, label: str, values: Any, init_only: dict[str, Any] | None = None) -> Any:
    if not isinstance(values, dict):
        raise ConfigError(f"{label} must be a JSON object, got {type(values).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"{label}.{unknown[0]} is not a setting of this polyak version")
    # Missing fields take today's defaults (a file written before they existed); passing every field
    # (and constructor-only argument) explicitly also keeps any gin bindings parsed in this process out of it.
    complete = {**_init_only(cls), **{f.name: _default(f) for f in dataclasses.fields(cls)}, **(init_only or {})}
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
    data = _algorithm_from_switches(data)
    data = _sampler_from_booleans(data)
    data = {**{key: {} for key in _SECTIONS_SINCE_V1}, **data}  # files from before these sections: defaults
    missing = [key for key in _SECTIONS if key not in data]
    if missing:
        raise ConfigError(f"the configuration has no {missing[0]!r} section")
    sections = {key: _build(cls, label, data[key]) for key, (cls, label) in _SECTIONS.items()}
    configs = Configs(**sections)
    configs.validate()
    apex = None
    if data.get("apex") is not None:
        apex = _build(ApexConfig, "ApexConfig", data["apex"])
    return configs, apex


def _algorithm_from_switches(data: dict[str, Any]) -> dict[str, Any]:
    """A configuration written before ``AgentConfig.algorithm`` (its agent section holds TD7's and CrossQ's
    switches, and it has no ``td7`` section) in today's form: ``target_networks = False`` is CrossQ; hard target
    copies, SALE, value clipping or a checkpoint policy are TD7 with those switches; anything else DDPG/TD3."""
    agent = data.get("agent")
    if "td7" in data or not isinstance(agent, dict):
        return data
    old = {key: agent.get(key, default) for key, default in _OLD_AGENT_SWITCHES.items()}
    agent = {key: value for key, value in agent.items() if key not in _OLD_AGENT_SWITCHES}
    td7: dict[str, Any] = {}
    if old["target_networks"] is False:
        agent["algorithm"] = "crossq"
    elif any(old[key] for key in ("hard_target_every", "sale", "value_clipping", "checkpoint_policy")):
        if old["hard_target_every"] is None:
            raise ConfigError("AgentConfig.checkpoint_policy without hard_target_every has no TD7Config equivalent")
        agent["algorithm"] = "td7"
        td7 = {key: old[key] for key in _OLD_AGENT_SWITCHES if key != "target_networks"}
    return {**data, "agent": agent, "td7": td7}


def _sampler_from_booleans(data: dict[str, Any]) -> dict[str, Any]:
    """A configuration written before ``ReplayConfig.sampler`` (its replay section holds the booleans ``prioritized``
    and ``lap``) in today's form: ``'sampler': 'prioritized'``, ``'lap'`` or ``'uniform'``; quietly, as a load of
    an old run should be (``polyak upgrade`` rewrites the file)."""
    replay = data.get("replay")
    if not isinstance(replay, dict) or not any(key in replay for key in _OLD_REPLAY_BOOLEANS):
        return data
    booleans = {key: replay[key] for key in _OLD_REPLAY_BOOLEANS if key in replay}
    replay = {key: value for key, value in replay.items() if key not in booleans}
    sampler = sampler_from_booleans(replay.get("sampler", Sampler.UNIFORM.value), booleans)
    if isinstance(sampler, Sampler):
        replay["sampler"] = sampler.value
    return {**data, "replay": replay}


def legacy_rewrites(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``data`` (a ``config.json`` as read) with the settings of older polyak versions in today's form, and one
    line per change saying what changed; no lines when there is nothing to rewrite."""
    notes = []
    replay = data.get("replay")
    rewritten = _sampler_from_booleans(data)
    if rewritten is not data:
        old = ", ".join(f"{key} = {replay[key]}" for key in _OLD_REPLAY_BOOLEANS if key in replay)
        notes.append(f"replay: {old} became sampler = {rewritten['replay'].get('sampler')!r} (one setting, "
                     "ReplayConfig.sampler, names the replay sampler now)")
    return rewritten, notes


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
            overrides, init_only = {}, {}
            for field in [f.name for f in dataclasses.fields(config)] + list(_init_only(cls)):
                for name in names:
                    try:
                        value = gin.query_parameter(name.format(field))
                    except ValueError:
                        continue
                    (init_only if field in _init_only(cls) else overrides)[field] = value
                    break
            if overrides or init_only:
                sections[key] = _build(cls, label, {**_section(config), **overrides}, init_only)
            else:
                sections[key] = config
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
                f"{directory} has no {CONFIG_FILE}, only config.gin (a run of an older polyak, or {CONFIG_FILE} was "
                f"deleted), which is not loaded because gin runs code; if you trust it, rebuild {CONFIG_FILE} from "
                f"it once with: polyak upgrade {directory}"
            )
        raise CheckpointError(f"{directory} is not a polyak run directory (no {CONFIG_FILE})")
    data = read_json(path, directory, MAX_CONFIG_BYTES)
    try:
        return configs_from_dict(data)
    except ConfigError as error:
        raise CheckpointError(f"{path} is damaged: {error}") from None
