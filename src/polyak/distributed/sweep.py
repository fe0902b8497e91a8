"""``polyak sweep``: seeds x grid of gin bindings on Ray Tune; each trial is a normal polyak run directory.

The driver parses and validates every trial's config before Ray starts (its bindings, its budget and its env),
so a mistake fails in one line and nothing runs. Trials carry their full operative config (text), so on a multi-node
cluster a worker node needs polyak installed but not the config file. Run directories are written
where the trial runs: use a ``runs_root`` on a shared filesystem for a multi-node cluster.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import gin

from polyak.distributed.grid import grid_variants
from polyak.envs.factory import make_env
from polyak.errors import PolyakError
from polyak.ginconf import build_configs_from_gin, parse_gin
from polyak.planning import check_budget

TRIAL_CPUS = 1.0


@dataclass(frozen=True)
class TrialSpec:
    """One run of the sweep: a grid variant and a seed."""

    variant: str
    seed: int
    run_dir: str
    gin: str
    solve_score: float | None

    @property
    def name(self) -> str:
        return Path(self.run_dir).name


@dataclass
class TrialResult:
    spec: TrialSpec
    summary: dict[str, Any] | None
    error: str | None = None


def plan_sweep(config_file: Path, seeds: list[int], bindings: list[str], grids: list[str],
               sweep_dir: Path) -> list[TrialSpec]:
    """Every trial's operative config, validated here (no ray) as ``polyak train`` validates a run: its
    bindings, its budget against the replay's ``min_size`` and its env (made once per env id and keyword
    arguments, then closed); grid variants x seeds."""
    specs = []
    envs_checked: set[str] = set()
    for variant in grid_variants(grids):
        for seed in seeds:
            trial_bindings = [*bindings, *variant.bindings, f"TrainerConfig.seed = {seed}",
                              "TrainerConfig.progress_bar = False"]
            try:
                parse_gin(config_file, trial_bindings)
                configs = build_configs_from_gin()
                check_budget(configs)
                _check_env(configs.trainer.env_id, configs.trainer.env_kwargs, envs_checked)
            except PolyakError as error:
                if not variant.bindings:
                    raise
                raise type(error)(f"grid point {variant.label}: {error}") from None
            run_dir = (sweep_dir / f"{variant.label}_seed_{seed}").resolve()
            specs.append(TrialSpec(variant.label, seed, str(run_dir), gin.operative_config_str(),
                                   configs.trainer.solve_score))
    gin.clear_config()
    return specs


def _check_env(env_id: str, env_kwargs: dict[str, Any], checked: set[str]) -> None:
    """Make the env once and close it: an unknown id, a wrong keyword or a space polyak cannot train on fails here
    in one line, not in every trial."""
    key = json.dumps([env_id, env_kwargs], sort_keys=True, default=repr)
    if key in checked:
        return
    make_env(env_id, 1, **env_kwargs).close()
    checked.add(key)


def run_trial(config: dict[str, Any]) -> None:
    """One Tune trial (in a Ray worker): a normal polyak run into the trial's run directory."""
    import torch
    from ray import tune

    from polyak.trainer import Trainer

    torch.set_num_threads(1)
    spec = TrialSpec(**config["trial"])
    parse_gin(None, [spec.gin])
    configs = build_configs_from_gin()
    summary = Trainer(configs, Path(spec.run_dir), gin.operative_config_str()).run()
    tune.report({"env_steps": summary.env_steps, "summary_json": json.dumps(summary.__dict__)})


def _error_line(error: BaseException | None) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    polyak_lines = [line for line in lines if "PolyakError" in line or "ConfigError" in line or "EnvError" in line]
    return (polyak_lines or lines or [type(error).__name__])[-1]


def run_sweep(specs: list[TrialSpec], sweep_dir: Path, address: str | None,
              max_concurrent: int | None = None) -> list[TrialResult]:
    """Run every trial on Ray Tune (one CPU each); local Ray on 127.0.0.1 unless ``address``."""
    from polyak.distributed.ray_runtime import init_ray

    init_ray(address)
    from ray import tune

    by_name = {spec.name: spec for spec in specs}
    tuner = tune.Tuner(
        tune.with_resources(run_trial, {"cpu": TRIAL_CPUS}),
        param_space={"trial": tune.grid_search([asdict(spec) for spec in specs])},
        tune_config=tune.TuneConfig(
            max_concurrent_trials=max_concurrent,
            trial_dirname_creator=lambda trial: Path(trial.config["trial"]["run_dir"]).name,
            trial_name_creator=lambda trial: Path(trial.config["trial"]["run_dir"]).name,
        ),
        run_config=tune.RunConfig(name="tune", storage_path=str((sweep_dir / ".tune").resolve()), verbose=0,
                                  failure_config=tune.FailureConfig(max_failures=0)),
    )
    grid = tuner.fit()
    results = []
    for index in range(len(grid)):
        result = grid[index]
        spec = by_name[Path(result.config["trial"]["run_dir"]).name]
        if result.error is not None or not result.metrics or "summary_json" not in result.metrics:
            results.append(TrialResult(spec, None, _error_line(result.error) if result.error else "no result"))
        else:
            results.append(TrialResult(spec, json.loads(result.metrics["summary_json"])))
    order = {spec.name: i for i, spec in enumerate(specs)}
    return sorted(results, key=lambda r: order[r.spec.name])


def _final_score(summary: dict[str, Any]) -> float | None:
    """The final deterministic evaluation, or the final window mean of a run without evaluations."""
    value = summary.get("final_eval")
    if value is None:
        value = summary.get("final_window_mean")
    return None if value is None or not math.isfinite(value) else float(value)


def summarize(results: list[TrialResult]) -> list[dict[str, Any]]:
    """Per grid variant: seeds, solved seeds, median episodes to solve, mean ± std final score."""
    rows = []
    for variant in dict.fromkeys(r.spec.variant for r in results):
        members = [r for r in results if r.spec.variant == variant]
        done = [r for r in members if r.summary is not None]
        solved = [r.summary["episodes_to_solve"] for r in done if r.summary and r.summary.get("solved")]
        finals = [s for s in (_final_score(r.summary) for r in done if r.summary) if s is not None]
        has_criterion = any(r.spec.solve_score is not None for r in members)
        rows.append({
            "config": variant,
            "seeds": [r.spec.seed for r in members],
            "finished": len(done),
            "failed": len(members) - len(done),
            "solved": len(solved) if has_criterion else None,
            "median_episodes_to_solve": statistics.median(solved) if solved else None,
            "mean_final_score": statistics.fmean(finals) if finals else None,
            "std_final_score": statistics.pstdev(finals) if finals else None,
            "runs": [r.spec.run_dir for r in members],
        })
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    """A plain-text table, one line per config."""
    header = ("config", "seeds", "solved", "median episodes to solve", "mean final score")
    lines = []
    for row in rows:
        total = len(row["seeds"])
        solved = "n/a (no solve_score)" if row["solved"] is None else f"{row['solved']}/{total}"
        median = "-" if row["median_episodes_to_solve"] is None else f"{row['median_episodes_to_solve']:g}"
        final = ("-" if row["mean_final_score"] is None
                 else f"{row['mean_final_score']:.2f} ± {row['std_final_score']:.2f}")
        seeds = f"{row['finished']}/{total}" + (f" ({row['failed']} failed)" if row["failed"] else "")
        lines.append((row["config"], seeds, solved, median, final))
    widths = [max(len(str(x)) for x in column) for column in zip(header, *lines, strict=True)]
    out = [" | ".join(str(x).ljust(w) for x, w in zip(header, widths, strict=True)),
           "-+-".join("-" * w for w in widths)]
    out += [" | ".join(str(x).ljust(w) for x, w in zip(line, widths, strict=True)) for line in lines]
    return "\n".join(out)


def write_report(results: list[TrialResult], sweep_dir: Path) -> tuple[str, Path | None]:
    """``summary.json``, ``summary.txt`` and ``curves.png`` (the runs that exist on this machine)."""
    from polyak.plot import plot_runs

    rows = summarize(results)
    table = format_table(rows)
    sweep_dir.mkdir(parents=True, exist_ok=True)
    trials = [{"run_dir": r.spec.run_dir, "config": r.spec.variant, "seed": r.spec.seed, "error": r.error,
               "summary": r.summary} for r in results]
    (sweep_dir / "summary.json").write_text(json.dumps({"configs": rows, "trials": trials}, indent=2) + "\n")
    (sweep_dir / "summary.txt").write_text(table + "\n")
    plotted = [Path(r.spec.run_dir) for r in results
               if r.summary is not None and (Path(r.spec.run_dir) / "metrics.csv").is_file()]
    plot = None
    if plotted:
        try:
            plot = plot_runs(plotted, sweep_dir / "curves.png", title=f"sweep {sweep_dir.name}")
        except PolyakError:  # e.g. runs too short to finish an episode
            plot = None
    return table, plot
