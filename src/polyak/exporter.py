"""``polyak export``: a directory a model hub takes as is.

    actor.safetensors   the actor's weights
    config.json         the run's resolved configs (what loading reads)
    config.gin          the run's operative gin config, for people to read (never loaded)
    info.json           env id, spaces (low/high/shape/dtype), observation statistics, checkpoint (and which of its
                        actors: ``actor``, or TD7's ``checkpoint_actor`` that evaluation ran), training summary
    README.md           a model card: task, algorithm, score and its evaluation protocol, how to load
    policy.onnx         with ``--format onnx``: raw observations in, actions in the env's units out
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from safetensors.torch import save

from polyak import __version__
from polyak.errors import ConfigError, PolyakError
from polyak.normalization import CHECKPOINT_KEY
from polyak.playback import ACTOR_FILE, INFO_FILE, load_run_policy, resolve_checkpoint
from polyak.run_dir import RunDir

FORMATS = ("safetensors", "onnx")
ONNX_FILE = "policy.onnx"
CARD_FILE = "README.md"


def _is_export(directory: Path) -> bool:
    """Whether ``directory`` holds an earlier export and nothing else."""
    names = {entry.name for entry in directory.iterdir()}
    configs = RunDir(directory)
    written = {ACTOR_FILE, INFO_FILE, CARD_FILE, ONNX_FILE, configs.config_json.name, configs.config_gin.name,
               configs.env_json.name}
    return ACTOR_FILE in names and INFO_FILE in names and names <= written


def _check_out(run: RunDir, out_dir: Path, overwrite: bool) -> None:
    """Refuse a destination that is the run itself, inside it, another run, a directory holding other files, or
    an earlier export unless ``overwrite``: nothing is written then."""
    source, target = run.path.resolve(), out_dir.resolve()
    if target == source or source in target.parents:
        raise ConfigError(f"--out {out_dir} is inside the run {run.path}; export to a directory of its own")
    if target in source.parents:
        raise ConfigError(f"--out {out_dir} contains the run {run.path}; export to a directory of its own")
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"--out {out_dir} is a file, not a directory")
    if RunDir(out_dir).holds_a_run() or RunDir(out_dir).metrics.exists():
        raise ConfigError(f"--out {out_dir} holds a training run; export to a directory of its own")
    if not out_dir.is_dir() or not any(out_dir.iterdir()):
        return
    if not _is_export(out_dir):
        raise ConfigError(f"--out {out_dir} is not empty and is not an earlier export; export to a new directory")
    if not overwrite:
        raise ConfigError(f"--out {out_dir} holds an earlier export; add --overwrite (in Python: overwrite=True) to "
                          "replace it")


def _warn(text: str) -> None:
    print(f"polyak: warning: {text}", file=sys.stderr, flush=True)


def checkpoint_updates(checkpoint: Path) -> int | None:
    """The gradient updates the agent of ``checkpoint`` had made (None when its state.json does not say)."""
    from polyak.checkpoint import META_FILE
    from polyak.safe_files import read_json

    def find(tree: Any) -> int | None:
        if isinstance(tree, dict):
            tree = tree.get("__dict__", tree)
            if isinstance(tree.get("updates"), int):
                return int(tree["updates"])
            for value in tree.values():
                if (found := find(value)) is not None:
                    return found
        return None

    try:
        state = read_json(checkpoint / META_FILE, checkpoint).get("state", {})
        return find(state.get("__dict__", state).get("agent"))
    except (PolyakError, AttributeError):
        return None


def checkpoint_record(run: RunDir, checkpoint: Path) -> dict[str, Any]:
    """The env steps ``checkpoint`` was taken at and the evaluation score ``metrics.csv`` logged there (None when
    either is unknown): what a model card can say about an export of a run that never wrote its summary."""
    from polyak.checkpoint import META_FILE
    from polyak.safe_files import read_json

    try:
        steps = read_json(checkpoint / META_FILE, checkpoint).get("meta", {}).get("env_steps")
    except (PolyakError, AttributeError):
        steps = None
    scores: list[str] = []
    if isinstance(steps, int) and run.metrics.is_file():
        with contextlib.suppress(PolyakError):  # a damaged metrics.csv: the card lacks the score, the export goes on
            scores = [row["score"] for row in run.metrics_rows()[0]
                      if row["kind"] == "eval" and row["env_steps"] == str(steps) and row["score"]]
    score = float(scores[-1]) if scores else None
    return {"env_steps": steps if isinstance(steps, int) else None, "eval_score": score}


def export_policy(run_dir: Path, out_dir: Path, checkpoint: str | None = None,
                  formats: tuple[str, ...] = ("safetensors",), overwrite: bool = False,
                  warn: Callable[[str], None] = _warn) -> Path:
    """Write a run's actor (by default from its best checkpoint) and everything needed to use and share it.

    ``out_dir`` must be new or empty, or hold an earlier export and ``overwrite`` be set (its files are replaced,
    a ``policy.onnx`` left from an ONNX export removed when this export writes none). An actor that never learned
    (0 updates: the run stopped within its random start steps) is exported with a ``warn`` line."""
    from polyak.model_card import model_card

    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)}, got {unknown[0]!r}")
    run = RunDir(run_dir).require_run()
    _check_out(run, out_dir, overwrite)
    checkpoint_path = resolve_checkpoint(run, checkpoint)
    policy, actor_key = load_run_policy(run.path, checkpoint_path, "cpu")  # what evaluation ran (TD7: checkpoint)
    if checkpoint_updates(checkpoint_path) == 0:
        warn(f"checkpoint {checkpoint_path.name} of {run.path} has 0 updates: the exported actor is untrained "
             "(its run had not yet learned; export a later checkpoint or train longer)")
    if "onnx" in formats:
        from polyak.onnx_export import require_onnx

        require_onnx()
    summary = run.read_summary()
    configs = run.configs()
    info: dict[str, Any] = {
        "polyak_version": __version__, "env_id": policy.env_id, "env_kwargs": policy.env_kwargs,
        "obs_dim": int(policy.observation_space.shape[0]), "action_dim": int(policy.action_space.shape[0]),
        "spaces": policy._spaces().to_json(),
        CHECKPOINT_KEY: None if policy.normalizer is None else policy.normalizer.to_json(),
        "checkpoint": checkpoint_path.name, "checkpoint_record": checkpoint_record(run, checkpoint_path),
        "actor": actor_key, "training_summary": summary,
        "evaluation": {"eval_episodes": configs.trainer.eval_episodes, "eval_interval": configs.trainer.eval_interval,
                       "deterministic": True},
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    # written by us, not by safetensors' save_file (which makes the file 0600: unreadable to those it is shared with)
    (out_dir / ACTOR_FILE).write_bytes(
        save({k: v.detach().cpu().contiguous() for k, v in policy.actor.state_dict().items()}))
    target = RunDir(out_dir)
    shutil.copyfile(run.config_json, target.config_json)
    if run.config_gin.is_file():
        shutil.copyfile(run.config_gin, target.config_gin)  # for people to read; never loaded
    if run.env_json.is_file():
        shutil.copyfile(run.env_json, target.env_json)  # how the env was made, so `polyak test` rebuilds it
    (out_dir / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n")
    if "onnx" in formats:
        from polyak.onnx_export import export_onnx

        export_onnx(policy, out_dir / ONNX_FILE)
    else:
        (out_dir / ONNX_FILE).unlink(missing_ok=True)  # an earlier export's, which no longer matches the actor
    (out_dir / CARD_FILE).write_text(model_card(configs, info, out_dir.name, onnx="onnx" in formats))
    return out_dir
