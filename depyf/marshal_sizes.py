"""Check the sizes a marshal stream claims before ``marshal.loads`` trusts them.

``marshal.loads`` allocates a tuple, list or big integer of the length the stream claims before
reading its items, so a 21-byte ``.pyc`` that claims a tuple of 2**31 items makes it allocate 16 GB.
This walks the stream without building anything and refuses a length that the bytes left could not
hold (every item takes at least one byte, every integer digit two).

Code objects hold untagged 32-bit fields whose layout depends on the Python version; the layout
for the running Python is checked once against ``marshal.dumps`` of a sample, and if it does not
match (a Python newer than this module knows) no check is made rather than a false refusal.
"""

from __future__ import annotations

import marshal
import sys

_FLAG_REF = 0x80
_NO_PAYLOAD = frozenset(b"NFTS.")
_FIXED = {ord("i"): 4, ord("I"): 8, ord("g"): 8, ord("y"): 16, ord("r"): 4}
_SIZED = frozenset(b"stuaA")  # a 4-byte length, then that many bytes
_SEQUENCES = frozenset(b"([<>")


class MarshalSizeError(ValueError):
    """The stream claims more data than it has: ``marshal.loads`` would allocate for nothing."""


def _code_layout() -> list[tuple[str, int]]:
    """Slots of a code object in this Python's marshal format: ("i", n) raw ints, ("o", n) objects."""
    if sys.version_info >= (3, 11):  # argcount, posonly, kwonly, stacksize, flags; 8 objects; firstlineno; 2
        return [("i", 5), ("o", 8), ("i", 1), ("o", 2)]
    # 3.10: argcount, posonly, kwonly, nlocals, stacksize, flags; 8 objects; firstlineno; line table
    return [("i", 6), ("o", 8), ("i", 1), ("o", 1)]


def _walk(data: bytes, layout: list[tuple[str, int]]) -> int:
    """Check every claimed length in the first object of ``data``; return where it ends."""
    pos, end = 0, len(data)

    def take(n: int) -> int:
        nonlocal pos
        if n < 0 or n > end - pos:
            raise MarshalSizeError(
                f"marshal data claims {n} bytes at offset {pos}, but only {end - pos} are left"
            )
        start = pos
        pos += n
        return start

    def int32(signed: bool = True) -> int:
        start = take(4)
        return int.from_bytes(data[start:start + 4], "little", signed=signed)

    stack: list[list] = [["o", 1]]
    while stack:
        frame = stack[-1]
        frame[1] -= 1
        if frame[1] == 0:
            stack.pop()
        slot = frame[0]
        if slot == "i":
            take(4)
            continue
        if slot == "d":  # dict items until a NULL key
            if data[take(1)] == ord("0"):
                continue
            pos -= 1
            stack.append(["d", 1])
            stack.append(["o", 2])
            continue
        tag = data[take(1)] & ~_FLAG_REF
        if tag in _NO_PAYLOAD:
            continue
        if tag in _FIXED:
            take(_FIXED[tag])
        elif tag in _SIZED:
            take(int32())
        elif tag in b"zZ":
            take(data[take(1)])
        elif tag == ord("f"):
            take(data[take(1)])
        elif tag == ord("x"):
            take(data[take(1)])
            take(data[take(1)])
        elif tag == ord("l"):
            take(2 * abs(int32()))
        elif tag == ord(")"):
            count = data[take(1)]
            if count:
                stack.append(["o", count])
        elif tag in _SEQUENCES:
            count = int32()
            if count < 0 or count > end - pos:
                raise MarshalSizeError(f"marshal data claims {count} items at offset {pos}, "
                                       f"but only {end - pos} bytes are left")
            if count:
                stack.append(["o", count])
        elif tag == ord("{"):
            stack.append(["d", 1])
        elif tag == ord(":"):  # slice (3.14+)
            stack.append(["o", 3])
        elif tag == ord("c"):
            for kind, count in reversed(layout):
                stack.append([kind, count])
        else:
            raise MarshalSizeError(f"unknown marshal type code {chr(tag)!r} at offset {pos - 1}")
    return pos


def _sample() -> bytes:
    source = ("def f(a, /, b, *c, d=1.5, **e):\n    g = lambda: a\n"
              "    return (a, [b], {1: 2j}, {3}, 10 ** 40, ...)\n")
    return marshal.dumps(compile(source, "<sample>", "exec"))


def _layout_checked() -> list[tuple[str, int]] | None:
    sample = _sample()
    layout = _code_layout()
    try:
        return layout if _walk(sample, layout) == len(sample) else None
    except (MarshalSizeError, IndexError):
        return None


_LAYOUT = _layout_checked()


def check_marshal_sizes(data: bytes) -> None:
    """Raise ``MarshalSizeError`` if ``data`` claims a length its bytes cannot hold."""
    if _LAYOUT is None:
        return
    try:
        _walk(data, _LAYOUT)
    except IndexError:
        raise MarshalSizeError("marshal data ends in the middle of an object") from None
