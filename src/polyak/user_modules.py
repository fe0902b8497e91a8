"""The user's own modules (an env's ``module:EnvId``, a gin file's ``import``), found in the current directory too,
as ``python -m`` would find them, but searched after the installed packages, so a file there never hides one."""

from __future__ import annotations

import os
import sys

NOT_FOUND_HINT = "run polyak in the directory that holds it, or add that directory: PYTHONPATH=/path/to/it polyak"


def search_current_directory() -> str:
    """Put the current directory at the end of ``sys.path`` (unless it is searched already); return it."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)
    return cwd
