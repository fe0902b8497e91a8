"""Preallocated NumPy ring buffer of transitions (Lin 1992; Mnih et al. 2015)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from polyak.types import Batch


class ReplayStorage:
    """Fixed-capacity ring of transitions; memory is reserved once and pages fill as rows are written.

    With ``per_sample_discount`` each row also stores its bootstrap discount (gamma^k of an n-step
    return) and batches carry it as a tensor; otherwise ``gather`` uses the one discount it is given.
    """

    def __init__(self, capacity: int, obs_dim: int, action_dim: int, *, per_sample_discount: bool = False) -> None:
        self.capacity = capacity
        self.obs = np.empty((capacity, obs_dim), dtype=np.float32)
        self.action = np.empty((capacity, action_dim), dtype=np.float32)
        self.reward = np.empty((capacity,), dtype=np.float32)
        self.next_obs = np.empty((capacity, obs_dim), dtype=np.float32)
        self.terminated = np.empty((capacity,), dtype=np.float32)
        self.discount = np.empty((capacity,), dtype=np.float32) if per_sample_discount else None
        self.FIELDS = ("obs", "action", "reward", "next_obs", "terminated") + (
            ("discount",) if per_sample_discount else ())
        self.position = 0
        self.size = 0
        self.added = 0  # rows ever added; row number i lives at physical row (i - offset) % capacity
        self.offset = 0
        self.chunk_log: dict[str, list[dict[str, Any]]] = {}  # see StoredRows
        # Zero-copy tensor views of the arrays, and reused batch tensors (see gather).
        self._sources = {name: torch.from_numpy(getattr(self, name)) for name in self.FIELDS}
        self._staging: dict[str, torch.Tensor] | None = None
        self._staging_pinned = False
        self._device_buffers: dict[tuple[int, torch.device], dict[str, torch.Tensor]] = {}
        self._copied: torch.cuda.Event | None = None

    def __len__(self) -> int:
        return self.size

    def add(
        self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, next_obs: np.ndarray, terminated: np.ndarray,
        discount: np.ndarray | None = None,
    ) -> np.ndarray:
        """Append a batch of transitions (one per env), overwriting the oldest; returns their rows.

        Of a batch larger than the capacity only the newest ``capacity`` rows survive; the returned
        rows then repeat, and the last write to each row is the one kept.
        """
        count = len(reward)
        rows = (self.position + np.arange(count)) % self.capacity
        self.obs[rows] = obs
        self.action[rows] = action
        self.reward[rows] = reward
        self.next_obs[rows] = next_obs
        self.terminated[rows] = terminated
        if self.discount is not None:
            if discount is None:
                raise ValueError("this storage keeps a discount per row: pass discount=")
            self.discount[rows] = discount
        self.position = int((self.position + count) % self.capacity)
        self.size = min(self.size + count, self.capacity)
        self.added += count
        return rows

    def clear(self) -> None:
        """Forget every row (the ``buffer_life`` of the Reacher notebook); memory stays reserved."""
        self.position = 0
        self.size = 0
        self.offset = self.added

    def gather(self, indices: np.ndarray, discount: float, device: torch.device) -> Batch:
        """Rows ``indices`` as tensors on ``device``; ``discount`` applies unless rows store their own.

        The rows are copied into tensors allocated once per batch size and reused by the next
        call, so a batch is valid until the next ``gather``. On CUDA they are staged in pinned
        memory and copied asynchronously into reused device tensors.
        """
        rows = torch.from_numpy(np.asarray(indices, dtype=np.int64))
        staging = self._staging_for(len(rows), device)
        if self._copied is not None:  # the previous asynchronous copy must have read the staging tensors
            self._copied.synchronize()
        for name in self.FIELDS:
            torch.index_select(self._sources[name], 0, rows, out=staging[name])
        if device.type == "cpu":
            out = staging
        else:
            out = self._device_buffers[(len(rows), device)]
            for name in self.FIELDS:
                out[name].copy_(staging[name], non_blocking=True)
            if device.type == "cuda":
                self._copied = torch.cuda.Event()
                self._copied.record()
        return Batch(
            obs=out["obs"], action=out["action"], reward=out["reward"], next_obs=out["next_obs"],
            terminated=out["terminated"], discount=discount if self.discount is None else out["discount"],
            indices=indices,
        )

    def _staging_for(self, size: int, device: torch.device) -> dict[str, torch.Tensor]:
        pin = device.type == "cuda"
        if self._staging is None or self._staging["reward"].shape[0] != size or self._staging_pinned != pin:
            self._staging = {name: torch.empty((size, *self._sources[name].shape[1:]), pin_memory=pin)
                             for name in self.FIELDS}
            self._staging_pinned = pin
        if device.type != "cpu" and (size, device) not in self._device_buffers:
            self._device_buffers[(size, device)] = {
                name: torch.empty_like(tensor, device=device) for name, tensor in self._staging.items()
            }
        return self._staging

    def rows(self, start: int, end: int) -> dict[str, np.ndarray]:
        """Copies of the rows added ``start``-th to ``end``-th (counting every row ever added)."""
        if not self.added - self.size <= start <= end <= self.added:
            raise ValueError(f"rows {start}..{end} are not stored (stored: {self.added - self.size}..{self.added})")
        physical = (np.arange(start, end) - self.offset) % self.capacity
        return {name: getattr(self, name)[physical] for name in self.FIELDS}

    def state_dict(self) -> dict[str, Any]:
        """The stored rows (as :class:`StoredRows`, which checkpoints write incrementally) and the write position."""
        return {"rows": StoredRows(self, self.added - self.size, self.added), "position": self.position,
                "size": self.size, "added": self.added, "offset": self.offset}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        size, position = int(state["size"]), int(state["position"])
        if not 0 <= size <= self.capacity or not 0 <= position < self.capacity:
            raise ValueError(f"replay holds {size} rows at position {position} but capacity is {self.capacity}")
        if "rows" not in state:  # format 1: the filled part as arrays, position and size
            self._place(0, {name: state[name] for name in self.FIELDS}, size)
            self.added, self.offset = size, size - position
        else:
            added, offset = int(state["added"]), int(state["offset"])
            if (added - offset) % self.capacity != position or size > added - offset:
                raise ValueError("replay position, size and row count disagree")
            rows = state["rows"]
            if (rows.start, rows.end) != (added - size, added):
                raise ValueError(f"replay rows {rows.start}..{rows.end} do not match its {size} rows up to {added}")
            self.added, self.offset = added, offset
            for start, arrays in rows.pieces:
                count = len(arrays["reward"])
                self._place((start - offset) % self.capacity, arrays, count)
            self.chunk_log = dict(rows.chunk_log)
        self.size, self.position = size, position

    def _place(self, first: int, arrays: dict[str, np.ndarray], count: int) -> None:
        """Write ``count`` rows starting at physical row ``first`` (wrapping), checking shapes and dtypes."""
        physical = (first + np.arange(count)) % self.capacity
        for name in self.FIELDS:
            array = np.asarray(arrays[name])
            expected = (count, *getattr(self, name).shape[1:])
            if array.shape != expected or array.dtype != np.float32:
                raise ValueError(f"replay field {name} has shape {array.shape} and dtype {array.dtype}, "
                                 f"expected {expected} float32")
            getattr(self, name)[physical] = array


@dataclass
class StoredRows:
    """Rows ``start``..``end`` (counted over every row ever added) of a storage, for a checkpoint to write.

    Rows never change once added (new rows take new numbers), so a checkpoint writes only those
    no earlier checkpoint wrote; ``storage.chunk_log`` remembers, per chunk directory, which chunk
    files hold which rows.
    """

    storage: ReplayStorage
    start: int
    end: int

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(self.storage.FIELDS)

    def read(self, start: int, end: int) -> dict[str, np.ndarray]:
        return self.storage.rows(start, end)

    @property
    def pieces(self) -> list[tuple[int, dict[str, np.ndarray]]]:
        """All rows as one piece, so a state dict also loads in memory (as :class:`LoadedRows` does)."""
        return [(self.start, self.read(self.start, self.end))]

    @property
    def chunk_log(self) -> dict[str, list[dict[str, Any]]]:
        return {}


@dataclass
class LoadedRows:
    """Rows read back from chunk files: ``pieces`` of (first row number, field arrays)."""

    start: int
    end: int
    pieces: list[tuple[int, dict[str, np.ndarray]]]
    chunk_log: dict[str, list[dict[str, Any]]]
