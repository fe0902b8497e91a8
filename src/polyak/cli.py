"""The ``polyak`` command: ``train``, ``test``, ``record``, ``plot``, ``export``, ``configs``, ``upgrade``, ``sweep``.

Gin is parsed here and nowhere else. Every error a user can cause ends as one line on stderr
and exit code 2. Ray (``polyak sweep``, ``polyak train --workers N``) is imported only inside the
commands that use it.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from polyak import __version__
from polyak.errors import ConfigError, PolyakError, not_a_directory
from polyak.ginconf import build_configs_from_gin, packaged_config, parse_gin, resolve_config
from polyak.planning import ALGORITHMS, DEFAULT_CONFIG, RECOMMENDED_CONFIG, check_writable
from polyak.run_dir import RunDir, unique_path
from polyak.seeding import check_seed

if TYPE_CHECKING:
    from polyak.config import Configs
    from polyak.trainer import Summary

EXIT_USER_ERROR = 2
EXIT_BROKEN_PIPE = 141  # as a Unix tool killed by SIGPIPE


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USER_ERROR, f"polyak: error: {message} (see 'polyak --help')\n")


def cmd_train(args: argparse.Namespace) -> int:
    from polyak.planning import open_trainer, plan_run
    from polyak.threads import set_threads
    from polyak.wandb_sink import require_wandb

    bindings = list(args.gin_param)
    if args.address and args.workers is None:
        raise ConfigError("--address needs --workers N (Ape-X on a Ray cluster)")
    if args.threads is not None:
        if args.workers is not None:
            raise ConfigError("--threads is for single-process training; an Ape-X learner (--workers) takes the cores "
                              "its workers leave (set OMP_NUM_THREADS=N to choose)")
        bindings.append(f"TrainerConfig.threads = {args.threads}")
    if args.steps is not None:
        bindings.append(f"TrainerConfig.max_env_steps = {args.steps}")
    if args.seed is not None:
        check_seed(args.seed, "--seed")
    plan = plan_run(args.config, bindings, run_dir=args.run_dir, seed=args.seed, resume=args.resume,
                    workers=args.workers, env=args.env, algo=args.algo)
    configs, run_dir = plan.configs, plan.run_dir
    require_wandb(configs.trainer.wandb_project)  # before the run directory is written
    if plan.apex is not None:
        from polyak.distributed.apex_learner import check_apex_configs, train_apex
        from polyak.distributed.ray_runtime import require_ray

        check_apex_configs(configs, plan.apex)
        require_ray()
        if args.address:
            from polyak.distributed.ray_runtime import check_reachable

            check_reachable(args.address)
        where = f"the Ray cluster at {args.address}" if args.address else "local Ray"
        workers = f"{plan.apex.num_workers} rollout worker{'s' if plan.apex.num_workers > 1 else ''}"
        plan.warn()
        print(f"polyak: training {configs.trainer.env_id} with Ape-X ({workers} on {where}) into {run_dir}", flush=True)
        summary = train_apex(configs, plan.apex, run_dir, plan.operative_config, args.address)
        return _report(summary, configs, run_dir, resumable=False)
    set_threads(configs.trainer.threads)
    trainer, announcement = open_trainer(plan)
    print(announcement, flush=True)
    return _report(trainer.run(), configs, run_dir, resumable=True)


def _report(summary: Summary, configs: Configs, run_dir: Path, resumable: bool) -> int:
    if summary.interrupted is not None:
        how = (f"Resume with: polyak train --resume {shlex.quote(str(run_dir))}" if resumable
               else "(Ape-X runs cannot be resumed)")
        print(f"polyak: stopped by {summary.interrupted} at {summary.env_steps} env steps; checkpoint saved. {how}")
        return 0
    window = configs.trainer.solve_window
    if summary.solved:
        status = f"solved after {summary.episodes_to_solve} episodes"
    elif summary.best_window_mean is None:
        status = f"fewer than {window} episodes, so no {window}-episode mean yet"
    else:
        status = f"best {window}-episode mean {summary.best_window_mean:.2f}"
    final_eval = "" if summary.final_eval is None else f", final eval {summary.final_eval:.2f}"
    episodes = f"{summary.episodes} episode{'' if summary.episodes == 1 else 's'}"
    print(
        f"polyak: done: {summary.env_steps} env steps, {episodes}, {status}{final_eval}; "
        f"wrote {RunDir(run_dir).summary}"
    )
    return 0


def _run_arg(args: argparse.Namespace, required: bool = False) -> str | None:
    """The run named positionally (``polyak test RUN``) or with the older ``--run-dir RUN``."""
    if any(given is not None and not given.strip() for given in (args.run, args.run_flag)):
        raise ConfigError(f"polyak {args.command} was given an empty run directory (an unset shell variable?); "
                          f"give a path{'' if required else ', or none for the pretrained agent'}")
    if args.run and args.run_flag and Path(args.run) != Path(args.run_flag):
        raise ConfigError(f"two runs given: {args.run} and --run-dir {args.run_flag}; give one")
    run = args.run or args.run_flag
    if required and run is None:
        raise ConfigError(f"polyak {args.command} needs a run directory: polyak {args.command} RUN")
    return run


def cmd_test(args: argparse.Namespace) -> int:
    import signal

    from polyak.evaluation import EvaluationStopped
    from polyak.playback import load_policy, run_policy
    from polyak.threads import set_threads
    from polyak.trainer import stop_signals

    if args.episodes is not None and args.episodes < 1:
        raise ConfigError(f"--episodes must be >= 1, got {args.episodes}")
    if args.max_episode_steps < 1:
        raise ConfigError(f"--max-episode-steps must be >= 1, got {args.max_episode_steps}")
    check_seed(args.seed, "--seed")
    run = _run_arg(args)
    set_threads(args.threads, announce=False)
    policy = load_policy(run, args.checkpoint, args.device)
    source = run or "the pretrained agent"
    if policy.origin is not None:
        source += f", {policy.origin}"
    stopped: list[str] = []
    try:
        with stop_signals(stopped.append):  # SIGINT and SIGTERM end the episodes at the next step
            scores = run_policy(policy, episodes=args.episodes, seed=args.seed,
                                max_episode_steps=args.max_episode_steps, should_stop=lambda: bool(stopped),
                                cap_setting="polyak test --max-episode-steps")
    except EvaluationStopped as error:
        print(f"polyak: test stopped by {stopped[0]} after {error.played} of {error.episodes} episodes; no score",
              file=sys.stderr)
        return 128 + int(signal.Signals[stopped[0]])
    print(f"{policy.env_id} ({source}): {score_line(scores)} (no exploration noise)")
    return 0


def score_line(scores: Sequence[float]) -> str:
    """``mean score M ± S over N episodes`` (the std over episodes, as SB3's evaluate_policy; none for one)."""
    mean = sum(scores) / len(scores)
    std = (sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5
    spread = f" ± {std:.2f}" if len(scores) > 1 else ""
    return f"mean score {mean:.2f}{spread} over {len(scores)} episode{'' if len(scores) == 1 else 's'}"


def file_arg(out: str, example: str) -> str:
    """``--out`` as given; one ending in a path separator names a directory, which a file option refuses (a Path
    would drop the separator and write ``dir.png`` beside it)."""
    if out.endswith(("/", os.sep)):
        raise ConfigError(f"--out {out} names a directory; give a file name such as {Path(out) / example}")
    return out


def cmd_record(args: argparse.Namespace) -> int:
    from polyak.playback import load_policy
    from polyak.record import default_video_path, record_episode
    from polyak.threads import set_threads

    if (args.steps is not None and args.steps < 1) or args.every < 1 or not 0 < args.fps < float("inf"):
        raise ConfigError("--steps and --every must be >= 1 and --fps > 0")
    if (args.width is not None and args.width < 1) or (args.height is not None and args.height < 1):
        given = " and ".join(f"--{name} {value}" for name, value in (("width", args.width), ("height", args.height))
                             if value is not None)
        raise ConfigError(f"--width and --height must be >= 1 pixel, got {given}")
    check_seed(args.seed, "--seed")
    set_threads(args.threads, announce=False)
    run = _run_arg(args)
    out = Path(file_arg(args.out, "video.mp4")) if args.out is not None else default_video_path(run)
    policy = load_policy(run, args.checkpoint, "cpu")
    frames = record_episode(policy, out, steps=args.steps, every=args.every, fps=args.fps,
                            seed=args.seed, width=args.width, height=args.height)
    print(f"wrote {frames} frames of {policy.env_id} to {out}")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from polyak.plot import default_plot_path, plot_runs

    run_dirs = [Path(d) for d in args.run_dirs]
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            raise ConfigError(f"run directory {run_dir} {not_a_directory(run_dir)}")
    threshold = args.threshold if args.threshold is not None else RunDir(run_dirs[0]).solve_score()
    out = plot_runs(run_dirs, Path(file_arg(args.out, "curves.png")) if args.out else default_plot_path(run_dirs),
                    threshold, args.title)
    print(f"wrote {out}")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from polyak.distributed.grid import parse_seeds
    from polyak.distributed.ray_runtime import check_reachable, require_ray
    from polyak.distributed.sweep import plan_sweep, run_sweep, write_report

    seeds = parse_seeds(args.seeds)
    if args.max_concurrent is not None and args.max_concurrent < 1:
        raise ConfigError(f"--max-concurrent must be >= 1, got {args.max_concurrent}")
    config_file = resolve_config(args.config) if args.config else packaged_config(DEFAULT_CONFIG)
    parse_gin(config_file, list(args.gin_param))
    configs = build_configs_from_gin()
    if args.sweep_dir:
        sweep_dir = Path(args.sweep_dir)
        if sweep_dir.exists() and any(sweep_dir.iterdir()):
            raise ConfigError(f"sweep directory {sweep_dir} is not empty; choose another --sweep-dir")
    else:
        sweep_dir = unique_path(Path(configs.trainer.runs_root) / f"{config_file.stem}_sweep")
    check_writable(sweep_dir)
    specs = plan_sweep(config_file, seeds, list(args.gin_param), list(args.grid), sweep_dir)
    require_ray()
    if args.address:
        check_reachable(args.address)
    where = f"the Ray cluster at {args.address}" if args.address else "local Ray"
    print(f"polyak: sweep of {len(specs)} runs ({len(specs) // len(seeds)} configs x {len(seeds)} seeds) "
          f"on {where} into {sweep_dir}", flush=True)
    results = run_sweep(specs, sweep_dir, args.address, args.max_concurrent)
    table, plot = write_report(results, sweep_dir)
    print(table)
    failed = [r for r in results if r.error is not None]
    for result in failed:
        print(f"polyak: run {result.spec.run_dir} failed: {result.error}", file=sys.stderr)
    plot_note = f" and {plot}" if plot else ""
    print(f"polyak: wrote {sweep_dir / 'summary.json'}, {sweep_dir / 'summary.txt'}{plot_note}")
    return 1 if failed else 0


def cmd_export(args: argparse.Namespace) -> int:
    from polyak.exporter import export_policy

    run = _run_arg(args, required=True)
    formats = ("safetensors", "onnx") if args.format == "onnx" else ("safetensors",)
    out = export_policy(Path(run), Path(args.out), args.checkpoint, formats, overwrite=args.overwrite)
    print(f"exported the actor of {run} to {out} (model card: {out / 'README.md'})")
    return 0


def config_summary(path: Path) -> str:
    """The first sentence of a config file's header comment, whole (it may span several comment lines)."""
    lines = path.read_text().splitlines()
    words: list[str] = []
    for line in lines[next((i for i, line in enumerate(lines) if line.strip()), 0):]:
        text = line.lstrip("#").strip()
        if not line.startswith("#") or not text or text.startswith("- "):  # the header ends, or a list begins
            break
        words.append(text)
    header = " ".join(words)
    depth = 0
    for index, char in enumerate(header):
        depth += {"(": 1, ")": -1}.get(char, 0)
        rest = header[index + 1:]
        if char == "." and depth <= 0 and (not rest or (rest[0] == " " and rest[1:2].isupper())):
            return header[:index + 1]
    return header.removesuffix(":") + ("." if header.endswith(":") else "")


def cmd_configs(args: argparse.Namespace) -> int:
    import shutil
    import textwrap

    from polyak.ginconf import shipped_configs

    shipped = shipped_configs()
    width = max(len(name) for name in shipped)
    columns = max(shutil.get_terminal_size((100, 24)).columns, width + 40)
    for name, path in shipped.items():
        lines = textwrap.wrap(config_summary(path) or "(no description)", columns - width - 2,
                              break_on_hyphens=False) or [""]
        print(f"{name:<{width}}  {lines[0]}")
        for line in lines[1:]:
            print(f"{'':<{width}}  {line}")
    print("\npolyak train --config NAME (a name without its suite/ folder works when it is unique)")
    return 0


def cmd_upgrade(args: argparse.Namespace) -> int:
    from polyak.upgrade import upgrade

    written = upgrade(Path(_run_arg(args, required=True)), trust=args.trust)
    print(f"polyak: wrote {written}; the run now loads without parsing its config.gin")
    return 0


def _whole_number(what: str) -> Callable[[str], int]:
    """An argparse type for a whole number >= 1 of ``what`` (anything else is one usage line)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"must be a whole number >= 1 ({what}), got {text!r}")
        return value
    return parse


def _add_threads(parser: argparse.ArgumentParser, default: int | None, what: str) -> None:
    parser.add_argument("--threads", type=_whole_number("torch threads"), default=default, metavar="N",
                        help=f"torch threads ({what})")


def _add_run(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("run", nargs="?", metavar="RUN", help=what)
    parser.add_argument("--run-dir", dest="run_flag", metavar="RUN", help="the same as RUN (older spelling)")
    parser.add_argument("--checkpoint", help="'best' (default; the newest when the run never evaluated), 'newest', "
                        "or a checkpoint directory")


def build_parser() -> argparse.ArgumentParser:
    from polyak.config import TrainerConfig

    parser = _ArgumentParser(prog="polyak", description="Train and run DDPG-family agents.")
    parser.add_argument("--version", action="version", version=f"polyak {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_ArgumentParser)

    train = commands.add_parser("train", help="train an agent (polyak train --env ID: the recommended config for "
                                "that env)")
    train.add_argument("--env", metavar="ID", help="Gymnasium env id, or module:EnvId for an env your module registers "
                       "(found in the current directory); sets TrainerConfig.env_id; without --config or --algo it "
                       f"trains with the recommended config for one env ({RECOMMENDED_CONFIG})")
    train.add_argument("--algo", metavar="NAME", help=f"algorithm with its published settings: {', '.join(ALGORITHMS)} "
                       "(the config configs/suite/NAME.gin)")
    train.add_argument("--config", help=f"gin config file or a shipped config's name, e.g. pendulum (polyak configs "
                       f"lists them; default: {RECOMMENDED_CONFIG} with --env, else {DEFAULT_CONFIG})")
    train.add_argument("--steps", type=_whole_number("env steps"), metavar="N", help="env steps to train, in all "
                       "(sets TrainerConfig.max_env_steps; with --resume, the new total)")
    train.add_argument("--seed", type=int, help="override every seed; suffixes the run name with _seed_N")
    train.add_argument("--gin-param", action="append", default=[], metavar="BINDING",
                       help="extra gin binding, e.g. 'TrainerConfig.max_env_steps=5000' (repeatable)")
    train.add_argument("--run-dir", help="where to write the run (default: runs/<env>_<config>[_seed_N])")
    train.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its newest checkpoint: a stopped one, "
                       "or a finished one given a larger --steps N")
    train.add_argument("--workers", type=int, metavar="N",
                       help="Ape-X DDPG with N rollout workers on Ray (needs polyak[distributed]); "
                            "settings: ApexConfig in the gin config")
    train.add_argument("--address", help="with --workers: Ray cluster address (default: a local Ray on this machine)")
    _add_threads(train, None, f"default: TrainerConfig.threads = {TrainerConfig.threads}, measured fastest when other "
                 "work shares the CPU; wide networks on an idle machine gain from more, see docs/guide.md")
    train.set_defaults(handler=cmd_train)

    test = commands.add_parser("test", help="run a trained agent without exploration noise")
    _add_run(test, "run directory, checkpoint or exported policy (default: the pretrained Reacher agent)")
    test.add_argument("--episodes", type=int, default=None, help="episodes to run (default: one per env)")
    test.add_argument("--seed", type=int, default=0, help="seed of the test env")
    test.add_argument("--device", default="cpu", help="torch device for the policy (default: cpu)")
    test.add_argument("--max-episode-steps", type=int, default=TrainerConfig.eval_max_episode_steps, metavar="N",
                      help="cut episodes at N steps on an env without a time limit of its own (default: "
                           f"{TrainerConfig.eval_max_episode_steps})")
    _add_threads(test, TrainerConfig.threads, f"default: {TrainerConfig.threads}")
    test.set_defaults(handler=cmd_test)

    record = commands.add_parser("record", help="render an episode of a trained agent to .gif or .mp4")
    _add_run(record, "run directory, checkpoint or exported policy (default: the pretrained Reacher agent)")
    record.add_argument("--out", help="output file, .gif or .mp4 (default: video.mp4 in RUN when it is a run "
                        "directory, else in the current directory)")
    record.add_argument("--steps", type=int, help="env steps to record (default: one episode, at most "
                        f"{TrainerConfig.eval_max_episode_steps} steps on an env without a time limit)")
    record.add_argument("--every", type=int, default=1, help="keep every n-th frame (default: 1)")
    record.add_argument("--fps", type=float, default=25.0, help="frames per second of the output")
    record.add_argument("--width", type=int, help="frame width in pixels, for envs that take a size (MuJoCo's; "
                        "default: 480)")
    record.add_argument("--height", type=int, help="frame height in pixels (default: 360)")
    record.add_argument("--seed", type=int, default=0)
    _add_threads(record, TrainerConfig.threads, f"default: {TrainerConfig.threads}")
    record.set_defaults(handler=cmd_record)

    plot = commands.add_parser("plot", help="plot learning curves and evaluations of runs; seeds of one config as "
                                            "mean ± std")
    plot.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    plot.add_argument("--out", help="PNG file to write (default: curves.png in the run directory for one run, "
                      "in the current directory for several)")
    plot.add_argument("--threshold", type=float, help="solve line (default: the runs' solve_score)")
    plot.add_argument("--title")
    plot.set_defaults(handler=cmd_plot)

    export = commands.add_parser("export", help="save a run's actor alone (safetensors + config) for sharing")
    _add_run(export, "run directory to export")
    export.add_argument("--out", required=True, help="directory to write (a new or empty one, not inside the run)")
    export.add_argument("--overwrite", action="store_true", help="replace an earlier export in --out")
    export.add_argument("--format", choices=("safetensors", "onnx"), default="safetensors",
                        help="onnx: also write policy.onnx (needs polyak[onnx])")
    export.set_defaults(handler=cmd_export)

    upgrade = commands.add_parser("upgrade", help="give a run or exported agent of an older polyak its config.json "
                                  "(parses its config.gin once: only for runs you trust)")
    upgrade.add_argument("run", nargs="?", metavar="RUN", help="run directory or exported agent")
    upgrade.add_argument("--run-dir", dest="run_flag", metavar="RUN", help=argparse.SUPPRESS)
    upgrade.add_argument("--trust", action="store_true", help="convert without asking")
    upgrade.set_defaults(handler=cmd_upgrade)

    configs = commands.add_parser("configs", help="list the shipped configs (names for --config)")
    configs.set_defaults(handler=cmd_configs)

    sweep = commands.add_parser("sweep", help="run seeds x a grid of bindings in parallel on Ray Tune "
                                "(needs polyak[distributed])")
    sweep.add_argument("--config", help=f"gin config file or shipped config name (default: {DEFAULT_CONFIG})")
    sweep.add_argument("--seeds", default="0-4", help="seeds: a range 0-4, a list 0,2,5 or both (default: 0-4)")
    sweep.add_argument("--gin-param", action="append", default=[], metavar="BINDING",
                       help="extra gin binding for every run (repeatable)")
    sweep.add_argument("--grid", action="append", default=[], metavar="'BINDING=[A,B]'",
                       help="values to sweep for one binding, e.g. 'AgentConfig.tau=[0.005,0.05]' (repeatable: "
                            "the product is run)")
    sweep.add_argument("--address", help="Ray cluster address (default: start a local Ray on this machine)")
    sweep.add_argument("--sweep-dir", help="directory for the runs and the summary (default: runs/<config>_sweep)")
    sweep.add_argument("--max-concurrent", type=int, help="at most this many runs at once (default: one per CPU)")
    sweep.set_defaults(handler=cmd_sweep)
    return parser


def is_a_dependency(module: str | None) -> bool:
    """Whether ``module`` belongs to one of the packages polyak requires (not to an extra, not to a user's env)."""
    from importlib import metadata

    if module is None:
        return False
    top = module.split(".")[0]
    try:
        requirements = metadata.requires("polyak") or []
    except metadata.PackageNotFoundError:
        return False
    required = {re.split(r"[\s<>=!~;\[(]", r, maxsplit=1)[0].lower().replace("-", "_")
                for r in requirements if "extra ==" not in r}
    owners = {d.lower().replace("-", "_") for d in metadata.packages_distributions().get(top, [])}
    return top.lower() in required or bool(owners & required)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except PolyakError as error:
        print(f"polyak: error: {error}", file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:  # the reader of our output went away (`polyak configs | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at interpreter exit
        return EXIT_BROKEN_PIPE
    except OSError as error:  # disk full, file too large, read-only, permission: a file the command needed failed
        where = f" {error.filename}:" if error.filename else ""
        hint = ("; complete checkpoints are never overwritten, so a run continues from its newest one with "
                "polyak train --resume") if args.command == "train" else ""
        print(f"polyak: error: file system error:{where} {error.strerror or error}{hint}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("polyak: interrupted", file=sys.stderr)
        return 130
    except ModuleNotFoundError as error:  # a dependency missing from a broken install (extras have their own line)
        if not is_a_dependency(error.name):
            raise
        print(f"polyak: error: a package polyak needs cannot be imported ({error}); reinstall polyak with its "
              "dependencies", file=sys.stderr)
        return EXIT_USER_ERROR
    except Exception as error:
        from polyak.envs.gl_backend import backend_problem

        if (problem := backend_problem(error)) is None:
            raise
        print(f"polyak: error: {problem}", file=sys.stderr)
        return EXIT_USER_ERROR


if __name__ == "__main__":
    sys.exit(main())
