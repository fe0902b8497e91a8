"""``ReplayConfig.sampler`` and the one factory behind it; the deprecated ``prioritized``/``lap`` booleans.

The single-process replay and the Ape-X shards build their sampler with :func:`polyak.replay.make_sampler`;
gin files and ``--gin-param`` may still bind the old booleans (converted, with one warning line), old runs'
``config.json`` with them still loads, and ``polyak upgrade`` rewrites them.
"""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from polyak.cli import main
from polyak.config import APEX_DEFAULTS, ReplayConfig, Sampler
from polyak.config_json import configs_from_dict, configs_to_dict, legacy_rewrites, read_config, with_bindings
from polyak.distributed.apex_replay import ReplayShard
from polyak.errors import CheckpointError, ConfigError
from polyak.ginconf import build_configs_from_gin, packaged_config, parse_gin
from polyak.replay import (
    SAMPLERS,
    LapSampler,
    PrioritizedSampler,
    Replay,
    Transitions,
    UniformSampler,
    make_sampler,
    sampler_class,
    wants_td_errors,
)
from polyak.upgrade import upgrade

ROOT = Path(__file__).resolve().parents[2]
CLASSES = {"uniform": UniformSampler, "prioritized": PrioritizedSampler, "lap": LapSampler}


@pytest.fixture(autouse=True)
def _no_gin_left():
    yield
    import gin

    gin.clear_config()


def _rows(count: int, start: float = 0.0) -> Transitions:
    values = np.arange(start, start + count)
    return Transitions(obs=values[:, None], action=np.zeros((count, 1)), reward=values, next_obs=values[:, None],
                       terminated=np.zeros(count), discount=np.full(count, 0.99))


# ---------------------------------------------------------------- the factory
@pytest.mark.parametrize("name", ["uniform", "prioritized", "lap"])
def test_the_factory_builds_the_named_sampler(name):
    config = ReplayConfig(capacity=16, min_size=1, sampler=name)
    assert config.sampler is Sampler(name)
    sampler = make_sampler(config, 16, np.random.default_rng(0))
    assert type(sampler) is CLASSES[name] and sampler_class(config) is CLASSES[name]
    assert sampler.prioritized is (name != "uniform") and not sampler.wants_td_errors
    assert set(SAMPLERS) == set(Sampler)  # every value has its class


def test_td_errors_at_insertion_come_from_the_sampler():
    config = ReplayConfig(capacity=16, min_size=1, sampler="prioritized", initial_priority="td_error")
    assert wants_td_errors(config) and make_sampler(config, 16, np.random.default_rng(0)).wants_td_errors
    assert Replay(config, 0.99, 1, 1, 1, np.random.default_rng(0)).wants_td_errors
    assert not wants_td_errors(ReplayConfig(sampler="lap")) and not wants_td_errors(ReplayConfig())


@pytest.mark.parametrize("name", ["uniform", "prioritized", "lap"])
def test_apex_shards_and_the_replay_get_the_same_sampler_and_draws(name):
    config = ReplayConfig(capacity=32, min_size=1, sampler=name, n_step=2)
    replay = Replay(config, 0.99, 1, 1, 1, np.random.default_rng(5))
    shard = ReplayShard(config, config.capacity, obs_dim=1, action_dim=1, seed=5)
    assert type(replay.sampler) is type(shard.sampler) is CLASSES[name]
    rows = _rows(20)
    replay.insert(rows)
    shard.add(rows, None)
    for step in range(3):
        batch = replay.sample(8, torch.device("cpu"))
        data = shard.sample(8, step)
        np.testing.assert_array_equal(batch.indices, data["indices"])
        td = np.linspace(0.0, 3.0, 8) + step
        replay.update_priorities(batch.indices, torch.from_numpy(td))
        shard.update_priorities(data["indices"], td)


@pytest.mark.parametrize("name", ["uniform", "prioritized"])
def test_hard_target_updates_are_a_no_op_for_other_samplers(name):
    replay = Replay(ReplayConfig(capacity=16, min_size=1, sampler=name), 0.99, 1, 1, 1, np.random.default_rng(0),
                    hard_target_every=1)
    replay.insert(_rows(4))
    before = replay.sampler.state_dict()
    replay.sampler.on_hard_target_update()
    replay.sampler.set_step(0)
    assert repr(replay.sampler.state_dict()) == repr(before)


def test_lap_resets_its_max_priority_at_a_hard_target_update_in_a_shard():
    shard = ReplayShard(ReplayConfig(capacity=8, min_size=1, sampler="lap"), 8, obs_dim=1, action_dim=1, seed=0)
    shard.add(_rows(4), None)
    shard.update_priorities(np.array([0]), np.array([100.0]))
    assert shard.sampler.max_priority == pytest.approx(100.0 ** 0.4)
    shard.update_priorities(np.array([0]), np.array([0.5]))  # the large priority is gone from the tree
    shard.on_hard_target_update()
    assert shard.sampler.max_priority == 1.0
    batch = shard.sample(4, learner_step=7)
    assert batch["weights"] is None  # LAP: no importance weights


# ---------------------------------------------------------------- the deprecated booleans in gin
@pytest.mark.parametrize("binding, sampler", [
    ("ReplayConfig.prioritized = True", "prioritized"),
    ("ReplayConfig.lap = True", "lap"),
    ("ReplayConfig.prioritized = False", "uniform"),
])
def test_a_boolean_binding_warns_once_and_is_converted(capsys, binding, sampler):
    parse_gin(None, [binding])
    configs = build_configs_from_gin()
    assert configs.replay.sampler is Sampler(sampler)
    expected = f"polyak: warning: {binding} is deprecated; use ReplayConfig.sampler = {sampler!r}\n"
    assert capsys.readouterr().err == expected


def test_new_bindings_warn_nothing_and_the_operative_config_names_only_the_sampler(capsys):
    import gin

    parse_gin(None, ["ReplayConfig.sampler = 'lap'"])
    assert build_configs_from_gin().replay.sampler is Sampler.LAP
    assert capsys.readouterr().err == ""
    operative = gin.operative_config_str()
    assert "ReplayConfig.sampler = 'lap'" in operative
    assert "ReplayConfig.lap =" not in operative and "ReplayConfig.prioritized" not in operative


def test_shipped_configs_bind_the_sampler_not_the_booleans():
    for path in (ROOT / "src" / "polyak" / "configs").rglob("*.gin"):
        text = path.read_text()
        assert "ReplayConfig.prioritized" not in text and "ReplayConfig.lap =" not in text, path
    parse_gin(packaged_config("suite/td7.gin"), [])
    assert build_configs_from_gin().replay.sampler is Sampler.LAP
    parse_gin(packaged_config("unity_reacher.gin"), [])
    assert build_configs_from_gin().replay.sampler is Sampler.PRIORITIZED


def test_apex_defaults_leave_a_config_file_s_sampler_alone():
    parse_gin(None, [*APEX_DEFAULTS, f"include {str(packaged_config('suite/td7.gin'))!r}"])
    assert build_configs_from_gin().replay.sampler is Sampler.LAP
    parse_gin(None, list(APEX_DEFAULTS))
    assert build_configs_from_gin().replay.sampler is Sampler.PRIORITIZED


@pytest.mark.parametrize("bindings, fragment", [
    (["ReplayConfig.sampler = 'lap'", "ReplayConfig.prioritized = True"],
     "ReplayConfig.prioritized = True conflicts with ReplayConfig.sampler = 'lap'"),
    (["ReplayConfig.sampler = 'prioritized'", "ReplayConfig.lap = True"],
     "ReplayConfig.lap = True conflicts with ReplayConfig.sampler = 'prioritized'"),
    (["ReplayConfig.sampler = 'lap'", "ReplayConfig.lap = False"],
     "ReplayConfig.lap = False conflicts with ReplayConfig.sampler = 'lap'"),
    (["ReplayConfig.prioritized = True", "ReplayConfig.lap = True"], "both True"),
    (["ReplayConfig.lap = 'yes'"], "ReplayConfig.lap must be True or False"),
])
def test_a_boolean_that_conflicts_with_the_sampler_is_one_line_exit_2(capsys, tmp_path, bindings, fragment):
    args = ["train", "--config", "pendulum", "--run-dir", str(tmp_path / "run")]
    for binding in bindings:
        args += ["--gin-param", binding]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("polyak: error: ") and err.count("\n") == 1 and fragment in err, err
    assert not (tmp_path / "run").exists()


def test_a_boolean_on_resume_is_converted_too(capsys):
    configs = configs_from_dict(configs_to_dict(_default_configs()))[0]
    resumed = with_bindings(configs, ["ReplayConfig.lap = True"])
    assert resumed.replay.sampler is Sampler.LAP
    assert "ReplayConfig.lap = True is deprecated; use ReplayConfig.sampler = 'lap'" in capsys.readouterr().err


# ---------------------------------------------------------------- config.json of old runs
def _default_configs():
    parse_gin(None, [])
    return build_configs_from_gin()


def _old_style(data: dict, prioritized: bool, lap: bool | None) -> dict:
    """``data`` as an earlier polyak wrote it: the replay booleans, no sampler."""
    replay = {key: value for key, value in data["replay"].items() if key != "sampler"}
    replay["prioritized"] = prioritized
    if lap is not None:  # versions before TD7 had no lap key
        replay["lap"] = lap
    return {**data, "replay": replay}


def test_new_runs_write_only_the_sampler():
    replay = configs_to_dict(_default_configs())["replay"]
    assert replay["sampler"] == "uniform" and "prioritized" not in replay and "lap" not in replay


@pytest.mark.parametrize("prioritized, lap, sampler", [
    (False, None, "uniform"), (True, None, "prioritized"), (False, False, "uniform"), (True, False, "prioritized"),
    (False, True, "lap"),
])
def test_an_old_config_json_loads_into_the_right_sampler(capsys, prioritized, lap, sampler):
    data = _old_style(configs_to_dict(_default_configs()), prioritized, lap)
    configs, _ = configs_from_dict(json.loads(json.dumps(data)))
    assert configs.replay.sampler is Sampler(sampler)
    assert capsys.readouterr().err == ""  # loading an old run is no occasion for a warning


def test_an_old_config_json_with_both_booleans_is_damaged(tmp_path):
    data = _old_style(configs_to_dict(_default_configs()), True, True)
    (tmp_path / "config.json").write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match=r"damaged: ReplayConfig\.prioritized and ReplayConfig\.lap are both"):
        read_config(tmp_path)


def test_the_pretrained_agent_s_old_config_json_loads():
    path = ROOT / "src" / "polyak" / "pretrained" / "unity_reacher"
    assert "prioritized" in json.loads((path / "config.json").read_text())["replay"]
    assert read_config(path)[0].replay.sampler is Sampler.UNIFORM


def test_upgrade_rewrites_the_booleans_with_one_line_each(tmp_path):
    data = _old_style(configs_to_dict(_default_configs()), False, True)
    (tmp_path / "config.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    said: list[str] = []

    def never_ask(question: str) -> bool:
        raise AssertionError("rewriting JSON runs no code: nothing to confirm")

    assert upgrade(tmp_path, ask=never_ask, say=said.append) == tmp_path / "config.json"
    rewritten = json.loads((tmp_path / "config.json").read_text())
    assert rewritten["replay"]["sampler"] == "lap"
    assert "prioritized" not in rewritten["replay"] and "lap" not in rewritten["replay"]
    assert {k: v for k, v in rewritten.items() if k != "replay"} == {k: v for k, v in data.items() if k != "replay"}
    assert len(said) == 1 and "'sampler' " not in said[0] and "sampler = 'lap'" in said[0], said
    assert "\n" not in said[0]
    assert read_config(tmp_path)[0].replay.sampler is Sampler.LAP
    with pytest.raises(CheckpointError, match="nothing to upgrade"):
        upgrade(tmp_path, ask=never_ask, say=said.append)


def test_legacy_rewrites_leave_a_new_file_alone():
    data = configs_to_dict(_default_configs())
    assert legacy_rewrites(data) == (data, [])


def test_a_conflicting_sampler_in_code_is_a_config_error():
    with pytest.raises(ConfigError, match="conflicts"):
        ReplayConfig(sampler="lap", prioritized=True)
