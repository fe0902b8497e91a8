"""Torch's intra-op threads, set deliberately once per process (``TrainerConfig.threads``, ``--threads``).

Left alone, torch uses one thread per core; on a machine whose cores are busy with other work its threads then
wait on descheduled peers and training slows down many times over (``benchmarks/threads.py``). ``polyak train``,
``polyak.train``, ``polyak test`` and ``polyak record`` call :func:`set_threads` before they build networks. An
Ape-X learner (``--workers``) keeps its own rule: the cores its workers leave
(:func:`polyak.distributed.apex_learner.learner_threads`), or ``OMP_NUM_THREADS`` when set.
"""

from __future__ import annotations

from polyak.errors import ConfigError


def check_threads(threads: object, name: str = "threads") -> int | None:
    """``threads`` when it is None or a whole number >= 1; else a ConfigError naming ``name``."""
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ConfigError(f"{name} must be a whole number >= 1 (torch threads) or None, got {threads!r}")
    return threads


def set_threads(threads: int | None, announce: bool = True) -> int:
    """Give torch ``threads`` intra-op threads (None: torch's own choice, i.e. ``OMP_NUM_THREADS`` or one per core)
    and return the count in use; ``announce`` prints it as one line."""
    import torch

    check_threads(threads)
    if threads is not None:
        torch.set_num_threads(threads)
    count = torch.get_num_threads()
    if announce:
        how = "TrainerConfig.threads" if threads is not None else "torch's default: TrainerConfig.threads = None"
        print(f"polyak: torch threads: {count} ({how}; --threads to change)", flush=True)
    return count
