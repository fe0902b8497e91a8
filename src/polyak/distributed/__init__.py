"""Optional distributed training on Ray: Tune sweeps (``polyak sweep``) and Ape-X DDPG (``polyak train --workers N``).

Nothing here imports ray at module import time except the Ray-facing modules themselves
(``sweep``, ``apex_learner``), which the CLI loads only when asked to. Importing this package
registers :class:`~polyak.distributed.apex_config.ApexConfig` with gin, so run directories of Ape-X
runs (whose ``config.gin`` holds ``ApexConfig`` bindings) load without ray.
"""

from polyak.distributed.apex_config import ApexConfig, apex_epsilons, worker_noise_config

__all__ = ["ApexConfig", "apex_epsilons", "worker_noise_config"]
