"""One line for MuJoCo's OpenGL backend failing to load (``MUJOCO_GL`` naming a backend that is unknown or whose
libraries are missing): the error surfaces from ``import mujoco`` inside ``gym.make`` as a RuntimeError from
mujoco's GL context code or as PyOpenGL's AttributeError, many frames deep."""

from __future__ import annotations

import importlib.util
import os
import traceback
from pathlib import Path

_FIXES = {"egl": "install the EGL libraries (libegl1), or use MUJOCO_GL=osmesa (needs libosmesa6)",
          "osmesa": "install the OSMesa library (libosmesa6), or use MUJOCO_GL=egl (needs libegl1)"}
_MUJOCO_GL_PARTS = ("rendering", "egl", "osmesa", "glfw", "cgl", "gl_context.py")  # mujoco's GL code, by location


def _package_dirs(name: str) -> list[Path]:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    return [Path(p) for p in (spec.submodule_search_locations or [])] if spec is not None else []


def _in_gl_code(filename: str) -> bool:
    """Whether ``filename`` is PyOpenGL's or one of mujoco's OpenGL modules (not its bindings or its users)."""
    path = Path(filename)
    if any(path.is_relative_to(d) for d in _package_dirs("OpenGL")):
        return True
    for mujoco_dir in _package_dirs("mujoco"):
        if path.is_relative_to(mujoco_dir):
            return path.relative_to(mujoco_dir).parts[0] in _MUJOCO_GL_PARTS
    return False


def backend_problem(error: BaseException) -> str | None:
    """The message for ``error`` when MuJoCo's OpenGL backend failed to load (raised in PyOpenGL or mujoco's GL
    modules, with ``MUJOCO_GL`` set); None for any other error, which keeps its traceback."""
    backend = os.environ.get("MUJOCO_GL")
    if backend is None or error.__traceback__ is None:
        return None
    if not _in_gl_code(traceback.extract_tb(error.__traceback__)[-1].filename):
        return None
    fix = _FIXES.get(backend, "use MUJOCO_GL=egl (needs libegl1) to render without a display, glfw with one, or "
                              "unset MUJOCO_GL")
    return f"MUJOCO_GL={backend}: MuJoCo cannot load that OpenGL backend ({type(error).__name__}: {error}); {fix}"
