"""safetensors + JSON checkpoints: round trip, atomicity, pruning, damage."""

import json

import numpy as np
import pytest
import torch

from polyak.checkpoint import (
    complete_checkpoints,
    flatten_state,
    load_checkpoint,
    prune_checkpoints,
    save_checkpoint,
    step_name,
    unflatten_state,
)
from polyak.errors import CheckpointError

STATE = {
    "net": {"w": torch.arange(6.0).reshape(2, 3), "n": torch.tensor(4)},
    "optim": {"state": {0: {"step": torch.tensor(3.0)}}, "param_groups": [{"lr": 1e-3, "params": [0]}]},
    "rng": np.random.default_rng(0).bit_generator.state,
    "array": np.array([1.5, 2.5]),
    "counters": (1, 2.5, None, "x", True),
}


def test_flatten_round_trip_preserves_types_and_int_keys():
    tensors, tree = flatten_state(STATE)
    json.dumps(tree)  # JSON-able
    back = unflatten_state(json.loads(json.dumps(tree)), tensors)
    assert torch.equal(back["net"]["w"], STATE["net"]["w"])
    assert 0 in back["optim"]["state"]
    assert back["rng"] == STATE["rng"]
    np.testing.assert_array_equal(back["array"], STATE["array"])
    assert back["counters"] == [1, 2.5, None, "x", True]


def test_save_load_and_keep_last_n(tmp_path):
    for step in (100, 200, 300, 400):
        save_checkpoint(tmp_path, step_name(step), STATE, {"env_steps": step})
    prune_checkpoints(tmp_path, keep=2)
    names = [p.name for p in complete_checkpoints(tmp_path)]
    assert names == [step_name(300), step_name(400)]
    state, meta = load_checkpoint(tmp_path / step_name(400))
    assert meta == {"env_steps": 400}
    assert torch.equal(state["net"]["w"], STATE["net"]["w"])


def test_unfinished_write_is_not_a_complete_checkpoint(tmp_path):
    save_checkpoint(tmp_path, step_name(1), STATE, {})
    partial = tmp_path / f".tmp-{step_name(2)}"
    partial.mkdir()
    (partial / "state.json").write_text("{")
    assert [p.name for p in complete_checkpoints(tmp_path)] == [step_name(1)]


@pytest.mark.parametrize(("damage", "message"), [
    (lambda d: (d / "state.json").write_text("{not json"), "not valid JSON"),
    (lambda d: (d / "state.safetensors").write_bytes(b"\x00\x01garbage"), "damaged"),
    (lambda d: (d / "state.safetensors").unlink(), "has no state.safetensors"),
    (lambda d: (d / "state.json").write_text(json.dumps({"format_version": 99})), "format version 99"),
])
def test_damaged_checkpoints_raise_clear_errors(tmp_path, damage, message):
    path = save_checkpoint(tmp_path, step_name(5), STATE, {})
    damage(path)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)
