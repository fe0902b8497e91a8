"""Checkpoint cost over a Reacher run: seconds per checkpoint and run-dir bytes, old vs new checkpoint code.

Runs ``configs/unity_reacher_plain_ddpg.gin`` (20 arms, 1000-step episodes, replay capacity 1e6) for a few
episodes with a checkpoint after every episode and the default keep-last-3, once per source tree
given (e.g. a ``git worktree`` of the commit before incremental checkpoints, and this one). Learning
is switched off (``learn_steps = 0``): checkpoint cost depends on the replay, not on the updates.

    python benchmarks/checkpoints.py --episodes 30 --tree before=/tmp/old --tree after=.

writes ``benchmarks/results/checkpoints.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, sys, time
from pathlib import Path
import polyak.checkpoint as checkpoint
from polyak.cli import main
run_dir, episodes = Path(sys.argv[1]), int(sys.argv[2])
timings, sizes = [], []
real = checkpoint.save_checkpoint

def du(path):
    return sum(p.stat().st_size for p in path.rglob('*') if p.is_file() and not p.is_symlink())

def timed(directory, name, state, meta):
    started = time.perf_counter()
    result = real(directory, name, state, meta)
    timings.append(time.perf_counter() - started)
    return result

import polyak.trainer
for name in ('polyak.trainer', 'polyak.checkpointer'):
    module = sys.modules.get(name)
    if module is None:
        try:
            module = __import__(name, fromlist=['x'])
        except ImportError:
            continue
    if hasattr(module, 'save_checkpoint'):
        module.save_checkpoint = timed
real_prune = checkpoint.prune_checkpoints

def pruned(directory, keep):
    real_prune(directory, keep)
    sizes.append(du(run_dir))

for module in ('polyak.trainer', 'polyak.checkpointer'):
    if module in sys.modules and hasattr(sys.modules[module], 'prune_checkpoints'):
        sys.modules[module].prune_checkpoints = pruned
code = main(['train', '--config', sys.argv[3], '--run-dir', str(run_dir),
             '--gin-param', f'TrainerConfig.max_episodes={episodes}',
             '--gin-param', 'TrainerConfig.checkpoint_interval=20000', '--gin-param', 'TrainerConfig.learn_steps=0',
             '--gin-param', 'TrainerConfig.eval_interval=None', '--gin-param', 'TrainerConfig.progress_bar=False',
             '--gin-param', 'TrainerConfig.keep_checkpoints=3'])
print(json.dumps({'code': code, 'checkpoint_seconds': timings, 'run_dir_bytes_after_each': sizes,
                  'final_run_dir_bytes': du(run_dir)}))
"""


def measure(tree: Path, episodes: int) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "PYTHONPATH": str(tree / "src"), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CHILD, str(Path(scratch) / "run"), str(episodes),
                              str(ROOT / "configs" / "unity_reacher_plain_ddpg.gin")],
                             env=env, capture_output=True, text=True, check=True, cwd=scratch)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        result["wall_seconds"] = round(time.perf_counter() - started, 1)
    seconds = result["checkpoint_seconds"]
    result["checkpoints"] = len(seconds)
    result["mean_checkpoint_seconds"] = round(sum(seconds) / len(seconds), 3)
    result["last_checkpoint_seconds"] = round(seconds[-1], 3)
    result["max_run_dir_bytes"] = max(result["run_dir_bytes_after_each"])
    return result


def commit_of(tree: Path) -> str:
    found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True)
    return found.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=12)
    parser.add_argument("--tree", action="append", required=True, metavar="LABEL=PATH")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "checkpoints.json"))
    args = parser.parse_args()
    rows = []
    for spec in args.tree:
        label, path = spec.split("=", 1)
        tree = Path(path).resolve()
        print(f"measuring {label} ({commit_of(tree)}) ...", flush=True)
        rows.append({"label": label, "commit": commit_of(tree), "load_before": os.getloadavg(),
                     **measure(tree, args.episodes), "load_after": os.getloadavg()})
        print(json.dumps({k: v for k, v in rows[-1].items() if not isinstance(v, list)}), flush=True)
    document = {
        "what": "checkpoint seconds and run-dir bytes over a Reacher run (unity_reacher_plain_ddpg.gin, 20 arms, "
                "capacity 1e6), "
                "a checkpoint every episode (20000 transitions), keep_checkpoints=3, learning off",
        "episodes": args.episodes, "machine": platform.machine(), "cpus": os.cpu_count(), "torch_threads": 1,
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
