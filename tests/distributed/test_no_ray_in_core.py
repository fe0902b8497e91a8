"""The core never imports ray: ``import polyak``, ``import polyak.cli`` and ``polyak --help`` stay Ray-free."""

import subprocess
import sys

from tests.distributed.helpers import polyak, polyak_env

CHECK = """
import sys
import polyak, polyak.cli, polyak.distributed, polyak.trainer, polyak.plot
from polyak.distributed import apex_config, grid
try:
    polyak.cli.main(["--help"])
except SystemExit:
    pass
try:
    polyak.cli.main(["sweep", "--help"])
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m == "ray" or m.startswith("ray."))
print("RAY MODULES:", loaded)
sys.exit(1 if loaded else 0)
"""


def test_import_polyak_and_help_never_import_ray():
    result = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=polyak_env(),
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RAY MODULES: []" in result.stdout


def test_help_lists_sweep_and_workers():
    assert "sweep" in polyak("--help").stdout
    assert "--workers" in polyak("train", "--help").stdout
    sweep_help = polyak("sweep", "--help").stdout
    assert "--seeds" in sweep_help and "--grid" in sweep_help and "--address" in sweep_help
