"""Reading and writing files a user (or an attacker) may have planted in a dump directory.

Two rules keep depyf safe on such a directory: a read only ever reads a regular file and never
more than a cap (a FIFO would block forever, a huge file would fill memory), and a write never
follows a symbolic link (it writes a new file next to the target and renames it over, so a link
planted at the target's name, or at a predictable temporary name, is replaced, not written through).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat


class NotRegularFile(OSError):
    """The path exists but is a FIFO, a device, a directory or a socket: depyf does not read it."""


def read_regular(path: str | os.PathLike, limit: int) -> tuple[bytes, int]:
    """At most ``limit`` bytes of the regular file ``path``, and the file's full size.

    The file is opened non-blocking (opening a FIFO with no writer would otherwise wait forever)
    and checked with ``fstat`` on the open descriptor, so what is checked is what is read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(
                errno.EINVAL, "not a regular file (a FIFO, device or directory)", os.fspath(path)
            )
        chunks, left = [], limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data, max(info.st_size, len(data))
    finally:
        os.close(fd)


def write_atomic(path: str | os.PathLike, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` without following a link at ``path``.

    The data goes to a new file with an unguessable name in the same directory (created with
    ``O_EXCL``, so it cannot be a planted link), then ``os.replace`` renames it over ``path``: a
    symbolic link there is replaced by the file, and readers never see a half-written file.
    """
    path = os.fspath(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    directory, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(tmp, flags, 0o666)
    except OSError as exc:  # name the file the caller asked for, not the temporary one
        raise OSError(exc.errno, exc.strerror, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
