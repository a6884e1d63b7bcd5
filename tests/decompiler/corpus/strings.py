# ruff: noqa
"""f-strings (conversions, format specs, nested specs), %-formatting, implicit concatenation."""

from ._cases import cases


@cases(("ab", 3.14159, 42),)
def fstring_conversions(s, f, n):
    return f"{s!r} {s!s} {s!a} {n} {f}", f"{'é'!a}"


@cases((3.14159, 10, 3),)
def fstring_nested_spec(x, width, precision):
    return f"{x:{width}.{precision}f}", f"{x:>{width}}", f"[{x:^{width + 2}.2f}]"


@cases((255,),)
def fstring_format_specs(n):
    return f"{n:x} {n:#o} {n:08b} {n:,} {n:+d} {n:e}"


@cases(("x", 1),)
def fstring_expressions(s, n):
    d = {"k": n}
    return f"{s * 2}{n + 1}{d['k']}{[n, n]}{n if n else 0}{(lambda: s)()}"


@cases(("world",),)
def fstring_braces_and_concat(name):
    return f"{{literal}} hello {name}" "!" f"{name}" "end"


@cases((5,),)
def fstring_self_documenting_like(n):
    return f"n={n!r}", f"{n=}"


@cases(("abc", 2),)
def percent_format(s, n):
    return "%s-%d-%r-%5.2f" % (s, n, s, n), "%(a)s" % {"a": s}


@cases(("a",),)
def implicit_concatenation(s):
    return ("first " "second " + s), "multi\nline\ttab\\back\"quote'"


@cases(("x",),)
def string_methods_and_format(s):
    return "{}{}".format(s, 1), "{0}{0}".format(s), "{k}".format(k=s)


@cases((1,),)
def bytes_and_raw_strings(n):
    return b"\x00\xff" + bytes([n]), r"\d+\w", rb"\n", "\N{BULLET}"


@cases(("value", 12),)
def fstring_in_loop(key, width):
    out = []
    for i in range(3):
        out.append(f"{key:<{width}}|{i:>{i + 1}}|{key[i]!r:>5}")
    return out


@cases((3.5,),)
def fstring_empty_and_only_expr(x):
    return f"", f"{x}", f"{x!r}", f"{x:}"


@cases((["a", "b"], "e"), ([], "x"))
def percent_format_with_backslashes_inside(names, expr):
    # sympy's LatexPrinter: 3.11 compiles % formatting with %s/%r into an f-string's code, whose
    # parts here hold strings with backslashes (no f-string spelling before 3.12)
    return r"\frac{\partial^{%s}}{%s}{%s}" % (
        len(names), " ".join([r"\partial {%s}" % n for n in names]), expr
    ), "100%% of %s: %r" % ("\n".join(names), names)
