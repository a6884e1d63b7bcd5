"""The dump directory: where this process writes, and the list of files it wrote.

Several processes may share ``dump_dir`` (``torch.distributed`` ranks, or independent runs): each
rank writes to ``dump_dir/rank_<r>``; outside distributed, the first process owns ``dump_dir``
(a lock file names it) and any other live process writes to ``dump_dir/pid_<p>``.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading

from depyf.fileio import read_regular, write_atomic

LOCK_NAME = ".depyf-owner"
# Files depyf writes at the top of a dump directory; stale ones are removed when a dump starts.
_OURS = re.compile(r"^(full_code_for_.*\.py|__transformed_code_.*\.py|__compiled_fn_.*\.py|index\.(md|json))$")


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class DumpFiles:
    """Write files under this process's dump directory and remember each one."""

    def __init__(self, dump_dir: str, rank: int | None):
        self.root = os.path.abspath(dump_dir)
        os.makedirs(self.root, exist_ok=True)
        self.owns_lock = False
        if rank is not None:
            self.subdir: str | None = f"rank_{rank}"
        elif self._acquire_lock():
            self.subdir = None
        else:
            self.subdir = f"pid_{os.getpid()}"
        self.dir = os.path.join(self.root, self.subdir) if self.subdir else self.root
        os.makedirs(self.dir, exist_ok=True)
        self.written: list[str] = []
        self._lock = threading.Lock()

    def _acquire_lock(self) -> bool:
        lock = os.path.join(self.root, LOCK_NAME)
        for _ in range(2):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                try:
                    owner = int(read_regular(lock, 64)[0].strip() or 0)  # a planted FIFO must not block
                except (OSError, ValueError):
                    owner = 0
                if owner == os.getpid():
                    return True
                if _pid_alive(owner):
                    return False
                with contextlib.suppress(OSError):
                    os.unlink(lock)
                continue
            with os.fdopen(fd, "w") as f:
                f.write(str(os.getpid()))
            self.owns_lock = True
            return True
        return False

    def release(self) -> None:
        if self.owns_lock:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.root, LOCK_NAME))
            self.owns_lock = False

    def remove_stale(self) -> None:
        """Delete files an earlier dump left in this directory (only names depyf writes)."""
        for name in os.listdir(self.dir):
            if _OURS.match(name):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.dir, name))
        bytecode_dir = os.path.join(self.dir, "bytecode")
        if os.path.isdir(bytecode_dir):
            for name in os.listdir(bytecode_dir):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(bytecode_dir, name))

    def path(self, relative: str) -> str:
        return os.path.join(self.dir, relative)

    def note_written(self, relative: str) -> None:
        with self._lock:
            if relative not in self.written:
                self.written.append(relative)

    def write(self, relative: str, text: str) -> str:
        target = self.path(relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        write_atomic(target, text)  # never through a link planted in the dump directory
        self.note_written(relative)
        return target

    def remove(self, relative: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path(relative))
        with self._lock:
            if relative in self.written:
                self.written.remove(relative)

    def write_bytes(self, relative: str, data: bytes) -> str:
        target = self.path(relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        write_atomic(target, data)
        self.note_written(relative)
        return target

    def process_dirs(self) -> list[str]:
        """``rank_*``/``pid_*`` directories under the shared dump directory."""
        try:
            names = os.listdir(self.root)
        except OSError:
            return []
        return sorted(n for n in names if re.match(r"^(rank|pid)_\d+$", n)
                      and os.path.isdir(os.path.join(self.root, n)))
