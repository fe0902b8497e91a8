"""Every user error: one clear line on stderr, exit code 2, no traceback.

Most cases call ``polyak.cli.main`` in-process (fast); a few go through a subprocess like a user's shell.
"""

import json
import shutil

import pytest

from polyak.cli import main
from tests.smoke.cli_helpers import PENDULUM, polyak

TINY = ["--config", PENDULUM, "--gin-param", "TrainerConfig.max_env_steps=400",
        "--gin-param", "TrainerConfig.start_steps=100", "--gin-param", "ReplayConfig.min_size=50",
        "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)", "--gin-param", "TrainerConfig.progress_bar=False",
        "--gin-param", "TrainerConfig.eval_interval=None"]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("runs") / "finished"
    assert main(["train", *TINY, "--run-dir", str(run)]) == 0
    return run


@pytest.fixture
def damaged_run(finished_run, tmp_path):
    """A copy of a finished run whose summary is gone (so --resume accepts it) for damaging."""
    run = tmp_path / "damaged"
    shutil.copytree(finished_run, run)
    (run / "summary.json").unlink()
    return run


def _checkpoint(run):
    return sorted((run / "checkpoints").glob("step_*"))[-1]


def _exported(finished_run, tmp_path):
    out = tmp_path / "exported"
    assert main(["export", str(finished_run), "--out", str(out)]) == 0
    return out


def _no_config(tmp_path):
    (tmp_path / "run").mkdir()
    return str(tmp_path / "run")


def _no_checkpoint(tmp_path, damaged_run):
    """A run directory with a valid config.json and nothing else."""
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(damaged_run / "config.json", run / "config.json")
    return str(run)


def _gin_file(tmp_path, text):
    path = tmp_path / "bad.gin"
    path.write_text(text)
    return str(path)


def _damage(run, name, content):
    target = _checkpoint(run) / name
    if isinstance(content, bytes):
        target.write_bytes(content)
    elif content is None:
        target.unlink()
    else:
        target.write_text(content)
    return str(run)


def _truncate(run):
    target = _checkpoint(run) / "state.safetensors"
    target.write_bytes(target.read_bytes()[: target.stat().st_size // 2])
    return str(run)


def _other_version(run):
    meta = _checkpoint(run) / "state.json"
    document = json.loads(meta.read_text())
    document["format_version"] = 0
    meta.write_text(json.dumps(document))
    return str(run)


def _edit_config(run, section, field, value):
    """Change one field of the run's config.json (the file resume and test read)."""
    path = run / "config.json"
    config = json.loads(path.read_text())
    config[section][field] = value
    path.write_text(json.dumps(config))
    return str(run)


def _other_architecture(run):
    assert json.loads((run / "config.json").read_text())["actor"]["hidden_sizes"] == [16, 16]
    return _edit_config(run, "actor", "hidden_sizes", [32, 16])


def _other_env(run):
    return _edit_config(run, "trainer", "env_id", "MountainCarContinuous-v0")


def _binding(binding):
    return lambda t, r: ["train", *TINY, "--gin-param", binding]


# (name, argv builder (tmp_path, damaged_run) -> args, expected message part)
CASES = [
    # command line
    ("unknown subcommand", lambda t, r: ["fly"], "invalid choice: 'fly'"),
    ("no subcommand", lambda t, r: [], "the following arguments are required"),
    ("seed not a number", lambda t, r: ["train", "--seed", "abc"], "invalid int value: 'abc'"),
    ("negative seed", lambda t, r: ["train", *TINY, "--seed", "-3"], "--seed must be a whole number from 0"),
    ("seed too large", lambda t, r: ["train", *TINY, "--seed", str(2**64)], "--seed must be a whole number from 0"),
    ("test: negative seed", lambda t, r: ["test", str(r), "--seed", "-1"], "--seed must be a whole number from 0"),
    ("record: negative seed", lambda t, r: ["record", str(r), "--out", str(t / "a.gif"), "--seed", "-1"],
     "--seed must be a whole number from 0"),
    ("record: zero width", lambda t, r: ["record", str(r), "--out", str(t / "a.gif"), "--width", "0"],
     "--width and --height must be >= 1 pixel, got --width 0"),
    ("unknown option", lambda t, r: ["train", "--lr", "3"], "unrecognized arguments: --lr 3"),
    ("test: zero episodes", lambda t, r: ["test", str(r), "--episodes", "0"], "--episodes must be >= 1"),
    ("record: bad format", lambda t, r: ["record", "--run-dir", str(r), "--out", str(t / "a.avi")],
     "must end in .gif or .mp4"),
    ("record: --out without a suffix", lambda t, r: ["record", str(r), "--out", str(t / "video")],
     "must end in .gif or .mp4"),
    ("record: zero steps", lambda t, r: ["record", "--out", str(t / "a.gif"), "--steps", "0"], "--steps"),
    ("plot: missing run", lambda t, r: ["plot", str(t / "nope"), "--out", str(t / "p.png")], "does not exist"),
    ("plot: unknown format", lambda t, r: ["plot", str(r), "--out", str(t / "p.txt")],
     "--out must end in one of .avif, .eps"),
    ("plot: out is a directory", lambda t, r: ["plot", str(r), "--out", str(t)], "is a directory; give a file name"),
    ("resume: a file", lambda t, r: ["train", "--resume", str(r / "config.json")], "is a file, not a directory"),
    ("resume: budget spent", lambda t, r: ["train", "--resume", str(r), "--gin-param",
                                           "TrainerConfig.max_env_steps=100"],
     "is already at 400 env steps, past TrainerConfig.max_env_steps = 100"),
    ("resume with --seed", lambda t, r: ["train", "--resume", str(r), "--seed", "1"], "do not combine --resume"),
    ("resume: missing dir", lambda t, r: ["train", "--resume", str(t / "nope")], "does not exist"),
    ("resume: not a run", lambda t, r: ["train", "--resume", _no_config(t)], "no config.json"),
    ("resume: no checkpoint", lambda t, r: ["train", "--resume", _no_checkpoint(t, r)], "no complete checkpoint"),
    ("run dir already used", lambda t, r: ["train", *TINY, "--run-dir", str(r)], "already holds a run"),
    ("run dir under a file", lambda t, r: ["train", *TINY, "--run-dir", _gin_file(t, "") + "/run"],
     "cannot write run directory"),
    # gin files and bindings
    ("missing config file", lambda t, r: ["train", "--config", str(t / "nope.gin")], "nope.gin does not exist"),
    ("config is a directory", lambda t, r: ["train", "--config", str(t)], "is a directory; give a .gin file"),
    ("garbage config file", lambda t, r: ["train", "--config", _gin_file(t, "this is not gin\n")],
     "invalid gin config"),
    ("unknown parameter", _binding("TrainerConfig.learning_rate = 3"),
     "doesn't have a parameter named 'learning_rate'"),
    ("unknown configurable", _binding("Optimizer.lr = 3"), "No configurable matching 'Optimizer'"),
    ("syntax error", _binding("TrainerConfig.seed = (("), "invalid gin config"),
    ("string for int", _binding("TrainerConfig.num_envs = 'four'"), "TrainerConfig.num_envs must be int"),
    ("float for int", _binding("AgentConfig.batch_size = 64.5"), "AgentConfig.batch_size must be int"),
    ("int for bool", _binding("TrainerConfig.progress_bar = 1"), "TrainerConfig.progress_bar must be bool"),
    ("bad tuple item", _binding("actor/NetworkConfig.hidden_sizes = (64, 'x')"), "must be a tuple of int"),
    ("zero hidden size", _binding("NetworkConfig.hidden_sizes = (64, 0)"), "hidden_sizes must be positive"),
    ("negative hidden size", _binding("critic/NetworkConfig.hidden_sizes = (-5,)"), "must be positive sizes"),
    ("no hidden layers", _binding("NetworkConfig.hidden_sizes = ()"), "must be a non-empty tuple"),
    ("tau zero", _binding("AgentConfig.tau = 0.0"), "AgentConfig.tau must be in (0, 1]"),
    ("tau above one", _binding("AgentConfig.tau = 1.5"), "AgentConfig.tau must be in (0, 1]"),
    ("gamma negative", _binding("AgentConfig.gamma = -0.1"), "AgentConfig.gamma must be in [0, 1]"),
    ("gamma above one", _binding("AgentConfig.gamma = 1.01"), "AgentConfig.gamma must be in [0, 1]"),
    ("batch above capacity", lambda t, r: ["train", *TINY, "--gin-param", "ReplayConfig.capacity = 100",
                                           "--gin-param", "AgentConfig.batch_size = 256"],
     "batch_size (256) is larger than ReplayConfig.capacity (100)"),
    ("min size above capacity", _binding("ReplayConfig.capacity = 10"), "ReplayConfig.min_size must be in"),
    ("zero envs", _binding("TrainerConfig.num_envs = 0"), "TrainerConfig.num_envs must be >= 1"),
    ("negative lr", _binding("actor/NetworkConfig.lr = -1e-3"), "NetworkConfig.lr must be > 0"),
    ("infinite lr", _binding("critic/NetworkConfig.lr = 1e400"), "NetworkConfig.lr must be a finite number, got inf"),
    ("unknown activation", _binding("NetworkConfig.activation = 'gelu'"), "activation must be one of"),
    ("unknown noise", _binding("NoiseConfig.kind = 'pink'"), "NoiseConfig.kind must be one of"),
    ("unknown schedule", _binding("NoiseConfig.epsilon_schedule = 'cosine'"), "epsilon_schedule must be one of"),
    ("zero steps", _binding("TrainerConfig.max_env_steps = 0"), "max_env_steps must be >= 1"),
    ("zero learn_every", _binding("TrainerConfig.learn_every = 0"), "learn_every must be >= 1"),
    ("zero window", _binding("TrainerConfig.solve_window = 0"), "solve_window must be >= 1"),
    ("negative weight decay", _binding("critic/NetworkConfig.weight_decay = -1.0"), "weight_decay must be >= 0"),
    ("zero clip norm", _binding("critic/NetworkConfig.grad_clip_norm = 0.0"), "grad_clip_norm must be > 0"),
    ("eval stop without eval", _binding("TrainerConfig.eval_stop_score = -200.0"), "None unless eval_interval"),
    # environments
    ("unknown env id", _binding("TrainerConfig.env_id = 'NoSuchEnv-v9'"), "unknown environment id 'NoSuchEnv-v9'"),
    ("discrete actions", _binding("TrainerConfig.env_id = 'CartPole-v1'"), "Discrete action space"),
    ("malformed env id", _binding("TrainerConfig.env_id = 'not an id!'"), "unknown environment id"),
    ("empty env id", _binding("TrainerConfig.env_id = ' '"), "env_id must be a non-empty Gymnasium id"),
    # checkpoints and run directories
    ("test: missing run", lambda t, r: ["test", str(t / "missing")], "does not exist"),
    ("test: not a run", lambda t, r: ["test", _no_config(t)], "no config.json"),
    ("test: no checkpoint", lambda t, r: ["test", _no_checkpoint(t, r)], "has no complete checkpoint"),
    ("test: missing checkpoint path", lambda t, r: ["test", str(r), "--checkpoint", str(t / "ckpt")],
     "does not exist"),
    ("test: a file", lambda t, r: ["test", str(r / "config.json")], "is a file, not a directory"),
    ("test: checkpoint not a checkpoint", lambda t, r: ["test", str(r), "--checkpoint", str(r / "checkpoints")],
     "is not a checkpoint"),
    ("test: truncated tensors", lambda t, r: ["test", _truncate(r)], "is damaged"),
    ("test: corrupted tensors", lambda t, r: ["test", _damage(r, "state.safetensors", b"\x00" * 64)], "is damaged"),
    ("test: corrupted json", lambda t, r: ["test", _damage(r, "state.json", "{oops")],
     "state.json is damaged: not valid JSON"),
    ("test: missing tensors", lambda t, r: ["test", _damage(r, "state.safetensors", None)],
     "has no complete checkpoint"),
    ("test: another version", lambda t, r: ["test", _other_version(r)], "format version 0"),
    ("test: other architecture", lambda t, r: ["test", _other_architecture(r)],
     "does not match the actor config: backbone.0.linear.bias has shape (16,) in the checkpoint but (32,)"),
    ("resume: truncated tensors", lambda t, r: ["train", "--resume", _truncate(r)], "is damaged"),
    ("resume: other architecture", lambda t, r: ["train", "--resume", _other_architecture(r)],
     "does not match the actor config: backbone.0.linear.bias has shape (16,) in the checkpoint"),
    ("resume: other env", lambda t, r: ["train", "--resume", _other_env(r)], "was written for env_id='Pendulum-v1'"),
    ("export: damaged actor", lambda t, r: ["test", _damage_exported(t, r)], "is damaged"),
    ("export: into a user's directory", lambda t, r: ["export", str(r), "--out", _notes_dir(t)],
     "is not empty and is not an earlier export"),
    ("export: over an earlier export", lambda t, r: ["export", str(r), "--out", str(_exported(r, t))],
     "holds an earlier export; add --overwrite"),
]


def _notes_dir(tmp_path):
    directory = tmp_path / "project"
    directory.mkdir()
    (directory / "README.md").write_text("my notes\n")
    return str(directory)


def _damage_exported(tmp_path, run):
    out = tmp_path / "exported"
    assert main(["export", str(run), "--out", str(out)]) == 0
    (out / "actor.safetensors").write_bytes(b"not safetensors at all")
    return str(out)


def _run_main(args, capsys):
    try:
        code = main(args)
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.err


@pytest.mark.parametrize(("name", "build", "message"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_one_clear_line(tmp_path, damaged_run, capsys, name, build, message):
    args = build(tmp_path, damaged_run)
    capsys.readouterr()
    code, err = _run_main(args, capsys)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, (name, err)
    assert len(lines) == 1, err
    assert lines[0].startswith("polyak: error: "), lines[0]
    assert message in lines[0], lines[0]


def test_export_keeps_a_users_files_and_overwrite_replaces_only_an_export(finished_run, tmp_path, capsys):
    project = _notes_dir(tmp_path)
    assert main(["export", str(finished_run), "--out", project, "--overwrite"]) == 2
    assert [p.name for p in (tmp_path / "project").iterdir()] == ["README.md"]
    assert (tmp_path / "project" / "README.md").read_text() == "my notes\n"
    exported = _exported(finished_run, tmp_path)
    (exported / "policy.onnx").write_bytes(b"an older export's ONNX file")
    assert main(["export", str(finished_run), "--out", str(exported), "--overwrite"]) == 0
    assert not (exported / "policy.onnx").exists()  # it no longer matched the re-exported actor
    assert main(["test", str(exported)]) == 0


def test_a_file_system_error_outside_training_does_not_suggest_resuming(finished_run, tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    assert main(["export", str(finished_run), "--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("polyak: error: file system error:") and "--resume" not in err, err


def test_there_are_at_least_40_distinct_cases():
    assert len({c[0] for c in CASES}) == len(CASES) >= 40


@pytest.mark.parametrize(("args", "message"), [
    (["train", "--gin-param", "AgentConfig.tau=2.0"], "AgentConfig.tau must be in (0, 1]"),
    (["train", "--gin-param", "TrainerConfig.env_id='CartPole-v1'"], "Discrete action space"),
    (["test", "/nonexistent/run"], "does not exist"),
])
def test_through_a_real_shell_there_is_no_traceback(args, message):
    result = polyak(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1
    assert message in result.stderr


def test_a_failed_start_leaves_no_run_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--gin-param", "TrainerConfig.env_id='NoSuchEnv-v9'"]) == 2
    assert "unknown environment id" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()
