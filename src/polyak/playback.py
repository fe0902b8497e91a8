"""Load a trained policy (from a run directory or a checkpoint) and run it without exploration."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file

from polyak.checkpoint import describe_mismatch, load_checkpoint
from polyak.config import Configs
from polyak.envs import make_env
from polyak.errors import CheckpointError
from polyak.evaluation import run_episodes
from polyak.networks import Actor
from polyak.run_dir import RunDir
from polyak.safe_files import load_tensors, read_json, require_finite

MAX_INFO_BYTES = 1 << 20
PRETRAINED_NAME = "unity_reacher"
ACTOR_FILE = "actor.safetensors"
INFO_FILE = "info.json"


@dataclass
class Policy:
    """A deterministic actor and the environment it was trained on."""

    env_id: str
    num_envs: int
    actor: Actor
    device: torch.device
    env_kwargs: dict = field(default_factory=dict)

    @torch.no_grad()
    def __call__(self, obs: np.ndarray) -> np.ndarray:
        obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        return self.actor(obs_t).cpu().numpy()


def load_actor(configs: Configs, actor_state: dict[str, torch.Tensor], obs_dim: int, action_dim: int,
               device: torch.device) -> Actor:
    """An actor built from ``configs.actor`` holding ``actor_state``; refuses mismatched shapes."""
    actor = Actor(obs_dim, action_dim, configs.actor, torch.Generator()).to(device)
    mismatch = describe_mismatch(actor.state_dict(), actor_state)
    if mismatch:
        raise CheckpointError(f"checkpoint does not match the actor config: {mismatch}")
    actor.load_state_dict(actor_state)
    return actor.eval()


def load_policy_from_run(run_dir: Path, checkpoint: str | None, device: str = "cpu") -> Policy:
    """The actor of the newest (or the given) checkpoint of a run."""
    run = RunDir(run_dir)
    configs = run.configs()
    path = Path(checkpoint) if checkpoint is not None else run.newest_checkpoint()
    state, meta = load_checkpoint(path)
    try:
        actor_state = state["agent"]["actor"]
        obs_dim, action_dim = int(meta["obs_dim"]), int(meta["action_dim"])
    except (KeyError, TypeError, ValueError):
        raise CheckpointError(f"checkpoint {path} does not hold an agent") from None
    torch_device = torch.device(device)
    actor = load_actor(configs, actor_state, obs_dim, action_dim, torch_device)
    trainer = configs.trainer
    return Policy(trainer.env_id, trainer.num_envs, actor, torch_device, dict(trainer.env_kwargs))


def run_policy(policy: Policy, episodes: int | None, seed: int | None, num_envs: int | None = None) -> list[float]:
    """Episode scores of the policy on fresh envs (default: one episode per env)."""
    env = make_env(policy.env_id, num_envs or policy.num_envs, **policy.env_kwargs)
    try:
        obs_dim = int(env.single_observation_space.shape[0])
        if obs_dim != _input_dim(policy.actor):
            raise CheckpointError(f"policy expects {_input_dim(policy.actor)} observations, env gives {obs_dim}")
        return run_episodes(env, policy, episodes or env.num_envs, seed)
    finally:
        env.close()


def _input_dim(actor: Actor) -> int:
    return int(actor.backbone[0].linear.in_features)


def pretrained_dir(name: str = PRETRAINED_NAME) -> Path:
    """Where the package keeps a pretrained agent: ``config.gin``, ``actor.safetensors``, ``info.json``."""
    return Path(str(resources.files("polyak") / "pretrained" / name))


def load_policy_from_dir(directory: Path, device: str = "cpu") -> Policy:
    """A policy exported by :func:`export_policy` (the shipped pretrained agent is one)."""
    for required in (ACTOR_FILE, INFO_FILE):
        if not (directory / required).is_file():
            raise CheckpointError(f"{directory} is not an exported policy (no {required})")
    configs = RunDir(directory).configs()  # config.json only: gin is never run on a shared file
    info = read_json(directory / INFO_FILE, directory, MAX_INFO_BYTES)
    try:
        obs_dim, action_dim = int(info["obs_dim"]), int(info["action_dim"])
    except (KeyError, TypeError, ValueError):
        raise CheckpointError(f"{directory / INFO_FILE} is damaged") from None
    actor_state = load_tensors(directory / ACTOR_FILE, directory)
    require_finite(actor_state, str(directory / ACTOR_FILE))
    torch_device = torch.device(device)
    actor = load_actor(configs, actor_state, obs_dim, action_dim, torch_device)
    trainer = configs.trainer
    return Policy(trainer.env_id, trainer.num_envs, actor, torch_device, dict(trainer.env_kwargs))


def load_policy(run_dir: str | None, checkpoint: str | None = None, device: str = "cpu") -> Policy:
    """A run directory's policy, an exported policy directory, or the shipped pretrained agent (None)."""
    if run_dir is None:
        return load_policy_from_dir(pretrained_dir(), device)
    path = Path(run_dir)
    if (path / ACTOR_FILE).is_file():
        return load_policy_from_dir(path, device)
    return load_policy_from_run(path, checkpoint, device)


def export_policy(run_dir: Path, out_dir: Path, checkpoint: str | None = None) -> Path:
    """Write a run's actor alone (safetensors), its config and a small JSON record into ``out_dir``."""
    policy = load_policy_from_run(run_dir, checkpoint, "cpu")
    out_dir.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in policy.actor.state_dict().items()}, str(out_dir / ACTOR_FILE))
    run = RunDir(run_dir)
    shutil.copyfile(run.config_json, RunDir(out_dir).config_json)
    if run.config_gin.is_file():
        shutil.copyfile(run.config_gin, RunDir(out_dir).config_gin)  # for people to read; never loaded
    summary = run.read_summary()
    info = {"env_id": policy.env_id, "obs_dim": _input_dim(policy.actor),
            "action_dim": int(policy.actor.head.out_features), "training_summary": summary}
    (out_dir / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n")
    return out_dir
