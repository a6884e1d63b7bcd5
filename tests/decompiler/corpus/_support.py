"""Helpers the corpus functions use (awaitables, context managers); not part of the corpus."""

from __future__ import annotations


class Ready:
    """An awaitable that suspends once and then produces ``value``: runs without an event loop."""

    def __init__(self, value=None):
        self.value = value

    def __await__(self):
        yield None
        return self.value


class Recorder:
    """A context manager that logs enter/exit into a list and optionally swallows exceptions."""

    def __init__(self, log, name="cm", swallow=False):
        self.log = log
        self.name = name
        self.swallow = swallow

    def __enter__(self):
        self.log.append(f"enter {self.name}")
        return self.name

    def __exit__(self, exc_type, exc, tb):
        self.log.append(f"exit {self.name} {exc_type.__name__ if exc_type else None}")
        return self.swallow


class AsyncRecorder(Recorder):
    """The async twin of ``Recorder``."""

    async def __aenter__(self):
        await Ready()
        return self.__enter__()

    async def __aexit__(self, exc_type, exc, tb):
        await Ready()
        return self.__exit__(exc_type, exc, tb)


class ARange:
    """``async for`` over ``range(n)``, suspending before each item."""

    def __init__(self, n):
        self.n = n
        self.i = 0

    def __aiter__(self):
        return self

    async def __anext__(self):
        await Ready()
        if self.i >= self.n:
            raise StopAsyncIteration
        self.i += 1
        return self.i - 1


class Box:
    """A mutable object with attributes and items, for augmented assignment and ``del`` targets."""

    def __init__(self, value=0):
        self.value = value
        self.items = {}
        self.child = None

    def __getitem__(self, key):
        return self.items[key]

    def __setitem__(self, key, value):
        self.items[key] = value

    def __delitem__(self, key):
        del self.items[key]

    def __matmul__(self, other):
        return Box(self.value * other.value)

    def __imatmul__(self, other):
        self.value = self.value * other.value + 1
        return self

    def __eq__(self, other):
        return isinstance(other, Box) and (self.value, self.items) == (other.value, other.items)

    def __repr__(self):
        return f"Box({self.value!r}, {self.items!r})"


class Truth:
    """A value that counts how often its truth is asked for (``Truth.asked``): a decompiled test
    must ask exactly as often as the original."""

    asked = 0

    def __init__(self, value):
        self.value = value

    def __bool__(self):
        Truth.asked += 1
        return self.value
