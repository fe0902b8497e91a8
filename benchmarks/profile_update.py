"""Where one polyak update spends its time, for speed.py's TD3 setting (256-256, batch 256, 2 critics).

Usage: python benchmarks/profile_update.py [--precision float32] [--updates 100] [--rows 15] [--threads 1]

Needs the bench extra (it reuses speed.py's matched learner). Prints the torch profiler's top operators
by self CPU time, then one JSON line: unprofiled updates/s, milliseconds per update spent in matrix
multiplies (``mm``, ``addmm``, ``bmm``, ``baddbmm``) and their share, and the GFLOP/s this core reaches on a
plain 256x256x256 matmul in float32 and bfloat16 -- the numbers behind docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

import torch
from common import code_commit, machine_info
from speed import TD3_SPEC, make_polyak_learner, random_transitions
from torch.profiler import ProfilerActivity, profile

MATMULS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"}


def matmul_gflops(dtype: torch.dtype, size: int = 256, repeats: int = 200) -> float:
    """GFLOP/s of one ``size``-cubed matmul, the best sustained rate a layer of that width can hope for."""
    a, b = torch.randn(size, size, dtype=dtype), torch.randn(size, size, dtype=dtype)
    for _ in range(20):
        a @ b
    started = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * size**3 * repeats / (time.perf_counter() - started) / 1e9


def updates_per_s(run: Callable[[int], None], blocks: int = 3, updates: int = 100) -> float:
    rates = []
    for _ in range(blocks):
        started = time.perf_counter()
        run(updates)
        rates.append(updates / (time.perf_counter() - started))
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--precision", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument("--updates", type=int, default=100, help="updates under the profiler")
    parser.add_argument("--rows", type=int, default=15)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    data = random_transitions(10_000, TD3_SPEC.obs_dim, TD3_SPEC.action_dim, seed=0)
    run = make_polyak_learner(TD3_SPEC, data, "cpu", 0, {"precision": args.precision})
    run(50)  # warm up: optimizer state, allocator
    rate = updates_per_s(run)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run(args.updates)
    averages = prof.key_averages()
    print(averages.table(sort_by="self_cpu_time_total", row_limit=args.rows))
    total_us = sum(event.self_cpu_time_total for event in averages)
    matmul_us = sum(event.self_cpu_time_total for event in averages if event.key in MATMULS)
    print(json.dumps({
        "benchmark": "profile_update", "setting": TD3_SPEC.name, "precision": args.precision,
        "threads": args.threads, "updates_per_s": round(rate, 1),
        "profiled_ms_per_update": round(total_us / args.updates / 1e3, 2),
        "matmul_ms_per_update": round(matmul_us / args.updates / 1e3, 2),
        "matmul_share": round(matmul_us / total_us, 3),
        "matmul_gflops_256": {"float32": round(matmul_gflops(torch.float32), 1),
                              "bfloat16": round(matmul_gflops(torch.bfloat16), 1)},
        "machine": machine_info(), "code": code_commit(),
    }))


if __name__ == "__main__":
    main()
