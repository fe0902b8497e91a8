"""Using a trained TD7 or CrossQ agent outside training: ``polyak test``, ``polyak record``, ``polyak export``
(safetensors, model card, ONNX) and ``polyak.load(...).predict`` on tiny Pendulum runs of the shipped
``configs/suite/td7.gin``, ``crossq.gin`` and ``crossq_sac.gin`` (with the averaged actor).

What is loaded must be what evaluation ran: TD7's SALE actor owns its state encoder and, with the checkpoint policy,
evaluation runs the checkpoint actor once a checkpoint is taken (the live actor before); CrossQ's batch-renormalized
actor acts in eval mode; with ``AgentConfig.actor_average`` evaluation runs the averaged actor. Each loaded
policy is compared with ``Agent.greedy`` of the agent restored from the same checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import polyak
from polyak.checkpoint import complete_checkpoints, load_checkpoint
from polyak.cli import main
from polyak.playback import evaluated_actor_key
from polyak.run_dir import RunDir
from polyak.trainer import build_agent

ROOT = Path(__file__).resolve().parents[2]
TINY = ["TrainerConfig.env_id = 'Pendulum-v1'", "TrainerConfig.start_steps = 200", "ReplayConfig.min_size = 200",
        "TrainerConfig.eval_interval = 200", "TrainerConfig.eval_episodes = 1",
        "TrainerConfig.checkpoint_interval = 200", "TrainerConfig.progress_bar = False",
        "NetworkConfig.hidden_sizes = (32, 32)", "AgentConfig.batch_size = 32"]
TD7 = ["AgentConfig.algorithm = 'td7'", "TD7Config.sale_dim = 16", "TD7Config.sale_hidden = 32",
       "TD7Config.hard_target_every = 50"]
RUNS = {
    # one-episode assessments (before checkpoint_after): a checkpoint at every episode end from step 400 on
    "td7": ("td7", [*TINY, *TD7, "TrainerConfig.max_env_steps = 800"]),
    # stops before the first checkpoint is taken: evaluation (and loading) uses the live actor
    "td7_no_checkpoint_yet": ("td7", [*TINY, *TD7, "TrainerConfig.max_env_steps = 300"]),
    "crossq": ("crossq", [*TINY, "NetworkConfig.batch_renorm_warmup = 100", "TrainerConfig.max_env_steps = 600"]),
    "crossq_sac_averaged": ("crossq_sac", [*TINY, "NetworkConfig.batch_renorm_warmup = 100",
                                           "TrainerConfig.max_env_steps = 600", "AgentConfig.actor_average = 0.05"]),
}
CARD_TITLES = {"td7": "TD7", "td7_no_checkpoint_yet": "TD7", "crossq": "CrossQ",
               "crossq_sac_averaged": "CrossQ (SAC mode)"}


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # in-process training: one thread, as in CI


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("td7_crossq")
    torch.set_num_threads(1)
    paths = {}
    for name, (config, bindings) in RUNS.items():
        paths[name] = polyak.train(ROOT / "configs" / "suite" / f"{config}.gin", bindings, run_dir=root / name,
                                   seed=0).path
    return paths


def _observations(n: int = 16) -> np.ndarray:
    high = np.array([1.0, 1.0, 8.0])
    return np.random.default_rng(1).uniform(-high, high, (n, 3)).astype(np.float32)


def _checkpoints(run: Path) -> list[Path]:
    return [run / "checkpoints" / "best", *complete_checkpoints(run / "checkpoints")]


@pytest.mark.parametrize("name", sorted(RUNS))
def test_loaded_policy_is_what_evaluation_ran(runs: dict[str, Path], name: str) -> None:
    """For the best and every full checkpoint: ``polyak.load`` acts exactly like the restored agent's greedy policy
    (TD7's checkpoint actor once one is taken, CrossQ's actor in eval mode)."""
    configs = RunDir(runs[name]).configs()
    obs = _observations()
    taken = []
    for path in _checkpoints(runs[name]):
        state, meta = load_checkpoint(path)
        agent = build_agent(configs, int(meta["obs_dim"]), int(meta["action_dim"]), np.random.SeedSequence(0))
        agent.load_state_dict(state["agent"])
        policy = polyak.load(path)
        assert not policy.actor.training
        np.testing.assert_allclose(policy(obs), agent.greedy(obs), rtol=0, atol=1e-6)
        key = evaluated_actor_key(configs, state["agent"])
        assert policy.actor.state_dict().keys() == state["agent"][key].keys()
        if configs.agent.algorithm.value == "td7" and configs.td7.checkpoint_policy:
            count = state["agent"]["checkpoint_policy"]["checkpoints"]
            assert key == ("checkpoint_actor" if count else "actor")
            taken.append(count)
    if name == "td7":
        assert taken[-1] >= 1  # the newest checkpoint acts with the checkpoint actor, which is not the live one
        state, _ = load_checkpoint(_checkpoints(runs[name])[-1])
        agent_state = state["agent"]
        assert any(not torch.equal(agent_state["actor"][k], agent_state["checkpoint_actor"][k])
                   for k in agent_state["actor"])
    elif name == "td7_no_checkpoint_yet":
        assert taken and not any(taken)
    elif name == "crossq_sac_averaged":
        agent_state = load_checkpoint(_checkpoints(runs[name])[-1])[0]["agent"]
        assert evaluated_actor_key(configs, agent_state) == "actor_average"
        assert any(not torch.equal(agent_state["actor"][k], agent_state["actor_average"][k])
                   for k in agent_state["actor"])


@pytest.mark.parametrize("name", sorted(RUNS))
def test_cli_test_record_and_onnx_export(runs: dict[str, Path], name: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    ort = pytest.importorskip("onnxruntime")
    run = runs[name]
    assert main(["test", str(run), "--episodes", "1", "--seed", "0"]) == 0
    assert "mean score" in capsys.readouterr().out
    gif = tmp_path / "episode.gif"
    assert main(["record", str(run), "--out", str(gif), "--steps", "3"]) == 0
    assert gif.stat().st_size > 0
    out = tmp_path / "export"
    assert main(["export", str(run), "--out", str(out), "--format", "onnx"]) == 0
    info = json.loads((out / "info.json").read_text())
    card = (out / "README.md").read_text()
    assert f"# {CARD_TITLES[name]} agent for `Pendulum-v1`" in card
    best, _ = load_checkpoint(run / "checkpoints" / "best")
    expected = evaluated_actor_key(RunDir(run).configs(), best["agent"])
    assert info["checkpoint"] == "best" and info["actor"] == expected
    assert ("checkpoint policy (TD7) actor of checkpoint `best`" in card) == (expected == "checkpoint_actor")
    assert ("averaged actor of checkpoint `best`" in card) == (expected == "actor_average")
    exported, original = polyak.load(out), polyak.load(run)
    obs = _observations()
    np.testing.assert_array_equal(exported.predict(obs)[0], original.predict(obs)[0])
    session = ort.InferenceSession(str(out / "policy.onnx"), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"obs": obs})[0], exported.predict(obs)[0], rtol=0, atol=1e-5)
    assert main(["test", str(out), "--episodes", "1", "--seed", "0"]) == 0
