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
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
from common import code_commit, machine_info, read_metrics

import polyak
from polyak.checkpoint import complete_checkpoints, steps_of


def posture(policy: polyak.Policy, episodes: int) -> dict[str, float]:
    """Return, forward velocity, pitch and the flipped share over ``episodes`` episodes (start seeds 0, 1, ...)."""
    env = gym.make("HalfCheetah-v5")
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--out", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    checkpoints = complete_checkpoints(args.run_dir / "checkpoints")
    if not checkpoints:
        print(f"cheetah_posture: no checkpoints in {args.run_dir} (train with TrainerConfig.checkpoint_interval)",
              file=sys.stderr)
        return 2
    rows = []
    print("env steps | return | forward velocity | mean pitch | mean |pitch| | flipped share")
    for checkpoint in checkpoints:
        steps = steps_of(checkpoint)
        row = {"env_steps": steps, **posture(polyak.load(args.run_dir, checkpoint=str(checkpoint)), args.episodes)}
        rows.append(row)
        print(f"{steps} | {row['return']:.0f} | {row['forward_velocity']:.2f} | {row['mean_pitch']:.2f} | "
              f"{row['mean_abs_pitch']:.2f} | {row['flipped_share']:.2f}", flush=True)
    if args.out:
        evaluations = [[int(r["env_steps"]), round(float(r["score"]), 1)] for r in read_metrics(args.run_dir)
                       if r["kind"] == "eval"]
        trainer = json.loads((args.run_dir / "config.json").read_text())["trainer"]
        args.out.write_text(json.dumps({"run_dir": args.run_dir.name, "env_id": trainer["env_id"],
                                        "seed": trainer["seed"], "episodes": args.episodes,
                                        "run_evaluations": evaluations, "rows": rows,
                                        "code_commit": code_commit(), "machine": machine_info()}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
