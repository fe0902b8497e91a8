"""Would a wider critic lift the recommended config on Ant-v5 and Humanoid-v5? Paired by seed with the suite's runs.

The recommended config (CrossQ in its SAC mode, averaged actor) is below the CrossQ paper's 100k figures on Ant-v5
(-24%) and Humanoid-v5 (-33%; ``benchmarks/results/suite.md``). Its settings are the paper's except the critic's
width: 256-256 here, 2,048-2,048 in the paper (Bhatt, Palenicek et al. 2024, whose ablations credit the wide critic
with part of CrossQ's sample efficiency). One update of a 2,048-wide critic costs ~35x a 256-wide one on one CPU core,
so this tries the cheaper steps: each run is a suite run of ``polyak_recommended`` (the suite's config, protocol and
seed) with ``critic/NetworkConfig.hidden_sizes`` set to ``(W, W)``; the actor stays 256-256. Seed ``s`` here is
compared with the suite's ``polyak_recommended`` seed ``s`` (same start states, same first 5,000 random steps).

Decision rule, written before any run: a width is worth a full rerun of the recommended row (5 seeds on each of the
five tasks, several sittings) when, over the seeds run, its mean final return is above the 256-wide row's on the
same seeds on both tasks, and its mean stability (mean of the last five evaluations over the best, per seed) is not
lower by more than 0.05 on either. With two or three seeds this is a pilot: it can say "worth the rerun", not that
the wider critic is better.

The pilot's verdict (``benchmarks/results/critic_width.md``): 512 wide is not worth the rerun, on Humanoid's
stability alone (its evaluations swing at a higher level). A follow-up, with its rule written after that verdict and
before any of its runs: do slower averages of the actor steady the wide critic? ``--taus`` trains the same run and
evaluates, beside the shipped average (rate 0.002), averages of the actor with the given rates on the same start
states (``benchmarks/actor_average.py``'s method; training is unchanged). Each rate, the shipped one included, is
judged by the pilot's rule against the 256-wide row on the same seeds: mean final return above it on Ant-v5 and
Humanoid-v5, mean stability not lower by more than 0.05 on either. A rate that passes on both is worth the full
rerun at that width with that rate; of several, the one with the highest mean stability over the two tasks. The
verdict is read once the pilot's seeds have run (Humanoid-v5 0-2, Ant-v5 0-1; said after the first two Humanoid
runs, about which seeds only); the report says "undecided" while any of them is missing.

The rerun collects here too: once the rule calls a width worth it, ``--task`` takes the other three MuJoCo tasks of
the suite, and the report counts each task's seeds against the suite's 5 for the recommended row. The recommended
config changes only when every task has them, so the suite's rows never mix two widths. The rerun runs with
``--taus`` (training does not depend on the averages; a test checks that a side average at a rate scores what a run
configured with that rate scores), so its curves at the follow-up's pick are the recommended row at that width and
rate: once ``configs/suite/<task>_recommended.gin`` and ``configs/recommended.gin`` say so, ``--promote WIDTH``
writes them as the suite's ``polyak_recommended`` result files (``from_follow_up`` names the run each came from).

Shipping rule, written after the follow-up's verdict (pick: rate 0.0005) with one rerun run in (Walker2d-v5 seed 0,
below its 256-wide partner): the rerun's row replaces the shipped 256-wide recommended row when, over the suite's 5
seeds on each of the five tasks, its IQM of normalized final returns (the statistic that chose the recommended row,
``suite_stats``) is higher and its lowest per-task stability is not lower. Otherwise the configs stay 256-wide and
``--promote`` refuses; the rerun stays a study. The verdict and both rows' numbers go into the report, and the
promotion keeps them in ``critic_width_adoption.json`` (the suite's files then hold the rerun's runs; the 256-wide
files they replace move to ``critic_width_partners/``, where the study's pairs keep finding them).

    python benchmarks/critic_width.py --task Ant-v5 --width 512 --seed 0    # one run, ~60 CPU minutes
    python benchmarks/critic_width.py --task Humanoid-v5 --seed 0 --taus    # the follow-up, ~80 CPU minutes
    python benchmarks/critic_width.py --task Ant-v5 --seed 0 --out-dir /tmp/mine   # reproduce a committed run
    python benchmarks/critic_width.py --report                              # the table over the result files
    python benchmarks/critic_width.py --promote 512    # the rerun's end: its runs become the suite's recommended row

Writes ``benchmarks/results/critic_width/<task stem>/w<W>_seed_<seed>.json`` (the follow-up:
``critic_width_averaging/``) and, with ``--report``, ``benchmarks/results/critic_width.md``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import RunFailed, claim_holder, claimed, code_commit, cpu_kind, load_average, machine_info
from suite import (
    RECOMMENDED_ROW,
    RESULTS,
    ROOT,
    SAMPLE_EFFICIENCY_TASKS,
    TASKS,
    config_file,
    cpu_seconds,
    recommended_config_mismatches,
    result_path,
    run_polyak,
    seeds_asked,
    write_result,
)
from suite_stats import iqm_interval, normalized_score, stability_ratio

STUDY = RESULTS / "critic_width"
AVERAGING = RESULTS / "critic_width_averaging"  # the follow-up's runs: the shipped average and slower ones
TAUS = (0.001, 0.0005)  # about the last 1,000 and 2,000 actor updates (the shipped 0.002: 500)
SHIPPED = "shipped"
SHIPPED_RATE = 0.002  # AgentConfig.actor_average of the suite's recommended configs when the follow-up ran
FOLLOW_UP_SEEDS = {"Ant-v5": (0, 1), "Humanoid-v5": (0, 1, 2)}  # the pilot's: the follow-up's verdict waits for them
TASKS_TRIED = ("Ant-v5", "Humanoid-v5")  # the tasks of the decision rule
BASE_WIDTH = 256
STABILITY_SLACK = 0.05
ADOPTION = "critic_width_adoption.json"  # under RESULTS: the shipping rule's numbers, kept when the rerun is promoted
PARTNERS = "critic_width_partners"  # under RESULTS: the suite's 256-wide recommended runs, kept by --promote


def kept_path(task: str, seed: int) -> Path:
    """Where ``--promote`` keeps the suite's 256-wide recommended run of ``seed`` before overwriting it."""
    return RESULTS / PARTNERS / TASKS[task].config_stem / f"{RECOMMENDED_ROW}_seed_{seed}.json"


def partner_path(task: str, seed: int) -> Path:
    """The 256-wide run of the recommended row that a study run of ``seed`` is paired with: the suite's file, or the
    copy ``--promote`` kept before the suite's row became the rerun's."""
    kept = kept_path(task, seed)
    return kept if kept.exists() else result_path(RESULTS, task, RECOMMENDED_ROW, seed)


def study_path(task: str, width: int, seed: int) -> Path:
    return STUDY / TASKS[task].config_stem / f"w{width}_seed_{seed}.json"


def relocated(path: Path, out_dir: Path | None) -> Path:
    """Where a result file under ``RESULTS`` goes when a run is reproduced into ``out_dir`` (the same relative
    path), so the committed file stays as it is."""
    return path if out_dir is None else out_dir / path.relative_to(RESULTS)


def runs_root(out_dir: Path | None) -> Path:
    """The folder of the study runs' run directories: ``runs/`` of the checkout, or beside an ``--out-dir``'s
    result files (two runs of one seed into two folders never share a run directory)."""
    return ROOT / "runs" if out_dir is None else out_dir / "runs"


def add_reproduce_arguments(parser: argparse.ArgumentParser, kept: str) -> None:
    """``--out-dir`` and ``--force`` of a study script whose runs go through :func:`recorded_run` (``kept``: what a
    run keeps under ``OUT_DIR/runs/`` while it trains)."""
    parser.add_argument("--out-dir", type=lambda text: Path(text).resolve(),
                        help="write the run's result file under this folder instead of benchmarks/results/ (same "
                             f"relative path; its {kept} under OUT_DIR/runs/): reproduce a committed run without "
                             "touching it. --report reads the committed results only")
    parser.add_argument("--force", action="store_true",
                        help="run it even when its result file exists; the new file replaces it when the run finishes")


def make_out_dir(script: str, out_dir: Path | None) -> None:
    """Create ``--out-dir`` before a run starts, or exit with one line saying why it cannot be."""
    if out_dir is not None:
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            sys.exit(f"{script}: --out-dir {out_dir}: {error.strerror or error}")


def recorded_run(path: Path, task: str, width: int, seed: int, folder: str,
                 train_one: Callable[[Path, str], dict[str, Any]], row: str = RECOMMENDED_ROW,
                 out_dir: Path | None = None, force: bool = False) -> dict[str, Any] | None:
    """``train_one(run_dir, critic binding)`` under ``path``'s claim (``path`` relocated into ``out_dir`` when
    given), its result file written with the suite's record (commit, machine, load, CPU time) as a run of ``row``;
    None when the result exists already (unless ``force``: then it is replaced when the run finishes) or another
    runner has it."""
    import torch

    path = relocated(path, out_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    with claimed(path) as mine:
        if not mine or (path.exists() and not force):
            why = "done already (--force runs it again)" if mine else f"{claim_holder(path)} is training it"
            print(f"{path}: {why}; skipped")
            return None
        torch.set_num_threads(1)
        load_before, commit, cpu_before = load_average(), code_commit(), cpu_seconds()
        run_dir = runs_root(out_dir) / folder / TASKS[task].config_stem / f"w{width}_seed_{seed}"
        result = train_one(run_dir, f"critic/NetworkConfig.hidden_sizes = ({width}, {width})")
        budget = TASKS[task].budget
        cpu = cpu_seconds() - cpu_before + result.pop("cpu_seconds_in_earlier_sittings", 0.0)  # an sb3 run resumed
        result.update({
            "task": task, "row": row, "critic_width": width, "seed": seed, "budget": budget,
            "final_return": result["eval_returns"][-1], "cpu_seconds": round(cpu, 2),
            "code_commit": commit, "machine": machine_info(),
            "load_average": {"before": load_before, "after": load_average()},
            "finished": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        })
        result["env_steps_per_cpu_s"] = round(budget / max(result["cpu_seconds"], 1e-9), 2)
        write_result(path, result)
        return result


def train(task: str, width: int, seed: int, out_dir: Path | None = None, force: bool = False) -> None:
    """One suite run of the recommended row with a ``width``-wide critic; its result file, as the suite writes one
    (into ``out_dir`` when given; ``force``: over an existing one)."""
    result = recorded_run(study_path(task, width, seed), task, width, seed, "critic_width",
                          lambda run_dir, binding: run_polyak(task, RECOMMENDED_ROW, seed, extra_bindings=(binding,),
                                                              run_dir=run_dir),
                          out_dir=out_dir, force=force)
    if result is not None:
        print(f"{task} width {width} seed {seed}: final {result['final_return']:.1f}", flush=True)


def averaging_path(task: str, width: int, seed: int) -> Path:
    return AVERAGING / TASKS[task].config_stem / f"w{width}_seed_{seed}.json"


def train_with_averages(task: str, width: int, seed: int, taus: tuple[float, ...], out_dir: Path | None = None,
                        force: bool = False) -> None:
    """The follow-up's run: the recommended row with a ``width``-wide critic, and averages of the actor at ``taus``
    evaluated beside its shipped one on the same start states (into ``out_dir`` when given; ``force``: over an
    existing result)."""
    from actor_average import train as train_averages

    pilot = study_path(task, width, seed)

    def train_one(run_dir: Path, binding: str) -> dict[str, Any]:
        result = train_averages(task, seed, taus, row=RECOMMENDED_ROW, run_dir=run_dir, extra_bindings=(binding,))
        result["same_as_pilot"] = (json.loads(pilot.read_text())["eval_returns"] == result["eval_returns"]
                                   if pilot.exists() else None)
        return result

    result = recorded_run(averaging_path(task, width, seed), task, width, seed, "critic_width_averaging", train_one,
                          out_dir=out_dir, force=force)
    if result is not None:
        print(f"{task} width {width} seed {seed}: shipped {result['final_return']:.1f}, "
              + ", ".join(f"tau {tau} {curve[-1]:.1f}" for tau, curve in result["averages"].items()), flush=True)


def averaging_pairs() -> dict[tuple[str, str], list[tuple[dict[str, Any], dict[str, Any]]]]:
    """Per (task, average: ``SHIPPED`` or a rate), the (suite run at 256, follow-up curve as a result) pairs."""
    pairs: dict[tuple[str, str], list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for path in sorted(AVERAGING.glob("*/w*_seed_*.json")):
        wide = json.loads(path.read_text())
        base_path = partner_path(wide["task"], wide["seed"])
        if not base_path.exists():
            continue
        base = json.loads(base_path.read_text())
        curves = {SHIPPED: wide["eval_returns"], **wide["averages"]}
        for name, curve in curves.items():
            label = f"w{wide['critic_width']} {name if name == SHIPPED else 'tau ' + name}"
            pairs.setdefault((wide["task"], label), []).append((base, {**wide, "eval_returns": curve}))
    return pairs


def numbers(result: dict[str, Any]) -> dict[str, float]:
    curve = result["eval_returns"]
    return {"final": curve[-1], "best": max(curve), "last5": statistics.mean(curve[-5:]),
            "stability": stability_ratio([curve]) or 0.0, "cpu_min": result["cpu_seconds"] / 60}


def paired_runs() -> dict[tuple[str, int], list[tuple[dict[str, Any], dict[str, Any]]]]:
    """Per (task, width), the (suite run at 256, study run at the width) pairs of the seeds both have."""
    pairs: dict[tuple[str, int], list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for path in sorted(STUDY.glob("*/w*_seed_*.json")):
        wide = json.loads(path.read_text())
        base_path = partner_path(wide["task"], wide["seed"])
        if base_path.exists():
            pairs.setdefault((wide["task"], wide["critic_width"]), []).append(
                (json.loads(base_path.read_text()), wide))
    return pairs


def decision(pairs: dict[tuple[str, Any], list[tuple[dict[str, Any], dict[str, Any]]]]) -> dict[Any, dict[str, Any]]:
    """The module docstring's rule, per variant (a width, or the follow-up's averages): the mean final return above
    the 256-wide row's on the same seeds on every task tried, and the mean stability not lower by more than
    ``STABILITY_SLACK``."""
    verdicts: dict[Any, dict[str, Any]] = {}
    for width in sorted({w for _, w in pairs}):
        per_task = {}
        for task in TASKS_TRIED:
            runs = pairs.get((task, width), [])
            if not runs:
                continue
            base = [numbers(b) for b, _ in runs]
            wide = [numbers(w) for _, w in runs]
            mean = {key: (statistics.mean(n[key] for n in base), statistics.mean(n[key] for n in wide))
                    for key in ("final", "stability")}
            per_task[task] = {"seeds": len(runs), "final": mean["final"], "stability": mean["stability"],
                              "passes": mean["final"][1] > mean["final"][0]
                              and mean["stability"][1] >= mean["stability"][0] - STABILITY_SLACK}
        verdicts[width] = {"tasks": per_task, "worth_rerun": len(per_task) == len(TASKS_TRIED)
                           and all(t["passes"] for t in per_task.values())}
    return verdicts


def averaging_pick(verdicts: dict[str, dict[str, Any]]) -> str | None:
    """The follow-up's pick: of the averages worth the rerun, the one with the highest mean stability over the
    tasks (None: none is worth it)."""
    passing = [name for name, verdict in verdicts.items() if verdict["worth_rerun"]]
    return max(passing, key=lambda name: statistics.mean(t["stability"][1] for t in verdicts[name]["tasks"].values()),
               default=None)


def verdict_lines(verdicts: dict[Any, dict[str, Any]], column: str, name: Callable[[Any], str],
                  waiting: str = "") -> list[str]:
    """The rule's means per variant and task as a table, then each variant's verdict (``name`` says which;
    ``waiting``: the runs still owed before any verdict is read)."""
    lines = [f"| {column} | task | seeds | mean final, 256 → {column} | mean stability, 256 → {column} | passes |",
             "| --- | --- | --- | --- | --- | --- |"]
    for key, verdict in verdicts.items():
        for task, t in verdict["tasks"].items():
            lines.append(f"| {key} | {task} | {t['seeds']} | {t['final'][0]:.1f} → {t['final'][1]:.1f} | "
                         f"{t['stability'][0]:.2f} → {t['stability'][1]:.2f} | {'yes' if t['passes'] else 'no'} |")
    lines.append("")
    for key, verdict in verdicts.items():
        missing = [t for t in TASKS_TRIED if t not in verdict["tasks"]]
        if missing or waiting:
            lines.append(f"- {name(key)}: undecided ({waiting or 'no runs yet on ' + ', '.join(missing)})")
        else:
            lines.append(f"- {name(key)}: {'worth the full rerun' if verdict['worth_rerun'] else 'not worth it'}")
    return lines


def owed_follow_up(pairs: dict[tuple[str, str], list[tuple[dict[str, Any], dict[str, Any]]]]) -> list[str]:
    """The follow-up's seeds (``FOLLOW_UP_SEEDS``) that have no run yet, as "task seed s"."""
    done = {(task, wide["seed"]) for (task, _), runs in pairs.items() for _, wide in runs}
    return [f"{task} seed {seed}" for task, seeds in FOLLOW_UP_SEEDS.items() for seed in seeds
            if (task, seed) not in done]


def averaging_lines() -> list[str]:
    """The follow-up's table and verdict (nothing before its first run)."""
    pairs = averaging_pairs()
    if not pairs:
        return []
    lines = ["", "## Follow-up: slower averages of the actor with the wide critic", "",
             "Each run is one training of the recommended row with the wide critic; every average plays the same start "
             "states at each evaluation (`shipped`: the config's own, rate 0.002). Its 256-wide partner is the suite's "
             "run of the same seed.", "",
             "| task | seed | policy | final | best | mean of last 5 | stability | 256: final | 256: stability |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (task, label), runs in sorted(pairs.items()):
        for base, wide in sorted(runs, key=lambda pair: pair[1]["seed"]):
            n, b = numbers(wide), numbers(base)
            lines.append(f"| {task} | {wide['seed']} | {label} | {n['final']:.1f} | {n['best']:.1f} | "
                         f"{n['last5']:.1f} | {n['stability']:.2f} | {b['final']:.1f} | {b['stability']:.2f} |")
    verdicts = decision(pairs)
    owed = owed_follow_up(pairs)
    lines += ["", *verdict_lines(verdicts, "policy", str, f"waiting for {', '.join(owed)}" if owed else "")]
    pick = averaging_pick(verdicts) if not owed else None  # FOLLOW_UP_SEEDS covers every task of the rule
    lines += ["", f"Pick: **{pick or ('none yet' if owed else 'none')}**.", ""]
    widths = sorted({int(path.name.split("_")[0][1:]) for path in AVERAGING.glob("*/w*_seed_*.json")})
    for width in widths:
        counts = [f"{task} {sum(averaging_path(task, width, s).exists() for s in range(seeds_asked(RECOMMENDED_ROW)))}"
                  for task in SAMPLE_EFFICIENCY_TASKS]
        lines.append(f"The rerun's runs at width {width} (seeds 0-{seeds_asked(RECOMMENDED_ROW) - 1} per task; "
                     f"`--promote {width}` once all are in and the pick is made): {', '.join(counts)}.")
        lines.append("")
        if pick and pick.startswith(f"w{width} "):
            lines += adoption_lines(width, pick)
    for path in sorted(AVERAGING.glob("*/w*_seed_*.json")):
        run = json.loads(path.read_text())
        same = {True: "yes", False: "no", None: "no pilot run"}[run["same_as_pilot"]]
        lines.append(f"- {run['task']} seed {run['seed']}: the shipped curve equals the pilot's run of the seed: "
                     f"{same} (at {run['code_commit'].get('commit', '?')[:7]}, {cpu_kind(run['machine'])}, "
                     f"{run['cpu_seconds'] / 60:.1f} CPU min)")
    return lines


def report() -> str:
    pairs = paired_runs()
    if not pairs:
        sys.exit("critic_width: no result files yet; run one with --task, --width and --seed")
    lines = ["# A wider critic for the recommended config (Ant-v5, Humanoid-v5)", "",
             "Written by `python benchmarks/critic_width.py --report`. Each run is a suite run of "
             f"{RECOMMENDED_ROW} with only the critic's width changed; its 256-wide partner is the suite's run of the "
             "same seed (`benchmarks/results/suite/`). Scores are the shipped averaged actor's, 10 episodes every "
             "5,000 env steps; final = the last evaluation (100k steps).", "",
             "| task | seed | critic | final | best | mean of last 5 | stability | CPU min | CPU |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (task, width), runs in sorted(pairs.items()):
        for base, wide in sorted(runs, key=lambda pair: pair[1]["seed"]):
            for label, result in ((str(BASE_WIDTH), base), (str(width), wide)):
                n = numbers(result)
                lines.append(f"| {task} | {result['seed']} | {label} | {n['final']:.1f} | {n['best']:.1f} | "
                             f"{n['last5']:.1f} | {n['stability']:.2f} | {n['cpu_min']:.1f} | "
                             f"{cpu_kind(result['machine'])} |")
    lines += ["", "Means over the paired seeds, and the rule (module docstring): a width is worth the full rerun "
              "when its mean final return is above the 256-wide row's on both tasks and its stability is not lower "
              f"by more than {STABILITY_SLACK}.", ""]
    verdicts = decision(pairs)
    lines += verdict_lines(verdicts, "width", lambda width: f"width {width}")
    lines += ["", f"The rerun's progress (seeds with a {RECOMMENDED_ROW} partner, of the suite's "
              f"{seeds_asked(RECOMMENDED_ROW)} per task):", ""]
    for width in verdicts:
        counts = [f"{task} {len(pairs.get((task, width), []))}" for task in SAMPLE_EFFICIENCY_TASKS]
        lines.append(f"- width {width}: {', '.join(counts)}")
    commits = sorted({wide["code_commit"].get("commit", "?")[:7] for runs in pairs.values() for _, wide in runs})
    lines += ["", f"Study runs at {', '.join(commits)}, one torch thread, two runs at a time on the 2-core machine."]
    lines += averaging_lines()
    text = "\n".join(lines) + "\n"
    (STUDY.parent / "critic_width.md").write_text(text)
    return text


def pick_rate(pick: str) -> float:
    """The actor-average rate of a follow-up label (``w512 tau 0.001``, ``w512 shipped``)."""
    name = pick.split(" ", 1)[1]
    return SHIPPED_RATE if name == SHIPPED else float(name.removeprefix("tau "))


def curve_at(run: dict[str, Any], pick: str) -> list[float]:
    """A follow-up run's evaluations of the average a label names."""
    name = pick.split(" ", 1)[1]
    return run["eval_returns"] if name == SHIPPED else run["averages"][name.removeprefix("tau ")]


def follow_up_pick() -> str | None:
    """The follow-up's pick once its owed seeds have run (None: undecided, or no average passed)."""
    pairs = averaging_pairs()
    return None if owed_follow_up(pairs) else averaging_pick(decision(pairs))


def shipped_mismatches(width: int, rate: float) -> list[str]:
    """How the suite's recommended configs (and ``configs/recommended.gin``) differ from a ``width``-wide critic and
    an actor average at ``rate``, the settings the rerun's runs trained and evaluated with."""
    return recommended_config_mismatches(
        {"critic width": (width, width), "actor_average": rate},
        lambda configs: {"critic width": tuple(configs.critic.hidden_sizes),
                         "actor_average": configs.agent.actor_average},
        ROOT, config_file)


def promoted(run: dict[str, Any], source: Path, pick: str) -> dict[str, Any]:
    """A follow-up run as the suite's result file of the recommended row at the pick's rate."""
    curve = curve_at(run, pick)
    protocol = [b for b in run["settings"]["gin_params"] if not b.startswith("critic/NetworkConfig.hidden_sizes")]
    keep = ("eval_steps", "live_eval_returns", "wall_seconds", "task", "row", "seed", "budget", "cpu_seconds",
            "env_steps_per_cpu_s", "code_commit", "machine", "load_average", "finished")
    return {**{key: run[key] for key in keep}, "eval_returns": curve, "final_return": curve[-1],
            "env_steps_per_s": round(run["budget"] / run["wall_seconds"], 2),
            "settings": {"config": run["settings"]["config"], "gin_params": protocol},
            "from_follow_up": {"file": str(source.relative_to(ROOT)), "policy": pick,
                               "note": "the curve of this average in a critic_width.py --taus run (the same training "
                                       "and start states as a run of the config); its CPU and wall times include "
                                       "evaluating the run's other averages"}}


def row_numbers(curves: dict[str, list[list[float]]]) -> dict[str, Any]:
    """The shipping rule's numbers of one row (per task its curves, seeds in order): the IQM of its normalized final
    returns with the 95% interval, its stability per task and the lowest."""
    seeds = min(len(runs) for runs in curves.values())
    matrix = [[normalized_score(task, runs[i][-1]) for task, runs in curves.items()] for i in range(seeds)]
    iqm, ci = iqm_interval(matrix)
    stability = {task: stability_ratio(runs) or 0.0 for task, runs in curves.items()}
    return {"seeds_per_task": seeds, "normalized_iqm": iqm, "ci": ci, "stability": stability,
            "lowest_stability": min(stability.values())}


def adoption(width: int, pick: str) -> dict[str, Any] | None:
    """The module docstring's shipping rule: the 256-wide recommended row (the suite's files) against the rerun's
    curves at ``pick``; None while a rerun run is owed. Once promoted, the record kept then."""
    record = RESULTS / ADOPTION
    if record.exists():
        return json.loads(record.read_text())
    seeds = range(seeds_asked(RECOMMENDED_ROW))
    paths = {task: [(partner_path(task, s), averaging_path(task, width, s)) for s in seeds]
             for task in SAMPLE_EFFICIENCY_TASKS}
    if not all(path.exists() for pairs in paths.values() for pair in pairs for path in pair):
        return None
    base, wide = {}, {}
    for task, pairs in paths.items():
        base[task] = [json.loads(suite.read_text())["eval_returns"] for suite, _ in pairs]
        wide[task] = [curve_at(json.loads(rerun.read_text()), pick) for _, rerun in pairs]
    shipped, rerun = row_numbers(base), row_numbers(wide)
    return {"width": width, "policy": pick, "shipped": shipped, "rerun": rerun,
            "adopt": rerun["normalized_iqm"] > shipped["normalized_iqm"]
            and rerun["lowest_stability"] >= shipped["lowest_stability"]}


def adoption_lines(width: int, pick: str) -> list[str]:
    """The shipping rule's table and verdict (one line while runs are owed)."""
    verdict = adoption(width, pick)
    if verdict is None:
        return [f"The shipping rule (module docstring) is read once every rerun run at width {width} is in.", ""]
    lines = ["The shipping rule (module docstring), over the suite's seeds on the five tasks:", "",
             "| row | seeds per task | IQM normalized final [95% CI] | stability per task | lowest |",
             "| --- | --- | --- | --- | --- |"]
    for label, key in (("shipped, 256 wide", "shipped"), (f"rerun, {pick}", "rerun")):
        row = verdict[key]
        per_task = ", ".join(f"{task.removesuffix('-v5')} {x:.2f}" for task, x in row["stability"].items())
        lines.append(f"| {label} | {row['seeds_per_task']} | {row['normalized_iqm']:.3f} [{row['ci'][0]:.3f}, "
                     f"{row['ci'][1]:.3f}] | {per_task} | {row['lowest_stability']:.2f} |")
    lines += ["", f"Ship the rerun's row: **{'yes' if verdict['adopt'] else 'no'}**.", ""]
    return lines


def promote(width: int) -> list[Path]:
    """The rerun's end: each follow-up run at ``width`` (the suite's seeds on every task) as the suite's
    ``polyak_recommended`` result file of its seed, at the follow-up's pick; refused (one line, nothing written) while
    the pick is undecided, a run is owed, or the shipped configs are not yet that width and rate."""
    pick = follow_up_pick()
    if pick is None or not pick.startswith(f"w{width} "):
        sys.exit(f"critic_width: no follow-up pick at width {width} (the report says why); nothing promoted")
    owed = [f"{task} seed {seed}" for task in SAMPLE_EFFICIENCY_TASKS for seed in range(seeds_asked(RECOMMENDED_ROW))
            if not averaging_path(task, width, seed).exists()]
    if owed:
        sys.exit(f"critic_width: the rerun still owes {len(owed)} runs ({', '.join(owed)}); nothing promoted")
    verdict = adoption(width, pick)
    if not verdict["adopt"]:
        shipped, rerun = verdict["shipped"], verdict["rerun"]
        sys.exit(f"critic_width: the shipping rule keeps the 256-wide row (IQM {shipped['normalized_iqm']:.3f} against "
                 f"{rerun['normalized_iqm']:.3f}, lowest stability {shipped['lowest_stability']:.2f} against "
                 f"{rerun['lowest_stability']:.2f}); nothing promoted")
    mismatches = shipped_mismatches(width, pick_rate(pick))
    if mismatches:
        sys.exit("critic_width: the shipped configs are not the rerun's yet; " + "; ".join(mismatches))
    written = []
    for task in SAMPLE_EFFICIENCY_TASKS:
        for seed in range(seeds_asked(RECOMMENDED_ROW)):
            source = averaging_path(task, width, seed)
            path = result_path(RESULTS, task, RECOMMENDED_ROW, seed)
            kept = kept_path(task, seed)
            if not kept.exists():  # the study's 256-wide partner; a second --promote finds it kept already
                kept.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, kept.with_suffix(".tmp"))
                kept.with_suffix(".tmp").replace(kept)
            write_result(path, promoted(json.loads(source.read_text()), source, pick))
            written.append(path)
    write_result(RESULTS / ADOPTION, verdict)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(
        description="The study that widened the recommended config's critic to 512: the pilot (Ant-v5, "
                    "Humanoid-v5), the --taus follow-up (slower averages of the actor) and the rerun on the five "
                    "MuJoCo tasks (--promote made it the suite's recommended row), each run paired by seed with the "
                    "256-wide row's; and the HalfCheetah-v5 runs with --taus (seeds 5-9) of baseline_width.py's "
                    "follow-up.")
    parser.add_argument("--task", choices=SAMPLE_EFFICIENCY_TASKS, default="Ant-v5",
                        help=f"the rule decides on {' and '.join(TASKS_TRIED)}; the others are for the rerun, and "
                             "HalfCheetah-v5 seeds 5-9 with --taus for baseline_width.py's follow-up "
                             "(default: %(default)s)")
    parser.add_argument("--width", type=int, default=512,
                        help="the critic's width W: critic/NetworkConfig.hidden_sizes = (W, W), the actor stays "
                             "256-256 (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="the suite's seed to run and pair with (default: %(default)s); a seed whose result file "
                             "(critic_width/<task stem>/w<W>_seed_<seed>.json under benchmarks/results/, with --taus "
                             "critic_width_averaging/) exists is skipped unless --force")
    parser.add_argument("--taus", type=float, nargs="*", metavar="TAU",
                        help=f"the follow-up: evaluate averages of the actor at these rates beside the shipped one "
                             f"(no value: {' '.join(map(str, TAUS))})")
    add_reproduce_arguments(parser, "run directory")
    parser.add_argument("--report", action="store_true", help="write the table over the result files")
    parser.add_argument("--promote", type=int, metavar="WIDTH",
                        help="write the rerun's runs at WIDTH as the suite's recommended row (at the follow-up's pick)")
    args = parser.parse_args()
    if args.report:
        print(report())
        return
    if args.promote is not None:
        written = promote(args.promote)
        print(f"critic_width: {len(written)} result files of {RECOMMENDED_ROW} written; "
              "rebuild the suite's report: python benchmarks/suite.py --report")
        return
    if args.width <= 0:
        sys.exit(f"critic_width: --width must be positive, got {args.width}")
    taus = None if args.taus is None else tuple(args.taus) or TAUS
    if taus is not None and any(not 0.0 < tau <= 1.0 for tau in taus):
        sys.exit(f"critic_width: every --taus rate must be in (0, 1], got {' '.join(map(str, taus))}")
    make_out_dir("critic_width", args.out_dir)
    try:
        if taus is None:
            train(args.task, args.width, args.seed, args.out_dir, args.force)
        else:
            train_with_averages(args.task, args.width, args.seed, taus, args.out_dir, args.force)
    except RunFailed as error:
        sys.exit(f"critic_width: {error}")


if __name__ == "__main__":
    main()
