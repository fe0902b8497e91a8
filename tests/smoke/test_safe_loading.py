"""No loading path unpickles: a checkpoint carrying a pickle payload that would create a file is refused."""

import itertools
import pickle
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from polyak.checkpoint import load_checkpoint
from polyak.cli import main
from polyak.errors import CheckpointError
from polyak.playback import load_policy

TINY = ["--config", str(Path(__file__).resolve().parents[2] / "configs" / "pendulum.gin"),
        "--gin-param", "TrainerConfig.max_env_steps=400", "--gin-param", "TrainerConfig.start_steps=100",
        "--gin-param", "ReplayConfig.min_size=50", "--gin-param", "NetworkConfig.hidden_sizes=(16, 16)",
        "--gin-param", "TrainerConfig.progress_bar=False", "--gin-param", "TrainerConfig.eval_interval=None"]


class Exploit:
    """Unpickling this creates the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("safe") / "run"
    assert main(["train", *TINY, "--run-dir", str(run)]) == 0
    return run


def _poisoned_copies(clean_run, tmp_path, marker):
    payload = pickle.dumps(Exploit(marker))
    run = tmp_path / "run"
    shutil.copytree(clean_run, run)
    (run / "summary.json").unlink()
    checkpoint = sorted((run / "checkpoints").glob("step_*"))[-1]
    (checkpoint / "state.safetensors").write_bytes(payload)
    exported = tmp_path / "exported"
    assert main(["export", str(clean_run), "--out", str(exported)]) == 0
    (exported / "actor.safetensors").write_bytes(payload)
    npy_run = tmp_path / "npy_run"
    shutil.copytree(clean_run, npy_run)
    (npy_run / "summary.json").unlink()
    npy_checkpoint = sorted((npy_run / "checkpoints").glob("step_*"))[-1]
    np.save(npy_checkpoint / "evil.npy", np.array([Exploit(marker)], dtype=object), allow_pickle=True)
    meta = (npy_checkpoint / "state.json").read_text()
    # point the n-step assembler's first array at the pickled object array
    (npy_checkpoint / "state.json").write_text(re.sub(r'\{"__ndarray__": "state\.replay\.nstep\.[^"]*"\}',
                                                      '{"__npy__": "evil.npy"}', meta, count=1))
    assert "evil.npy" in (npy_checkpoint / "state.json").read_text()
    return run, checkpoint, exported, npy_run


def test_no_public_loading_path_runs_pickled_code(clean_run, tmp_path, capsys):
    marker = tmp_path / "PWNED"
    run, checkpoint, exported, npy_run = _poisoned_copies(clean_run, tmp_path, marker)
    with pytest.raises(CheckpointError):
        load_checkpoint(checkpoint)
    with pytest.raises(CheckpointError):
        load_checkpoint(sorted((npy_run / "checkpoints").glob("step_*"))[-1])
    for target in (run, exported):
        with pytest.raises(CheckpointError):
            load_policy(str(target))
    commands = [["test", str(run)], ["test", str(exported)], ["train", "--resume", str(run)],
                ["train", "--resume", str(npy_run)], ["record", "--run-dir", str(exported), "--out",
                                                      str(tmp_path / "x.gif")],
                ["export", str(run), "--out", str(tmp_path / "re-exported")]]
    for args in commands:
        capsys.readouterr()
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("polyak: error: ") and err.count("\n") == 1, err
        assert "damaged" in err, err
    assert not marker.exists()


# ---------------------------------------------------------------- gin is never parsed on load
EVIL = "import pathlib\npathlib.Path('{marker}').write_text('ran')\n"


def _plant(directory: Path, marker: Path, keep_json: bool = True) -> None:
    """What a shared run could carry: a config.gin that imports a module lying beside it."""
    (directory / "evilmod.py").write_text(EVIL.format(marker=marker))
    (directory / "config.gin").write_text("import evilmod\ninclude 'other.gin'\n"
                                          + (directory / "config.gin").read_text())
    if not keep_json:
        (directory / "config.json").unlink()


def _polyak_in(cwd: Path, *args: str):
    import os
    import subprocess
    import sys

    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", MUJOCO_GL="egl")
    return subprocess.run([sys.executable, "-m", "polyak.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("keep_json", [True, False], ids=["with-json", "gin-only"])
def test_malicious_config_gin_never_runs(clean_run, tmp_path, keep_json):
    import subprocess
    import sys

    marker = tmp_path / "MARKER"
    run = tmp_path / "run"
    shutil.copytree(clean_run, run)
    exported = tmp_path / "exported"
    assert main(["export", str(clean_run), "--out", str(exported)]) == 0
    _plant(run, marker, keep_json)
    _plant(exported, marker, keep_json)
    resumable = tmp_path / "resumable"
    shutil.copytree(run, resumable)
    (resumable / "summary.json").unlink()

    # From Python too, with the malicious dir as cwd (so `import evilmod` would find it): the public polyak.load,
    # then predict, and the loader under it. Without config.json they raise; nothing runs either way.
    loaders = ["import polyak, sys; p = polyak.load(sys.argv[1]); p.predict(p.observation_space.sample())",
               "from polyak.playback import load_policy; import sys; load_policy(sys.argv[1])"]
    for loader, target in itertools.product(loaders, (run, exported)):
        done = subprocess.run([sys.executable, "-c", loader, "."], cwd=target, capture_output=True, text=True)
        assert ("Traceback" in done.stderr) is (not keep_json) and not marker.exists(), done.stderr
        assert done.returncode == 0 or "polyak upgrade" in done.stderr, done.stderr
    results = [_polyak_in(run, "test", "."), _polyak_in(exported, "test", "."),
               _polyak_in(run, "export", ".", "--out", str(tmp_path / "again")),
               _polyak_in(exported, "record", "--run-dir", ".", "--out", str(tmp_path / "x.gif"), "--steps", "3"),
               _polyak_in(resumable, "train", "--resume", ".")]
    for result in results:
        assert not marker.exists(), result.args
        assert "Traceback" not in result.stderr, result.stderr
        if keep_json and "record" in result.args:  # Pendulum cannot render at a size: loading got that far
            assert result.returncode == 0 or "cannot create environment" in result.stderr, result.stderr
        elif keep_json:
            assert result.returncode == 0, result.stderr
        else:
            assert result.returncode == 2 and "polyak upgrade" in result.stderr, result.stderr
    assert not marker.exists()
