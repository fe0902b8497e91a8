"""The ``polyak`` command: ``train`` and ``test``.

Gin is parsed here and nowhere else. Every error a user can cause ends as one line on stderr
and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import gin

from polyak.errors import CheckpointError, ConfigError, PolyakError
from polyak.ginconf import build_configs_from_gin, packaged_config, parse_gin

DEFAULT_CONFIG = "pendulum.gin"
EXIT_USER_ERROR = 2


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USER_ERROR, f"polyak: error: {message} (see 'polyak --help')\n")


def _unique_dir(path: Path) -> Path:
    if not path.exists():
        return path
    index = 1
    while path.with_name(f"{path.name}_{index}").exists():
        index += 1
    return path.with_name(f"{path.name}_{index}")


def cmd_train(args: argparse.Namespace) -> int:
    from polyak.trainer import Trainer

    config_file = Path(args.config) if args.config else packaged_config(DEFAULT_CONFIG)
    bindings = list(args.gin_param)
    if args.seed is not None:
        if args.seed < 0:
            raise ConfigError(f"--seed must be >= 0, got {args.seed}")
        bindings.append(f"TrainerConfig.seed = {args.seed}")
    parse_gin(config_file, bindings)
    configs = build_configs_from_gin()
    if args.run_dir:
        run_dir = Path(args.run_dir)
        if (run_dir / "summary.json").exists() or (run_dir / "checkpoints").exists():
            raise ConfigError(f"run directory {run_dir} already holds a run; choose another --run-dir")
    else:
        name = configs.trainer.run_name or config_file.stem
        if args.seed is not None:
            name += f"_seed_{args.seed}"
        run_dir = _unique_dir(Path(configs.trainer.runs_root) / name)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        probe = run_dir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise ConfigError(f"cannot write run directory {run_dir}: {error.strerror}") from None
    trainer = Trainer(configs, run_dir, gin.operative_config_str())
    print(f"polyak: training {configs.trainer.env_id} into {run_dir}", file=sys.stderr)
    summary = trainer.run()
    status = (
        f"solved after {summary.episodes_to_solve} episodes" if summary.solved
        else f"best {configs.trainer.solve_window}-episode mean {summary.best_window_mean}"
    )
    final_eval = "" if summary.final_eval is None else f", final eval {summary.final_eval:.2f}"
    print(
        f"polyak: done: {summary.env_steps} env steps, {summary.episodes} episodes, {status}{final_eval}; "
        f"wrote {run_dir / 'summary.json'}"
    )
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    from polyak.playback import load_policy_from_run, run_policy

    if args.run_dir is None:
        raise CheckpointError("give a run directory to test (no pretrained agent is shipped for this task yet)")
    policy = load_policy_from_run(Path(args.run_dir), args.checkpoint, args.device)
    scores = run_policy(policy, episodes=args.episodes, seed=args.seed)
    mean = sum(scores) / len(scores)
    print(f"{policy.env_id}: mean score {mean:.2f} over {len(scores)} episodes (no exploration noise)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(prog="polyak", description="Train and run DDPG-family agents.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_ArgumentParser)

    train = commands.add_parser("train", help="train an agent (default: the default task and config)")
    train.add_argument("--config", help=f"gin config file (default: the packaged {DEFAULT_CONFIG})")
    train.add_argument("--seed", type=int, help="override every seed; suffixes the run name with _seed_N")
    train.add_argument("--gin-param", action="append", default=[], metavar="BINDING",
                       help="extra gin binding, e.g. 'TrainerConfig.max_env_steps=5000' (repeatable)")
    train.add_argument("--run-dir", help="where to write the run (default: runs/<config>[_seed_N])")
    train.set_defaults(handler=cmd_train)

    test = commands.add_parser("test", help="run a trained agent without exploration noise")
    test.add_argument("run_dir", nargs="?", help="a run directory written by 'polyak train'")
    test.add_argument("--checkpoint", help="checkpoint directory to load (default: the newest in the run)")
    test.add_argument("--episodes", type=int, default=None, help="episodes to run (default: one per env)")
    test.add_argument("--seed", type=int, default=0, help="seed of the test env")
    test.add_argument("--device", default="cpu", help="torch device for the policy (default: cpu)")
    test.set_defaults(handler=cmd_test)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except PolyakError as error:
        print(f"polyak: error: {error}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("polyak: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
