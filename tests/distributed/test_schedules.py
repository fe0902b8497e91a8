"""Numbers worked by hand: the Ape-X exploration schedule, seed ranges, grids and the learner's pace."""

import dataclasses
import math

import pytest

from polyak.config import AgentConfig, NetworkConfig, NoiseConfig, ReplayConfig, TrainerConfig
from polyak.config import Configs as CoreConfigs
from polyak.distributed.apex_config import ApexConfig, apex_epsilons, worker_noise_config, worker_noise_scale
from polyak.distributed.grid import grid_variants, parse_grid, parse_seeds
from polyak.errors import ConfigError


def test_apex_epsilons_match_the_paper_formula_by_hand():
    # epsilon_i = 0.4 ** (1 + 7 i / (N - 1)); N = 4: exponents 1, 10/3, 17/3, 8.
    eps = apex_epsilons(4, 0.4, 7.0)
    assert eps[0] == pytest.approx(0.4)
    assert eps[1] == pytest.approx(math.exp(10 / 3 * math.log(0.4)))
    assert eps[1] == pytest.approx(0.064 * 0.73681, rel=1e-4)  # 0.4^3 * 0.4^(1/3) = 0.047156
    assert eps[2] == pytest.approx(0.01024 * 0.54288, rel=1e-4)  # 0.4^5 * 0.4^(2/3) = 0.005559
    assert eps[3] == pytest.approx(0.4**8) and eps[3] == pytest.approx(0.00065536)
    assert apex_epsilons(1) == [0.4]
    assert apex_epsilons(2) == pytest.approx([0.4, 0.00065536])


def test_worker_noise_scales_the_configured_sigma():
    # Relative to worker 0: 0.4 ** (7 i / (N - 1)); N = 2 -> 1 and 0.4^7 = 0.0016384.
    assert worker_noise_scale(0, 2) == pytest.approx(1.0)
    assert worker_noise_scale(1, 2) == pytest.approx(0.0016384)
    noise = NoiseConfig(kind="gaussian", sigma=0.2)
    assert worker_noise_config(noise, 0, 2).sigma == pytest.approx(0.2)
    assert worker_noise_config(noise, 1, 2).sigma == pytest.approx(0.2 * 0.0016384)
    assert worker_noise_config(NoiseConfig(kind="ou", sigma=0.2), 1, 3).sigma == pytest.approx(0.2 * 0.4**3.5)
    param = worker_noise_config(NoiseConfig(kind="parameter", param_target_distance=0.2), 1, 2)
    assert param.param_target_distance == pytest.approx(0.2 * 0.0016384)
    none = NoiseConfig(kind="none")
    assert worker_noise_config(none, 1, 2) == none
    # alpha = 0: every worker explores alike.
    assert worker_noise_scale(3, 4, 0.4, 0.0) == pytest.approx(1.0)


def test_apex_config_validation_is_one_clear_line():
    with pytest.raises(ConfigError, match=r"ApexConfig.weight_push_interval must be >= 1"):
        ApexConfig(weight_push_interval=0)
    with pytest.raises(ConfigError, match=r"ApexConfig.replay_ratio must be None when decoupled"):
        ApexConfig(decoupled=True, replay_ratio=1.0)
    with pytest.raises(ConfigError, match=r"ApexConfig.exploration_base must be in \(0, 1\]"):
        ApexConfig(exploration_base=1.5)


def test_pace_defaults_to_the_configs_single_process_schedule():
    from polyak.distributed.apex_learner import updates_per_transition

    def configs(**trainer):
        return CoreConfigs(TrainerConfig(**trainer), AgentConfig(), NetworkConfig(), NetworkConfig(), ReplayConfig(),
                           NoiseConfig())

    assert updates_per_transition(configs(), ApexConfig()) == 1.0
    # The Reacher config: 20 updates every 20 env.step calls of 20 arms -> 0.05 per transition.
    assert updates_per_transition(configs(num_envs=20, learn_every=20, learn_steps=20), ApexConfig()) == 0.05
    assert updates_per_transition(configs(), ApexConfig(replay_ratio=0.25)) == 0.25
    assert updates_per_transition(configs(), ApexConfig(decoupled=True)) is None


def test_parse_seeds():
    assert parse_seeds("0-4") == [0, 1, 2, 3, 4]
    assert parse_seeds("3") == [3]
    assert parse_seeds("0,2,5") == [0, 2, 5]
    assert parse_seeds("0-2, 7") == [0, 1, 2, 7]
    for bad, message in [("4-0", "empty"), ("a-b", "must be a range"), ("-1", "must be a range"),
                         ("", "must be a range"), ("0-2,1", "twice"), ("1.5", "must be a range")]:
        with pytest.raises(ConfigError, match=message):
            parse_seeds(bad)


def test_parse_grid_splits_top_level_commas_only():
    assert parse_grid("AgentConfig.tau=[0.005, 0.05]") == ("AgentConfig.tau", ["0.005", "0.05"])
    assert parse_grid("actor/NetworkConfig.hidden_sizes=[(64, 64), (256, 256)]") == (
        "actor/NetworkConfig.hidden_sizes", ["(64, 64)", "(256, 256)"])
    assert parse_grid("NoiseConfig.kind=['ou', 'gaussian']") == ("NoiseConfig.kind", ["'ou'", "'gaussian'"])
    for bad in ["AgentConfig.tau", "AgentConfig.tau=0.1", "tau=[1, 2]", "AgentConfig.tau=[]", "AgentConfig.tau=[1,,2]",
                "AgentConfig.tau=[(1, 2]", "AgentConfig.tau=[1, 1]"]:
        with pytest.raises(ConfigError, match="--grid"):
            parse_grid(bad)


def test_grid_variants_are_the_product_with_readable_labels():
    variants = grid_variants(["AgentConfig.tau=[0.005, 0.05]", "actor/NetworkConfig.lr=[1e-3, 1e-4]"])
    assert [v.label for v in variants] == ["tau=0.005,actor.lr=1e-3", "tau=0.005,actor.lr=1e-4",
                                           "tau=0.05,actor.lr=1e-3", "tau=0.05,actor.lr=1e-4"]
    assert variants[1].bindings == ("AgentConfig.tau = 0.005", "actor/NetworkConfig.lr = 1e-4")
    assert grid_variants([])[0].label == "base"
    with pytest.raises(ConfigError, match="same binding twice"):
        grid_variants(["AgentConfig.tau=[1]", "AgentConfig.tau=[2]"])


def test_noise_config_replace_keeps_validation():
    with pytest.raises(ConfigError):
        dataclasses.replace(NoiseConfig(), sigma=-1.0)
