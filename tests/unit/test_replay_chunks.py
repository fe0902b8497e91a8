"""Checkpoints write the replay incrementally: each row once, shared by the kept checkpoints, exact on load."""

import json

import numpy as np
import pytest

import polyak.checkpoint as checkpoint
from polyak.checkpoint import CHUNK_DIR, complete_checkpoints, load_checkpoint, prune_checkpoints, save_checkpoint
from polyak.errors import CheckpointError
from polyak.replay.storage import ReplayStorage

OBS, ACT = 3, 2


def _add(storage, rng, count):
    storage.add(rng.normal(size=(count, OBS)).astype(np.float32), rng.normal(size=(count, ACT)).astype(np.float32),
                rng.normal(size=count).astype(np.float32), rng.normal(size=(count, OBS)).astype(np.float32),
                (rng.random(count) < 0.1).astype(np.float32), np.full(count, 0.9, np.float32))


def _live(storage):
    order = (storage.position - storage.size + np.arange(storage.size)) % storage.capacity
    return {name: getattr(storage, name)[order] for name in storage.FIELDS}


def _save(directory, storage, step, keep=2):
    save_checkpoint(directory, f"step_{step:012d}", {"replay": storage.state_dict()}, {})
    prune_checkpoints(directory, keep)


def _chunk_rows(directory):
    return sum(int(p.name.split("_")[2]) - int(p.name.split("_")[1]) for p in (directory / CHUNK_DIR).iterdir())


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(checkpoint, "CHUNK_ROWS", 7)


def test_round_trip_is_exact_across_wrap_around_and_clear(tmp_path):
    rng = np.random.default_rng(0)
    storage = ReplayStorage(50, OBS, ACT, per_sample_discount=True)
    for step, count in enumerate([10, 30, 25, 41, 3, 60, 5]):
        if step == 4:
            storage.clear()
        _add(storage, rng, count)
        _save(tmp_path, storage, step)
        state, _ = load_checkpoint(complete_checkpoints(tmp_path)[-1])
        restored = ReplayStorage(50, OBS, ACT, per_sample_discount=True)
        restored.load_state_dict(state["replay"])
        assert (restored.position, restored.size) == (storage.position, storage.size)
        for name, array in _live(storage).items():
            np.testing.assert_array_equal(_live(restored)[name], array, err_msg=f"{name} after save {step}")


def test_each_row_is_written_once_and_kept_checkpoints_share_it(tmp_path):
    rng = np.random.default_rng(1)
    storage = ReplayStorage(1000, OBS, ACT, per_sample_discount=True)
    written = []
    real = checkpoint.save_arrays

    def counting(arrays, path):
        written.append(len(arrays["reward"]))
        real(arrays, path)

    checkpoint.save_arrays = counting
    try:
        for step in range(6):
            _add(storage, rng, 100)
            _save(tmp_path, storage, step, keep=3)
    finally:
        checkpoint.save_arrays = real
    assert sum(written) == 600  # not 100 + 200 + ... + 600
    assert _chunk_rows(tmp_path) == 600  # one copy of the rows for three checkpoints
    assert len(complete_checkpoints(tmp_path)) == 3


def test_resumed_storage_continues_incrementally(tmp_path):
    rng = np.random.default_rng(2)
    storage = ReplayStorage(100, OBS, ACT)
    _add(storage, rng, 40)
    _save(tmp_path, storage, 0)
    state, _ = load_checkpoint(complete_checkpoints(tmp_path)[-1])
    resumed = ReplayStorage(100, OBS, ACT)
    resumed.load_state_dict(state["replay"])
    before = {p.name for p in (tmp_path / CHUNK_DIR).iterdir()}
    _add(resumed, rng, 5)
    _save(tmp_path, resumed, 1)
    new = {p.name for p in (tmp_path / CHUNK_DIR).iterdir()} - before
    assert [n.split("_")[1:3] for n in new] == [["000000000040", "000000000045"]]


def test_rows_overwritten_in_the_ring_are_pruned(tmp_path):
    rng = np.random.default_rng(3)
    storage = ReplayStorage(30, OBS, ACT)
    for step in range(10):
        _add(storage, rng, 20)
        _save(tmp_path, storage, step, keep=1)
    assert _chunk_rows(tmp_path) <= 30 + 2 * 7  # the live rows, rounded out to whole chunks


def _one_chunk(tmp_path):
    storage = ReplayStorage(20, OBS, ACT)
    _add(storage, np.random.default_rng(4), 5)
    _save(tmp_path, storage, 0)
    return complete_checkpoints(tmp_path)[-1], next((tmp_path / CHUNK_DIR).iterdir())


def test_damaged_or_missing_chunks_are_refused(tmp_path):
    from safetensors.numpy import save_file

    step, chunk = _one_chunk(tmp_path)
    save_file({"obs": np.zeros((5, OBS), np.float64)}, str(chunk))
    with pytest.raises(CheckpointError, match="damaged"):
        load_checkpoint(step)
    chunk.unlink()
    with pytest.raises(CheckpointError, match="missing"):
        load_checkpoint(step)


def test_chunk_names_cannot_leave_the_chunk_directory(tmp_path):
    step, chunk = _one_chunk(tmp_path)
    meta = step / "state.json"
    meta.write_text(meta.read_text().replace(chunk.name, "../../../etc/passwd"))
    with pytest.raises(CheckpointError, match="invalid replay chunk"):
        load_checkpoint(step)


def test_chunk_list_must_cover_the_rows(tmp_path):
    step, _ = _one_chunk(tmp_path)
    document = json.loads((step / "state.json").read_text())
    document["state"]["__dict__"]["replay"]["__dict__"]["rows"]["__chunks__"] = []
    (step / "state.json").write_text(json.dumps(document))
    with pytest.raises(CheckpointError, match="does not list replay chunks"):
        load_checkpoint(step)
