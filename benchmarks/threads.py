"""Env steps per second of short single-process training runs at 1, 2 (, 4) and torch's default intra-op threads,
on an idle CPU and on a busy one (one competing CPU-bound process per core, started and stopped here): the
measurement behind ``TrainerConfig.threads``' default.

    python benchmarks/threads.py [--seconds 5] [--repeats 3] [--threads 1 2 default] [--nets small large]
                                 [--loads idle busy] [--out benchmarks/results/threads.json]
    taskset -c 0,1 python benchmarks/threads.py ...   # a 2-core machine on a bigger one

Each repeat of a network is a fresh interpreter (``--child``) that trains a new ``polyak.trainer.Trainer`` run
per thread setting and times ``--seconds`` of its learning phase, from the 5th update on (interpreter start, random
start steps and warm-up excluded). Networks: ``small`` = TD3 (configs/suite/pendulum_td3.gin) with 256-256 actor
and critics, batch 256; ``large`` = CrossQ (configs/suite/crossq.gin) on Pendulum with the paper's 2048-2048
critics and a 256-256 actor. The thread settings rotate from repeat to repeat so drift in the machine's speed
spreads over all of them. Prints one JSON object (medians and their ratio to the first --threads setting) as the
last stdout line; ``--out`` keeps every rate with the machine, the commit and the load averages.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NETS: dict[str, tuple[str, list[str]]] = {
    "small": ("pendulum_td3.gin", ["NetworkConfig.hidden_sizes = (256, 256)", "AgentConfig.batch_size = 256"]),
    "large": ("crossq.gin", ["TrainerConfig.env_id = 'Pendulum-v1'",
                             "critic/NetworkConfig.hidden_sizes = (2048, 2048)"]),
}
COMMON = ["TrainerConfig.start_steps = 256", "ReplayConfig.min_size = 256", "ReplayConfig.capacity = 100000",
          "TrainerConfig.max_env_steps = 10000000", "TrainerConfig.eval_interval = None",
          "TrainerConfig.checkpoint_interval = None", "TrainerConfig.log_interval = 10000000",
          "TrainerConfig.progress_bar = False", "AgentConfig.device = 'cpu'"]
WARM_UPDATES = 5
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def child(net: str, settings: list[str], seconds: float) -> Iterator[dict[str, Any]]:
    """Train ``net`` with each of ``settings`` (a thread count, or 'default': torch's own choice at start) in turn,
    a new run each, for ``seconds`` of learning; their env steps per second."""
    import torch

    import polyak
    from polyak.ginconf import build_configs_from_gin, parse_gin
    from polyak.trainer import Trainer

    default = torch.get_num_threads()
    config, bindings = NETS[net]
    parse_gin(Path(polyak.__file__).parent / "configs" / "suite" / config, [*COMMON, *bindings])
    configs = build_configs_from_gin()
    for threads in settings:
        with tempfile.TemporaryDirectory() as tmp:
            trainer = Trainer(configs, Path(tmp) / "run")
            torch.set_num_threads(default if threads == "default" else int(threads))  # after anything polyak sets
            update = trainer.learner.update
            mark: dict[str, float] = {}

            def timed_update(batch: Any, trainer: Trainer = trainer, update: Any = update,
                             mark: dict[str, float] = mark) -> Any:
                result = update(batch)
                count = trainer.learner.updates
                if count == WARM_UPDATES:
                    mark.update(t0=time.perf_counter(), steps0=trainer.env_steps, updates0=count)
                elif "t0" in mark and "t1" not in mark and time.perf_counter() - mark["t0"] >= seconds:
                    mark.update(t1=time.perf_counter(), steps1=trainer.env_steps, updates1=count)
                    trainer._on_signal("time")  # the loop stops as on SIGTERM
                return result

            trainer.learner.update = timed_update  # type: ignore[method-assign]
            trainer.run()
        elapsed = mark["t1"] - mark["t0"]
        yield {"net": net, "threads": threads, "torch_threads": torch.get_num_threads(),
               "env_steps_per_s": round((mark["steps1"] - mark["steps0"]) / elapsed, 2),
               "updates_per_s": round((mark["updates1"] - mark["updates0"]) / elapsed, 2),
               "seconds": round(elapsed, 2)}


def measure(net: str, settings: list[str], seconds: float, src: Path) -> list[dict[str, Any]]:
    """Measurements of ``settings`` in one fresh interpreter, with no thread variable set, importing polyak from
    ``src``."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_ENV}
    env.update(PYTHONWARNINGS="ignore", PYTHONPATH=os.pathsep.join([str(src), env.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, __file__, "--child", net, str(seconds), *settings], env=env,
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.strip().splitlines() if line.startswith("{")]


def start_competitors(count: int) -> list[subprocess.Popen[bytes]]:
    """One busy loop per core (they inherit this process's CPU affinity, e.g. from taskset)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait()


def summarize(runs: dict[tuple[str, str, str], list[dict[str, Any]]], settings: list[str]) -> list[dict[str, Any]]:
    """Per load, net and thread setting: the rates, their median and its ratio to the first setting's."""
    rows = []
    for (load, net, threads), these in runs.items():
        rates = [r["env_steps_per_s"] for r in these]
        first = runs.get((load, net, settings[0]))
        base = statistics.median(r["env_steps_per_s"] for r in first) if first else None
        rows.append({"load": load, "net": net, "threads": threads, "torch_threads": these[0]["torch_threads"],
                     "env_steps_per_s": rates, "median": round(statistics.median(rates), 2),
                     f"ratio_to_{settings[0]}": round(statistics.median(rates) / base, 3) if base else None,
                     "updates_per_s_median": round(statistics.median(r["updates_per_s"] for r in these), 2)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs="+", metavar="NET SECONDS THREADS", help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=5.0, help="learning seconds timed per measurement")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", nargs="+", default=["1", "2", "default"])
    parser.add_argument("--nets", nargs="+", choices=sorted(NETS), default=["small", "large"])
    parser.add_argument("--loads", nargs="+", choices=["idle", "busy"], default=["idle", "busy"])
    parser.add_argument("--label", default="", help="a name for this machine setting, e.g. '2 cores (taskset)'")
    parser.add_argument("--src", type=Path, default=HERE.parent / "src",
                        help="the polyak source tree to measure (default: this checkout's src), e.g. a `git archive`")
    parser.add_argument("--commit", help="the commit --src holds (default: this checkout's HEAD)")
    parser.add_argument("--out", type=Path, help="JSON file for the report (rewritten after each measurement)")
    args = parser.parse_args()
    if args.child:
        net, seconds, *settings = args.child
        for result in child(net, settings, float(seconds)):
            print(json.dumps(result), flush=True)
        return

    if not (args.src / "polyak" / "__init__.py").is_file():
        sys.exit(f"threads: --src {args.src} holds no polyak package (it must be a tree's src directory)")
    from common import code_commit, load_average, machine_info

    cores = len(os.sched_getaffinity(0))
    commit = {"commit": args.commit, "src": str(args.src)} if args.commit else code_commit()
    report: dict[str, Any] = {"benchmark": "threads", "label": args.label, "command": shlex.join(["python", *sys.argv]),
                              "cores": cores, "seconds": args.seconds, "repeats": args.repeats,
                              "competitor": "python -c 'while True: pass' at nice 0, one per core",
                              "machine": machine_info(), "code_commit": commit, "load_average": {}, "results": []}
    runs: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for load in args.loads:
        report["load_average"][f"{load}_before"] = load_average()
        competitors = start_competitors(cores) if load == "busy" else []
        try:
            if competitors:
                time.sleep(2)
            for repeat in range(args.repeats):
                shift = repeat % len(args.threads)
                for net in args.nets:
                    for result in measure(net, args.threads[shift:] + args.threads[:shift], args.seconds,
                                          args.src.resolve()):
                        print(json.dumps({"load": load, **result}), flush=True)
                        runs.setdefault((load, net, result["threads"]), []).append(result)
                    report["results"] = summarize(runs, args.threads)
                    if args.out:
                        args.out.parent.mkdir(parents=True, exist_ok=True)
                        args.out.write_text(json.dumps(report, indent=1) + "\n")
            report["load_average"][f"{load}_after"] = load_average()
        finally:
            stop(competitors)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({"label": args.label, "cores": cores, "load_average": report["load_average"],
                      "medians": [{k: r[k] for k in ("load", "net", "threads", "torch_threads", "median")}
                                  | {"ratio": r[f"ratio_to_{args.threads[0]}"]} for r in report["results"]]}))


if __name__ == "__main__":
    main()
