"""Crafted files are refused with one clear error, before anything large is allocated or anything runs."""

import json
import struct

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from polyak.checkpoint import load_checkpoint, save_checkpoint
from polyak.errors import CheckpointError
from polyak.safe_files import check_safetensors, load_tensors, read_json, write_error


def _header_file(path, header, data=b""):
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)
    return path


def test_huge_claimed_header_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "x.safetensors"
    path.write_bytes(struct.pack("<Q", 1 << 62) + b"{}")
    with pytest.raises(CheckpointError, match="header claims"):
        load_tensors(path)


@pytest.mark.parametrize(("entry", "match"), [
    ({"dtype": "O", "shape": [1], "data_offsets": [0, 8]}, "unsupported dtype"),
    ({"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}, "invalid shape"),
    ({"dtype": "F32", "shape": [1 << 40, 1 << 20], "data_offsets": [0, 4]}, "does not fit"),
    ({"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}, "does not fit"),
    ({"dtype": "F32", "shape": [1], "data_offsets": [0, 4096]}, "does not fit"),
])
def test_wrong_dtypes_shapes_and_offsets_are_refused(tmp_path, entry, match):
    path = _header_file(tmp_path / "x.safetensors", {"w": entry}, b"\0" * 8)
    with pytest.raises(CheckpointError, match=match):
        check_safetensors(path)


def test_json_larger_than_the_limit_is_not_read(tmp_path):
    path = tmp_path / "state.json"
    with open(path, "wb") as handle:  # a sparse 1 GB file: no disk used, and it must not be read
        handle.truncate(1 << 30)
    with pytest.raises(CheckpointError, match="1073741824 bytes"):
        read_json(path)


def test_symlink_out_of_the_directory_is_refused(tmp_path):
    outside = tmp_path / "secret.json"
    outside.write_text("{}")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.json").symlink_to(outside)
    with pytest.raises(CheckpointError, match="points outside"):
        read_json(tmp_path / "run" / "config.json", tmp_path / "run")


def _checkpoint(tmp_path, actor):
    return save_checkpoint(tmp_path / "checkpoints", "step_000000000001", {"agent": {"actor": actor}}, {})


def test_nan_weights_are_refused(tmp_path):
    path = _checkpoint(tmp_path, {"w": torch.tensor([1.0, float("nan")])})
    with pytest.raises(CheckpointError, match="NaN or Inf"):
        load_checkpoint(path)


def test_symlinked_checkpoint_files_outside_are_refused(tmp_path):
    path = _checkpoint(tmp_path, {"w": torch.ones(2)})
    save_file({"w": torch.ones(2)}, str(tmp_path / "elsewhere.safetensors"))
    (path / "state.safetensors").unlink()
    (path / "state.safetensors").symlink_to(tmp_path / "elsewhere.safetensors")
    with pytest.raises(CheckpointError, match="points outside"):
        load_checkpoint(path)


def test_npy_claiming_more_data_than_it_holds_is_refused(tmp_path):
    path = _checkpoint(tmp_path, {"w": torch.ones(2)})
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1, np.float32))
    header["shape"] = (1 << 40,)
    with open(path / "big.npy", "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, header)
        handle.write(b"\0" * 16)
    meta = json.loads((path / "state.json").read_text())
    meta["state"]["__dict__"]["extra"] = {"__npy__": "big.npy"}
    (path / "state.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="damaged"):
        load_checkpoint(path)


def test_safetensors_write_errors_become_os_errors():
    from safetensors import SafetensorError

    error = write_error(SafetensorError('Error while serializing: IoError(Os { code: 27, kind: FileTooLarge, '
                                        'message: "File too large" })'))
    assert isinstance(error, OSError) and error.errno == 27 and error.strerror == "File too large"
