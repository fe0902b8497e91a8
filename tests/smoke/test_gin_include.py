"""A config with ``include`` parses in a fresh interpreter that imported nothing else of polyak's: gin-config 0.5
resolves includes with ``importlib.util`` without importing it, so parsing failed unless some other import had."""

from __future__ import annotations

import subprocess
import sys

from tests.smoke.cli_helpers import ROOT


def test_a_config_with_an_include_parses_in_a_fresh_interpreter():
    code = ("from pathlib import Path; from polyak.ginconf import build_configs_from_gin, parse_gin; "
            "parse_gin(Path('configs/suite/hopper_crossq.gin'), []); print(build_configs_from_gin().trainer.env_id)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hopper-v5"
