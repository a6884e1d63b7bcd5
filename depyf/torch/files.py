"""The dump directory: where this process writes, and the list of files it wrote.

Several processes may share ``dump_dir`` (``torch.distributed`` ranks, or independent runs): each
rank writes to ``dump_dir/rank_<r>``; outside distributed, the first process owns ``dump_dir``
(a lock file names it) and any other live process writes to ``dump_dir/pid_<p>``.

Only files that the ``index.json`` of an earlier depyf dump lists are ever removed. A directory
that holds files with depyf's names that no such index lists (a project's own ``index.md``) is
not written into: the dump goes to its ``depyf_dump/`` subdirectory instead. Writes go to a
temporary file that is renamed into place, so a file is either complete or absent.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Callable

from depyf.fileio import read_regular, write_atomic

LOCK_NAME = ".depyf-owner"
DIVERT_NAME = "depyf_dump"
SHARED_PAGE_MARK = "<!-- depyf: index of the processes' dumps -->"
# Files depyf writes at the top of a dump directory, and in its bytecode/ subdirectory.
_OURS = re.compile(
    r"^(full_code_for_.*\.py|__transformed_code_.*\.py|__compiled_fn_.*\.py|index\.(md|json))$"
)
_OURS_BYTECODE = re.compile(r"^__transformed_code_.*\.(original|dynamo|recompiled)\.(dis\.txt|marshal)$")
_PROCESS_DIR = re.compile(r"^(rank|pid)_(\d+)$")
_INDEX_LIMIT = 64 * 1024 * 1024


class DumpWriteError(OSError):
    """Writing a dump file failed (disk full, read-only, ...); the dump stops, the program does not."""


def atomic_write(path: str, data: bytes | str) -> None:
    """Write ``path`` atomically and never through a link (``depyf.fileio.write_atomic``).

    Raises ``DumpWriteError`` when the file system refuses (the temporary file is removed)."""
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        write_atomic(path, data)
    except DumpWriteError:
        raise
    except OSError as exc:
        raise DumpWriteError(exc.errno, f"{exc.strerror or exc} ({path})") from exc


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


def is_depyf_name(relative: str) -> bool:
    """Whether depyf could have written ``relative`` (a path inside one dump directory)."""
    parts = relative.split("/")
    if len(parts) == 1:
        return bool(_OURS.match(parts[0]))
    return len(parts) == 2 and parts[0] == "bytecode" and bool(_OURS_BYTECODE.match(parts[1]))


def earlier_dump_files(directory: str) -> list[str]:
    """Files the ``index.json`` of an earlier depyf dump in ``directory`` lists (depyf's names only).

    An index that is not depyf's, unreadable or too large lists nothing, so nothing is removed."""
    path = os.path.join(directory, "index.json")
    try:
        if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > _INDEX_LIMIT:
            return []
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError, RecursionError):
        return []
    if (
        not isinstance(data, dict)
        or data.get("format") != "depyf-dump"
        or not isinstance(data.get("files"), list)
    ):
        return []
    return [f for f in data["files"] if isinstance(f, str) and is_depyf_name(f)]


def _is_shared_page(path: str) -> bool:
    """A root ``index.md`` that only links the processes' dumps (depyf writes it with a mark)."""
    try:
        with open(path, encoding="utf-8") as f:
            return SHARED_PAGE_MARK in f.read(4096)
    except (OSError, ValueError):
        return False


def foreign_files(directory: str) -> list[str]:
    """Files with names depyf writes that no earlier depyf dump in ``directory`` lists."""
    listed = set(earlier_dump_files(directory))
    found = []
    with contextlib.suppress(OSError):
        for name in sorted(os.listdir(directory)):
            if _OURS.match(name) and name not in listed:
                if name == "index.md" and _is_shared_page(os.path.join(directory, name)):
                    continue
                found.append(name)
    with contextlib.suppress(OSError):
        for name in sorted(os.listdir(os.path.join(directory, "bytecode"))):
            if f"bytecode/{name}" not in listed and _OURS_BYTECODE.match(name):
                found.append(f"bytecode/{name}")
    return found


class DumpFiles:
    """Write files under this process's dump directory and remember each one.

    ``on_failure(exc)`` is called once, on the first write the file system refuses; later writes
    are skipped (the dump stops there, the program goes on).
    """

    def __init__(self, dump_dir: str, rank: int | None,
                 on_failure: Callable[[OSError], None] | None = None,
                 rank_source: Callable[[], int | None] | None = None):
        self.requested = os.path.abspath(dump_dir)
        self.started = time.time()
        self.failed: OSError | None = None
        self.on_failure = on_failure
        self.replaced: list[str] = []
        self.written: list[str] = []
        self._lock = threading.Lock()
        # Until the first file is written, a rank that appears (init_process_group inside the
        # block) moves the dump to rank_<r>/.
        self._rank_source = rank_source if rank is None else None
        self.owns_lock = False
        self.subdir: str | None = None
        self.rank = rank
        self.foreign: list[str] = []
        self.root = self.requested
        os.makedirs(self.root, exist_ok=True)
        try:
            if rank is not None:
                self.subdir = f"rank_{rank}"
            elif self._acquire_lock():
                self._divert_if_foreign()
            else:
                self.subdir = f"pid_{os.getpid()}"  # another live process owns the directory
            self.dir = os.path.join(self.root, self.subdir) if self.subdir else self.root
            os.makedirs(self.dir, exist_ok=True)
        except BaseException:
            self.release()
            raise

    def _divert_if_foreign(self) -> None:
        """As the owner: write to ``depyf_dump/`` instead when files here are not depyf's."""
        foreign = foreign_files(self.root)
        if not foreign:
            return
        self.release()
        self.foreign = foreign
        for k in range(100):
            candidate = os.path.join(self.requested, DIVERT_NAME if k == 0 else f"{DIVERT_NAME}_{k}")
            if os.path.exists(candidate) and not os.path.isdir(candidate):
                continue
            os.makedirs(candidate, exist_ok=True)
            self.root = candidate
            if not self._acquire_lock():
                self.subdir = f"pid_{os.getpid()}"
                return
            if not foreign_files(candidate):
                return
            self.release()
        raise FileExistsError(f"{self.requested}: no free {DIVERT_NAME} subdirectory for the dump")

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
            self.owns_lock = True
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(str(os.getpid()))
            except OSError:
                self.release()
                raise
            return True
        return False

    def release(self) -> None:
        if self.owns_lock:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.root, LOCK_NAME))
            self.owns_lock = False

    def rehome(self, rank: int) -> bool:
        """Move to ``rank_<rank>/`` once ``torch.distributed`` is initialised, if nothing is written yet."""
        with self._lock:
            if self.written or self.subdir == f"rank_{rank}":
                return False
            target = os.path.join(self.root, f"rank_{rank}")
            try:
                os.makedirs(target, exist_ok=True)
            except OSError:
                return False
            self.release()
            with contextlib.suppress(OSError):
                if self.dir != self.root:
                    os.rmdir(self.dir)  # the pid_<p> directory made for nothing
            self.subdir, self.rank, self.dir = f"rank_{rank}", rank, target
        self.remove_stale()
        return True

    def remove_stale(self) -> None:
        """Delete the files an earlier depyf dump here listed in its index.json (and nothing else).

        The owner of a shared directory also clears dumps of ``pid_<p>`` processes that have ended."""
        self.replaced += self._remove_listed(self.dir)
        if self.subdir is None:
            for name in self._process_dir_names():
                match = _PROCESS_DIR.match(name)
                if match and match.group(1) == "pid" and not _pid_alive(int(match.group(2))):
                    directory = os.path.join(self.root, name)
                    self.replaced += [f"{name}/{f}" for f in self._remove_listed(directory)]
                    with contextlib.suppress(OSError):
                        os.rmdir(directory)

    @staticmethod
    def _remove_listed(directory: str) -> list[str]:
        removed = []
        for relative in earlier_dump_files(directory):
            target = os.path.join(directory, relative)
            if os.path.isdir(target) and not os.path.islink(target):
                continue
            try:
                os.unlink(target)
            except FileNotFoundError:
                continue
            except OSError:
                continue
            removed.append(relative)
        with contextlib.suppress(OSError):
            os.rmdir(os.path.join(directory, "bytecode"))  # only when empty
        return removed

    def fail(self, exc: OSError) -> None:
        """Stop writing after the file system refused a write; tell ``on_failure`` once."""
        with self._lock:
            first = self.failed is None
            if first:
                self.failed = exc
        if first and self.on_failure is not None:
            self.on_failure(exc)

    def discard(self) -> None:
        """Remove every file this dump wrote (an incomplete dump is worse than none)."""
        with self._lock:
            written, self.written = self.written, []
        for relative in written:
            with contextlib.suppress(OSError):
                os.unlink(self.path(relative))
        with contextlib.suppress(OSError):
            os.rmdir(os.path.join(self.dir, "bytecode"))

    def path(self, relative: str) -> str:
        if self._rank_source is not None:
            self.settle()
        return os.path.join(self.dir, relative)

    def settle(self) -> None:
        """Move to ``rank_<r>/`` if a rank appeared and nothing is written yet; after a write, stay."""
        source = self._rank_source
        if source is None:
            return
        if self.written:
            self._rank_source = None
            return
        try:
            rank = source()
        except Exception:  # stay where we are
            rank = None
        if rank is not None:
            self._rank_source = None
            self.rehome(rank)

    def note_written(self, relative: str) -> None:
        with self._lock:
            if relative not in self.written:
                self.written.append(relative)

    def write(self, relative: str, text: str) -> str:
        return self.write_bytes(relative, text.encode("utf-8"))

    def remove(self, relative: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path(relative))
        with self._lock:
            if relative in self.written:
                self.written.remove(relative)

    def write_bytes(self, relative: str, data: bytes) -> str:
        """Write one file (atomically); after a refused write nothing more is written."""
        target = self.path(relative)
        if self.failed is not None:
            return target
        try:
            atomic_write(target, data)
        except DumpWriteError as exc:
            self.fail(exc)
            return target
        self.note_written(relative)
        return target

    def _process_dir_names(self) -> list[str]:
        try:
            names = os.listdir(self.root)
        except OSError:
            return []
        return sorted(n for n in names if _PROCESS_DIR.match(n) and os.path.isdir(os.path.join(self.root, n)))

    def process_dirs(self) -> list[str]:
        """``rank_*``/``pid_*`` directories of this run under the shared dump directory.

        A ``pid_<p>`` directory counts while its process lives or when its dump is newer than this
        one's start; older ones are left over from earlier runs."""
        out = []
        for name in self._process_dir_names():
            match = _PROCESS_DIR.match(name)
            if match and match.group(1) == "pid" and not _pid_alive(int(match.group(2))):
                try:
                    if os.path.getmtime(os.path.join(self.root, name, "index.json")) < self.started:
                        continue
                except OSError:
                    continue
            out.append(name)
        return out
