"""Snapshots of an SB3 suite run, so a run cut short (a sitting that ends, a killed process) goes on from its last
evaluation in the next sitting instead of starting again: one sb3_crossq run at 512 wide takes one to two hours.

A snapshot is SB3's own ``save`` (weights, optimizers, entropy temperature, update counter) and the replay buffer's
filled rows in a NumPy ``.npz`` (SB3's ``save_replay_buffer`` pickles the whole preallocated capacity: 1,000,000
rows, 1.7 GB on Ant-v5 after 20,000 steps). It is written after an evaluation, once that step's transition is stored
and trained on, into a folder of its own; then ``progress.json`` (the evaluations so far, wall and CPU time) names
it, so a process killed while writing leaves the previous snapshot whole. A resumed run is not the uninterrupted
run: the episode under way is cut (the environment is reset) and the random streams are reseeded. Its result file
says where it resumed (``resumed_at_steps``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

PROGRESS = "progress.json"
MODEL = "model.zip"
BUFFER = "replay_buffer.npz"
BUFFER_ARRAYS = ("observations", "next_observations", "actions", "rewards", "dones", "timeouts")


def save(folder: Path, model: Any, progress: dict[str, Any]) -> Path:
    """Write ``model`` and its replay buffer at ``model.num_timesteps``, then point ``progress.json`` at them; return
    the snapshot's folder."""
    name = f"at_{model.num_timesteps}"
    snapshot = folder / name
    shutil.rmtree(snapshot, ignore_errors=True)
    snapshot.mkdir(parents=True)
    model.save(snapshot / MODEL)
    save_buffer(model.replay_buffer, snapshot / BUFFER)
    temporary = folder / f"{PROGRESS}.tmp"
    temporary.write_text(json.dumps({**progress, "snapshot": name}, indent=1))
    os.replace(temporary, folder / PROGRESS)
    for older in folder.glob("at_*"):
        if older.name != name:
            shutil.rmtree(older, ignore_errors=True)
    return snapshot


def load(folder: Path, algorithm: type, env: Any, identity: dict[str, Any], seed: int) -> tuple[Any, dict] | None:
    """The model and progress of ``folder``'s snapshot if it is a snapshot of the run ``identity`` describes (task,
    row, seed, settings), else None (a snapshot of other settings is set aside with a line saying so)."""
    path = folder / PROGRESS
    if not path.exists():
        return None
    progress = json.loads(path.read_text())
    if progress.get("identity") != json.loads(json.dumps(identity)):
        print(f"{folder}: a snapshot of other settings; starting the run afresh", flush=True)
        discard(folder)
        return None
    snapshot = folder / progress["snapshot"]
    model = algorithm.load(snapshot / MODEL, env=env, device="cpu")
    load_buffer(model.replay_buffer, snapshot / BUFFER)
    model._last_obs = None  # the saved observation belongs to the stopped process's episode: learn() resets the env
    model.set_random_seed(seed + model.num_timesteps)
    return model, progress


def save_buffer(buffer: Any, path: Path) -> None:
    """An SB3 ``ReplayBuffer``'s filled rows and its write position."""
    filled = buffer.buffer_size if buffer.full else buffer.pos
    arrays = {name: getattr(buffer, name)[:filled] for name in BUFFER_ARRAYS if getattr(buffer, name) is not None}
    assert all(isinstance(array, np.ndarray) for array in arrays.values()), "a dict-observation buffer"
    with open(path, "wb") as file:
        np.savez(file, pos=buffer.pos, full=buffer.full, **arrays)


def load_buffer(buffer: Any, path: Path) -> None:
    """Fill an SB3 ``ReplayBuffer`` of the same capacity from ``save_buffer``'s file."""
    with np.load(path) as saved:
        for name in BUFFER_ARRAYS:
            if name in saved.files:
                rows = saved[name]
                getattr(buffer, name)[: len(rows)] = rows
        buffer.pos, buffer.full = int(saved["pos"]), bool(saved["full"])


def discard(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
