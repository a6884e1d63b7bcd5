"""Names depyf generates from a code object's name (``__guard_0_for_<fn>``, ``full_code_for_<fn>_0.py``).

A code object's name need not be an identifier (``<lambda>``, ``<genexpr>``, or anything set through
``code.replace``), but the generated names must be: they are ``def`` names in files promised to be
valid Python, and file names in the dump.
"""

from __future__ import annotations

import keyword
import re


def identifier(co_name: str) -> str:
    """``co_name`` as a part of generated names: unchanged if it is an identifier, else
    ``<lambda>`` -> ``_lambda_``.

    Every character that cannot be in an identifier becomes ``_``, so the result is also a safe
    file name (no ``/``, ``\\``, ``..`` or NUL).
    """
    if co_name.isidentifier() and not keyword.iskeyword(co_name):
        return co_name
    cleaned = re.sub(r"\W", "_", co_name, flags=re.UNICODE)
    if not cleaned.isidentifier():  # empty, or starts with a digit
        cleaned = "_" + cleaned
    return cleaned + "_" if keyword.iskeyword(cleaned) else cleaned
