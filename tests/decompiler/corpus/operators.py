# ruff: noqa
"""Arithmetic, bitwise and unary operators; precedence and the parentheses it needs."""

from ._cases import cases
from ._support import Box


@cases((1, 2, 3), (-4, 5, 7), (0, 1, 1))
def arith_precedence(a, b, c):
    return a + b * c - (a - b) * (b + c) // c % 7


@cases((2, 3, 2), (-2, 2, 3), (3, 0, 1))
def power_associativity(a, b, c):
    return a ** b ** c, (a ** b) ** c, -a ** b, (-a) ** b


@cases((7, 2), (-7, 2), (7, -2))
def division_family(a, b):
    return a / b, a // b, a % b, divmod(a, b), -a // b, -(a // b)


@cases((0b1100, 0b1010), (255, 1), (-1, 3))
def bitwise_mix(a, b):
    return a & b | a ^ b, a & (b | a) ^ b, a << 2 >> 1, ~a & 0xFF, a | b & ~a


@cases((3, 4), (-1, -2), (0, 0))
def unary_chain(a, b):
    return -a, +a, ~a, not a, - -a, -(-a), ~-a, -~b, not not b, -(a + b), -a + b


@cases((2, 3), (5, 1))
def mixed_shift_arith(a, b):
    return a << b + 1, (a << b) + 1, a + b << 1, a * (b << 1), a - (b - 1), (a - b) - 1, a - b - 1


@cases((10, 3), (2, 8))
def subtraction_nesting(a, b):
    return a - (b - (a - b)), a / (b / 2), (a / b) / 2, a % (b % 3 or 1)


@cases((1.5, 2), (3.0, -1))
def float_ops(a, b):
    return round(a * b, 3), a ** -b, abs(-a), a // 0.5


@cases(([1, 2, 3, 4, 5], 1, 3), ("abcdef", 0, -1), ((9, 8, 7), -2, None))
def slices(seq, i, j):
    return seq[i], seq[i:j], seq[:j], seq[i:], seq[::2], seq[i:j:1], seq[::-1], seq[-1:]


@cases(({"a": {"b": [1, 2, {"c": 3}]}},))
def nested_subscripts(d):
    return d["a"]["b"][2]["c"], d["a"]["b"][-1], len(d["a"]["b"][:2])


@cases((2, 3),)
def matmul_ops(a, b):
    x = Box(a)
    y = Box(b)
    z = x @ y
    x @= y
    return z.value, x.value


@cases((3, 4), (0, 9))
def attribute_and_call_precedence(a, b):
    return (a + b).bit_length(), (-a).__abs__(), str(a).zfill(b), [a, b][0].real


@cases((1, 2), (0, 0))
def tuple_results(a, b):
    return (a, b), ((a,),), (), (a + b,), [a, *[b, b]], {a, b}, {a: b}


@cases((2,), (-3,))
def await_like_parentheses(x):
    return (x if x > 0 else -x) * 2, (lambda y: y + 1)(x), (x, x)[0] + 1


@cases((5, 2), (6, 3))
def comparison_in_arith(a, b):
    return (a > b) + (a == b) * 2, (a < b) - 1, -(a >= b)


@cases(("ab", 3), ([1], 2))
def sequence_ops(s, n):
    return s * n, n * s, s + s, s * (n - 1) + s


@cases((2, 3, 4), (1, 1, 1))
def long_expression(a, b, c):
    return ((a + b) * (c - a) ** 2 // (b or 1)) % 11 + (a | b) ^ (c & a) - ~(a << 1)


@cases((8,), (0,))
def inplace_ops(x):
    x += 3
    x -= 1
    x *= 2
    x //= 3
    x **= 2
    x %= 17
    x <<= 2
    x >>= 1
    x &= 0xFF
    x |= 1
    x ^= 6
    y = float(x)
    y /= 4
    return x, y


@cases((0,), (1,), (3,))
def negative_constant_operands(s):
    # _pydecimal.Decimal._cmp: (-1) ** sign; a negative literal as the base of ** or a receiver.
    return (-1) ** s, -((-1) ** s), -(-1) ** s, (-2) ** 2, (-1.5).__abs__(), (-1) * s, 2 ** -1
