"""Every switch, and every pair of switches from different groups, trains 2,000 Pendulum steps via the CLI.

Runs go through ``polyak.cli.main`` in this process (no interpreter start per run) with tiny
networks, so the 80-odd runs take about a minute. Switches in one group replace each other
(e.g. two noise kinds), so pairs are drawn across groups only; the pairs in ``REFUSED`` are errors by design
(tested where they are refused).

Every run checks, in its config.json, that each of its switches is in effect, so a pair never
collapses to one switch. NoisyNet coexists with action and parameter noise (the explorer applies
all three); alone, a NoisyNet actor explores without action noise (``NoiseConfig.kind='none'``).
"""

from __future__ import annotations

import ast
import csv
import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch

from polyak.cli import main
from tests.smoke.cli_helpers import PENDULUM

SWITCHES: dict[str, dict[str, list[str]]] = {
    "noise": {
        "ou": ["NoiseConfig.kind='ou'", "NoiseConfig.sigma=0.2"],
        "parameter": ["NoiseConfig.kind='parameter'", "NoiseConfig.param_adapt_every=20"],
    },
    "noisynet": {
        "noisynet": ["actor/NetworkConfig.noisy=True"],
        "noisynet_ou": ["actor/NetworkConfig.noisy=True", "actor/NetworkConfig.noisy_ou_theta=0.05"],
    },
    "td3": {
        "td3": ["AgentConfig.n_critics=2", "AgentConfig.policy_delay=2", "AgentConfig.target_policy_noise=0.2"],
    },
    "norm": {
        "layer_norm": ["NetworkConfig.layer_norm=True"],
        "batchnorm": ["NetworkConfig.input_batchnorm=True", "NetworkConfig.hidden_batchnorm=True"],
        # TD7's network-side parts and CrossQ (no targets, batch renormalization) exclude each other and BatchNorm.
        "td7": ["AgentConfig.algorithm='td7'", "TD7Config.hard_target_every=50", "TD7Config.value_clipping=True",
                "TD7Config.sale=True", "TD7Config.sale_dim=16", "TD7Config.sale_hidden=32",
                "AgentConfig.actor_objective='mean'",
                "TD7Config.checkpoint_policy=True", "TD7Config.checkpoint_training=True",
                "NetworkConfig.avg_l1_norm=True",
                "critic/NetworkConfig.activation='elu'", "critic/NetworkConfig.action_layer=0"],
        "crossq": ["AgentConfig.algorithm='crossq'", "AgentConfig.actor_objective='min'",
                   "NetworkConfig.batch_renorm=True", "NetworkConfig.batch_renorm_warmup=500",
                   "NetworkConfig.adam_beta1=0.5", "critic/NetworkConfig.action_layer=0"],
    },
    "n_step": {
        "n_step": ["ReplayConfig.n_step=3"],
    },
    "replay": {
        "prioritized": ["ReplayConfig.sampler='prioritized'", "ReplayConfig.beta_steps=1000"],
        "prioritized_td": ["ReplayConfig.sampler='prioritized'", "ReplayConfig.initial_priority='td_error'",
                           "ReplayConfig.buffer_life=300"],
        "lap": ["ReplayConfig.sampler='lap'"],
    },
    "envs": {
        "vector_envs": ["TrainerConfig.num_envs=3"],
    },
    "average": {
        "actor_average": ["AgentConfig.actor_average=0.01"],
    },
}
# Pairs a config refuses in one line: each picks the policy that evaluation runs.
REFUSED = {frozenset({"td7", "actor_average"})}

BASE = [
    "TrainerConfig.max_env_steps=2000", "TrainerConfig.start_steps=200", "TrainerConfig.learn_every=4",
    "TrainerConfig.eval_interval=None", "TrainerConfig.progress_bar=False", "TrainerConfig.log_interval=1000",
    "NetworkConfig.hidden_sizes=(32, 32)", "AgentConfig.batch_size=64", "ReplayConfig.min_size=200",
]

NAMED = {name: (group, bindings) for group, members in SWITCHES.items() for name, bindings in members.items()}
SECTIONS = {"TrainerConfig": ("trainer",), "AgentConfig": ("agent",), "ReplayConfig": ("replay",),
            "NoiseConfig": ("noise",), "NetworkConfig": ("actor", "critic"), "actor/NetworkConfig": ("actor",),
            "critic/NetworkConfig": ("critic",), "TD7Config": ("td7",), "SACConfig": ("sac",)}
CASES = [(name,) for name in NAMED] + [
    (a, b) for a, b in itertools.combinations(NAMED, 2) if NAMED[a][0] != NAMED[b][0] and {a, b} not in REFUSED
]


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def bindings_of(case: tuple[str, ...]) -> list[str]:
    """The case's switches; a NoisyNet actor without a noise switch explores with NoisyNet alone."""
    groups = {NAMED[name][0] for name in case}
    alone = ["NoiseConfig.kind='none'"] if "noisynet" in groups and "noise" not in groups else []
    return alone + [b for name in case for b in NAMED[name][1]]


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def assert_in_effect(run_dir: Path, case: tuple[str, ...]) -> None:
    """Every binding of every switch of ``case`` holds in the run's config.json (none overridden by another)."""
    config = json.loads((run_dir / "config.json").read_text())
    for name in case:
        for binding in NAMED[name][1]:
            key, value = binding.split("=", 1)
            configurable, field = key.rsplit(".", 1)
            for section in SECTIONS[configurable]:
                assert config[section][field] == _plain(ast.literal_eval(value)), f"{name}: {binding} not in effect"


def test_pairs_keep_both_switches():
    """The noise x NoisyNet pairs act with both (the case that used to collapse to NoisyNet alone)."""
    assert "NoiseConfig.kind='none'" not in bindings_of(("ou", "noisynet"))
    assert "NoiseConfig.kind='none'" in bindings_of(("noisynet", "td3"))
    assert all(len({NAMED[name][0] for name in case}) == len(case) for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=["+".join(case) for case in CASES])
def test_switches_train_with_finite_losses(case: tuple[str, ...], tmp_path):
    run_dir = tmp_path / "run"
    args = ["train", "--config", PENDULUM, "--seed", "0", "--run-dir", str(run_dir)]
    for binding in BASE + bindings_of(case):
        args += ["--gin-param", binding]
    assert main(args) == 0
    assert_in_effect(run_dir, case)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["env_steps"] >= 2000 and summary["updates"] > 0
    with open(run_dir / "metrics.csv", newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["kind"] == "episode" and row["critic_loss"]]
    assert rows, "no episode finished after learning started"
    for row in rows:
        assert math.isfinite(float(row["critic_loss"])) and math.isfinite(float(row["actor_loss"]))

