"""TrainerConfig.wandb_project: a real offline W&B run holds the config and the same scalars as TensorBoard, at the
same env steps; without the wandb extra the run stops with one line."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.smoke.cli_helpers import PENDULUM

ARGS = ["--config", PENDULUM, "--seed", "1", "--gin-param", "TrainerConfig.max_env_steps=600",
        "--gin-param", "TrainerConfig.start_steps=200", "--gin-param", "ReplayConfig.min_size=100",
        "--gin-param", "TrainerConfig.eval_interval=300", "--gin-param", "TrainerConfig.eval_episodes=1",
        "--gin-param", "TrainerConfig.log_interval=200", "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)",
        "--gin-param", "TrainerConfig.progress_bar=False", "--gin-param", "TrainerConfig.wandb_project='polyak-test'"]

BLOCK, HEADER = 32768, 7  # the .wandb file: LevelDB's log format after a 7-byte ':W&B' header


def _records(path: Path):
    """The protobuf records of an offline run's .wandb file."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, pending = HEADER, b""
    while pos + 7 <= len(data):
        if BLOCK - pos % BLOCK < 7:  # a block's tail too short for a header is padding
            pos += BLOCK - pos % BLOCK
            continue
        length, kind = int.from_bytes(data[pos + 4:pos + 6], "little"), data[pos + 6]
        chunk, pos = data[pos + 7:pos + 7 + length], pos + 7 + length
        if kind in (2, 3):  # first or middle fragment
            pending = (b"" if kind == 2 else pending) + chunk
            continue
        if kind not in (1, 4):
            break
        record = pb.Record()
        record.ParseFromString(chunk if kind == 1 else pending + chunk)
        yield record


def _history_and_config(wandb_file: Path) -> tuple[list[dict], dict]:
    history, config = [], {}
    for record in _records(wandb_file):
        kind = record.WhichOneof("record_type")
        if kind == "history":
            history.append({"/".join(item.nested_key) or item.key: json.loads(item.value_json)
                            for item in record.history.item})
        elif kind in ("config", "run"):
            update = record.config.update if kind == "config" else record.run.config.update
            config.update({"/".join(item.nested_key) or item.key: json.loads(item.value_json) for item in update})
    return history, config


def _tb_scalars(tb_dir: Path) -> dict[str, list[int]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tb_dir))
    events.Reload()
    return {tag: [event.step for event in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", WANDB_MODE="offline",
                WANDB_DIR=str(tmp_path / "wandb_dir"), WANDB_SILENT="true", **extra)


def test_offline_run_logs_the_config_and_every_tensorboard_scalar(tmp_path):
    pytest.importorskip("wandb", reason="the wandb extra is not installed (pip install 'polyak[wandb]')")
    run = tmp_path / "run"
    result = subprocess.run([sys.executable, "-m", "polyak.cli", "train", *ARGS, "--run-dir", str(run)],
                            capture_output=True, text=True, env=_env(tmp_path), timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    (wandb_file,) = (tmp_path / "wandb_dir" / "wandb").glob("offline-run-*/run-*.wandb")
    history, config = _history_and_config(wandb_file)

    tb = _tb_scalars(run / "tb")
    logged: dict[str, list[int]] = {}
    for row in history:
        for key in row:
            if not key.startswith("_") and key != "env_steps":
                logged.setdefault(key, []).append(row["env_steps"])
    assert logged == tb  # every TensorBoard scalar, at the same env steps
    with open(run / "metrics.csv", newline="") as handle:
        evals = [(int(r["env_steps"]), float(r["score"])) for r in csv.DictReader(handle) if r["kind"] == "eval"]
    assert [(row["env_steps"], row["eval/score"]) for row in history if "eval/score" in row] == evals

    run_config = json.loads((run / "config.json").read_text())
    for section, values in run_config.items():
        assert config[section] == values, section
    assert config["trainer"]["wandb_project"] == "polyak-test"


def test_missing_wandb_extra_is_one_line(tmp_path):
    blocker = tmp_path / "no_wandb" / "wandb"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('No module named wandb')\n")
    env = _env(tmp_path, PYTHONPATH=os.pathsep.join([str(blocker.parent), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-m", "polyak.cli", "train", *ARGS, "--run-dir", str(tmp_path / "run")],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "polyak: error: TrainerConfig.wandb_project='polyak-test' needs the wandb extra: pip install -e '.[wandb]' "
        "(in polyak's clone; or pip install wandb)")
    assert not (tmp_path / "run").exists()  # refused before the run directory is written
