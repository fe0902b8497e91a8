"""Checkpoints as safetensors (tensors) + JSON (everything else); never pickle.

A checkpoint is a directory ``checkpoints/step_<env_steps>/`` holding ``state.safetensors``,
``state.json`` and one ``.npy`` file per large array (the replay buffer's fields, loaded with
``allow_pickle=False``). It is written under a temporary name, fsynced and renamed, so a directory
with the final name is always complete; the newest ``keep`` are kept.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from polyak.errors import CheckpointError

FORMAT_VERSION = 1
TENSORS_FILE = "state.safetensors"
META_FILE = "state.json"
_PREFIX = "step_"
LARGE_ARRAY = 1 << 20  # elements; bigger numpy arrays are written as .npy without a copy


def flatten_state(
    state: Any, large: dict[str, np.ndarray] | None = None
) -> tuple[dict[str, torch.Tensor], Any]:
    """Split a nested state into named tensors and a JSON-able tree that refers to them.

    When ``large`` is given, numpy arrays of more than ``LARGE_ARRAY`` elements go there instead
    (keyed by file name) so they can be written without copying.
    """
    tensors: dict[str, torch.Tensor] = {}

    def walk(value: Any, path: str) -> Any:
        if isinstance(value, torch.Tensor):
            tensors[path] = value.detach().cpu().contiguous().clone()
            return {"__tensor__": path}
        if isinstance(value, np.ndarray):
            if large is not None and value.size > LARGE_ARRAY:
                name = f"{path}.npy"
                large[name] = value
                return {"__npy__": name}
            tensors[path] = torch.from_numpy(np.ascontiguousarray(value).copy())
            return {"__ndarray__": path}
        if isinstance(value, dict):
            if all(isinstance(k, str) for k in value):
                return {"__dict__": {k: walk(v, f"{path}.{k}") for k, v in value.items()}}
            return {"__items__": [[k, walk(v, f"{path}.{k}")] for k, v in value.items()]}
        if isinstance(value, list | tuple):
            return {"__list__": [walk(v, f"{path}.{i}") for i, v in enumerate(value)]}
        if isinstance(value, np.generic):
            return value.item()
        if value is None or isinstance(value, bool | int | float | str):
            return value
        raise TypeError(f"cannot checkpoint a {type(value).__name__} at {path}")

    return tensors, walk(state, "state")


def unflatten_state(tree: Any, tensors: dict[str, torch.Tensor], directory: Path | None = None) -> Any:
    """Inverse of :func:`flatten_state`; ``.npy`` arrays are read from ``directory``."""
    if isinstance(tree, dict):
        if "__tensor__" in tree:
            return tensors[tree["__tensor__"]]
        if "__ndarray__" in tree:
            return tensors[tree["__ndarray__"]].numpy()
        if "__npy__" in tree:
            return _load_npy(directory, tree["__npy__"])
        if "__dict__" in tree:
            return {k: unflatten_state(v, tensors, directory) for k, v in tree["__dict__"].items()}
        if "__items__" in tree:
            return {k: unflatten_state(v, tensors, directory) for k, v in tree["__items__"]}
        if "__list__" in tree:
            return [unflatten_state(v, tensors, directory) for v in tree["__list__"]]
        raise CheckpointError("checkpoint metadata has an unknown entry")
    return tree


def _load_npy(directory: Path | None, name: str) -> np.ndarray:
    if directory is None or "/" in name or name.startswith("."):
        raise CheckpointError(f"checkpoint refers to an invalid array file {name!r}")
    try:
        return np.load(directory / name, allow_pickle=False)
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {directory} is missing {name}") from None
    except (ValueError, OSError, EOFError) as error:
        raise CheckpointError(f"checkpoint array {directory / name} is damaged ({error})") from None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fault_injection_pause() -> None:
    """Tests set POLYAK_FAULT_SAVE_DELAY (seconds) to hold a save open before its rename, to kill it there."""
    delay = os.environ.get("POLYAK_FAULT_SAVE_DELAY")
    if delay:
        time.sleep(float(delay))


def save_checkpoint(directory: Path, name: str, state: dict[str, Any], meta: dict[str, Any]) -> Path:
    """Atomically write ``state`` (nested tensors/arrays/scalars) under ``directory/name``."""
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / name
    temporary = directory / f".tmp-{name}"
    if temporary.exists():
        shutil.rmtree(temporary)
    temporary.mkdir()
    try:
        large: dict[str, np.ndarray] = {}
        tensors, tree = flatten_state(state, large)
        for file_name, array in large.items():
            with open(temporary / file_name, "wb") as handle:
                np.save(handle, array, allow_pickle=False)
                handle.flush()
                os.fsync(handle.fileno())
        save_file(tensors, str(temporary / TENSORS_FILE))
        with open(temporary / META_FILE, "w") as handle:
            json.dump({"format_version": FORMAT_VERSION, "meta": meta, "state": tree}, handle)
            handle.flush()
            os.fsync(handle.fileno())
        with open(temporary / TENSORS_FILE, "rb") as handle:
            os.fsync(handle.fileno())
        _fsync_dir(temporary)
        _fault_injection_pause()
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    if final.exists():
        shutil.rmtree(final)
    os.replace(temporary, final)
    _fsync_dir(directory)
    return final


def step_name(env_steps: int) -> str:
    return f"{_PREFIX}{env_steps:012d}"


def complete_checkpoints(directory: Path) -> list[Path]:
    """Step checkpoints that finished writing, oldest first."""
    if not directory.is_dir():
        return []
    found = [
        p for p in directory.iterdir()
        if p.is_dir() and p.name.startswith(_PREFIX) and (p / META_FILE).is_file() and (p / TENSORS_FILE).is_file()
    ]
    return sorted(found, key=lambda p: p.name)


def prune_checkpoints(directory: Path, keep: int) -> None:
    """Delete all but the newest ``keep`` step checkpoints (and stale temporaries)."""
    for stale in directory.glob(".tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    for old in complete_checkpoints(directory)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)


def describe_mismatch(expected: dict[str, Any], found: dict[str, Any]) -> str | None:
    """What differs between two tensor dicts' names and shapes (None when they agree)."""
    shapes = {k: tuple(v.shape) for k, v in expected.items()}
    other = {k: tuple(getattr(v, "shape", ())) for k, v in found.items()}
    if shapes == other:
        return None
    details = []
    missing, extra = sorted(set(shapes) - set(other)), sorted(set(other) - set(shapes))
    if missing:
        details.append(f"missing {', '.join(missing[:3])}")
    if extra:
        details.append(f"unexpected {', '.join(extra[:3])}")
    wrong = sorted(k for k in set(shapes) & set(other) if shapes[k] != other[k])
    if wrong:
        details.append(f"{wrong[0]} has shape {other[wrong[0]]} in the checkpoint but {shapes[wrong[0]]} in the config")
    return "; ".join(details)


def load_checkpoint(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Read a checkpoint directory; returns (state, meta). Raises CheckpointError on any damage."""
    if not path.is_dir():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        with open(path / META_FILE) as handle:
            document = json.load(handle)
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {path} has no {META_FILE}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"checkpoint {path / META_FILE} is not valid JSON ({error})") from None
    if not isinstance(document, dict) or document.get("format_version") != FORMAT_VERSION:
        found = document.get("format_version") if isinstance(document, dict) else None
        raise CheckpointError(
            f"checkpoint {path} has format version {found!r}; this polyak reads version {FORMAT_VERSION}"
        )
    try:
        tensors = load_file(str(path / TENSORS_FILE))
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {path} has no {TENSORS_FILE}") from None
    except (SafetensorError, OSError, ValueError) as error:
        raise CheckpointError(f"checkpoint {path / TENSORS_FILE} is damaged ({error})") from None
    try:
        state = unflatten_state(document["state"], tensors, path)
    except KeyError as error:
        raise CheckpointError(f"checkpoint {path} is incomplete: missing tensor {error}") from None
    return state, document.get("meta", {})
