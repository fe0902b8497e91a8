"""Reading files that may come from someone else (a shared run, an exported agent): bounded and code-free.

Every reader checks the size before reading, refuses symlinks that leave the directory it is
given as ``root``, and turns any damage into a :class:`CheckpointError` naming the file.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

from polyak.errors import CheckpointError

MAX_JSON_BYTES = 64 << 20  # state.json of a long run is a few MB; config/info JSON far less
MAX_SAFETENSORS_HEADER = 16 << 20
SAFE_DTYPES = {"F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL"}
_ITEMSIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}


def inside(path: Path, root: Path | None) -> Path:
    """``path`` itself, after checking it does not resolve (through symlinks) outside ``root``."""
    if root is None:
        return path
    resolved, base = path.resolve(), root.resolve()
    if resolved != base and base not in resolved.parents:
        raise CheckpointError(f"{path} points outside {root} (a symlink to {resolved}); refusing to read it")
    return path


def _size(path: Path, root: Path | None, limit: int) -> int:
    inside(path, root)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise CheckpointError(f"{path} does not exist") from None
    except OSError as error:
        raise CheckpointError(f"cannot read {path}: {error.strerror or error}") from None
    if not path.is_file():
        raise CheckpointError(f"{path} is not a regular file")
    if size > limit:
        raise CheckpointError(f"{path} is {size} bytes, more than the {limit} a polyak file of this kind can be")
    return size


def read_json(path: Path, root: Path | None = None, limit: int = MAX_JSON_BYTES) -> Any:
    """Parse a JSON file of at most ``limit`` bytes."""
    _size(path, root, limit)
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
        raise CheckpointError(f"{path} is damaged: not valid JSON ({str(error).splitlines()[0]})") from None
    except OSError as error:
        raise CheckpointError(f"cannot read {path}: {error.strerror or error}") from None


def check_safetensors(path: Path, root: Path | None = None) -> dict[str, Any]:
    """Validate a safetensors file's header (length, dtypes, shapes, offsets) before anything loads it.

    Returns the header's tensor entries. The header length is read here first, so a file claiming a
    huge header is refused without allocating it.
    """
    size = _size(path, root, 1 << 40)
    try:
        with open(path, "rb") as handle:
            prefix = handle.read(8)
            if len(prefix) < 8:
                raise CheckpointError(f"{path} is damaged: too short for a safetensors file")
            (length,) = struct.unpack("<Q", prefix)
            if length > min(MAX_SAFETENSORS_HEADER, size - 8):
                raise CheckpointError(f"{path} is damaged: its header claims {length} bytes, the file has {size}")
            raw = handle.read(length)
    except OSError as error:
        raise CheckpointError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        header = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise CheckpointError(f"{path} is damaged: its header is not JSON") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{path} is damaged: its header is not a JSON object")
    data = size - 8 - length
    entries = {k: v for k, v in header.items() if k != "__metadata__"}
    for name, entry in entries.items():
        if not isinstance(entry, dict):
            raise CheckpointError(f"{path} is damaged: entry {name!r} is not an object")
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if dtype not in SAFE_DTYPES:
            raise CheckpointError(f"{path} is damaged: tensor {name!r} has unsupported dtype {dtype!r}")
        if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape)):
            raise CheckpointError(f"{path} is damaged: tensor {name!r} has an invalid shape {shape!r}")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)):
            raise CheckpointError(f"{path} is damaged: tensor {name!r} has invalid offsets")
        count = 1
        for d in shape:
            count *= d
        begin, end = offsets
        if not 0 <= begin <= end <= data or end - begin != count * _ITEMSIZE[dtype]:
            raise CheckpointError(f"{path} is damaged: tensor {name!r} does not fit its shape or the file")
    return entries


def load_tensors(path: Path, root: Path | None = None) -> dict[str, Any]:
    """A safetensors file as torch tensors, after :func:`check_safetensors`."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    check_safetensors(path, root)
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"{path} is damaged ({str(error).splitlines()[0]})") from None


def load_arrays(path: Path, root: Path | None = None) -> dict[str, Any]:
    """A safetensors file as numpy arrays, after :func:`check_safetensors`."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    entries = check_safetensors(path, root)
    if any(e["dtype"] == "BF16" for e in entries.values()):
        raise CheckpointError(f"{path} is damaged: bfloat16 in a numpy array file")
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"{path} is damaged ({str(error).splitlines()[0]})") from None


def require_finite(tensors: dict[str, Any], what: str) -> None:
    """Refuse NaN or Inf in floating-point weights (a damaged or crafted file)."""
    import torch

    for name, tensor in tensors.items():
        if isinstance(tensor, torch.Tensor) and tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(f"{what} is damaged: {name} holds NaN or Inf")


def write_error(error: BaseException) -> OSError:
    """An OSError for a failed write, also from safetensors (whose errors carry the OS error code as text)."""
    if isinstance(error, OSError):
        return error
    import errno
    import re

    found = re.search(r"(?:code: |os error )(\d+)", str(error))
    if found:
        code = int(found.group(1))
        return OSError(code, os.strerror(code))
    return OSError(errno.EIO, str(error).splitlines()[0] if str(error) else type(error).__name__)
