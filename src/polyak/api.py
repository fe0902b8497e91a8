"""The Python API: :func:`train` a config into a run directory, :func:`load` a trained policy, :func:`evaluate` it.

Gin is parsed here (the edge) and cleared again, so no binding of one call reaches the next.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polyak.errors import ConfigError

if TYPE_CHECKING:
    import gymnasium as gym
    from gymnasium.vector import VectorEnv

    from polyak.config import Configs
    from polyak.policy import Policy


@dataclass
class Run:
    """A finished (or interrupted) training run: its directory, configs and summary (:meth:`train_more` brings
    them up to date)."""

    path: Path
    configs: Configs
    summary: dict[str, Any]

    def load(self, checkpoint: str | None = "best", device: str = "cpu") -> Policy:
        """The run's policy (see :func:`load`)."""
        return load(self.path, checkpoint, device)

    def export(self, out: str | os.PathLike[str], checkpoint: str | None = "best", onnx: bool = False,
               overwrite: bool = False) -> Path:
        """Save the run's actor alone for sharing (see :func:`export`)."""
        return export(self.path, out, checkpoint, onnx, overwrite)

    def train_more(self, env_steps: int, **kwargs: Any) -> Run:
        """Train this run ``env_steps`` further, as Stable-Baselines3's ``learn`` trains a model further: :func:`train`
        with ``resume`` and a budget of the env steps of its newest checkpoint plus ``env_steps`` (``kwargs``:
        ``env=``, ``callback=``, ``threads=``, settings). Updates this Run's ``configs`` and ``summary`` and returns
        it, so calls can repeat."""
        from polyak.checkpoint import steps_of
        from polyak.config import whole_number
        from polyak.run_dir import RunDir

        more_steps = whole_number(env_steps)
        if more_steps is None or more_steps < 1:
            raise ConfigError(f"train_more(env_steps) must be a whole number of env steps >= 1, got {env_steps!r}")
        reached = steps_of(RunDir(self.path).newest_checkpoint())
        more = train(resume=self.path, max_env_steps=reached + more_steps, **kwargs)
        self.configs, self.summary = more.configs, more.summary
        return self


def train(config: str | Path | Any = None, overrides: Sequence[str] = (), run_dir: str | Path | None = None,
          seed: int | None = None, threads: int | None = None, *, env: Any = None, algo: str | None = None,
          resume: str | Path | None = None, callback: Callable[[int, float], bool | None] | None = None,
          **settings: Any) -> Run:
    """Train an agent into a run directory and return the :class:`Run`.

    What to train:

    * ``env``: a Gymnasium env id (``"Pendulum-v1"``, ``"my_module:MyEnv-v0"``), a ``gymnasium.Env`` (wrappers
      included) or a function that makes one (``lambda: MyWrapper(gym.make("Hopper-v5"))``; called for every copy
      polyak needs: the training env, the evaluation env, ``num_envs``). An instance is used as the training env
      and copied for evaluation. ``polyak.train(gym.make(...))`` passes it as ``env`` too. The run records how the
      env was made (``env.json``), so ``polyak test`` and ``polyak record`` make it again when they can (an id, a
      function importable from a module) and say in one line what to pass otherwise.
    * ``config``: a shipped config's name (``"pendulum"``, ``"suite/hopper_td7"``) or a .gin file; ``algo`` instead:
      ``ddpg``, ``td3``, ``td7``, ``crossq``, ``sac`` or ``crossq_sac`` with its paper's settings; neither: the
      recommended config for one env when ``env`` is given, else the Reacher's default.

    Settings: ``overrides`` are gin bindings (``["NoiseConfig.sigma = 0.2"]``); keyword ``settings`` are the
    common ones by name, applied after them: ``max_env_steps``, ``eval_interval``, ``eval_episodes``, ``num_envs``,
    ``start_steps``, ``env_kwargs``, ``checkpoint_interval``, ``progress_bar``, ``hidden_sizes`` and SB3's
    ``total_timesteps``, ``learning_rate`` (both networks' ``NetworkConfig.lr``), ``buffer_size``
    (``ReplayConfig.capacity``), ``learning_starts`` (``start_steps`` and ``ReplayConfig.min_size``),
    ``train_freq``, ``gradient_steps``, ``batch_size``, ``tau``, ``gamma``, ``policy_delay``,
    ``target_policy_noise``, ``target_noise_clip``, ``net_arch`` (a list, or SB3's ``dict(pi=..., qf=...)``),
    ``n_envs``, ``eval_freq``, ``n_eval_episodes``, ``device`` (:data:`polyak.planning.KEYWORDS`). Whole floats
    (``5e3``) are accepted for whole-number settings.

    ``run_dir`` None: ``runs/<env>_<config>[_seed_N]`` (``_1``, ``_2`` ... when taken); a given ``run_dir`` that
    already holds a run is refused. ``seed`` overrides every seed (None: the config's ``TrainerConfig.seed``, 0 in
    every shipped config, not a random one as in SB3). ``threads`` sets torch's intra-op threads
    (``TrainerConfig.threads``, default 1; None: the config's value).

    ``callback(env_steps, mean_score)`` is called after each evaluation; returning False stops training cleanly,
    as at the end of the budget (final checkpoint, ``summary.json``): early stopping, or Optuna pruning
    (``trial.report(score, env_steps); return not trial.should_prune()``). An exception it raises ends the run
    without a summary, after a checkpoint at that evaluation (resume the run to go on; one whose evaluation
    had reached ``eval_stop_score`` ends there).

    Ctrl-C (SIGINT) or SIGTERM ends training at the next step with a checkpoint, as in ``polyak train``; the call
    prints how to resume and returns the :class:`Run`, whose ``summary["interrupted"]`` names the signal (a loop
    over seeds checks it to stop).

    ``resume``: continue that run from its newest checkpoint, with its own config and ``overrides``/``settings`` on
    top: an interrupted run, or a finished one given a larger ``max_env_steps`` (its networks continue exactly as if
    trained to the larger budget in one go; an earlier budget off the ``eval_interval`` schedule leaves its extra
    final evaluation in ``metrics.csv``). A run whose env was an instance or an unimportable function needs the
    same ``env`` again. :meth:`Run.train_more` does this for a run you hold.
    """
    from polyak.planning import open_trainer, plan_run
    from polyak.threads import check_threads, set_threads

    if callback is not None and not callable(callback):
        raise ConfigError(f"callback must be a function (env_steps, mean_score) -> bool | None, got "
                          f"{type(callback).__name__}")
    if isinstance(overrides, str):
        overrides = [overrides]
    bindings = list(overrides)
    if check_threads(threads) is not None:
        bindings.append(f"TrainerConfig.threads = {threads}")
    plan = plan_run(config, bindings, run_dir=run_dir, seed=seed, resume=resume, env=env, algo=algo,
                    settings=settings)
    set_threads(plan.configs.trainer.threads)
    trainer, _ = open_trainer(plan, callback)
    summary = trainer.run()
    if summary.interrupted is not None:  # the call returns, so a script goes on: say so, as the command does
        needs_env = plan.env_source is not None and not plan.env_source.rebuildable()
        print(f"polyak: stopped by {summary.interrupted} at {summary.env_steps} env steps; checkpoint saved. "
              f"Resume with: polyak.train(resume={str(plan.run_dir)!r}{', env=<the same env>' if needs_env else ''})",
              file=sys.stderr)
    return Run(plan.run_dir, plan.configs, dict(summary.__dict__))


def load(path: str | Path | None = None, checkpoint: str | None = "best", device: str = "cpu") -> Policy:
    """A trained policy from a run directory, a checkpoint directory or an exported agent (None: the shipped
    pretrained Reacher agent).

    ``checkpoint``: ``"best"`` (the best evaluation; the newest checkpoint when the run never evaluated),
    ``"newest"``, or a checkpoint directory. ``action, _ = policy.predict(obs)`` gives actions in the env's
    units, as Stable-Baselines3's ``predict`` does.
    """
    from polyak.playback import load_policy

    if path is not None and not isinstance(path, str | os.PathLike):
        raise ConfigError(f"load takes a run directory, a checkpoint or an exported agent as a path (or None: the "
                          f"pretrained agent), got {type(path).__name__}")
    return load_policy(path, None if checkpoint == "best" else checkpoint, device)


def export(run: str | os.PathLike[str], out: str | os.PathLike[str], checkpoint: str | None = "best",
           onnx: bool = False, overwrite: bool = False) -> Path:
    """Write ``run``'s actor (its ``checkpoint``: ``"best"``, the newest when the run never evaluated;
    ``"newest"``; or a checkpoint directory) to ``out`` with its config, spaces, observation statistics and a model
    card, as ``polyak export`` does and as SB3's ``model.save`` is used to share a model: :func:`load` reads it back
    without the run. ``onnx``: also ``policy.onnx`` (``pip install 'polyak[onnx]'``). ``out`` must be new or empty,
    or an earlier export with ``overwrite``. Returns ``out``."""
    from polyak.exporter import export_policy

    for name, value in (("run", run), ("out", out)):
        if not isinstance(value, str | os.PathLike):
            raise ConfigError(f"export takes {name} as a path, got {type(value).__name__}")
    formats = ("safetensors", "onnx") if onnx else ("safetensors",)
    return export_policy(Path(run), Path(out), None if checkpoint == "best" else checkpoint, formats,
                         overwrite=overwrite)


def evaluate(policy: Policy, env: str | gym.Env | VectorEnv | None = None, n_episodes: int = 10,
             deterministic: bool = True, seed: int | None = None, max_episode_steps: int | None = None
             ) -> tuple[float, float]:
    """``(mean, std)`` of ``n_episodes`` episode returns of ``policy`` without exploration, as Stable-Baselines3's
    ``evaluate_policy`` returns them.

    ``env``: an env id, a ``gymnasium.Env`` (wrappers included) or a gymnasium vector env (the episodes shared out
    among its copies); None: the policy's own env, made as its run recorded. Episodes of an env without a time limit
    are cut at ``max_episode_steps`` (default ``TrainerConfig.eval_max_episode_steps``, 1,000; one warning) and
    scored by their return so far. ``seed`` seeds the first reset (None: the env's own randomness). The policy acts
    deterministically whatever ``deterministic`` says (it is accepted for SB3's signature).
    """
    import numpy as np

    from polyak.config import TrainerConfig
    from polyak.playback import evaluate_policy

    del deterministic
    cap = TrainerConfig.eval_max_episode_steps if max_episode_steps is None else max_episode_steps
    if env is None:
        made = policy.make_env(1)
        try:
            scores = evaluate_policy(policy, made, n_episodes, seed, cap, own_env=True)
        finally:
            made.close()
    else:
        scores = evaluate_policy(policy, env, n_episodes, seed, cap)
    return float(np.mean(scores)), float(np.std(scores))
