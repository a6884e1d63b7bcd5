# ruff: noqa
"""A module with top-level statements, classes and methods: for decompiling methods, bound methods,
static/class methods, properties, and the module's own code object."""

import math as _math
from collections import namedtuple

from ._cases import cases
from ._support import Ready

SCALE = 3
Pair = namedtuple("Pair", "left right")
TABLE = {name: len(name) for name in ("alpha", "beta")}

if SCALE > 2:
    MODE = "big"
else:
    MODE = "small"

try:
    UNUSED = _math.tau
except AttributeError:
    UNUSED = None


class Shape:
    """Base class with every kind of method."""

    sides = 0

    def __init__(self, size):
        self.size = size

    def area(self):
        return 0

    def scaled(self, factor=SCALE):
        return type(self)(self.size * factor)

    @staticmethod
    def unit_name(plural=False):
        return "units" if plural else "unit"

    @classmethod
    def square(cls, size):
        return cls(size)

    @property
    def perimeter(self):
        return self.sides * self.size

    @perimeter.setter
    def perimeter(self, value):
        self.size = value / self.sides

    def __repr__(self):
        return f"{type(self).__name__}({self.size!r})"


class Square(Shape):
    sides = 4

    def area(self):
        return self.size ** 2

    def describe(self):
        return f"{super().__repr__()} with area {self.area()}"


class Counter:
    def __init__(self):
        self.n = 0

    def __iter__(self):
        while self.n < 3:
            self.n += 1
            yield self.n

    async def fetch(self, value):
        return await Ready(value)


@cases((2,), (5,))
def use_shapes(n):
    s = Square(n)
    s2 = s.scaled()
    s.perimeter = 40
    return s.area(), s2.size, s.size, s.describe(), Shape.unit_name(True), Square.square(n).perimeter, MODE


@cases((1, 2),)
def use_pair(a, b):
    p = Pair(a, b)
    return p.left + p.right, TABLE["alpha"], list(Counter())


def _not_a_case(x):
    return x


LAMBDA = lambda x, *, k=2: x ** k
