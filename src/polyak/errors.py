"""Errors a user can cause; the CLI turns each into one line on stderr and a non-zero exit."""

from pathlib import Path


class PolyakError(Exception):
    """Base class: the message is shown to the user as is."""


class ConfigError(PolyakError):
    """A configuration value, gin file or binding is wrong."""


class EnvError(PolyakError):
    """The environment id is unknown or the environment is unsuitable."""


class CheckpointError(PolyakError):
    """A checkpoint or run directory is missing, damaged or does not match the config."""


def not_a_directory(path: Path) -> str:
    """Why ``path`` cannot be used as a directory, for an error message: it is a file or it does not exist."""
    return "is a file, not a directory" if path.exists() else "does not exist"
