"""polyak.train's keyword settings in Stable-Baselines3's own forms: read as SB3 means them where polyak has the
same thing, one line naming the keyword where it does not."""

import re

import pytest
import torch

from polyak.errors import ConfigError
from polyak.planning import keyword_bindings


@pytest.mark.parametrize(("settings", "bindings"), [
    ({"net_arch": {"pi": [8], "qf": [16, 16]}},
     ["actor/NetworkConfig.hidden_sizes = [8]", "critic/NetworkConfig.hidden_sizes = [16, 16]"]),
    ({"net_arch": {"qf": [32]}}, ["critic/NetworkConfig.hidden_sizes = [32]"]),
    ({"net_arch": [64, 64]}, ["actor/NetworkConfig.hidden_sizes = [64, 64]",
                              "critic/NetworkConfig.hidden_sizes = [64, 64]"]),
    ({"train_freq": (4, "step")}, ["TrainerConfig.learn_every = 4"]),
    ({"train_freq": 2}, ["TrainerConfig.learn_every = 2"]),
    ({"device": torch.device("cpu")}, ["AgentConfig.device = 'cpu'"]),
])
def test_sb3_forms_polyak_has_are_read_as_sb3_means_them(settings, bindings):
    assert keyword_bindings(settings) == bindings


@pytest.mark.parametrize(("settings", "message"), [
    ({"learning_rate": lambda progress: 1e-3 * progress}, "learning_rate=<function "),
    ({"learning_rate": lambda progress: 1e-3 * progress}, "is not a plain value: settings take numbers, strings"),
    ({"train_freq": (1, "episode")}, "train_freq=(1, 'episode'): polyak trains every N env steps"),
    ({"gradient_steps": -1}, "gradient_steps=-1: SB3's -1 (as many updates as env steps collected) has no setting"),
    ({"net_arch": {"pi": [8], "vf": [8]}}, "net_arch={'pi': [8], 'vf': [8]}: polyak takes a list of layer sizes"),
    ({"env_kwargs": {"size": object()}}, "env_kwargs={'size': <object object"),
    ({"net_arch": {"pi": object()}}, "each of 'pi' and 'qf' takes a list of layer sizes"),
])
def test_sb3_forms_polyak_has_not_are_one_line_naming_the_keyword(settings, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        keyword_bindings(settings)

