"""Peak memory of ``polyak record``: an MP4 is encoded frame by frame, a GIF keeps its frames until the end.

Each measurement is a fresh process that films an untrained HalfCheetah-v5 actor (its frames cost what a trained
one's do) for ``steps`` env steps at 480 x 360 through :func:`polyak.record.record_episode` and reports its peak
resident memory (``ru_maxrss``). The growth from the short to the long episode, per frame, is what the format
holds per frame: about 480 * 360 * 3 bytes (518 kB) for one that keeps them, about nothing for one that streams.

    python benchmarks/record_memory.py            # about 2 CPU minutes

Writes ``benchmarks/results/record_memory.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from common import code_commit, load_average, machine_info

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "record_memory.json"
ENV_ID, WIDTH, HEIGHT = "HalfCheetah-v5", 480, 360
STEPS = (100, 500)
CHILD = """
import resource, sys, tempfile
from pathlib import Path
import torch
from polyak.config import NetworkConfig
from polyak.envs import make_env
from polyak.networks import Actor
from polyak.policy import Policy
from polyak.record import record_episode
from polyak.spaces import env_spaces

env_id, steps, suffix, width, height = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
env = make_env(env_id, 1)
spaces, obs_dim, action_dim = env_spaces(env), env.single_observation_space.shape[0], env.single_action_space.shape[0]
env.close()
actor = Actor(obs_dim, action_dim, NetworkConfig(hidden_sizes=(256, 256)), torch.Generator().manual_seed(0))
policy = Policy(env_id, 1, actor.eval(), torch.device("cpu"), spaces=spaces)
with tempfile.TemporaryDirectory() as scratch:
    out = Path(scratch) / f"clip{suffix}"
    frames = record_episode(policy, out, steps=steps, width=width, height=height)
    size = out.stat().st_size
print(frames, size, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def measure(steps: int, suffix: str) -> dict[str, int]:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"))
    done = subprocess.run([sys.executable, "-c", CHILD, ENV_ID, str(steps), suffix, str(WIDTH), str(HEIGHT)],
                          capture_output=True, text=True, env=env, check=True)
    frames, size, max_rss_kb = (int(v) for v in done.stdout.split()[-3:])
    return {"steps": steps, "frames": frames, "file_bytes": size, "peak_rss_mb": round(max_rss_kb / 1024, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    load_before = load_average()
    formats = {}
    for suffix in (".mp4", ".gif"):
        runs = [measure(steps, suffix) for steps in STEPS]
        short, long = runs
        growth = (long["peak_rss_mb"] - short["peak_rss_mb"]) * 1024 / (long["frames"] - short["frames"])
        formats[suffix[1:]] = {"runs": runs, "peak_rss_growth_kb_per_frame": round(growth, 1)}
        print(f"{suffix[1:]}: peak RSS {short['peak_rss_mb']} MB at {short['frames']} frames, "
              f"{long['peak_rss_mb']} MB at {long['frames']}: {growth:.0f} kB more per frame", flush=True)
    result = {"env_id": ENV_ID, "width": WIDTH, "height": HEIGHT, "frame_kb": round(WIDTH * HEIGHT * 3 / 1024, 1),
              "formats": formats, "code_commit": code_commit(), "machine": machine_info(),
              "load_average": {"before": load_before, "after": load_average()}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
