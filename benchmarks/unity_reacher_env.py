"""Throughput and reference scores of the 20-arm Unity-Reacher re-creation (spec §8 "Sanity targets").

Run with ``OMP_NUM_THREADS=1 python benchmarks/unity_reacher_env.py``. Writes
``benchmarks/results/unity_reacher_env.json`` and prints the same JSON object as the last stdout line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import mujoco
import numpy as np

from polyak.envs.scripted import ScriptedReacherController
from polyak.envs.unity_reacher import DECISIONS_PER_EPISODE, UnityReacherVectorEnv

RESULT_PATH = Path(__file__).resolve().parent / "results" / "unity_reacher_env.json"


def measure_throughput(num_arms: int, decisions: int, repeats: int, seed: int) -> list[float]:
    """Arm-steps (decisions × arms) per second with uniform random actions, one value per repeat."""
    env = UnityReacherVectorEnv(num_envs=num_arms)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    actions = rng.uniform(-1.0, 1.0, size=(decisions, num_arms, 4)).astype(np.float32)
    for a in actions[:200]:
        env.step(a)
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for a in actions:
            env.step(a)
        rates.append(decisions * num_arms / (time.perf_counter() - start))
    env.close()
    return rates


def episode_scores(policy: str, num_arms: int, episodes: int, seed: int) -> np.ndarray:
    """Per-arm scores (sum of rewards over a 1000-decision episode), shape ``(episodes, num_arms)``."""
    env = UnityReacherVectorEnv(num_envs=num_arms)
    rng = np.random.default_rng(seed + 1)
    controller = ScriptedReacherController()
    obs, _ = env.reset(seed=seed)
    scores = np.zeros((episodes, num_arms))
    for ep in range(episodes):
        for _ in range(DECISIONS_PER_EPISODE):
            action = rng.uniform(-1.0, 1.0, size=(num_arms, 4)) if policy == "random" else controller(obs)
            obs, reward, _, truncated, _ = env.step(action)
            scores[ep] += reward
        assert truncated.all()
    warnings = sum(w.number for w in env.data.warning)
    env.close()
    if warnings:
        raise RuntimeError(f"MuJoCo reported {warnings} warnings during the {policy} run")
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--arms", type=int, default=20)
    parser.add_argument("--decisions", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--random-episodes", type=int, default=10)
    parser.add_argument("--scripted-episodes", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rates = measure_throughput(args.arms, args.decisions, args.repeats, args.seed)
    random_scores = episode_scores("random", args.arms, args.random_episodes, args.seed)
    scripted_scores = episode_scores("scripted", args.arms, args.scripted_episodes, args.seed)
    result = {
        "benchmark": "unity_reacher_env",
        "arm_steps_per_s_median": round(statistics.median(rates), 1),
        "decisions_per_s_median": round(statistics.median(rates) / args.arms, 1),
        "arm_steps_per_s_runs": [round(r, 1) for r in rates],
        "random_policy_mean_score": round(float(random_scores.mean()), 4),
        "random_policy_episode_means": [round(float(x), 4) for x in random_scores.mean(axis=1)],
        "scripted_controller_mean_score": round(float(scripted_scores.mean()), 4),
        "scripted_controller_min_arm_score": round(float(scripted_scores.min()), 4),
        "settings": {
            "arms": args.arms,
            "decisions_per_repeat": args.decisions,
            "repeats": args.repeats,
            "random_episodes": args.random_episodes,
            "scripted_episodes": args.scripted_episodes,
            "seed": args.seed,
            "physics_steps_per_decision": 4,
            "timestep": 0.02,
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        },
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(),
            "python": sys.version.split()[0],
            "numpy": np.__version__,
            "mujoco": mujoco.__version__,
        },
    }
    RESULT_PATH.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result)
    RESULT_PATH.write_text(json.dumps(result, indent=2) + "\n")
    print(text)


if __name__ == "__main__":
    main()
