"""Finally bodies that hold try statements: read back, and run as the original does."""

from __future__ import annotations

import depyf


def finally_body_with_a_try_then_more_code(table, key):
    log = []
    try:
        log.append(table.get(key))
    finally:
        try:
            del table[key]
        except:  # noqa: E722
            log.append("missing")
    return log


def test_a_finally_body_with_a_try_whose_clause_works_then_more_code():
    # the except clause does work and code follows the try statement: the inline copy of the
    # finally body is not found on the way out on 3.10 and 3.12+ (tests/known_gaps.txt)
    namespace: dict = {}
    exec(compile(depyf.decompile(finally_body_with_a_try_then_more_code), "<decompiled>", "exec"), namespace)
    recompiled = namespace["finally_body_with_a_try_then_more_code"]
    for table, key in (({1: 2}, 1), ({}, 1)):
        assert recompiled(dict(table), key) == finally_body_with_a_try_then_more_code(dict(table), key)
