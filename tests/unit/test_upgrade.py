"""``polyak upgrade``: gin is parsed once, only when the user agrees, and the JSON then loads alone."""

import shutil
from pathlib import Path

import pytest

from polyak.config_json import read_config
from polyak.errors import ConfigError
from polyak.upgrade import upgrade

ROOT = Path(__file__).resolve().parents[2]


def test_refused_without_consent_and_nothing_is_parsed(tmp_path, monkeypatch):
    (tmp_path / "config.gin").write_text("import polyak_marker_module_that_does_not_exist\n")
    with pytest.raises(ConfigError, match="--trust"):
        upgrade(tmp_path, ask=lambda question: False)
    assert not (tmp_path / "config.json").exists()


def test_upgrade_writes_json_equal_to_the_gin_config(tmp_path):
    shutil.copyfile(ROOT / "configs" / "pendulum.gin", tmp_path / "config.gin")
    upgrade(tmp_path, ask=lambda question: True)
    configs, apex = read_config(tmp_path)
    assert configs.trainer.env_id == "Pendulum-v1" and apex is None


def test_pretrained_agent_ships_its_json():
    configs, _ = read_config(ROOT / "src" / "polyak" / "pretrained" / "unity_reacher")
    assert configs.trainer.env_id == "polyak/UnityReacher-v0"
