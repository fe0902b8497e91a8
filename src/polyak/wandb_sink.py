"""The Weights & Biases sink of the :class:`~polyak.logger.Logger` (``TrainerConfig.wandb_project``).

``wandb`` is imported only when a project is set. The run's ``config.json`` is the W&B config; every scalar
goes out with ``env_steps`` as its x axis (a logged value, not W&B's own step, so a resumed run that repeats
steps after its checkpoint is not dropped). ``WANDB_MODE=offline`` and ``WANDB_DIR`` work as usual; without
``WANDB_DIR`` the W&B files go into the run directory.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from polyak.errors import ConfigError, PolyakError

STEP_KEY = "env_steps"
INSTALL = "pip install -e '.[wandb]'"  # the README's command, run in polyak's clone


def require_wandb(project: str | None) -> None:
    """Refuse, in one line and before a run writes anything, a ``wandb_project`` without the wandb extra."""
    if not project:
        return
    try:
        import wandb  # noqa: F401
    except ImportError:
        raise ConfigError(f"TrainerConfig.wandb_project={project!r} needs the wandb extra: {INSTALL} "
                          "(in polyak's clone; or pip install wandb)") from None


class WandbSink:
    """One W&B run for one training run (resumed runs continue it: its id is kept in ``wandb_id``)."""

    def __init__(self, project: str, run_dir: Path) -> None:
        require_wandb(project)
        import wandb
        id_file = run_dir / "wandb_id"
        run_id = id_file.read_text().strip() if id_file.is_file() else secrets.token_hex(4)
        config_file = run_dir / "config.json"
        config = json.loads(config_file.read_text()) if config_file.is_file() else {}
        try:
            self._run = wandb.init(
                project=project, name=run_dir.name, id=run_id, resume="allow", config=config,
                dir=os.environ.get("WANDB_DIR") or str(run_dir),
            )
        except Exception as error:  # wandb raises many kinds (no login, no network, bad project name)
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise PolyakError(f"Weights & Biases could not start a run in project {project!r}: {first}") from None
        id_file.write_text(run_id + "\n")
        self._run.define_metric(STEP_KEY)
        self._run.define_metric("*", step_metric=STEP_KEY)

    def log(self, values: dict[str, Any], env_steps: int) -> None:
        self._run.log({**{key: float(value) for key, value in values.items()}, STEP_KEY: env_steps})

    def close(self, failed: bool = False) -> None:
        self._run.finish(exit_code=1 if failed else 0)
