"""One writer per run directory: an exclusive OS lock held while a process trains into it.

The lock is a kernel ``flock`` (the ``filelock`` package), so it disappears with the process that
held it: a killed run leaves no stale lock behind and a later ``--resume`` takes it at once.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout

from polyak.errors import PolyakError

LOCK_FILE = ".polyak.lock"
OWNER_FILE = ".polyak.lock.owner"


class RunDirBusy(PolyakError):
    """Another process is writing the run directory."""


class RunLock:
    """``with RunLock(run_dir):`` holds the run directory's lock (creating the directory)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._lock = FileLock(str(run_dir / LOCK_FILE), timeout=0, thread_local=False)

    def acquire(self) -> RunLock:
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise PolyakError(f"cannot write run directory {self.run_dir}: {error.strerror or error}") from None
        try:
            self._lock.acquire()
        except Timeout:
            owner = _read_owner(self.run_dir)
            raise RunDirBusy(
                f"run directory {self.run_dir} is being written by another polyak process{owner}; "
                "wait for it to finish or stop it, or choose another --run-dir"
            ) from None
        except OSError as error:
            raise PolyakError(f"cannot lock run directory {self.run_dir}: {error.strerror or error}") from None
        with contextlib.suppress(OSError):  # the owner file only improves the message a second writer sees
            (self.run_dir / OWNER_FILE).write_text(f"{os.getpid()}\n")
        return self

    def release(self) -> None:
        if self._lock.is_locked:
            self._lock.release()

    @property
    def held(self) -> bool:
        return self._lock.is_locked

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.release()


def _read_owner(run_dir: Path) -> str:
    try:
        pid = int((run_dir / OWNER_FILE).read_text(encoding="ascii")[:20].strip())
    except (OSError, ValueError, UnicodeDecodeError):
        return ""
    return f" (pid {pid})"
