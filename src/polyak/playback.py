"""Load a trained policy (a run directory, one of its checkpoints, an exported agent or the shipped pretrained
agent) and run it without exploration. Loading reads JSON and safetensors only, never gin."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import VectorEnv

from polyak.algorithms import build_actor, evaluation_actor_key
from polyak.checkpoint import META_FILE, describe_mismatch, load_checkpoint
from polyak.config import Configs, TrainerConfig, whole_number
from polyak.errors import CheckpointError, ConfigError, not_a_directory
from polyak.evaluation import cut_warning, never, run_episodes, time_limit
from polyak.networks import Actor
from polyak.normalization import CHECKPOINT_KEY as NORMALIZER_KEY
from polyak.normalization import ObservationNormalizer
from polyak.policy import Policy, actor_obs_dim
from polyak.run_dir import ACTOR_FILE, BEST, RunDir
from polyak.safe_files import load_tensors, read_json, require_finite
from polyak.spaces import EnvSpaces

__all__ = ["ACTOR_FILE", "INFO_FILE", "Policy", "evaluate_policy", "load_policy", "resolve_device", "run_policy"]

MAX_INFO_BYTES = 1 << 20
PRETRAINED_NAME = "unity_reacher"
INFO_FILE = "info.json"
NEWEST = ("newest", "latest", "last")


def resolve_device(device: str) -> torch.device:
    """A torch device this torch can use; a ConfigError naming the problem otherwise."""
    try:
        resolved = torch.device(device)
    except (RuntimeError, ValueError):
        raise ConfigError(f"unknown device {device!r} (use cpu, cuda or cuda:N)") from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r} is not available: this torch {torch.__version__} has no usable CUDA "
                          "(use --device cpu)")
    if resolved.type not in ("cpu", "cuda"):
        raise ConfigError(f"device {device!r} is not supported (use cpu, cuda or cuda:N)")
    return resolved


def load_actor(configs: Configs, actor_state: dict[str, torch.Tensor], obs_dim: int, action_dim: int,
               device: torch.device) -> Actor:
    """An actor shaped like the learner's (``configs.actor``; with TD7's SALE, its state encoder) holding
    ``actor_state``, in eval mode (CrossQ's batch renormalization uses its running statistics); refuses mismatched
    shapes."""
    actor = build_actor(obs_dim, action_dim, configs.agent, configs.actor, configs.td7).to(device)
    mismatch = describe_mismatch(actor.state_dict(), actor_state)
    if mismatch:
        raise CheckpointError(f"checkpoint does not match the actor config: {mismatch}")
    actor.load_state_dict(actor_state)
    return actor.eval()


def evaluated_actor_key(configs: Configs, agent: dict[str, Any]) -> str:
    """The entry of a checkpoint's ``agent`` holding the policy evaluation ran: ``actor_average`` when the run
    averages its actor, TD7's ``checkpoint_actor`` once the checkpoint policy has taken a checkpoint, else ``actor``
    (what TD7 evaluates before its first checkpoint)."""
    key = evaluation_actor_key(configs.agent, configs.td7)
    if key == "checkpoint_actor":
        assessment = agent.get("checkpoint_policy")
        if not isinstance(assessment, dict) or int(assessment.get("checkpoints", 0)) == 0:
            return "actor"
    return key


def _normalizer(state: Any, obs_dim: int, where: str) -> ObservationNormalizer | None:
    if state is None:
        return None
    if not isinstance(state, dict):
        raise CheckpointError(f"{where}: observation normalization statistics are damaged")
    return ObservationNormalizer.from_state(state, obs_dim)


def _spaces(data: Any, where: str) -> EnvSpaces | None:
    return None if data is None else EnvSpaces.from_json(data, where)


def is_checkpoint(path: Path) -> bool:
    return path.is_dir() and (path / META_FILE).is_file()


def resolve_checkpoint(run: RunDir, checkpoint: str | Path | None) -> Path:
    """``None``: the best checkpoint, or the newest when the run has no best; ``'best'``; ``'newest'``; or a path
    (a checkpoint directory, or a name inside the run's ``checkpoints/``)."""
    if checkpoint is None:
        return run.best if is_checkpoint(run.best) else run.newest_checkpoint()
    name = str(checkpoint)
    if name == BEST:
        if not is_checkpoint(run.best):
            raise CheckpointError(f"{run.path} has no best checkpoint (it never evaluated: set "
                                  "TrainerConfig.eval_interval); use --checkpoint newest")
        return run.best
    if name in NEWEST:
        return run.newest_checkpoint()
    path = Path(name)
    if not path.exists() and (run.checkpoints / name).exists():
        path = run.checkpoints / name
    if not is_checkpoint(path):
        why = "is not a checkpoint" if path.is_dir() else not_a_directory(path)
        raise CheckpointError(f"checkpoint {name} {why} (give 'best', 'newest' or a checkpoint directory)")
    return path


def load_policy_from_run(run_dir: Path, checkpoint: str | Path | None, device: str = "cpu") -> Policy:
    """The actor of a run's best checkpoint (default; the newest when it has none) or of the given one."""
    return load_run_policy(run_dir, checkpoint, device)[0]


def load_run_policy(run_dir: Path, checkpoint: str | Path | None, device: str = "cpu") -> tuple[Policy, str]:
    """:func:`load_policy_from_run`'s policy and the checkpoint entry its actor came from (``actor`` or TD7's
    ``checkpoint_actor``: see :func:`evaluated_actor_key`)."""
    run = RunDir(run_dir)
    configs = run.configs()
    path = resolve_checkpoint(run, checkpoint)
    state, meta = load_checkpoint(path)
    try:
        agent = state["agent"]
        key = evaluated_actor_key(configs, agent)
        actor_state = agent[key]
        obs_dim, action_dim = int(meta["obs_dim"]), int(meta["action_dim"])
    except (KeyError, TypeError, ValueError):
        raise CheckpointError(f"checkpoint {path} does not hold an agent") from None
    torch_device = resolve_device(device)
    actor = load_actor(configs, actor_state, obs_dim, action_dim, torch_device)
    normalizer = _normalizer(agent.get(NORMALIZER_KEY), obs_dim, str(path))
    if configs.trainer.normalize_observations and normalizer is None:
        raise CheckpointError(f"checkpoint {path} lacks the observation statistics its config normalizes with")
    trainer = configs.trainer
    steps = meta.get("env_steps")
    at = f"{steps} env steps" if isinstance(steps, int) else "unknown env steps"
    origin = f"best checkpoint, {at}" if path.name == BEST else f"checkpoint at {at}"
    return Policy(trainer.env_id, trainer.num_envs, actor, torch_device, dict(trainer.env_kwargs),
                  _spaces(meta.get("spaces"), str(path)), normalizer, _env_source(run), origin), key


def _env_source(directory: RunDir) -> Any:
    """How the env of a run (or an export that kept its ``env.json``) was made; None: from its env id."""
    from polyak.errors import EnvError

    if not directory.env_json.is_file():
        return None
    try:
        return directory.env_source()
    except EnvError as error:
        raise CheckpointError(str(error)) from None


def pretrained_dir(name: str = PRETRAINED_NAME) -> Path:
    """Where the package keeps a pretrained agent: ``config.json``, ``actor.safetensors``, ``info.json``."""
    return Path(str(resources.files("polyak") / "pretrained" / name))


def read_info(directory: Path) -> dict[str, Any]:
    info = read_json(directory / INFO_FILE, directory, MAX_INFO_BYTES)
    if not isinstance(info, dict):
        raise CheckpointError(f"{directory / INFO_FILE} is damaged")
    return info


def load_policy_from_dir(directory: Path, device: str = "cpu") -> Policy:
    """A policy exported by :func:`polyak.exporter.export_policy` (the shipped pretrained agent is one)."""
    for required in (ACTOR_FILE, INFO_FILE):
        if not (directory / required).is_file():
            raise CheckpointError(f"{directory} is not an exported policy (no {required})")
    configs = RunDir(directory).configs()  # config.json only: gin is never run on a shared file
    info = read_info(directory)
    try:
        obs_dim, action_dim = int(info["obs_dim"]), int(info["action_dim"])
    except (KeyError, TypeError, ValueError):
        raise CheckpointError(f"{directory / INFO_FILE} is damaged") from None
    actor_state = load_tensors(directory / ACTOR_FILE, directory)
    require_finite(actor_state, str(directory / ACTOR_FILE))
    torch_device = resolve_device(device)
    actor = load_actor(configs, actor_state, obs_dim, action_dim, torch_device)
    where = str(directory / INFO_FILE)
    trainer = configs.trainer
    return Policy(trainer.env_id, trainer.num_envs, actor, torch_device, dict(trainer.env_kwargs),
                  _spaces(info.get("spaces"), where), _normalizer(info.get(NORMALIZER_KEY), obs_dim, where),
                  _env_source(RunDir(directory)))


def load_policy(source: str | Path | None, checkpoint: str | Path | None = None, device: str = "cpu") -> Policy:
    """A run directory's policy, one checkpoint directory of a run, an exported policy directory, or the shipped
    pretrained agent (``None``)."""
    import polyak.envs  # noqa: F401 - registers polyak/UnityReacher-v0, so gym.make(policy.env_id) works

    if source is None or (Path(source) / ACTOR_FILE).is_file():
        if checkpoint is not None and str(checkpoint) != BEST:  # an export's actor is its run's best, or chosen one
            what = "the pretrained agent" if source is None else f"{source}, an exported agent,"
            raise ConfigError(f"--checkpoint {checkpoint} needs a run directory: {what} holds one actor, no "
                              "checkpoints")
        return load_policy_from_dir(pretrained_dir() if source is None else Path(source), device)
    path = Path(source)
    if not path.is_dir():
        raise CheckpointError(f"{path} {not_a_directory(path)} (give a run directory, a checkpoint or an exported "
                              "agent)")
    if is_checkpoint(path) and checkpoint is None:  # <run>/checkpoints/<name>
        return load_policy_from_run(path.parent.parent, path, device)
    return load_policy_from_run(path, checkpoint, device)


def run_policy(policy: Policy, episodes: int | None, seed: int | None, num_envs: int | None = None,
               max_episode_steps: int = TrainerConfig.eval_max_episode_steps, should_stop: Callable[[], bool] = never,
               cap_setting: str = "run_policy's max_episode_steps") -> list[float]:
    """Episode scores of the policy on fresh envs (default: one episode per env).

    On an env without a time limit, episodes are cut at ``max_episode_steps`` (one warning naming
    ``cap_setting``); :class:`~polyak.evaluation.EvaluationStopped` when ``should_stop`` returns True first.
    """
    env = policy.make_env(num_envs)
    try:
        return _scores(policy, env, policy, episodes or env.num_envs, seed, max_episode_steps, should_stop,
                       cap_setting, "test")
    finally:
        env.close()


def _scores(policy: Policy, env: VectorEnv, act: Callable[[np.ndarray], np.ndarray], episodes: int,
            seed: int | None, max_episode_steps: int, should_stop: Callable[[], bool], cap_setting: str,
            what: str) -> list[float]:
    """Episode scores of ``act`` on ``env``, cut at ``max_episode_steps`` on an env without a time limit."""
    obs_dim = int(env.single_observation_space.shape[0])
    expected = actor_obs_dim(policy.actor)
    if obs_dim != expected:
        raise CheckpointError(f"policy expects {expected} observations, env gives {obs_dim}")
    cap = None if time_limit(env) is not None else max_episode_steps
    warned: list[bool] = []

    def warn_once() -> None:
        if not warned:
            warned.append(True)
            print(cut_warning(env, cap, what, cap_setting), flush=True)

    return run_episodes(env, act, episodes, seed, cap, should_stop, warn_once)


def evaluate_policy(policy: Policy, env: str | gym.Env | VectorEnv, episodes: int = 10, seed: int | None = None,
                    max_episode_steps: int = TrainerConfig.eval_max_episode_steps, own_env: bool = False
                    ) -> list[float]:
    """Scores of ``episodes`` episodes of ``policy`` without exploration on ``env``: an env id (made as polyak
    trains on it, ``policy.env_kwargs`` included), a gymnasium Env (wrappers included) or a gymnasium vector env,
    stepped in the env's own units (:meth:`Policy.predict`; ``own_env``: a vector env polyak made, taking actions in
    [-1, 1]); the episodes shared out among a vector env's copies. An env given is not closed and is seeded only
    with ``seed``; episodes of an env without a time limit are cut at ``max_episode_steps`` (one warning)."""
    from gymnasium.vector import AutoresetMode, SyncVectorEnv

    count, cut = whole_number(episodes), whole_number(max_episode_steps)
    if count is None or count < 1:
        raise ConfigError(f"n_episodes must be a whole number >= 1, got {episodes!r}")
    if cut is None or cut < 1:
        raise ConfigError(f"max_episode_steps must be a whole number >= 1, got {max_episode_steps!r}")
    episodes, max_episode_steps = count, cut
    cap = "polyak.evaluate's max_episode_steps"
    if isinstance(env, str):
        from polyak.envs import make_env

        made = make_env(env, 1, **policy.env_kwargs)
        try:
            return _scores(policy, made, policy, episodes, seed, max_episode_steps, never, cap, "evaluation")
        finally:
            made.close()
    if own_env and isinstance(env, VectorEnv):
        return _scores(policy, env, policy, episodes, seed, max_episode_steps, never, cap, "evaluation")
    if isinstance(env, gym.Env):
        vector: VectorEnv = SyncVectorEnv([lambda: env], autoreset_mode=AutoresetMode.SAME_STEP)
        vector.spec = env.spec
    elif isinstance(env, VectorEnv):
        vector = env
    else:
        raise ConfigError(f"evaluate takes an env id, a gymnasium Env or a gymnasium vector env, got "
                          f"{type(env).__name__}")
    return _scores(policy, vector, lambda obs: policy.predict(obs)[0], episodes, seed, max_episode_steps, never, cap,
                   "evaluation")
