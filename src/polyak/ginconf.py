"""Gin at the edge: parse files and bindings, build the configs, and word gin's errors as one line."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import gin

from polyak.config import Configs, build_configs
from polyak.errors import ConfigError


def packaged_config(name: str) -> Path:
    """A config file shipped inside the package (``polyak/configs``)."""
    return Path(str(resources.files("polyak") / "configs" / name))


def _gin_message(error: Exception) -> str:
    """First line of a gin error plus where it happened."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    where = next((line for line in lines[1:] if line.startswith("In ") and "configurable" not in line), None)
    return f"{lines[0]} ({where[0].lower() + where[1:]})" if where else lines[0]


def parse_gin(config_file: Path | None, bindings: Sequence[str]) -> None:
    """Parse a gin file and extra bindings into gin's global config (cleared first).

    ``ApexConfig`` is registered too (its module never imports ray), so Ape-X run directories load.
    """
    import polyak.distributed.apex_config  # noqa: F401  (registers the gin configurable)

    gin.clear_config()
    files = []
    if config_file is not None:
        if not config_file.is_file():
            raise ConfigError(f"config file {config_file} does not exist")
        files.append(str(config_file))
    try:
        gin.parse_config_files_and_bindings(files, list(bindings), finalize_config=False)
    except ConfigError:
        raise
    except Exception as error:  # gin raises ValueError, SyntaxError, TokenError, ... for bad text
        raise ConfigError(f"invalid gin config: {_gin_message(error)}") from None


def build_configs_from_gin() -> Configs:
    try:
        return build_configs()
    except ConfigError as error:
        raise ConfigError(_gin_message(error)) from None


