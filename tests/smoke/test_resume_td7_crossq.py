"""Exact resume with TD7's, CrossQ's and SAC's switches on: a run stopped by SIGINT mid-training and continued with
--resume ends like an uninterrupted one (same metrics.csv, every network of the agent, the checkpoint-policy and
LAP state), so SALE's encoder copies, the value clip range, the checkpoint actor and assessment, LAP's max
priority and batch renormalization's statistics and step counters all round-trip through a checkpoint."""

from __future__ import annotations

import gc
import json
import os
import signal

import pytest
import torch

from polyak.checkpoint import complete_checkpoints, load_checkpoint
from polyak.cli import main
from polyak.collector import Collector
from tests.smoke.cli_helpers import PENDULUM, polyak

BASE = ["TrainerConfig.max_env_steps=1400", "TrainerConfig.start_steps=300", "ReplayConfig.min_size=200",
        "TrainerConfig.eval_interval=400", "TrainerConfig.eval_episodes=1", "TrainerConfig.checkpoint_interval=300",
        "TrainerConfig.progress_bar=False", "NetworkConfig.hidden_sizes=(32, 32)", "AgentConfig.batch_size=64"]
SWITCHES = {
    "td7": ["AgentConfig.n_critics=2", "AgentConfig.policy_delay=2", "AgentConfig.target_policy_noise=0.2",
            "AgentConfig.algorithm='td7'", "TD7Config.checkpoint_training=False", "TD7Config.hard_target_every=50",
            "TD7Config.value_clipping=True", "TD7Config.sale=True",
            "TD7Config.sale_dim=16", "TD7Config.sale_hidden=32", "AgentConfig.actor_objective='mean'",
            "TD7Config.checkpoint_policy=True", "NetworkConfig.avg_l1_norm=True", "ReplayConfig.sampler='lap'",
            "critic/NetworkConfig.activation='elu'", "critic/NetworkConfig.action_layer=0"],
    "td7_episode_end_training": ["TD7Config.checkpoint_training=True", "TrainerConfig.eval_interval=200"],
    "sac": ["AgentConfig.algorithm='sac'", "NoiseConfig.kind='none'", "AgentConfig.n_critics=2",
            "AgentConfig.policy_delay=1", "AgentConfig.target_policy_noise=None"],
    "crossq_sac": ["AgentConfig.algorithm='crossq_sac'", "NoiseConfig.kind='none'", "AgentConfig.n_critics=2",
                   "AgentConfig.policy_delay=3", "NetworkConfig.batch_renorm=True",
                   "NetworkConfig.batch_renorm_warmup=400", "NetworkConfig.adam_beta1=0.5",
                   "critic/NetworkConfig.action_layer=0"],
    "crossq": ["AgentConfig.n_critics=2", "AgentConfig.policy_delay=3", "AgentConfig.target_policy_noise=0.2",
               "AgentConfig.algorithm='crossq'", "AgentConfig.actor_objective='min'",
               "NetworkConfig.batch_renorm=True", "NetworkConfig.batch_renorm_warmup=400",
               "NetworkConfig.adam_beta1=0.5", "critic/NetworkConfig.action_layer=0"],
}


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # in-process training: one thread, as in CI


def _args(run_dir, switches: list[str]) -> list[str]:
    args = ["train", "--config", PENDULUM, "--seed", "5", "--run-dir", str(run_dir)]
    if switches is SWITCHES["td7_episode_end_training"]:
        switches = SWITCHES["td7"] + switches
    for binding in BASE + switches:
        args += ["--gin-param", binding]
    return args


def _final_agent(run_dir):
    state, _ = load_checkpoint(complete_checkpoints(run_dir / "checkpoints")[-1])
    return state["agent"]


def _assert_equal_states(a, b, where: str = "agent") -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            _assert_equal_states(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, torch.Tensor):
        assert torch.equal(a, b), f"{where} differs"
    else:
        assert str(a) == str(b), f"{where} differs"


@pytest.mark.parametrize("name", sorted(SWITCHES))
def test_sigint_then_resume_is_exact(name, tmp_path, monkeypatch):
    reference, run_dir = tmp_path / "reference", tmp_path / "run"
    assert main(_args(reference, SWITCHES[name])) == 0
    summary = json.loads((reference / "summary.json").read_text())
    assert summary["updates"] > 0

    step = Collector.step

    def interrupting(self):  # SIGINT in the middle of training, between two checkpoints
        if self.env_steps == 1000:
            os.kill(os.getpid(), signal.SIGINT)
        return step(self)

    monkeypatch.setattr(Collector, "step", interrupting)
    assert main(_args(run_dir, SWITCHES[name])) == 0
    assert not (run_dir / "summary.json").exists()
    gc.collect()  # the interrupted run's RunDir (and its run lock) goes with its trainer
    resumed = polyak("train", "--resume", str(run_dir))  # a new process, as a user resumes
    assert resumed.returncode == 0, resumed.stderr

    assert (run_dir / "metrics.csv").read_bytes() == (reference / "metrics.csv").read_bytes()
    a, b = _final_agent(reference), _final_agent(run_dir)
    td7 = {"encoders", "value_clipper", "checkpoint_actor", "checkpoint_policy", "encoder_optim"}
    sac = {"log_alpha", "alpha_optim", "policy_sampling"}
    expected = {"td7": td7, "td7_episode_end_training": td7, "crossq": set(), "sac": sac | {"critic_target"},
                "crossq_sac": sac}[name]
    assert expected <= set(a)
    if name == "crossq":
        assert "actor_target" not in a and any(k.endswith("steps") for k in a["critic"])
    _assert_equal_states(a, b)
