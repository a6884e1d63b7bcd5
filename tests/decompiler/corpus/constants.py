# ruff: noqa
"""Constant edge cases: signed zero, big ints, bytes, frozensets, nested tuples, Ellipsis, NaN, inf."""

import math

from ._cases import cases


@cases((),)
def negative_zero():
    return math.copysign(1, -0.0), math.copysign(1, 0.0), repr(-0.0), (-0.0, 0.0), math.copysign(1, -0.0j.imag)


@cases((),)
def big_ints():
    return 2 ** 100, 12345678901234567890123456789, -(2 ** 64) + 1, 0x7FFFFFFFFFFFFFFF, 10 ** 30 // 7


@cases((),)
def bytes_constants():
    return b"", b"\x00\x01\xfe\xff", b"quote'\"", bytearray(b"ab"), b"a" * 3


@cases((3,),)
def frozenset_membership(x):
    return x in {1, 2, 3}, x in frozenset({4}), x not in {"a", "b"}, frozenset({1, 2})


@cases((),)
def nested_tuples():
    return ((1, 2), (3, (4, (5,))), ()), ((),), (((),),), ("a", ("b", None))


@cases((),)
def ellipsis_and_none():
    x = ...
    return x is Ellipsis, ..., None, [..., None]


@cases((),)
def nan_and_infinity():
    inf = float("inf")
    return repr(1e309), repr(-1e309), math.isnan(1e309 - 1e309), inf == 1e309, repr(1e309 * 0)


@cases((),)
def float_reprs():
    return 0.1, 1e-300, 5e-324, 1.7976931348623157e308, 1.0, -1.5, 1e16


@cases((),)
def complex_constants():
    return 1j, -2j, 3 + 4j, complex(0, -0.0), (1 + 0j) * 2, -0j


@cases((),)
def string_constants():
    return "", "\x00", "\u1234", "\U0001F600", "a\\b", "'\"", "\r\n", "line1\nline2"


@cases((),)
def bool_and_int_constants():
    return True, False, 0, -1, 1_000_000, 0o17, 0b101, True + True


@cases((),)
def constant_folding():
    return 2 * 3 + 4, "ab" * 3, (1, 2) + (3,), -(-5), not 0, 1 << 10, 7 // 2


@cases((),)
def frozenset_and_tuple_constant_in_loop():
    out = []
    for x in (1, 2, 3):
        if x in {2, 3}:
            out.append(x)
    return out


@cases((),)
def unicode_identifiers_and_values():
    café = "é"
    return café, len(café)


@cases((),)
def large_constant_collections():
    return [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], {"a": 1, "b": 2, "c": 3}, {1, 2, 3, 4, 5}, (1.5, "x", b"y", None)
