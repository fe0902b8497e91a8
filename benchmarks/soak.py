"""Soak: 1,000,000 env steps of UnityReacher-v0 (20 arms) with a small network; memory over time.

Usage: python benchmarks/soak.py [--env-steps 1000000] [--capacity 200000]
The trainer runs in a thread of this process while the main thread samples the resident set size
(VmRSS) and the env-step counter every second. ``rss_growth_after_full`` is the relative RSS growth
from the moment the replay buffer is full to the end; it must stay below 0.05. Writes
benchmarks/results/soak.json; the last stdout line is the JSON result.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from pathlib import Path

from common import machine_info

ROOT = Path(__file__).resolve().parent.parent


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env-steps", type=int, default=1_000_000)
    parser.add_argument("--capacity", type=int, default=200_000)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "soak.json"))
    args = parser.parse_args()

    import gin
    import torch

    from polyak.ginconf import build_configs_from_gin, packaged_config, parse_gin
    from polyak.trainer import Trainer

    torch.set_num_threads(1)
    bindings = [
        f"TrainerConfig.max_env_steps = {args.env_steps}", "TrainerConfig.max_episodes = None",
        "TrainerConfig.solve_score = None", "TrainerConfig.eval_interval = None",
        "TrainerConfig.checkpoint_interval = None", "TrainerConfig.progress_bar = False",
        "TrainerConfig.learn_steps = 2", f"ReplayConfig.capacity = {args.capacity}",
        "NetworkConfig.hidden_sizes = (32, 32)", "AgentConfig.batch_size = 64",
    ]
    parse_gin(packaged_config("unity_reacher_plain_ddpg.gin"), bindings)
    configs = build_configs_from_gin()
    samples: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(configs, Path(tmp) / "soak", gin.operative_config_str())
        result: dict = {}
        thread = threading.Thread(target=lambda: result.setdefault("summary", trainer.run()), daemon=True)
        started = time.perf_counter()
        thread.start()
        while thread.is_alive():
            samples.append({"seconds": round(time.perf_counter() - started, 1), "env_steps": trainer.env_steps,
                            "replay_size": len(trainer.replay), "rss_mb": round(rss_mb(), 1)})
            thread.join(timeout=1.0)
        samples.append({"seconds": round(time.perf_counter() - started, 1), "env_steps": trainer.env_steps,
                        "replay_size": len(trainer.replay), "rss_mb": round(rss_mb(), 1)})
    full = next(s for s in samples if s["replay_size"] >= args.capacity)
    end = samples[-1]
    growth = (end["rss_mb"] - full["rss_mb"]) / full["rss_mb"]
    report = {
        "benchmark": "soak",
        "settings": {"env": "polyak/UnityReacher-v0", "num_envs": 20, "env_steps": args.env_steps,
                     "replay_capacity": args.capacity, "hidden_sizes": [32, 32], "batch_size": 64,
                     "learn_every": 20, "learn_steps": 2, "sample_interval_s": 1.0, "torch_threads": 1},
        "machine": machine_info(),
        "env_steps_done": end["env_steps"],
        "wall_seconds": end["seconds"],
        "rss_mb_when_buffer_full": full["rss_mb"],
        "rss_mb_at_end": end["rss_mb"],
        "rss_mb_peak": max(s["rss_mb"] for s in samples),
        "rss_growth_after_full": round(growth, 4),
        "passes": growth < 0.05,
        "samples": samples,
    }
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "samples"}))


if __name__ == "__main__":
    main()
