"""The shape of ``index.json`` (docs/dump-format.md), checked before a report is built from it.

A dump directory can come from anywhere (a colleague's tarball, a CI artifact), so its manifest is
untrusted input: every value the page shows must have the type the format promises (numbers are
numbers, lists are lists, file names are plain strings). Unknown keys are allowed, as the format
says; a key may be missing or ``null``. The first value of the wrong type is named in the error.
"""

from __future__ import annotations

from typing import Any


class SchemaError(ValueError):
    """A value in ``index.json`` does not have the type the dump format gives it."""


# A schema is one of: a type name ("text", "int", "bool", "file"), ("list", item),
# ("map", value) or a dict of key -> schema (an object).
_GUARD_DETAIL = {
    "expression": "text",
    "kind": "text",
    "user_line": "text",
    "location": "text",
    "note": "text",
}
_ENTRY = {
    "index": "int",
    "compile_id": "text",
    "guards": ("list", "text"),
    "guard_details": ("list", _GUARD_DETAIL),
    "guard_function": "text",
    "transformed_code_file": "file",
    "transformed_name": "text",
    "decompiled": "bool",
    "fallback_reason": "text",
    "graphs": ("list", "text"),
    "resume_functions": ("list", "text"),
}
_FUNCTION = {
    "name": "text", "qualname": "text", "filename": "text", "firstlineno": "int", "kind": "text",
    "resumes": {"parent": "text", "at_line": "int"}, "full_code_file": "file", "source": "text",
    "cache_entries": ("list", _ENTRY),
    "graph_breaks": ("list", {"reason": "text", "filename": "text", "lineno": "int", "source_line": "text"}),
    "recompilations": ("list", {"reason": "text", "cache_entry": "int", "compile_id": "text"}),
}
_GRAPH = {
    "name": "text", "global_name": "text", "function": "text", "compile_id": "text",
    "files": ("list", {"stage": "text", "file": "file"}), "linked_files": ("list", "file"),
    "not_linked": ("map", "text"),
}
INDEX_SCHEMA = {
    "format": "text", "version": "int", "torch_version": "text", "python_version": "text", "backend": "text",
    "process": {"subdir": "text", "pid": "int"}, "functions": ("list", _FUNCTION), "graphs": ("list", _GRAPH),
    "files": ("list", "file"), "warnings": ("list", "text"),
    "unavailable": ("list", {"feature": "text", "reason": "text"}),
}

_JSON_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "true/false", int: "a number",
               float: "a number"}
_EXPECTED = {"text": "a string", "int": "an integer", "bool": "true or false", "file": "a file name"}


def _describe(value: Any) -> str:
    shown = repr(value)
    name = _JSON_NAMES.get(type(value), type(value).__name__)
    return f"{name} ({shown[:40]}{'...' if len(shown) > 40 else ''})"


def _check(value: Any, schema: Any, where: str) -> None:
    if value is None:
        return
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise SchemaError(f"{where} must be an object, not {_describe(value)}")
        for key, sub in schema.items():
            _check(value.get(key), sub, f"{where}.{key}" if where else key)
        return
    if isinstance(schema, tuple):
        kind, sub = schema
        if kind == "list":
            if not isinstance(value, list):
                raise SchemaError(f"{where} must be a list, not {_describe(value)}")
            for i, item in enumerate(value):
                if item is None:
                    raise SchemaError(f"{where}[{i}] must not be null")
                _check(item, sub, f"{where}[{i}]")
        else:
            if not isinstance(value, dict):
                raise SchemaError(f"{where} must be an object, not {_describe(value)}")
            for key, item in value.items():
                _check(item, sub, f"{where}[{key!r}]")
        return
    ok = {
        "text": isinstance(value, str),
        "file": isinstance(value, str),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
    }[schema]
    if not ok:
        raise SchemaError(f"{where} must be {_EXPECTED[schema]}, not {_describe(value)}")
    if schema == "file" and ("\0" in value or not value.strip()):
        raise SchemaError(f"{where} is not a usable file name: {value[:60]!r}")


def validate_index(index: Any) -> None:
    """Raise ``SchemaError`` naming the first value of ``index`` whose type is not the format's."""
    if not isinstance(index, dict):
        raise SchemaError(f"the top level must be an object, not {_describe(index)}")
    _check(index, INDEX_SCHEMA, "")
