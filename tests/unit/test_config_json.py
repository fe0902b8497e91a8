"""The JSON form of the configs: a lossless round trip, and every bad value named by its field."""

import json
from pathlib import Path

import pytest

from polyak.config import Configs
from polyak.config_json import configs_from_dict, configs_from_json, configs_to_dict, configs_to_json, read_config
from polyak.errors import CheckpointError, ConfigError
from polyak.ginconf import build_configs_from_gin, parse_gin

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=sorted(p.name for p in (ROOT / "configs").glob("*.gin")))
def configs(request) -> Configs:
    parse_gin(ROOT / "configs" / request.param, [])
    return build_configs_from_gin()


def test_round_trip_is_exact_for_every_shipped_config(configs):
    assert configs_from_json(configs_to_json(configs)) == (configs, None)


def test_round_trip_with_apex():
    from polyak.distributed.apex_config import ApexConfig

    parse_gin(ROOT / "configs" / "pendulum.gin", [])
    configs, apex = build_configs_from_gin(), ApexConfig(num_workers=3)
    assert configs_from_json(configs_to_json(configs, apex)) == (configs, apex)


@pytest.mark.parametrize(("section", "key", "value", "message"), [
    ("actor", "hidden_sizes", "x", "actor/NetworkConfig.hidden_sizes must be a tuple of int"),
    ("critic", "lr", -1.0, "critic/NetworkConfig.lr must be > 0"),
    ("trainer", "num_envs", "20", "TrainerConfig.num_envs must be int"),
    ("trainer", "bogus", 1, "TrainerConfig.bogus is not a setting"),
    ("noise", "kind", "evil", "NoiseConfig.kind must be one of"),
])
def test_bad_values_name_the_field(configs, section, key, value, message):
    data = configs_to_dict(configs)
    data[section][key] = value
    with pytest.raises(ConfigError) as caught:
        configs_from_dict(data)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_missing_field_takes_the_default_and_gin_bindings_do_not_leak_in():
    parse_gin(ROOT / "configs" / "pendulum.gin", ["AgentConfig.gamma = 0.5"])
    data = configs_to_dict(build_configs_from_gin())
    del data["agent"]["gamma"]
    configs, _ = configs_from_dict(data)
    assert configs.agent.gamma == 0.99


def test_old_run_dir_names_the_upgrade_command(tmp_path):
    (tmp_path / "config.gin").write_text("import os\n")
    with pytest.raises(CheckpointError, match=f"polyak upgrade {tmp_path}"):
        read_config(tmp_path)


def test_wrong_format_version_and_sections(tmp_path):
    parse_gin(ROOT / "configs" / "pendulum.gin", [])
    data = configs_to_dict(build_configs_from_gin())
    for change, match in (({"format_version": 9}, "format version 9"), ({"evil": {}}, "unknown configuration section")):
        (tmp_path / "config.json").write_text(json.dumps({**data, **change}))
        with pytest.raises(CheckpointError, match=match):
            read_config(tmp_path)


def _written_before_the_algorithm_field(configs: Configs, **agent_switches) -> dict:
    """``configs`` as a config.json of polyak before AgentConfig.algorithm: TD7's and CrossQ's switches flat in
    the agent section, no td7 or sac sections."""
    data = configs_to_dict(configs)
    data["agent"].pop("algorithm")
    data["agent"].update(agent_switches)
    del data["td7"], data["sac"]
    return data


def test_an_old_td7_run_loads_as_the_td7_algorithm_with_its_switches():
    old = {"hard_target_every": 250, "value_clipping": True, "sale": True, "sale_dim": 128, "sale_hidden": 256,
           "sale_lr": 3e-4, "checkpoint_policy": True, "checkpoint_training": True, "checkpoint_episodes": 20,
           "checkpoint_after": 750000, "checkpoint_reset_weight": 0.9, "target_networks": True}
    configs, _ = configs_from_dict(_written_before_the_algorithm_field(_default_configs(), **old))
    assert configs.agent.algorithm.value == "td7"
    assert configs.td7.sale_dim == 128 and configs.td7.checkpoint_training and configs.td7.hard_target_every == 250


def test_an_old_crossq_run_and_an_old_td3_run_load_as_their_algorithms():
    crossq, _ = configs_from_dict(_written_before_the_algorithm_field(_default_configs(), target_networks=False))
    assert crossq.agent.algorithm.value == "crossq"
    td3, _ = configs_from_dict(_written_before_the_algorithm_field(_default_configs(), target_networks=True,
                                                                   hard_target_every=None, sale=False))
    assert td3.agent.algorithm.value == "ddpg"
    td7_parts_only, _ = configs_from_dict(_written_before_the_algorithm_field(_default_configs(), hard_target_every=50))
    assert td7_parts_only.agent.algorithm.value == "td7" and not td7_parts_only.td7.sale
    assert not td7_parts_only.td7.value_clipping and not td7_parts_only.td7.checkpoint_policy


def _default_configs() -> Configs:
    parse_gin(None, [])
    try:
        return build_configs_from_gin()
    finally:
        import gin

        gin.clear_config()
