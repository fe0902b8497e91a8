"""Checkpoints as safetensors (tensors) + JSON (everything else); never pickle.

A checkpoint is a directory ``checkpoints/step_<env_steps>/`` holding ``state.safetensors``,
``state.json`` and one ``.npy`` file per other large array (loaded with ``allow_pickle=False``).
It is written under a temporary name, fsynced and renamed, so a directory with the final name is
always complete; the newest ``keep`` are kept.

The replay's rows are shared: ``checkpoints/replay/`` holds chunk files of rows (safetensors), each
written once, by the first checkpoint that needs it; a checkpoint lists the chunks it reads in its
``state.json`` and ``chunks.json``, and chunks no kept checkpoint lists are deleted. A checkpoint
thus costs time and disk in proportion to the rows added since the previous one.

Reading never runs code and is bounded: sizes, safetensors headers and symlinks are checked first
(:mod:`polyak.safe_files`).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.numpy import save_file as save_arrays
from safetensors.torch import save_file

from polyak.errors import CheckpointError, not_a_directory
from polyak.replay.storage import LoadedRows, StoredRows
from polyak.safe_files import inside, load_arrays, load_tensors, read_json, require_finite, write_error

FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
TENSORS_FILE = "state.safetensors"
META_FILE = "state.json"
CHUNKS_FILE = "chunks.json"
CHUNK_DIR = "replay"
CHUNK_ROWS = 1 << 16  # rows per chunk file
_PREFIX = "step_"
_CHUNK_NAME = re.compile(r"chunk_\d{12}_\d{12}_[0-9a-f]{8}\.safetensors")
LARGE_ARRAY = 1 << 20  # elements; bigger numpy arrays are written as .npy without a copy


def flatten_state(
    state: Any, large: dict[str, np.ndarray] | None = None, chunks: ChunkWriter | None = None,
) -> tuple[dict[str, torch.Tensor], Any]:
    """Split a nested state into named tensors and a JSON-able tree that refers to them.

    When ``large`` is given, numpy arrays of more than ``LARGE_ARRAY`` elements go there instead
    (keyed by file name) so they can be written without copying. Replay rows (:class:`StoredRows`)
    need ``chunks``, which writes the rows no earlier checkpoint wrote.
    """
    tensors: dict[str, torch.Tensor] = {}

    def walk(value: Any, path: str) -> Any:
        if isinstance(value, StoredRows):
            if chunks is None:
                raise TypeError(f"replay rows at {path} need a chunk directory")
            return chunks.write(value)
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
    """Inverse of :func:`flatten_state`; ``.npy`` arrays are read from ``directory``, chunks from its parent."""
    if isinstance(tree, dict):
        if "__tensor__" in tree:
            return tensors[tree["__tensor__"]]
        if "__ndarray__" in tree:
            return tensors[tree["__ndarray__"]].numpy()
        if "__npy__" in tree:
            return _load_npy(directory, tree["__npy__"])
        if "__chunks__" in tree:
            if directory is None:
                raise CheckpointError("checkpoint refers to replay chunks but has no directory")
            return _load_chunks(directory.parent, tree)
        if "__dict__" in tree:
            return {k: unflatten_state(v, tensors, directory) for k, v in tree["__dict__"].items()}
        if "__items__" in tree:
            return {k: unflatten_state(v, tensors, directory) for k, v in tree["__items__"]}
        if "__list__" in tree:
            return [unflatten_state(v, tensors, directory) for v in tree["__list__"]]
        raise CheckpointError("checkpoint metadata has an unknown entry")
    return tree


def _load_npy(directory: Path | None, name: str) -> np.ndarray:
    if directory is None or not isinstance(name, str) or "/" in name or name.startswith("."):
        raise CheckpointError(f"checkpoint refers to an invalid array file {name!r}")
    path = inside(directory / name, directory.parent)
    try:  # memory-mapped first: a header claiming more data than the file holds fails here, unallocated
        return np.array(np.load(path, allow_pickle=False, mmap_mode="r"))
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {directory} is missing {name}") from None
    except (ValueError, OSError, EOFError) as error:
        raise CheckpointError(f"checkpoint array {path} is damaged ({error})") from None


class ChunkWriter:
    """Writes replay rows into ``directory`` as chunk files, only those no earlier checkpoint wrote.

    ``written`` lists the chunk records of this save (to commit to the storage's ``chunk_log``
    once the checkpoint is complete) and ``created`` the new files (to delete if it fails).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.key = str(directory.resolve())
        self.token = secrets.token_hex(4)  # new names per writer: never overwrite a chunk a checkpoint lists
        self.created: list[Path] = []
        self.logs: list[tuple[StoredRows, list[dict[str, Any]]]] = []

    def write(self, rows: StoredRows) -> dict[str, Any]:
        known = [c for c in rows.storage.chunk_log.get(self.key, []) if c["end"] > rows.start]
        covered = max([rows.start, *(c["end"] for c in known)])
        for first in range(covered, rows.end, CHUNK_ROWS):
            last = min(first + CHUNK_ROWS, rows.end)
            name = f"chunk_{first:012d}_{last:012d}_{self.token}.safetensors"
            self.directory.mkdir(parents=True, exist_ok=True)
            temporary = self.directory / f".tmp-{name}"
            self.created.append(temporary)
            save_arrays(rows.read(first, last), str(temporary))
            _fsync_file(temporary)
            temporary.replace(self.directory / name)
            self.created.append(self.directory / name)
            known.append({"file": name, "start": first, "end": last})
        self.logs.append((rows, known))
        return {"__chunks__": known, "start": rows.start, "end": rows.end, "fields": list(rows.fields)}

    def commit(self) -> None:
        for rows, known in self.logs:
            rows.storage.chunk_log = {self.key: known}

    def discard(self) -> None:
        for path in self.created:
            path.unlink(missing_ok=True)


def _load_chunks(checkpoints: Path, tree: dict[str, Any]) -> LoadedRows:
    """Replay rows ``start``..``end`` from the chunk files a checkpoint lists, each validated."""
    directory = checkpoints / CHUNK_DIR
    try:
        start, end, records, fields = int(tree["start"]), int(tree["end"]), list(tree["__chunks__"]), tree["fields"]
        names = [str(r["file"]) for r in records]
        spans = [(int(r["start"]), int(r["end"])) for r in records]
    except (KeyError, TypeError, ValueError):
        raise CheckpointError(f"checkpoint in {checkpoints} has a damaged replay chunk list") from None
    if any(not _CHUNK_NAME.fullmatch(name) for name in names):
        raise CheckpointError(f"checkpoint in {checkpoints} refers to an invalid replay chunk file")
    ordered = sorted(zip(spans, names, strict=True))
    reach = start
    for (first, last), _ in ordered:
        if first > reach or last <= first:
            break
        reach = max(reach, last)
    if reach < end:
        raise CheckpointError(f"checkpoint in {checkpoints} does not list replay chunks for rows {reach}..{end}")
    pieces = []
    for (first, last), name in ordered:
        lo, hi = max(first, start), min(last, end)
        if lo >= hi:
            continue
        arrays = load_arrays(directory / name, checkpoints) if (directory / name).exists() or (
            directory / name).is_symlink() else None
        if arrays is None:
            raise CheckpointError(f"replay chunk {directory / name} is missing")
        if sorted(arrays) != sorted(fields) or any(len(a) != last - first for a in arrays.values()):
            raise CheckpointError(f"replay chunk {directory / name} is damaged: wrong fields or row count")
        pieces.append((lo, {k: a[lo - first: hi - first] for k, a in arrays.items()}))
    log = {str(directory.resolve()): [{"file": n, "start": f, "end": la} for (f, la), n in ordered]}
    return LoadedRows(start, end, pieces, log)


def _fsync_file(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_checkpoint(directory: Path, name: str, state: dict[str, Any], meta: dict[str, Any]) -> Path:
    """Atomically write ``state`` (nested tensors/arrays/scalars) under ``directory/name``.

    Any failed write (disk full, file too large, read-only, permission) raises ``OSError`` and
    leaves the earlier checkpoints as they were.
    """
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / name
    temporary = directory / f".tmp-{name}"
    if temporary.exists():
        shutil.rmtree(temporary)
    chunks = ChunkWriter(directory / CHUNK_DIR)
    try:
        temporary.mkdir()
        large: dict[str, np.ndarray] = {}
        tensors, tree = flatten_state(state, large, chunks)
        for file_name, array in large.items():
            with open(temporary / file_name, "wb") as handle:
                np.save(handle, array, allow_pickle=False)
                handle.flush()
                os.fsync(handle.fileno())
        save_file(tensors, str(temporary / TENSORS_FILE))
        _fsync_file(temporary / TENSORS_FILE)
        referenced = sorted({c["file"] for _, known in chunks.logs for c in known})
        for file_name, document in ((CHUNKS_FILE, referenced),
                                    (META_FILE, {"format_version": FORMAT_VERSION, "meta": meta, "state": tree})):
            with open(temporary / file_name, "w") as handle:
                json.dump(document, handle)
                handle.flush()
                os.fsync(handle.fileno())
        _fsync_dir(temporary)
        if chunks.created:
            _fsync_dir(chunks.directory)
        if final.exists():
            shutil.rmtree(final)
        os.replace(temporary, final)
        _fsync_dir(directory)
    except BaseException as error:
        shutil.rmtree(temporary, ignore_errors=True)
        chunks.discard()
        if isinstance(error, Exception) and not isinstance(error, OSError | TypeError | CheckpointError):
            raise write_error(error) from None  # safetensors reports a failed write as SafetensorError
        raise
    chunks.commit()
    return final


def step_name(env_steps: int) -> str:
    return f"{_PREFIX}{env_steps:012d}"


def steps_of(checkpoint: Path) -> int:
    """The env steps a step checkpoint was taken at (the inverse of ``step_name``)."""
    return int(checkpoint.name.removeprefix(_PREFIX))


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
    """Delete all but the newest ``keep`` step checkpoints, stale temporaries and chunks none of them lists."""
    for stale in directory.glob(".tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    for old in complete_checkpoints(directory)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    chunk_dir = directory / CHUNK_DIR
    if not chunk_dir.is_dir():
        return
    referenced: set[str] = set()
    for checkpoint in [*complete_checkpoints(directory), directory / "best"]:
        try:
            listed = json.loads((checkpoint / CHUNKS_FILE).read_text())
        except (OSError, ValueError):
            listed = None
        if not isinstance(listed, list):  # cannot tell what it needs: delete nothing
            if (checkpoint / META_FILE).is_file() and checkpoint.name != "best":
                return
            continue
        referenced.update(str(name) for name in listed)
    for chunk in chunk_dir.iterdir():
        if chunk.name not in referenced:
            chunk.unlink(missing_ok=True)


def describe_mismatch(expected: dict[str, Any], found: dict[str, Any]) -> str | None:
    """What differs between two tensor dicts' names, shapes and dtypes (None when they agree)."""
    shapes = {k: tuple(v.shape) for k, v in expected.items()}
    other = {k: tuple(getattr(v, "shape", ())) for k, v in found.items()}
    dtypes = sorted(k for k in set(expected) & set(found)
                    if getattr(found[k], "dtype", None) != getattr(expected[k], "dtype", None))
    if shapes == other and not dtypes:
        return None
    if shapes == other:  # load_state_dict would cast silently: an int weight is not a trained weight
        name = dtypes[0]
        return f"{name} is {found[name].dtype} in the checkpoint but {expected[name].dtype} in the config"
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
    """Read a checkpoint directory; returns (state, meta). Raises CheckpointError on any damage.

    Reads JSON, safetensors and ``.npy`` (no pickle) only, each checked before it is read; files
    reached through symlinks must stay inside the checkpoints directory.
    """
    if not path.is_dir():
        raise CheckpointError(f"checkpoint {path} {not_a_directory(path)}")
    root = path.parent
    if not (path / META_FILE).exists() and not (path / META_FILE).is_symlink():
        raise CheckpointError(f"checkpoint {path} has no {META_FILE}")
    document = read_json(path / META_FILE, root)
    if not isinstance(document, dict) or document.get("format_version") not in READABLE_VERSIONS:
        found = document.get("format_version") if isinstance(document, dict) else None
        raise CheckpointError(
            f"checkpoint {path} has format version {found!r}; this polyak reads version {FORMAT_VERSION}"
        )
    if not (path / TENSORS_FILE).exists() and not (path / TENSORS_FILE).is_symlink():
        raise CheckpointError(f"checkpoint {path} has no {TENSORS_FILE}")
    tensors = load_tensors(path / TENSORS_FILE, root)
    try:
        state = unflatten_state(document.get("state"), tensors, path)
    except KeyError as error:
        raise CheckpointError(f"checkpoint {path} is incomplete: missing tensor {error}") from None
    except (TypeError, ValueError, AttributeError):
        raise CheckpointError(f"checkpoint {path / META_FILE} is damaged: an entry has the wrong form") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"checkpoint {path / META_FILE} is damaged: its state is not a mapping")
    agent = state.get("agent")
    if isinstance(agent, dict):
        for net in ("actor", "actor_target", "critic", "critic_target"):
            if isinstance(agent.get(net), dict):
                require_finite(agent[net], f"checkpoint {path} ({net})")
    meta = document.get("meta", {})
    return state, meta if isinstance(meta, dict) else {}
