"""Posture of a HalfCheetah-v5 run's policy at each of its checkpoints: running upright, or flipped onto its back.

A HalfCheetah agent can settle in a local optimum where it runs (slowly) on its back or head: its return stays in
the low thousands while other seeds pass 7,000. This script tells that apart from a policy that is upright but
slow, so a stuck seed of the suite can be diagnosed from its checkpoints:

  python benchmarks/cheetah_posture.py RUN_DIR [--episodes 3] [--out FILE.json]

For each checkpoint (``TrainerConfig.checkpoint_interval``) it loads the shipped policy (the averaged actor where
the run averages) and plays deterministic episodes from fixed start states, reporting per checkpoint the mean
return, the mean forward velocity, the torso's mean pitch and mean absolute pitch (``qpos[2]``, radians; 0 is
level, positive is nose down) and the share of steps with ``|pitch| > pi/2`` (on its back). ``--out`` also keeps
the run's own evaluations (``metrics.csv``).

The same for sb3-contrib's CrossQ, whose suite runs keep no checkpoints: ``--sb3-crossq-seed S`` reruns the suite's
``sb3_crossq`` run of seed ``S`` (its settings, evaluations and start states; the critic ``--width`` wide, as in
``baseline_width.py``) to ``--until`` env steps, keeping the model of each evaluation in ``RUN_DIR/models``, and
measures those (a second call measures the kept models without training; one cut short goes on from its last
evaluation's snapshot, which is then no longer a repeat of the committed run). ``--out`` then also has the committed
result's evaluations of that run, if there is one, to show whether the rerun repeated it:

  python benchmarks/cheetah_posture.py RUN_DIR --sb3-crossq-seed 0 --width 512 --until 25000 --out FILE.json
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import sb3_snapshot
from common import code_commit, machine_info, read_metrics, sb3_deterministic_action

import polyak
from polyak.checkpoint import complete_checkpoints, steps_of

TASK = "HalfCheetah-v5"
SAVE_PREFIX = "at_"
EVALUATIONS = "evaluations.json"


def posture(policy: Any, episodes: int) -> dict[str, float]:
    """Return, forward velocity, pitch and the flipped share over ``episodes`` episodes (start seeds 0, 1, ...)."""
    env = gym.make(TASK)
    returns, velocities, pitches = [], [], []
    try:
        for episode in range(episodes):
            obs, _ = env.reset(seed=episode)
            total, done = 0.0, False
            while not done:
                action, _ = policy.predict(obs)
                obs, reward, terminated, truncated, _ = env.step(action)
                data = env.unwrapped.data
                # rooty is a hinge: its angle winds past pi when the cheetah rolls over, so wrap it to (-pi, pi].
                pitches.append(math.remainder(float(data.qpos[2]), 2 * math.pi))
                velocities.append(float(data.qvel[0]))
                total += float(reward)
                done = terminated or truncated
            returns.append(total)
    finally:
        env.close()
    pitch = np.asarray(pitches)
    return {"return": float(np.mean(returns)), "forward_velocity": float(np.mean(velocities)),
            "mean_pitch": float(np.mean(pitch)), "mean_abs_pitch": float(np.mean(np.abs(pitch))),
            "flipped_share": float(np.mean(np.abs(pitch) > math.pi / 2))}


class SB3Policy:
    """An SB3 save as a ``predict(obs)`` policy: its deterministic action, as the suite evaluates SB3 runs."""

    def __init__(self, model: Any) -> None:
        model.policy.set_training_mode(False)  # BatchRenorm's running statistics, not one observation's
        self.model = model

    def predict(self, obs: np.ndarray) -> tuple[np.ndarray, None]:
        return sb3_deterministic_action(self.model, obs[None])[0], None


def polyak_policies(run_dir: Path) -> Iterator[tuple[int, polyak.Policy]]:
    for checkpoint in complete_checkpoints(run_dir / "checkpoints"):
        yield steps_of(checkpoint), polyak.load(run_dir, checkpoint=str(checkpoint))


def run_evaluations(run_dir: Path) -> list[list[float]]:
    """A polyak run's own evaluations (``metrics.csv``) as [env steps, mean return]."""
    return [[int(r["env_steps"]), round(float(r["score"]), 1)] for r in read_metrics(run_dir) if r["kind"] == "eval"]


def sb3_saves(models: Path) -> list[tuple[int, Path]]:
    """The kept models (``at_<env steps>.zip``), oldest first."""
    saves = [(int(path.stem.removeprefix(SAVE_PREFIX)), path) for path in models.glob(f"{SAVE_PREFIX}*.zip")]
    return sorted(saves)


def sb3_policies(models: Path) -> Iterator[tuple[int, SB3Policy]]:
    from sb3_contrib import CrossQ

    for steps, path in sb3_saves(models):
        yield steps, SB3Policy(CrossQ.load(path, device="cpu"))


def rerun_sb3_crossq(seed: int, width: int, until: int, run_dir: Path) -> list[list[float]]:
    """Rerun the suite's ``sb3_crossq`` HalfCheetah-v5 run of ``seed`` with a ``width``-wide critic to ``until``
    env steps, keeping each evaluation's model in ``run_dir/models``; its evaluations as [env steps, return]."""
    import torch
    from suite import run_sb3

    torch.set_num_threads(1)
    models = run_dir / "models"
    models.mkdir(parents=True, exist_ok=True)

    def keep_model(snapshot: Path, model: Any) -> bool:
        shutil.copy(snapshot / sb3_snapshot.MODEL, models / f"{SAVE_PREFIX}{model.num_timesteps}.zip")
        return model.num_timesteps < until

    result = run_sb3(TASK, "sb3_crossq", seed, critic_width=width, snapshots=run_dir / "snapshot",
                     after_snapshot=keep_model)
    evaluations = evaluations_of(result)
    (run_dir / EVALUATIONS).write_text(json.dumps(evaluations) + "\n")
    return evaluations


def committed_sb3_evaluations(seed: int, width: int) -> list[list[float]] | None:
    """The evaluations of the committed like-for-like run of ``seed`` at ``width`` (``baseline_width.py``), if any."""
    from baseline_width import study_path

    path = study_path(TASK, width, seed)
    if not path.exists():
        return None
    return evaluations_of(json.loads(path.read_text()))


def evaluations_of(result: dict[str, Any]) -> list[list[float]]:
    """An SB3 suite result's evaluations as [env steps, return]."""
    return [[steps, round(score, 1)] for steps, score in zip(result["eval_steps"], result["eval_returns"], strict=True)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--out", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--sb3-crossq-seed", type=int, help="rerun this seed of the suite's sb3_crossq into RUN_DIR")
    parser.add_argument("--width", type=int, default=512, help="the sb3_crossq rerun's critic width")
    parser.add_argument("--until", type=int, default=25_000, help="the sb3_crossq rerun's env steps")
    args = parser.parse_args(argv)
    sb3 = args.sb3_crossq_seed is not None
    if sb3:
        if not (args.run_dir / EVALUATIONS).exists():  # written when the rerun is done
            rerun_sb3_crossq(args.sb3_crossq_seed, args.width, args.until, args.run_dir)
        policies: Iterator[tuple[int, Any]] = sb3_policies(args.run_dir / "models")
    elif complete_checkpoints(args.run_dir / "checkpoints"):
        policies = polyak_policies(args.run_dir)
    else:
        print(f"cheetah_posture: no checkpoints in {args.run_dir} (train with TrainerConfig.checkpoint_interval)",
              file=sys.stderr)
        return 2
    rows = []
    print("env steps | return | forward velocity | mean pitch | mean |pitch| | flipped share")
    for steps, policy in policies:
        row = {"env_steps": steps, **posture(policy, args.episodes)}
        rows.append(row)
        print(f"{steps} | {row['return']:.0f} | {row['forward_velocity']:.2f} | {row['mean_pitch']:.2f} | "
              f"{row['mean_abs_pitch']:.2f} | {row['flipped_share']:.2f}", flush=True)
    if args.out:
        if sb3:
            source = {"row": "sb3_crossq", "critic_width": args.width, "env_id": TASK, "seed": args.sb3_crossq_seed,
                      "run_evaluations": json.loads((args.run_dir / EVALUATIONS).read_text()),
                      "committed_run_evaluations": committed_sb3_evaluations(args.sb3_crossq_seed, args.width)}
        else:
            trainer = json.loads((args.run_dir / "config.json").read_text())["trainer"]
            source = {"env_id": trainer["env_id"], "seed": trainer["seed"],
                      "run_evaluations": run_evaluations(args.run_dir)}
        args.out.write_text(json.dumps({"run_dir": args.run_dir.name, **source, "episodes": args.episodes,
                                        "rows": rows, "code_commit": code_commit(), "machine": machine_info()},
                                       indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
