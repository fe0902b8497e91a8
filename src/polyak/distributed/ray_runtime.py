"""Starting Ray for polyak: a private local node on 127.0.0.1 (no dashboard, no usage statistics), or
a running cluster at ``address``. Ray is imported here, inside functions, and nowhere in the core."""

from __future__ import annotations

import os
import socket
from types import ModuleType

from polyak.errors import ConfigError, PolyakError

# Set before ray is imported: no usage statistics, no token auth on a private node, and keep a local node
# on the loopback address (``_node_ip_address`` alone is not enough in Ray 2.60). A local node's raylet starts
# its workers at nice 15 by default, so a sweep's trials or Ape-X's rollout workers got almost no CPU beside any
# other busy process (a 28 s Pendulum trial took 400 s beside two training runs): they run at the driver's priority.
RAY_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_worker_niceness": "0",
}
# Ray workers inherit these: one torch/BLAS thread per process, as the benchmarks and tests use.
WORKER_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "RAY_USAGE_STATS_ENABLED": "0"}
LOCAL_HOST = "127.0.0.1"


def require_ray() -> ModuleType:
    """``import ray`` or one clear line telling the user which extra to install."""
    for key, value in RAY_ENV.items():
        os.environ.setdefault(key, value)
    try:
        import ray
        import ray.tune  # part of the extra: fail here, not halfway through a sweep
    except ImportError as error:
        raise ConfigError(
            f"this command needs Ray, which is not installed ({error.name or error}); "
            "install it with: pip install 'polyak[distributed]'"
        ) from None
    return ray


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """A ``host:port`` address must accept a TCP connection (Ray itself would retry for minutes)."""
    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return  # "auto", "ray://..." and the like: left to Ray
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as error:
        raise PolyakError(f"cannot reach the Ray cluster at {address} ({error.strerror or error}); start it with "
                          "'ray start --head' or check --address") from None


def init_ray(address: str | None, num_cpus: int | None = None, object_store_mb: int = 256) -> ModuleType:
    """Connect to the cluster at ``address``, or start a private local node with ``num_cpus`` CPUs."""
    ray = require_ray()
    if address:
        check_reachable(address)
    if ray.is_initialized():
        return ray
    runtime_env = {"env_vars": dict(WORKER_ENV, MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"))}
    try:
        if address:
            ray.init(address=address, runtime_env=runtime_env, log_to_driver=True, configure_logging=False)
        else:
            ray.init(
                num_cpus=num_cpus or os.cpu_count() or 1, _node_ip_address=LOCAL_HOST, include_dashboard=False,
                object_store_memory=object_store_mb * 2**20, runtime_env=runtime_env, log_to_driver=True,
                configure_logging=False,
            )
    except ConnectionError as error:
        raise PolyakError(f"cannot connect to the Ray cluster at {address}: {str(error).splitlines()[0]}") from None
    except (ValueError, RuntimeError) as error:
        where = f"the Ray cluster at {address}" if address else "a local Ray node"
        raise PolyakError(f"cannot start {where}: {str(error).strip().splitlines()[0]}") from None
    return ray


def cluster_cpus() -> float:
    import ray

    return float(ray.cluster_resources().get("CPU", 0.0))
