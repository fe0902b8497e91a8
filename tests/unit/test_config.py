"""Config validation, coercion and gin scoping."""

import re
import sys

import gin
import numpy as np
import pytest

from polyak.config import (
    Activation,
    AgentConfig,
    NetworkConfig,
    NoiseConfig,
    ReplayConfig,
    TrainerConfig,
    whole_number,
)
from polyak.errors import ConfigError
from polyak.ginconf import build_configs_from_gin, parse_gin


def test_strings_become_enums_and_lists_become_tuples():
    config = NetworkConfig(activation="leaky_relu", hidden_sizes=[64, 32])
    assert config.activation is Activation.LEAKY_RELU
    assert config.hidden_sizes == (64, 32)
    assert isinstance(AgentConfig(gamma=1).gamma, float)


@pytest.mark.parametrize(("make", "message"), [
    (lambda: NetworkConfig(hidden_sizes=(64, 0)), "hidden_sizes must be positive sizes"),
    (lambda: NetworkConfig(hidden_sizes=()), "hidden_sizes must be a non-empty tuple"),
    (lambda: NetworkConfig(activation="gelu"), "activation must be one of"),
    (lambda: NetworkConfig(lr=-1.0), "lr must be > 0"),
    (lambda: NetworkConfig(lr=float("inf")), "lr must be a finite number, got inf"),
    (lambda: AgentConfig(gamma=float("nan")), "gamma must be a finite number, got nan"),
    (lambda: TrainerConfig(seed=-1), "seed must be from 0 to 2**63 - 1"),
    (lambda: TrainerConfig(seed=2**63), "seed must be from 0 to 2**63 - 1"),
    (lambda: AgentConfig(tau=0.0), "tau must be in (0, 1]"),
    (lambda: AgentConfig(tau=1.5), "tau must be in (0, 1]"),
    (lambda: AgentConfig(gamma=1.01), "gamma must be in [0, 1]"),
    (lambda: AgentConfig(batch_size=2.5), "batch_size must be int"),
    (lambda: AgentConfig(batch_size=True), "batch_size must be int"),
    (lambda: ReplayConfig(capacity=10, min_size=20), "min_size must be in [1, capacity=10]"),
    (lambda: TrainerConfig(num_envs=0), "num_envs must be >= 1"),
    (lambda: TrainerConfig(env_id=3), "env_id must be str"),
    (lambda: NoiseConfig(epsilon_schedule="geometric", epsilon_decay=1.5), "epsilon_decay must be in (0, 1]"),
])
def test_bad_values_name_the_binding(make, message):
    with pytest.raises(ConfigError, match=None) as info:
        make()
    assert message in str(info.value)


def test_actor_and_critic_scopes_are_independent():
    parse_gin(None, ["NetworkConfig.lr = 3e-4", "actor/NetworkConfig.hidden_sizes = (32, 16)",
                     "critic/NetworkConfig.lr = 1e-3"])
    configs = build_configs_from_gin()
    assert configs.actor.hidden_sizes == (32, 16) and configs.critic.hidden_sizes == (256, 256)
    assert configs.actor.lr == 3e-4 and configs.critic.lr == 1e-3
    assert "actor/NetworkConfig.hidden_sizes = (32, 16)" in gin.operative_config_str()


def test_batch_larger_than_buffer_is_refused():
    parse_gin(None, ["AgentConfig.batch_size = 64", "ReplayConfig.capacity = 32", "ReplayConfig.min_size = 8"])
    with pytest.raises(ConfigError, match="batch_size"):
        build_configs_from_gin()


@pytest.mark.parametrize("binding", ["TrainerConfig.nope = 1", "Nope.x = 1", "TrainerConfig.seed = (", "= 3"])
def test_bad_bindings_raise_config_error(binding):
    with pytest.raises(ConfigError, match="invalid gin config"):
        parse_gin(None, [binding])


def test_range_errors_show_enum_values_as_written_in_gin():
    with pytest.raises(ConfigError) as caught:
        ReplayConfig(initial_priority="td_error")
    first_line = str(caught.value).splitlines()[0]
    assert first_line.endswith("got 'td_error'") and "InitialPriority" not in first_line


@pytest.mark.parametrize(("value", "expected"), [
    (5, 5), (np.int64(7), 7), (np.int32(-2), -2), (5e3, 5000), (1000.0, 1000), (np.float64(3.0), 3),
    (np.float32(2.0), 2), (np.float32(2.5), None),
    (2.5, None), (float("inf"), None), (float("nan"), None), (True, None), (np.bool_(True), None), ("5", None),
    (None, None),
])
def test_whole_number_accepts_ints_numpy_ints_and_whole_floats_only(value, expected):
    result = whole_number(value)
    assert result == expected and (result is None or type(result) is int)


def test_numpy_int_and_whole_float_settings_become_ints():
    trainer = TrainerConfig(max_env_steps=np.int64(20_000), eval_interval=5e3)
    assert (trainer.max_env_steps, trainer.eval_interval) == (20_000, 5_000)
    assert type(trainer.max_env_steps) is int and type(trainer.eval_interval) is int


@pytest.mark.parametrize(("bindings", "message"), [
    (["actr/NetworkConfig.hidden_sizes = (8,)"], "binding actr/NetworkConfig.hidden_sizes has the scope 'actr', which "
     "polyak never reads: NetworkConfig takes actor/ or critic/ (neither: both networks); did you mean actor/?"),
    (["policy/NetworkConfig.lr = 1e-3"], "has the scope 'policy', which polyak never reads"),
    (["critic/AgentConfig.gamma = 0.9"], "binding critic/AgentConfig.gamma has a scope, which polyak reads only for "
     "NetworkConfig (actor/ or critic/); write AgentConfig.gamma"),
])
def test_a_scope_polyak_never_reads_is_refused_instead_of_applied_nowhere(bindings, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_gin(None, bindings)


def test_actor_and_critic_scopes_and_macros_still_parse():
    parse_gin(None, ["LR = 3e-4", "actor/NetworkConfig.lr = %LR", "critic/NetworkConfig.hidden_sizes = (8, 8)"])
    configs = build_configs_from_gin()
    assert (configs.actor.lr, configs.critic.hidden_sizes) == (3e-4, (8, 8))


def test_algorithm_td3_says_it_is_ddpg_with_td3s_switches():
    parse_gin(None, ["AgentConfig.algorithm = 'td3'"])
    with pytest.raises(ConfigError, match=re.escape("got 'td3'; TD3 is 'ddpg' with n_critics = 2, policy_delay = 2 "
                                                    "and target policy smoothing (target_policy_noise), which --algo "
                                                    "td3 or polyak.train(algo='td3') sets")):
        build_configs_from_gin()


def test_unbalanced_brackets_name_the_binding_or_the_file(tmp_path):
    with pytest.raises(ConfigError, match=re.escape("unbalanced brackets or quotes in the binding "
                                                    "'TrainerConfig.max_env_steps = (300'")):
        parse_gin(None, ["TrainerConfig.seed = 1", "TrainerConfig.max_env_steps = (300"])
    config = tmp_path / "mine.gin"
    config.write_text("TrainerConfig.seed = 1\nTrainerConfig.max_env_steps = (300\n")
    with pytest.raises(ConfigError, match=re.escape(f"unbalanced brackets or quotes in {config}")):
        parse_gin(config, ["TrainerConfig.seed = 2"])


def test_a_bad_binding_is_named_by_its_text_not_by_a_line_number_that_counts_polyaks_own_bindings():
    with pytest.raises(ConfigError, match=re.escape("doesn't have a parameter named 'nosuch' "
                                                    "(in the binding 'TrainerConfig.nosuch = 3')")):
        parse_gin(None, ["TrainerConfig.env_id = 'Pendulum-v1'", "TrainerConfig.nosuch = 3"])


def test_a_gin_files_import_finds_a_module_in_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [entry for entry in sys.path if entry not in ("", str(tmp_path))])
    (tmp_path / "polyak_test_own_configurable.py").write_text(
        "import gin\n\n@gin.configurable\ndef own_width(width=1):\n    return width\n")
    config = tmp_path / "mine.gin"
    config.write_text("import polyak_test_own_configurable\nown_width.width = 7\nTrainerConfig.seed = 3\n")
    try:
        parse_gin(config, [])
        assert build_configs_from_gin().trainer.seed == 3
        assert gin.query_parameter("own_width.width") == 7
    finally:
        sys.modules.pop("polyak_test_own_configurable", None)
        gin.clear_config()
    missing = tmp_path / "missing.gin"
    missing.write_text("import polyak_test_no_such_module\n")
    with pytest.raises(ConfigError, match=re.escape(f"no polyak_test_no_such_module.py on the Python path or in the "
                                                    f"current directory ({tmp_path}); run polyak in the directory")):
        parse_gin(missing, [])


def test_a_module_missing_inside_the_users_own_module_is_not_blamed_on_the_search_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [entry for entry in sys.path if entry not in ("", str(tmp_path))])
    (tmp_path / "polyak_test_needs_a_dependency.py").write_text("import polyak_test_uninstalled_dependency\n")
    config = tmp_path / "mine.gin"
    config.write_text("import polyak_test_needs_a_dependency\n")
    try:
        with pytest.raises(ConfigError) as raised:
            parse_gin(config, [])
    finally:
        sys.modules.pop("polyak_test_needs_a_dependency", None)
        gin.clear_config()
    message = str(raised.value)
    assert ("No module named 'polyak_test_uninstalled_dependency' (needed by polyak_test_needs_a_dependency, "
            "which a gin file imports): install it") in message, message
    assert "current directory" not in message
