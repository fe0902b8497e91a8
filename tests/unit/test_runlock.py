"""One writer per run dir: a second lock fails at once, and the lock dies with its process."""

import subprocess
import sys

import pytest

from polyak.runlock import RunDirBusy, RunLock


def test_second_writer_is_refused_and_the_first_keeps_the_lock(tmp_path):
    with RunLock(tmp_path / "run") as first:
        with pytest.raises(RunDirBusy, match="being written by another polyak process"):
            RunLock(tmp_path / "run").acquire()
        assert first.held
    RunLock(tmp_path / "run").acquire().release()


def test_lock_of_a_killed_process_is_not_stale(tmp_path):
    code = (f"from pathlib import Path; from polyak.runlock import RunLock; import os, signal; "
            f"lock = RunLock(Path({str(tmp_path / 'run')!r})).acquire(); os.kill(os.getpid(), signal.SIGKILL)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == -9
    assert (tmp_path / "run" / ".polyak.lock").exists()
    RunLock(tmp_path / "run").acquire().release()


def test_lock_held_by_another_process_names_its_pid(tmp_path):
    code = (f"from pathlib import Path; from polyak.runlock import RunLock; import sys, time; "
            f"lock = RunLock(Path({str(tmp_path / 'run')!r})).acquire(); print('locked', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunDirBusy, match=f"pid {holder.pid}"):
            RunLock(tmp_path / "run").acquire()
    finally:
        holder.kill()
        holder.wait()
    RunLock(tmp_path / "run").acquire().release()
