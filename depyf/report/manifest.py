"""Read a dump's ``index.json`` (the single source of truth) and the text files it names.

Readers must tolerate keys they do not know and keys a writer left out, so everything here
goes through ``.get`` with a sensible default instead of trusting the shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from depyf.fileio import NotRegularFile, read_regular
from depyf.report.schema import SchemaError, validate_index

INDEX_NAME = "index.json"
SUPPORTED_VERSIONS = {1}
# Files larger than this are cut in the report (kernels of large models can be megabytes).
MAX_FILE_CHARS = 2_000_000
# Bytes read of one file: enough for MAX_FILE_CHARS characters of UTF-8, never the whole of a huge file.
MAX_FILE_BYTES = 4 * MAX_FILE_CHARS
# index.json of a real dump is kilobytes to a few megabytes; beyond this it is not one.
MAX_INDEX_BYTES = 64 * 1024 * 1024
TEXT_SUFFIXES = {".py", ".md", ".txt", ".json", ".log", ".cpp", ".h", ".cu"}


class DumpError(Exception):
    """The dump directory cannot be read; the message says what to do about it."""


@dataclass
class Dump:
    """A loaded dump: the manifest plus the text of every file the report shows."""

    root: Path
    index: dict[str, Any]
    files: dict[str, str] = field(default_factory=dict)
    truncated: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    not_regular: list[str] = field(default_factory=list)  # FIFOs, devices, directories: never read

    @property
    def functions(self) -> list[dict[str, Any]]:
        return list(self.index.get("functions") or [])

    @property
    def graphs(self) -> list[dict[str, Any]]:
        return list(self.index.get("graphs") or [])


def load_dump(dump_dir: str | Path) -> Dump:
    """Load ``dump_dir/index.json`` and the files it refers to.

    Raises ``DumpError`` when the directory or its manifest is missing or unreadable.
    """
    root = Path(dump_dir)
    if not root.is_dir():
        raise DumpError(f"{root}: no such dump directory (create one with `depyf run script.py -o {root}`)")
    index_path = root / INDEX_NAME
    if not index_path.is_file():
        raise DumpError(
            f"{index_path}: missing; this does not look like a depyf dump "
            "(it is written when the `prepare_debug` block exits)"
        )
    try:
        raw, size = read_regular(index_path, MAX_INDEX_BYTES + 1)
    except OSError as exc:
        raise DumpError(f"{index_path}: cannot be read ({exc.strerror or exc})") from exc
    if size > MAX_INDEX_BYTES:
        raise DumpError(f"{index_path}: {size} bytes, more than a dump's index.json can be "
                        f"({MAX_INDEX_BYTES} bytes); not a depyf dump")
    try:
        index = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DumpError(f"{index_path}: cannot be read as JSON ({exc})") from exc
    except RecursionError:
        raise DumpError(f"{index_path}: cannot be read as JSON (nested too deeply)") from None
    if not isinstance(index, dict):
        raise DumpError(f"{index_path}: expected a JSON object at the top level")
    try:
        validate_index(index)
        json.dumps(index)  # the page embeds it: nesting JSON can read but not write is refused here
    except SchemaError as exc:
        raise DumpError(f"{index_path}: not a valid depyf dump: {exc}") from None
    except RecursionError:
        raise DumpError(f"{index_path}: not a valid depyf dump: nested too deeply") from None
    if index.get("format", "depyf-dump") != "depyf-dump":
        raise DumpError(f"{index_path}: format is {index.get('format')!r}, expected 'depyf-dump'")
    version = index.get("version", 1)
    if version not in SUPPORTED_VERSIONS:
        raise DumpError(
            f"{index_path}: dump format version {version} is newer than this depyf understands "
            f"(supported: {sorted(SUPPORTED_VERSIONS)}); upgrade depyf"
        )
    dump = Dump(root=root, index=index)
    for name in referenced_files(index):
        _read_into(dump, name)
    return dump


def referenced_files(index: dict[str, Any]) -> list[str]:
    """Every file name the manifest mentions, in a stable order, without duplicates."""
    names: list[str] = []
    names.extend(str(n) for n in index.get("files") or [])
    for fn in index.get("functions") or []:
        if fn.get("full_code_file"):
            names.append(str(fn["full_code_file"]))
        for entry in fn.get("cache_entries") or []:
            if entry.get("transformed_code_file"):
                names.append(str(entry["transformed_code_file"]))
    for graph in index.get("graphs") or []:
        for f in graph.get("files") or []:
            if f.get("file"):
                names.append(str(f["file"]))
    seen: set[str] = set()
    return [n for n in names if not (n in seen or seen.add(n))]


def _read_into(dump: Dump, name: str) -> None:
    path = (dump.root / name).resolve()
    root = dump.root.resolve()
    if root not in path.parents and path != root:
        return  # a name that escapes the dump directory is not ours to read
    if path.suffix not in TEXT_SUFFIXES:
        return
    try:
        raw, size = read_regular(path, MAX_FILE_BYTES)
    except NotRegularFile:  # a FIFO would block the reader, a device may never end
        dump.not_regular.append(name)
        return
    except OSError:
        dump.missing.append(name)
        return
    text = raw.decode("utf-8", errors="replace")
    if size > len(raw) or len(text) > MAX_FILE_CHARS:
        text = text[:MAX_FILE_CHARS] + f"\n# ... cut by the report: the file has {size} bytes\n"
        dump.truncated.append(name)
    dump.files[name] = text
