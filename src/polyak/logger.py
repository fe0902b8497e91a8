"""One logger for a run, with three sinks: metrics.csv, TensorBoard and a tqdm progress bar.

``metrics.csv`` holds only values that are a function of the seed (no wall-clock times), so two
runs with the same seed write identical files; speeds go to TensorBoard only.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

from tqdm import tqdm

CSV_COLUMNS = ("kind", "env_steps", "episode", "score", "window_mean", "critic_loss", "actor_loss", "epsilon")


def _fmt(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(float(value))


def _show(value: float) -> str:
    return f"{value:.2f}" if math.isfinite(value) else "n/a"


class Logger:
    """Writes namespaced scalars (``rollout/``, ``train/``, ``eval/``) to every sink."""

    def __init__(self, run_dir: Path, total_env_steps: int, progress_bar: bool, initial_env_steps: int = 0) -> None:
        from torch.utils.tensorboard import SummaryWriter

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
        self._tb.add_scalar("rollout/episode_score", score, env_steps)
        self._tb.add_scalar("rollout/window_mean", window_mean, env_steps)
        self._tb.add_scalar("rollout/epsilon", epsilon, env_steps)
        self._bar.set_postfix(
            episode=episode, window=_show(window_mean), best_mean=_show(best_window_mean),
            best=_show(best_score), refresh=False,
        )
        if self._text_progress:
            print(f"episode {episode} | env steps {env_steps} | score {_show(score)} | window mean "
                  f"{_show(window_mean)} | best window mean {_show(best_window_mean)} | best {_show(best_score)}",
                  flush=True)

    def evaluation(self, env_steps: int, episode: int, score: float) -> None:
        self._csv.writerow(("eval", env_steps, episode, _fmt(score), "", "", "", ""))
        self._tb.add_scalar("eval/score", score, env_steps)
        self._bar.write(f"eval at {env_steps} env steps: mean score {score:.2f}")

    def scalars(self, env_steps: int, values: dict[str, Any]) -> None:
        for key, value in values.items():
            self._tb.add_scalar(key, value, env_steps)

    def advance(self, env_steps: int) -> None:
        self._bar.update(env_steps)

    def message(self, text: str) -> None:
        self._bar.write(text)

    def flush(self) -> None:
        self._csv_file.flush()
        self._tb.flush()

    def close(self) -> None:
        self._bar.close()
        self._csv_file.close()
        self._tb.close()
