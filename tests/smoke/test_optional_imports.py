"""The optional extras stay optional: importing polyak and its CLI loads none of them (PyBullet, SB3, ONNX,
W&B). Ray has its own check in ``tests/distributed/test_no_ray_in_core.py``."""

from __future__ import annotations

import subprocess
import sys

import pytest

OPTIONAL = ("pybullet", "pybullet_envs_gymnasium", "stable_baselines3", "sb3_contrib", "onnx", "onnxruntime", "wandb")

CHECK = f"""
import sys
import polyak, polyak.cli, polyak.trainer, polyak.envs, polyak.record, polyak.playback, polyak.plot
try:
    polyak.cli.main(["train", "--help"])
except SystemExit:
    pass
optional = {OPTIONAL!r}
print("LOADED:", sorted(m for m in sys.modules if m.split(".")[0] in optional))
"""


def test_import_polyak_loads_no_optional_extra():
    result = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "LOADED: []" in result.stdout, result.stdout[-2000:]


def test_the_check_sees_an_extra_that_is_imported():
    """The check above is not blind: importing an extra by hand shows up in it."""
    pytest.importorskip("pybullet_envs_gymnasium")
    check = CHECK.replace("import sys\n", "import sys\nimport pybullet_envs_gymnasium\n", 1)
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "'pybullet_envs_gymnasium'" in result.stdout
