"""Writing and reading a run's checkpoints: full ones (keep-last-N) and the best agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from polyak.algorithms.base import Learner
from polyak.checkpoint import describe_mismatch, load_checkpoint, prune_checkpoints, save_checkpoint, step_name
from polyak.errors import CheckpointError, PolyakError
from polyak.run_dir import BEST, RunDir


class Checkpointer:
    """Saves atomically into ``run_dir.checkpoints``, never a learner holding NaN or Inf weights."""

    def __init__(self, run_dir: RunDir, keep: int, meta: dict[str, Any]) -> None:
        self.run_dir, self.keep, self.meta = run_dir, keep, meta

    def save(self, state: dict[str, Any], learner: Learner, env_steps: int) -> None:
        """A full checkpoint named by ``env_steps``; the oldest beyond ``keep`` are removed."""
        broken = learner.parameters_finite()
        if broken is not None:
            raise PolyakError(
                f"training diverged: the {broken} has NaN or Inf parameters at env step {env_steps}; "
                "no checkpoint was written (the newest one in checkpoints/, if the run saved one before, is the last "
                "good state)"
            )
        directory = self.run_dir.checkpoints
        try:
            save_checkpoint(directory, step_name(env_steps), state, {**self.meta, "env_steps": env_steps})
        except OSError as error:
            raise PolyakError(
                f"could not write a checkpoint to {directory}: {error.strerror or error}; "
                "the previous checkpoints are kept"
            ) from None
        prune_checkpoints(directory, self.keep)

    def save_best(self, agent_state: dict[str, Any], env_steps: int) -> None:
        """The agent alone (no replay) at its best evaluation, in ``checkpoints/best``."""
        try:
            save_checkpoint(self.run_dir.checkpoints, BEST, {"agent": agent_state},
                            {**self.meta, "env_steps": env_steps})
        except OSError as error:
            raise PolyakError(f"could not write the best checkpoint: {error.strerror or error}") from None

    def load(self, checkpoint: Path | None, learner: Learner) -> tuple[Path, dict[str, Any]]:
        """The state of ``checkpoint`` (default: the newest complete one), checked against the meta and networks."""
        if checkpoint is None:
            try:
                checkpoint = self.run_dir.newest_checkpoint()
            except CheckpointError:
                raise CheckpointError(f"{self.run_dir} has no complete checkpoint to resume from (the run stopped "
                                      "before its first); train again into another run directory or delete this "
                                      "one") from None
        state, meta = load_checkpoint(checkpoint)
        for key in ("env_id", "obs_dim", "action_dim", "num_envs"):
            if key in meta and meta[key] != self.meta[key]:
                raise CheckpointError(
                    f"checkpoint {checkpoint} was written for {key}={meta[key]!r} but the config gives "
                    f"{self.meta[key]!r}"
                )
        for name in ("actor", "critic"):
            mismatch = describe_mismatch(learner.networks[name].state_dict(), state.get("agent", {}).get(name, {}))
            if mismatch:
                raise CheckpointError(f"checkpoint {checkpoint.name} does not match the {name} config: {mismatch}")
        return checkpoint, state
