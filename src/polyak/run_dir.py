"""A run directory: the one place that knows its layout.

    config.json     the resolved configs as plain JSON: the only config a load reads (gin would run code)
    config.gin      the operative gin config of the run, for people to read
    env.json        how the env was made (an id, an env instance or a function given to polyak.train)
    .polyak.lock    held (flock) by the one process writing the run
    metrics.csv     one row per episode and per evaluation (values that depend on the seed only)
    tb/             TensorBoard events
    checkpoints/    step_<env steps>/ full checkpoints (keep-last-N) and best/ (the agent at its best evaluation)
    summary.json    written when the run finishes (an interrupted run has none)
    apex.json       Ape-X runs only: throughput, restarts, noise scales

Training, ``--resume``, ``test``, ``record``, ``export`` and ``plot`` reach these files through
:class:`RunDir`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polyak.checkpoint import complete_checkpoints
from polyak.errors import CheckpointError, PolyakError, not_a_directory

if TYPE_CHECKING:
    from polyak.config import Configs
    from polyak.runlock import RunLock

BEST = "best"
ACTOR_FILE = "actor.safetensors"  # an exported agent's weights: the file that marks an export


def unique_path(path: Path) -> Path:
    """``path``, or ``path_1``, ``path_2``, ... if it exists: a new run never overwrites an old one."""
    if not path.exists():
        return path
    index = 1
    while path.with_name(f"{path.name}_{index}").exists():
        index += 1
    return path.with_name(f"{path.name}_{index}")


def enclosing_run(path: Path) -> Path | None:
    """The nearest directory above ``path`` (``..`` resolved, symbolic links not followed) that a run started in:
    it holds the run's ``config.json`` and ``metrics.csv``. None when there is none."""
    for parent in Path(os.path.abspath(path)).parents:
        if RunDir(parent).config_json.is_file() and RunDir(parent).metrics.is_file():
            return parent
    return None


class RunDir:
    """Paths of one run directory and the few reads and writes every command shares."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.config_gin = self.path / "config.gin"
        self.metrics = self.path / "metrics.csv"
        self.tensorboard = self.path / "tb"
        self.checkpoints = self.path / "checkpoints"
        self.best = self.checkpoints / BEST
        self.summary = self.path / "summary.json"
        self.apex_record = self.path / "apex.json"
        self.config_json = self.path / "config.json"
        self.env_json = self.path / "env.json"
        self._lock: RunLock | None = None

    def __str__(self) -> str:
        return str(self.path)

    # ------------------------------------------------------------------ a new run
    def holds_a_run(self) -> bool:
        """Whether training already wrote here (a summary or checkpoints)."""
        return self.summary.exists() or self.checkpoints.exists()

    def create(self, operative_config: str, configs: Configs | None = None, apex: Any = None,
               env_source: dict[str, Any] | None = None) -> None:
        """Take the run's writer lock, make the directory and write ``config.gin``, ``config.json`` and
        ``env.json`` (when given); one clear error when it cannot or when another process writes here.
        All three are written when the run starts only: a resumed run (one with checkpoints) keeps ``config.gin``
        and ``env.json`` as its start wrote them (gin parses no config on resume, so its operative config would be
        an empty skeleton), and its ``config.json`` until :meth:`write_configs` records the resume's bindings, once
        the checkpoint has been restored (a refused resume leaves the run as it was)."""
        from polyak.config_json import write_config
        from polyak.runlock import RunLock

        if self._lock is None:
            self._lock = RunLock(self.path).acquire()  # held as long as this object (the run) lives
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            started = self.holds_a_run()
            if operative_config and not started:
                self.config_gin.write_text(operative_config)
            if env_source is not None and not started:
                self.env_json.write_text(json.dumps(env_source, indent=2) + "\n")
            if configs is not None and not started:
                write_config(self.path, configs, apex)
        except OSError as error:
            raise PolyakError(f"cannot write run directory {self.path}: {error.strerror or error}") from None

    def write_configs(self, configs: Configs) -> None:
        """Record a resumed run's configs (its own with the resume's bindings) in ``config.json``."""
        from polyak.config_json import write_config

        try:
            write_config(self.path, configs)
        except OSError as error:
            raise PolyakError(f"cannot write {self.config_json}: {error.strerror or error}") from None

    def release(self) -> None:
        """Let go of the run's writer lock (the run ended; a later resume in this process takes it again)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def write_summary(self, summary: dict[str, Any]) -> None:
        self.summary.write_text(json.dumps(summary, indent=2) + "\n")

    def write_apex_record(self, record: dict[str, Any]) -> None:
        self.apex_record.write_text(json.dumps(record, indent=2) + "\n")

    # ------------------------------------------------------------------ an existing run
    def require(self) -> RunDir:
        """This directory, if it exists and holds a polyak run (its config); else a CheckpointError."""
        if not self.path.is_dir():
            raise CheckpointError(f"run directory {self.path} {not_a_directory(self.path)}")
        if not self.config_json.is_file() and not self.config_gin.is_file():
            raise CheckpointError(f"{self.path} is not a polyak run directory (no config.json)")
        return self

    def require_run(self) -> RunDir:
        """This directory, if it holds a run, not an exported agent (which has no checkpoints to go on from)."""
        self.require()
        if (self.path / ACTOR_FILE).is_file() and not self.checkpoints.is_dir():
            raise CheckpointError(f"{self.path} is an exported agent, not a run: it has no checkpoints to train or "
                                  "export from (polyak test, polyak record and polyak.load take it as it is)")
        return self

    def require_resumable(self) -> RunDir:
        """This run, if training can continue it: an interrupted run, or a finished one (given a larger budget,
        which :func:`polyak.planning.plan_run` checks); never an Ape-X run."""
        self.require_run()
        if self.is_apex():
            raise CheckpointError(f"{self.path} is an Ape-X run (--workers); Ape-X runs cannot be resumed (their "
                                  "replay lives in Ray actors and is not checkpointed)")
        return self

    def is_apex(self) -> bool:
        from polyak.config_json import read_config

        if self.config_json.is_file():
            return read_config(self.path)[1] is not None
        return self.config_gin.is_file() and "ApexConfig." in self.config_gin.read_text()

    def configs(self) -> Configs:
        """The run's configs, from its config.json only (never gin, which would run the file's imports)."""
        from polyak.config_json import read_config

        self.require()
        return read_config(self.path)[0]

    def newest_checkpoint(self) -> Path:
        """The newest complete full checkpoint; a CheckpointError when there is none."""
        found = complete_checkpoints(self.checkpoints)
        if not found:
            raise CheckpointError(f"{self.path} has no complete checkpoint")
        return found[-1]

    def env_source(self) -> Any:
        """How the run's env was made (:class:`polyak.envs.source.EnvSource`; from its id for a run without
        ``env.json``)."""
        from polyak.envs.source import EnvSource
        from polyak.safe_files import read_json

        if not self.env_json.is_file():
            return EnvSource.from_id(self.configs().trainer.env_id)
        return EnvSource.from_json(read_json(self.env_json, self.path, 1 << 20), str(self.path))

    def read_summary(self) -> dict[str, Any]:
        """``summary.json`` as a dict, or an empty one for an unfinished run."""
        from polyak.safe_files import read_json

        return read_json(self.summary, self.path, 1 << 20) if self.summary.is_file() else {}

    def metrics_rows(self) -> tuple[list[dict[str, str]], bool]:
        """``metrics.csv``'s rows and whether its last row was cut short (left out: a kill, or the writer now, stopped
        inside it); a PolyakError for a row without the header's fields."""
        import csv

        text = self.metrics.read_text()
        lines = text.splitlines()
        cut_short = bool(text) and not text.endswith("\n")
        rows = list(csv.DictReader(lines[:-1] if cut_short else lines))
        for row in rows:
            if None in row.values() or None in row:  # too few or too many fields
                raise PolyakError(f"{self.metrics} is damaged: row {row} does not have the header's fields")
        return rows, cut_short

    def solve_score(self) -> float | None:
        """``TrainerConfig.solve_score`` as the run's config binds it (None when unbound)."""
        text = self.config_gin.read_text() if self.config_gin.is_file() else ""
        found = re.search(r"^TrainerConfig\.solve_score = ([-0-9.e]+)", text, re.MULTILINE)
        return float(found.group(1)) if found else None

    def config_text(self) -> str:
        """The operative config as text (plots group runs by it), or the directory's name without one."""
        return self.config_gin.read_text() if self.config_gin.is_file() else self.path.name
