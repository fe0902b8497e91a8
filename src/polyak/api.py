"""The Python API: :func:`train` a config into a run directory, :func:`load` a trained policy.

Gin is parsed here (the edge) and cleared again, so no binding of one call reaches the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from polyak.config import Configs
    from polyak.policy import Policy


@dataclass(frozen=True)
class Run:
    """A finished (or interrupted) training run: its directory, configs and summary."""

    path: Path
    configs: Configs
    summary: dict[str, Any]

    def load(self, checkpoint: str | None = "best", device: str = "cpu") -> Policy:
        """The run's policy (see :func:`load`)."""
        return load(self.path, checkpoint, device)


def train(config: str | Path = "unity_reacher", overrides: Sequence[str] = (), run_dir: str | Path | None = None,
          seed: int | None = None, threads: int | None = None) -> Run:
    """Train ``config`` (a shipped config's name such as ``"pendulum"``, or a .gin file) with gin ``overrides``.

    ``run_dir`` None: ``runs/<config>[_seed_N]`` (``_1``, ``_2`` ... when taken); a given ``run_dir`` that already
    holds a run is refused (continue one with ``polyak train --resume``). ``seed`` overrides every seed.
    ``threads`` sets torch's intra-op threads (``TrainerConfig.threads``, default 1; None: the config's value).
    """
    from polyak.planning import plan_run
    from polyak.threads import check_threads, set_threads
    from polyak.trainer import Trainer

    if isinstance(overrides, str):
        overrides = [overrides]
    bindings = list(overrides)
    if check_threads(threads) is not None:
        bindings.append(f"TrainerConfig.threads = {threads}")
    plan = plan_run(config, bindings, run_dir=run_dir, seed=seed)
    configs, path = plan.configs, plan.run_dir
    set_threads(configs.trainer.threads)
    summary = Trainer(configs, path, plan.operative_config).run()
    return Run(path, configs, dict(summary.__dict__))


def load(path: str | Path | None = None, checkpoint: str | None = "best", device: str = "cpu") -> Policy:
    """A trained policy from a run directory, a checkpoint directory or an exported agent (None: the shipped
    pretrained Reacher agent).

    ``checkpoint``: ``"best"`` (the best evaluation; the newest checkpoint when the run never evaluated),
    ``"newest"``, or a checkpoint directory. ``policy.predict(obs)`` returns actions in the env's units.
    """
    from polyak.playback import load_policy

    return load_policy(path, None if checkpoint == "best" else checkpoint, device)
