"""The Python API: :func:`train` a config into a run directory, :func:`load` a trained policy.

Gin is parsed here (the edge) and cleared again, so no binding of one call reaches the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polyak.errors import ConfigError
from polyak.seeding import check_seed

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
          seed: int | None = None) -> Run:
    """Train ``config`` (a shipped config's name such as ``"pendulum"``, or a .gin file) with gin ``overrides``.

    ``run_dir`` None: ``runs/<config>[_seed_N]`` (``_1``, ``_2`` ... when taken); a given ``run_dir`` that already
    holds a run is refused (continue one with ``polyak train --resume``). ``seed`` overrides every seed.
    """
    import gin

    from polyak.ginconf import build_configs_from_gin, parse_gin, resolve_config
    from polyak.run_dir import RunDir, unique_path
    from polyak.trainer import Trainer

    if isinstance(overrides, str):
        overrides = [overrides]
    bindings = list(overrides)
    if seed is not None:
        seed = check_seed(seed)
        bindings.append(f"TrainerConfig.seed = {seed}")
    config_file = resolve_config(config)
    try:
        parse_gin(config_file, bindings)
        configs = build_configs_from_gin()
        operative = gin.operative_config_str()
    finally:
        gin.clear_config()
    if run_dir is None:
        name = (configs.trainer.run_name or config_file.stem) + (f"_seed_{seed}" if seed is not None else "")
        path = unique_path(Path(configs.trainer.runs_root) / name)
    else:
        path = Path(run_dir)
        if RunDir(path).holds_a_run() or RunDir(path).metrics.exists():
            raise ConfigError(f"run directory {path} already holds a run; choose another run_dir (or continue it "
                              f"with: polyak train --resume {path})")
    summary = Trainer(configs, path, operative).run()
    return Run(path, configs, dict(summary.__dict__))


def load(path: str | Path | None = None, checkpoint: str | None = "best", device: str = "cpu") -> Policy:
    """A trained policy from a run directory, a checkpoint directory or an exported agent (None: the shipped
    pretrained Reacher agent).

    ``checkpoint``: ``"best"`` (the best evaluation; the newest checkpoint when the run never evaluated),
    ``"newest"``, or a checkpoint directory. ``policy.predict(obs)`` returns actions in the env's units.
    """
    from polyak.playback import load_policy

    return load_policy(path, None if checkpoint == "best" else checkpoint, device)
