"""One logger for a run, with its sinks: metrics.csv, TensorBoard, a tqdm progress bar and, when the run's
``TrainerConfig.wandb_project`` is set, Weights & Biases (the same scalars as TensorBoard, and the config).

``metrics.csv`` holds only values that are a function of the seed (no wall-clock times), so two
runs with the same seed write identical files; speeds go to TensorBoard (and W&B) only.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

from polyak.wandb_sink import WandbSink

CSV_COLUMNS = ("kind", "env_steps", "episode", "score", "window_mean", "critic_loss", "actor_loss", "epsilon")


def _fmt(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(float(value))


def wandb_project_of(run_dir: Path) -> str | None:
    """``TrainerConfig.wandb_project`` of the run's config.json (None without one)."""
    config = run_dir / "config.json"
    if not config.is_file():
        return None
    project = json.loads(config.read_text()).get("trainer", {}).get("wandb_project")
    return str(project) if project else None


def _show(value: float) -> str:
    return f"{value:.2f}" if math.isfinite(value) else "n/a"


class Logger:
    """Writes namespaced scalars (``rollout/``, ``train/``, ``eval/``) to every sink."""

    def __init__(self, run_dir: Path, total_env_steps: int, progress_bar: bool, initial_env_steps: int = 0) -> None:
        from torch.utils.tensorboard import SummaryWriter

        project = wandb_project_of(run_dir)
        self._wandb = WandbSink(project, run_dir) if project else None  # first: a missing extra stops the run here
        csv_path = run_dir / "metrics.csv"
        new_file = not csv_path.exists() or csv_path.stat().st_size == 0
        self._csv_file = open(csv_path, "a", newline="")  # noqa: SIM115 - closed in close()
        self._csv = csv.writer(self._csv_file)
        if new_file:
            self._csv.writerow(CSV_COLUMNS)
        self._tb = SummaryWriter(log_dir=str(run_dir / "tb"))
        self._bar = tqdm(
            total=total_env_steps, initial=initial_env_steps, unit="step", dynamic_ncols=True,
            disable=None if progress_bar else True, desc="train",  # None: only on a terminal
        )
        self._text_progress = progress_bar and self._bar.disable  # not a terminal: one line per episode

    def episode(
        self, env_steps: int, episode: int, score: float, window_mean: float, best_window_mean: float,
        best_score: float, losses: dict[str, float], epsilon: float,
    ) -> None:
        self._csv.writerow((
            "episode", env_steps, episode, _fmt(score), _fmt(window_mean), _fmt(losses.get("critic_loss")),
            _fmt(losses.get("actor_loss")), _fmt(epsilon),
        ))
        self.scalars(env_steps, {"rollout/episode_score": score, "rollout/window_mean": window_mean,
                                 "rollout/epsilon": epsilon})
        self._bar.set_postfix(
            episode=episode, window=_show(window_mean), best_mean=_show(best_window_mean),
            best=_show(best_score), refresh=False,
        )
        if self._text_progress:
            print(f"episode {episode} | env steps {env_steps} | score {_show(score)} | window mean "
                  f"{_show(window_mean)} | best window mean {_show(best_window_mean)} | best {_show(best_score)}",
                  flush=True)

    def evaluation(self, env_steps: int, episode: int, score: float, live_score: float | None = None) -> None:
        """One evaluation; ``live_score``: the live actor's on the same start states, when evaluation ran another
        policy (the averaged actor, TD7's checkpoint)."""
        self._csv.writerow(("eval", env_steps, episode, _fmt(score), "", "", "", ""))
        values = {"eval/score": score}
        live = ""
        if live_score is not None:
            self._csv.writerow(("eval_live", env_steps, episode, _fmt(live_score), "", "", "", ""))
            values["eval/live_score"] = live_score
            live = f" (live actor {live_score:.2f})"
        self.scalars(env_steps, values)
        self._bar.write(f"eval at {env_steps} env steps: mean score {score:.2f}{live}")

    def scalars(self, env_steps: int, values: dict[str, Any]) -> None:
        """Namespaced scalars to TensorBoard and W&B, at ``env_steps``."""
        for key, value in values.items():
            self._tb.add_scalar(key, value, env_steps)
        if self._wandb is not None:
            self._wandb.log(values, env_steps)

    def advance(self, env_steps: int) -> None:
        self._bar.update(env_steps)

    def message(self, text: str) -> None:
        self._bar.write(text)

    def flush(self) -> None:
        self._csv_file.flush()
        self._tb.flush()

    def close(self) -> None:
        """Close every sink; called from a ``finally``, it marks the W&B run failed when an error is on its way."""
        self._bar.close()
        self._csv_file.close()
        self._tb.close()
        if self._wandb is not None:
            self._wandb.close(failed=sys.exc_info()[0] is not None)
