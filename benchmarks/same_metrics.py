"""Same seed, same metrics: check that a code change leaves CPU training runs bit-for-bit unchanged.

``metrics.csv`` holds only values that are a function of the seed (no wall-clock column), so two
trees that train identically write byte-identical files. This script trains a few short CPU runs
with one tree, then compares them with the same runs of another tree:

    git worktree add /tmp/polyak_before <commit>
    python benchmarks/same_metrics.py record /tmp/before --tree /tmp/polyak_before
    python benchmarks/same_metrics.py record /tmp/after               # this tree
    python benchmarks/same_metrics.py compare /tmp/before /tmp/after

``compare`` checks ``metrics.csv`` byte for byte and ``summary.json`` key by key except
``wall_seconds``; it prints one JSON object as its last line and exits 1 when anything differs.
The cases cover DDPG with Gaussian and OU noise, TD3 with prioritized n-step replay and parameter
noise, prioritized replay whose new transitions enter at their TD error, a NoisyNet actor, and short TD7 and
CrossQ runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# A binding, or (today's binding, the one a tree from before it existed takes instead).
Binding = str | tuple[str, str]
# name -> (config file candidates, the first that exists in the tree is used; gin bindings)
CASES: dict[str, tuple[tuple[str, ...], list[Binding]]] = {
    "pendulum": (("pendulum.gin",), [
        "TrainerConfig.max_env_steps = 3000", "TrainerConfig.eval_interval = 1000", "TrainerConfig.seed = 1",
    ]),
    "reacher_2_episodes": (("unity_reacher_plain_ddpg.gin", "unity_reacher.gin"), ["TrainerConfig.max_episodes = 2"]),
    "reacher_prioritized_2_episodes": (("reacher_prioritized.gin", "seed004_reacher.gin"), [
        "TrainerConfig.max_episodes = 2",
    ]),
    "pendulum_td3_prioritized_nstep_parameter_noise": (("td3.gin",), [
        "TrainerConfig.max_env_steps = 3000", "TrainerConfig.seed = 2", "TrainerConfig.checkpoint_interval = 1000",
        ("ReplayConfig.sampler = 'prioritized'", "ReplayConfig.prioritized = True"), "ReplayConfig.n_step = 3",
        "NoiseConfig.kind = 'parameter'",
    ]),
    "pendulum_noisynet": (("pendulum.gin",), [
        "TrainerConfig.max_env_steps = 3000", "TrainerConfig.seed = 3", "actor/NetworkConfig.noisy = True",
        "actor/NetworkConfig.noisy_ou_theta = 0.01", "NoiseConfig.kind = 'none'",
    ]),
    # TD7 (SALE, LAP, checkpoint policy) and CrossQ (joint pass, batch renormalization), short on Pendulum.
    "pendulum_td7": (("suite/td7.gin",), [
        "TrainerConfig.env_id = 'Pendulum-v1'", "TrainerConfig.max_env_steps = 3000", "TrainerConfig.seed = 4",
        "TrainerConfig.start_steps = 1000", "ReplayConfig.min_size = 1000", "TrainerConfig.eval_interval = 1000",
        "TrainerConfig.checkpoint_interval = 1000", "AgentConfig.batch_size = 64",
    ]),
    "pendulum_crossq": (("suite/crossq.gin",), [
        "TrainerConfig.env_id = 'Pendulum-v1'", "TrainerConfig.max_env_steps = 3000", "TrainerConfig.seed = 5",
        "TrainerConfig.start_steps = 1000", "ReplayConfig.min_size = 1000", "TrainerConfig.eval_interval = 1000",
        "TrainerConfig.checkpoint_interval = 1000", "NetworkConfig.batch_renorm_warmup = 500",
    ]),
}


def _config(tree: Path, candidates: tuple[str, ...]) -> Path:
    for name in candidates:
        if (tree / "configs" / name).is_file():
            return tree / "configs" / name
    raise SystemExit(f"same_metrics: none of {candidates} in {tree / 'configs'}")


def _binding(tree: Path, binding: Binding) -> str:
    """``binding``, or its older spelling when ``tree``'s configs do not have its parameter yet."""
    if isinstance(binding, str):
        return binding
    parameter = binding[0].split("=")[0].strip().rsplit(".", 1)[-1]
    config = (tree / "src" / "polyak" / "config.py").read_text()
    return binding[0] if re.search(rf"^    {parameter}:", config, re.MULTILINE) else binding[1]


def record(out: Path, tree: Path, only: list[str] | None) -> dict[str, float]:
    """Train every case with the code of ``tree`` into ``out/<case>``; returns seconds per case."""
    env = dict(os.environ, PYTHONPATH=str(tree / "src"), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"))
    seconds = {}
    for name, (candidates, bindings) in CASES.items():
        if only and name not in only:
            continue
        run_dir = out / name
        if run_dir.exists():
            raise SystemExit(f"same_metrics: {run_dir} exists; record into a new directory")
        command = [sys.executable, "-m", "polyak.cli", "train", "--config", str(_config(tree, candidates)),
                   "--run-dir", str(run_dir), "--gin-param", "TrainerConfig.progress_bar = False"]
        for binding in bindings:
            command += ["--gin-param", _binding(tree, binding)]
        started = time.perf_counter()
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
        seconds[name] = round(time.perf_counter() - started, 1)
        print(f"{name}: {seconds[name]} s", file=sys.stderr, flush=True)
    return seconds


def compare(before: Path, after: Path) -> dict[str, dict[str, object]]:
    """Per case: metrics.csv identical (and its row count), summary.json keys that differ."""
    result: dict[str, dict[str, object]] = {}
    for name in CASES:
        a, b = before / name, after / name
        if not (a / "metrics.csv").is_file() or not (b / "metrics.csv").is_file():
            continue
        metrics_a, metrics_b = (a / "metrics.csv").read_bytes(), (b / "metrics.csv").read_bytes()
        summary_a = json.loads((a / "summary.json").read_text())
        summary_b = json.loads((b / "summary.json").read_text())
        differing = sorted(k for k in summary_a.keys() | summary_b.keys()
                           if k != "wall_seconds" and summary_a.get(k) != summary_b.get(k))
        result[name] = {"metrics_identical": metrics_a == metrics_b, "rows": metrics_a.count(b"\n") - 1,
                        "summary_keys_differing": differing}
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="train the cases into OUT")
    rec.add_argument("out", type=Path)
    rec.add_argument("--tree", type=Path, default=REPO, help="source tree to run (default: this one)")
    rec.add_argument("--case", action="append", choices=sorted(CASES), help="only these cases")
    cmp = commands.add_parser("compare", help="compare two recorded directories")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        print(json.dumps({"recorded": str(args.out), "seconds": record(args.out, args.tree.resolve(), args.case)}))
        return 0
    result = compare(args.before, args.after)
    same = bool(result) and all(r["metrics_identical"] and not r["summary_keys_differing"] for r in result.values())
    print(json.dumps({"identical": same, "cases": result}))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
