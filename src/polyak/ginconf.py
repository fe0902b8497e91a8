"""Gin at the edge: parse files and bindings, build the configs, and word gin's errors as one line."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
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


@contextlib.contextmanager
def _quiet_include_search() -> Iterator[None]:
    """Gin logs 'Path not found' for each search location an ``include`` misses before one holds the file."""

    def keep(record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Path not found")

    root = logging.getLogger()
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)


def parse_gin(config_file: Path | None, bindings: Sequence[str]) -> None:
    """Parse a gin file and extra bindings into gin's global config (cleared first).

    Every configurable, ``ApexConfig`` included, is registered by importing :mod:`polyak.config`.
    """
    gin.clear_config()
    files = []
    if config_file is not None:
        if not config_file.is_file():
            raise ConfigError(f"config file {config_file} does not exist")
        files.append(str(config_file))
        gin.add_config_file_search_path(str(config_file.resolve().parent))  # `include` beside the file
    try:
        with _quiet_include_search():
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




def configs_from_file(config_file: Path, bindings: Sequence[str] = ()) -> Configs:
    """Parse ``config_file`` (and ``bindings``) and build the configs: gin's state stays at this edge."""
    parse_gin(config_file, bindings)
    return build_configs_from_gin()
