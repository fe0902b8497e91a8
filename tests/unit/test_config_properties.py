"""Property-based checks: any value either builds a config or raises ConfigError naming the field."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from polyak.config import AgentConfig, NetworkConfig, NoiseConfig, ReplayConfig, TrainerConfig
from polyak.errors import ConfigError

ANY_VALUE = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True),
                      st.text(max_size=8), st.lists(st.integers(-5, 300), max_size=4).map(tuple))


def _builds_or_names_field(cls, field, value):
    try:
        config = cls(**{field: value})
    except ConfigError as error:
        assert f"{cls.__name__}.{field}" in str(error) or "ReplayConfig.min_size" in str(error)
        return None
    return config


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_tau_accepted_exactly_in_half_open_unit_interval(tau):
    config = _builds_or_names_field(AgentConfig, "tau", tau)
    assert (config is not None) == (0.0 < tau <= 1.0)


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_gamma_accepted_exactly_in_closed_unit_interval(gamma):
    config = _builds_or_names_field(AgentConfig, "gamma", gamma)
    assert (config is not None) == (0.0 <= gamma <= 1.0)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-10, 1000), max_size=5))
def test_hidden_sizes_need_positive_entries(sizes):
    config = _builds_or_names_field(NetworkConfig, "hidden_sizes", tuple(sizes))
    valid = bool(sizes) and all(s > 0 for s in sizes)
    assert (config is not None) == valid
    if config is not None:
        assert config.hidden_sizes == tuple(sizes)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([
    (TrainerConfig, "num_envs"), (TrainerConfig, "max_env_steps"), (TrainerConfig, "learn_every"),
    (TrainerConfig, "solve_window"), (TrainerConfig, "seed"), (AgentConfig, "batch_size"),
    (AgentConfig, "n_critics"), (AgentConfig, "policy_delay"), (ReplayConfig, "capacity"),
    (NoiseConfig, "sigma"), (NetworkConfig, "lr"), (NetworkConfig, "activation"), (NoiseConfig, "kind"),
    (TrainerConfig, "progress_bar"), (TrainerConfig, "env_id"), (AgentConfig, "target_policy_noise"),
]), ANY_VALUE)
def test_any_value_builds_or_raises_config_error(target, value):
    cls, field = target
    config = _builds_or_names_field(cls, field, value)
    if config is not None and isinstance(getattr(config, field), float):
        assert not math.isnan(getattr(config, field))
