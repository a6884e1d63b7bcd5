"""The ``depyf`` command line: run a script with dumps on, decompile, build reports, show coverage.

Every subcommand returns an exit status instead of raising, so ``main`` is easy to test and to
call from other tools. Errors users can fix are one line on stderr starting with ``depyf <cmd>:``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import marshal
import os
import sys
import traceback
import types
from collections.abc import Iterator, Sequence
from pathlib import Path

from depyf import state

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_DUMP_DIR = state.DEFAULT_DUMP_DIR


class UsageError(Exception):
    """A problem with what the user asked for; printed as one line, exit status 2."""


# ---------------------------------------------------------------------------------------------------
# depyf run


def _exit_status(exc: SystemExit) -> int:
    """The process exit status Python itself would use for ``exc`` (printing a message if any)."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if code >= 0 else code % 256
    print(code, file=sys.stderr)
    return 1


def _print_script_traceback(exc: BaseException, script_file: str) -> None:
    """Print the traceback as ``python script.py`` would: starting at the script's own frame."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != script_file:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb if tb is not None else exc.__traceback__)


@contextlib.contextmanager
def _script_environment(script: Path, argv: Sequence[str]) -> Iterator[None]:
    """``sys.argv`` and ``sys.path[0]`` as ``python script.py args`` sets them, restored afterwards."""
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(script), *argv]
    script_dir = str(script.resolve().parent)
    if sys.path:
        sys.path[0] = script_dir
    else:
        sys.path.append(script_dir)
    try:
        yield
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


_MISSING = object()


@contextlib.contextmanager
def _default_backend(backend: str | None) -> Iterator[None]:
    """Make ``torch.compile`` calls that name no backend use ``backend``."""
    if not backend:
        yield
        return
    import functools

    import torch

    original = torch.compile

    @functools.wraps(original)
    def compile_with_backend(*args, **kwargs):
        kwargs.setdefault("backend", backend)
        return original(*args, **kwargs)

    torch.compile = compile_with_backend
    try:
        yield
    finally:
        torch.compile = original


def _load_prepare_debug():
    try:
        import depyf

        return depyf.prepare_debug
    except (ImportError, AttributeError) as exc:
        raise UsageError(
            f"dumping needs torch and depyf.prepare_debug, which cannot be loaded here ({exc})"
        ) from exc


_RUN_OPTIONS = {"-o": "output", "--output": "output", "--backend": "backend"}
_RUN_FLAGS = {"-q": "quiet", "--quiet": "quiet"}


def split_run_arguments(args: argparse.Namespace) -> None:
    """Move depyf's own options found after the script's name out of the script's arguments.

    ``depyf run script.py a b -o dump`` then means what it reads as; tokens after ``--`` always
    belong to the script.
    """
    rest: list[str] = []
    tokens = list(args.args)
    while tokens:
        token = tokens.pop(0)
        name, eq, value = token.partition("=")
        if token == "--":
            rest.extend(tokens)
            break
        if token in _RUN_FLAGS:
            setattr(args, _RUN_FLAGS[token], True)
        elif token in _RUN_OPTIONS or (eq and name in _RUN_OPTIONS and name.startswith("--")):
            if not eq:
                if not tokens:
                    raise UsageError(f"{token} needs a value")
                value = tokens.pop(0)
            setattr(args, _RUN_OPTIONS[name if eq else token], value)
        elif token.startswith("-o") and len(token) > 2 and not token.startswith("--"):
            args.output = token[2:]
        else:
            rest.append(token)
    args.args = rest


@contextlib.contextmanager
def _main_module(script_file: str) -> Iterator[types.ModuleType]:
    """A fresh module that is ``__main__`` and ``__mp_main__`` while the script runs, as with ``python``.

    multiprocessing's spawn start method pickles classes defined in the script as
    ``__main__.<name>`` and reads results back through ``sys.modules['__mp_main__']``; both must be
    the script's module, not depyf's entry point, or a spawn Pool or DataLoader worker fails.
    """
    import builtins

    module = types.ModuleType("__main__")
    module.__file__ = script_file
    module.__builtins__ = builtins
    module.__spec__ = None  # a script run by path, so spawn children re-run it by path
    module.__cached__ = None
    module.__loader__ = importlib.machinery.SourceFileLoader("__main__", script_file)
    saved = {name: sys.modules.get(name, _MISSING) for name in ("__main__", "__mp_main__")}
    sys.modules["__main__"] = sys.modules["__mp_main__"] = module
    try:
        yield module
    finally:
        for name, old in saved.items():
            if old is _MISSING:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


def _run_script(script_file: str, live) -> int:
    """Run the script as ``__main__``; its exit status, with its errors printed as Python would."""
    try:
        with open(script_file, "rb") as f:
            source = f.read()
        code = compile(source, script_file, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:  # as Python reports a script that does not compile
        live.clear()
        traceback.print_exception(type(exc), exc, None)
        return EXIT_FAILED
    except OSError as exc:  # as `python script.py` does for a file it cannot open
        live.clear()
        print(f"depyf run: can't open file {script_file!r}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        with _main_module(script_file) as module:
            exec(code, module.__dict__)
    except SystemExit as exc:
        live.clear()
        return _exit_status(exc)
    except KeyboardInterrupt as exc:
        live.clear()
        _print_script_traceback(exc, script_file)
        return 130
    except BaseException as exc:  # the script's own error: report it as Python would
        live.clear()
        _print_script_traceback(exc, script_file)
        return EXIT_FAILED
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    from depyf.report.progress import LiveStatus

    split_run_arguments(args)

    script = Path(args.script)
    if not script.is_file():
        raise UsageError(f"{script}: no such file (usage: depyf run script.py [args...])")
    if not str(args.output).strip():
        raise UsageError("-o: the dump directory is empty; name one (\".\" for the current directory)")
    dump_dir = Path(args.output).resolve()
    prepare_debug = _load_prepare_debug()
    if args.backend and importlib.util.find_spec("torch") is None:
        raise UsageError("--backend needs torch, which is not installed")
    notes: list[str] = []
    status = EXIT_OK
    dump_failed = None
    ran = False
    script_file = str(script.resolve())
    with LiveStatus(enabled=not args.quiet) as live:
        try:
            with _script_environment(script, args.args), _default_backend(args.backend), \
                    prepare_debug(str(dump_dir)) as actual_dir:
                if isinstance(actual_dir, (str, os.PathLike)):  # e.g. a per-process subdirectory
                    dump_dir = Path(actual_dir).resolve()
                with state.recording_run(str(dump_dir), notes):
                    ran = True
                    status = _run_script(script_file, live)
        except Exception as exc:  # prepare_debug failed to set up or to write the dump
            dump_failed = exc
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    err = sys.stderr
    for note in notes:
        print(f"depyf run: note: {note}", file=err)
    if dump_failed is not None and not ran:
        print(f"depyf run: cannot start recording, the script was not run: "
              f"{type(dump_failed).__name__}: {dump_failed}", file=err)
        return EXIT_FAILED
    if dump_failed is not None:
        print(
            f"depyf run: writing the dump to {dump_dir} failed: {type(dump_failed).__name__}: {dump_failed}",
            file=err,
        )
        return status or EXIT_FAILED
    report_status = _report_and_summarize(dump_dir, None, quiet=args.quiet, command="run")
    return status or report_status


def _report_and_summarize(dump_dir: Path, out: str | None, *, quiet: bool, command: str) -> int:
    from depyf.report import DumpError, build_report, load_dump, summarize

    if not (dump_dir / "index.json").is_file():
        print(f"depyf {command}: no dump at {dump_dir} (index.json missing): nothing was compiled "
              "by torch.compile, or the script exited before the dump was written", file=sys.stderr)
        return EXIT_FAILED if command == "report" else EXIT_OK
    try:
        report = build_report(dump_dir, out)
        summary = summarize(load_dump(dump_dir))
    except DumpError as exc:
        print(f"depyf {command}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as exc:  # the report's own file or directory cannot be written
        print(f"depyf {command}: cannot write the report: {exc.strerror or exc}"
              f"{f' ({exc.filename})' if exc.filename else ''}", file=sys.stderr)
        return EXIT_FAILED
    if quiet:
        print(f"depyf: report: {report}", file=sys.stderr)
        return EXIT_OK
    lines = summary.lines(report_path=str(report), dump_dir=str(dump_dir))
    width = max(len(line) for line in lines)
    print("\n" + "-" * width, file=sys.stderr)
    print(f"depyf {command}: summary", file=sys.stderr)
    for line in lines:
        print(line, file=sys.stderr)
    print("-" * width, file=sys.stderr)
    print(f"open {report.resolve().as_uri()} in a browser", file=sys.stderr)
    return EXIT_OK


# ---------------------------------------------------------------------------------------------------
# depyf report


def process_dumps(dump_dir: Path) -> list[Path]:
    """The per-process dumps (``rank_<r>/``, ``pid_<p>/``) under a dump directory shared by processes."""
    found = [p.parent for p in sorted(dump_dir.glob("*/index.json"))
             if p.parent.name.startswith(("rank_", "pid_"))]
    return found


def cmd_report(args: argparse.Namespace) -> int:
    dump_dir = Path(args.dump_dir)
    if not dump_dir.is_dir():
        raise UsageError(
            f"{dump_dir}: no such directory (a dump directory written by `depyf run` or prepare_debug)"
        )
    dump_dir = dump_dir.resolve()
    if not (dump_dir / "index.json").is_file():
        subdumps = process_dumps(dump_dir)
        if subdumps:  # several processes shared the directory: one report each
            if args.output and len(subdumps) > 1 and Path(args.output).suffix.lower() in {".html", ".htm"}:
                raise UsageError(f"{dump_dir} holds {len(subdumps)} process dumps; give -o a directory")
            statuses = []
            for sub in subdumps:
                out = str(Path(args.output) / sub.name) if args.output and len(subdumps) > 1 else args.output
                statuses.append(_report_and_summarize(sub, out, quiet=args.quiet, command="report"))
            return max(statuses)
    return _report_and_summarize(dump_dir, args.output, quiet=args.quiet, command="report")


# ---------------------------------------------------------------------------------------------------
# depyf decompile

# First magic number of each CPython release (from CPython's importlib/_bootstrap_external.py); a
# number belongs to the last release whose first number is not above it.
_MAGIC_STARTS = [
    (3000, "3.0"), (3141, "3.1"), (3160, "3.2"), (3190, "3.3"), (3250, "3.4"), (3320, "3.5"),
    (3360, "3.6"), (3390, "3.7"), (3400, "3.8"), (3420, "3.9"), (3430, "3.10"), (3450, "3.11"),
    (3500, "3.12"), (3550, "3.13"), (3600, "3.14"), (3650, "3.15"),
]


def python_version_for_magic(number: int) -> str:
    """The CPython version that writes ``.pyc`` files with this magic number ("unknown" if none)."""
    if 20121 <= number <= 62211:
        return "2.x"
    version = "unknown"
    for start, name in _MAGIC_STARTS:
        if number >= start:
            version = name
    if number >= _MAGIC_STARTS[-1][0] + 50:
        return f"newer than {_MAGIC_STARTS[-1][1]}"
    return version


# The largest .py or .pyc file `depyf decompile` reads; the biggest stdlib sources are under 1 MB.
MAX_SOURCE_BYTES = 64 * 1024 * 1024


def _read_input(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_SOURCE_BYTES; a FIFO or a device is refused, not read."""
    from depyf.fileio import read_regular

    try:
        data, size = read_regular(path, MAX_SOURCE_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if size > MAX_SOURCE_BYTES:
        raise UsageError(
            f"{path}: {size} bytes, larger than the {MAX_SOURCE_BYTES} bytes depyf decompile reads"
        )
    return data


def code_from_pyc(path: Path) -> types.CodeType:
    """The module code object in ``path``; UsageError naming the file's Python if it is not ours."""
    from depyf.marshal_sizes import MarshalSizeError, check_marshal_sizes

    data = _read_input(path)
    if len(data) < 16 or data[2:4] != b"\r\n":
        raise UsageError(f"{path}: not a .pyc file (no Python magic number in its header)")
    magic = data[:4]
    if magic != importlib.util.MAGIC_NUMBER:
        number = int.from_bytes(magic[:2], "little")
        running = f"{sys.version_info.major}.{sys.version_info.minor}"
        ours = int.from_bytes(importlib.util.MAGIC_NUMBER[:2], "little")
        version = python_version_for_magic(number)
        raise UsageError(
            f"{path}: written by Python {version} (magic number {number}), but this is Python {running} "
            f"(magic number {ours}); bytecode differs between versions: decompile it with the Python that "
            f"wrote it (python{version} -m depyf decompile {path}), or recompile its source"
        )
    try:
        check_marshal_sizes(data[16:])  # before marshal.loads allocates what the header claims
        code = marshal.loads(data[16:])
    except MarshalSizeError as exc:
        raise UsageError(f"{path}: corrupt .pyc file ({exc})") from exc
    except (EOFError, ValueError, TypeError) as exc:
        raise UsageError(f"{path}: corrupt .pyc file ({exc})") from exc
    if not isinstance(code, types.CodeType):
        raise UsageError(f"{path}: does not contain a code object")
    return code


_CO_OPTIMIZED = inspect.CO_OPTIMIZED


def functions_in_module_code(code: types.CodeType, prefix: str = "") -> list[tuple[str, types.CodeType]]:
    """The functions a module defines, with class bodies looked into, in source order.

    Nested functions are not listed separately: their source is part of the enclosing function.
    """
    found: list[tuple[str, types.CodeType]] = []
    for const in code.co_consts:
        if not isinstance(const, types.CodeType) or const.co_name.startswith("<"):
            continue
        qualname = getattr(const, "co_qualname", prefix + const.co_name)
        if const.co_flags & _CO_OPTIMIZED:
            found.append((qualname, const))
        else:  # a class body: its methods are the functions
            found.extend(functions_in_module_code(const, prefix=qualname + "."))
    return sorted(found, key=lambda item: item[1].co_firstlineno)


def code_from_py(path: Path) -> types.CodeType:
    """Compile (never run) a source file into its module code object."""
    source = _read_input(path)
    try:
        return compile(source, str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise UsageError(f"{path}: does not compile ({exc})") from exc


def object_from_spec(spec: str) -> list[tuple[str, object]]:
    """Resolve ``module:qualname`` (importing the module) into the objects to decompile."""
    module_name, _, qualname = spec.partition(":")
    if not module_name:
        raise UsageError(f"{spec}: expected module:qualname, e.g. json.decoder:JSONDecoder.decode")
    if module_name.startswith("."):
        raise UsageError(f"{spec}: a relative module name cannot be imported here; give the full name "
                         "(package.module:qualname)")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -c` does, so local modules are found
    module = _import_target(module_name)
    if not qualname:
        file = getattr(module, "__file__", None)
        if not file or not file.endswith(".py"):
            raise UsageError(f"{spec}: name a function, e.g. {module_name}:some_function")
        return [(f"{module_name}:{q}", c) for q, c in functions_in_module_code(code_from_py(Path(file)))]
    obj: object = module
    for part in qualname.split("."):
        try:
            obj = inspect.getattr_static(obj, part) if inspect.isclass(obj) else getattr(obj, part)
        except AttributeError:
            raise UsageError(
                f"{spec}: {type(obj).__name__} {_display_name(obj)} has no attribute {part!r}"
            ) from None
        except Exception as exc:  # a __getattr__ that fails (or recurses) while looking the name up
            raise UsageError(
                f"{spec}: looking up {part!r} raised {type(exc).__name__}: {_first_line(exc)}"
            ) from None
    if inspect.isclass(obj):
        members = [(name, value) for name, value in vars(obj).items()
                   if isinstance(value, (types.FunctionType, staticmethod, classmethod, property))]
        if not members:
            raise UsageError(f"{spec}: class defines no functions to decompile")
        return [(f"{spec}.{name}", value) for name, value in members]
    return [(spec, obj)]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"


def _display_name(obj: object) -> str:
    """A name for ``obj`` in a message, without trusting attribute lookups on it."""
    for attr in ("__qualname__", "__name__"):
        try:
            value = inspect.getattr_static(obj, attr)
        except AttributeError:
            continue
        if isinstance(value, str):
            return value
    return type(obj).__name__


def _import_target(module_name: str) -> types.ModuleType:
    """Import the module a ``module:qualname`` target names; its failures are one-line UsageErrors."""
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"cannot import module {module_name!r}: {exc}") from None
    except SyntaxError as exc:
        where = f"{exc.filename}:{exc.lineno}" if exc.filename else module_name
        raise UsageError(
            f"cannot import module {module_name!r}: syntax error at {where}: {exc.msg}"
        ) from None
    except SystemExit as exc:
        raise UsageError(f"cannot import module {module_name!r}: it called sys.exit({exc.code!r}) "
                         "while being imported") from None
    except Exception as exc:  # the module's own code raised while it was imported
        raise UsageError(f"cannot import module {module_name!r}: importing it raised "
                         f"{type(exc).__name__}: {_first_line(exc)}") from None


def _signature_of(code: types.CodeType) -> dict[str, object]:
    from depyf.decompiler.codeinfo import argument_names

    return {
        "name": code.co_name,
        "qualname": getattr(code, "co_qualname", code.co_name),
        "arguments": argument_names(code),
        "positional-only": code.co_posonlyargcount,
        "keyword-only": code.co_kwonlyargcount,
        "flags": code.co_flags,
        "free variables": code.co_freevars,
    }


def verify_equivalence(obj: object) -> tuple[bool, list[str]]:
    """Recompile ``obj``'s code from its decompiled source and compare the results.

    Equivalent means: recompilation succeeds and the new code has the same name, arguments,
    flags and free variables (it can replace the original). Differences in the globals and
    attributes used are reported too, as notes, since they can hint at a decompiler slip.
    """
    import depyf
    from depyf.decompiler.api import code_of

    code = code_of(obj)
    try:
        new = depyf.recompile(code).code
    except depyf.DecompilationError as exc:
        return False, [f"does not recompile: {exc}"]
    except (SyntaxError, ValueError, TypeError) as exc:
        return False, [f"does not recompile: {type(exc).__name__}: {exc}"]
    problems = []
    old_sig, new_sig = _signature_of(code), _signature_of(new)
    for key, value in old_sig.items():
        if new_sig[key] != value:
            problems.append(f"{key} differ: original {value!r}, recompiled {new_sig[key]!r}")
    if code.co_code == new.co_code:
        problems.append("note: the bytecode is identical")
    elif set(code.co_names) != set(new.co_names):
        missing = sorted(set(code.co_names) - set(new.co_names))
        extra = sorted(set(new.co_names) - set(code.co_names))
        problems.append(f"note: names used differ (only in original: {missing}, only in recompiled: {extra})")
    return not any(not p.startswith("note:") for p in problems), problems


def cmd_decompile(args: argparse.Namespace) -> int:
    import depyf

    target = args.target
    path = Path(target)
    if target.endswith(".pyc"):
        items: list[tuple[str, object]] = [(str(path), code_from_pyc(path))]
    elif target.endswith(".py"):
        if not path.exists():
            raise UsageError(f"{path}: no such file")
        items = [(f"{path}:{q}", c) for q, c in functions_in_module_code(code_from_py(path))]
        if not items:
            print(f"# {path} defines no functions", file=sys.stderr)
            return EXIT_OK
    elif ":" in target:
        items = object_from_spec(target)
    else:
        raise UsageError(f"{target}: TARGET must be module:qualname, a .py file or a .pyc file")
    status = EXIT_OK
    for n, (label, obj) in enumerate(items):
        if len(items) > 1:
            print(("\n" if n else "") + f"# ---- {label}")
        try:
            source = depyf.decompile(obj)
        except depyf.DecompilationError as exc:
            print(f"depyf decompile: {label}: cannot decompile: {exc}", file=sys.stderr)
            status = EXIT_FAILED
            continue
        except TypeError as exc:
            raise UsageError(f"{label}: {exc}") from exc
        except RecursionError:
            print(
                f"depyf decompile: {label}: cannot decompile: nested too deeply (RecursionError)",
                file=sys.stderr,
            )
            status = EXIT_FAILED
            continue
        print(source.rstrip("\n"))
        if args.verify:
            ok, problems = verify_equivalence(obj)
            if ok:
                print(
                    "# verified: recompiles to code with the same name, arguments, flags and free variables"
                )
            else:
                status = EXIT_FAILED
                print("# NOT verified:")
            for problem in problems:
                print(f"#   {problem}")
    return status


# ---------------------------------------------------------------------------------------------------
# depyf coverage


def cmd_coverage(args: argparse.Namespace) -> int:
    from depyf.decompiler.coverage import report

    print(str(report()).rstrip("\n"))
    return EXIT_OK


# ---------------------------------------------------------------------------------------------------
# argument parsing

_MAIN_EPILOG = """\
examples:
  depyf run train.py --epochs 1            run a script with dumps on, then write the report
  depyf run t.py -o dumps/ --backend eager dump into dumps/, compile with the eager backend
  depyf decompile mypkg.model:Net.forward  print the source of a function's bytecode
  depyf decompile build/mod.cpython-311.pyc
  depyf report depyf_debug_dir             (re)build depyf_debug_dir/index.html
  depyf coverage                           which opcodes the decompiler handles

Each command has its own --help.
"""

_RUN_EPILOG = """\
The script runs unchanged as __main__, with sys.argv as `python script.py args` sets it; its
output and exit status are kept. depyf's own options (-o, --backend, -q) may come before or
after the script; everything else goes to the script. To hand the script an option spelled like
one of depyf's, put it after `--`: `depyf run train.py -o dump -- -o model.pt`.

If the script calls depyf.prepare_debug(...) itself, that call is folded into this run's dump.

examples:
  depyf run examples/toy_example.py -o depyf_debug_dir
  depyf run train.py --lr 0.1 -o /tmp/dump
  depyf run model.py --backend aot_eager
"""

_DECOMPILE_EPILOG = """\
TARGET is one of:
  module:qualname   a function, method or class of an importable module (the module is imported)
  file.py           every function the file defines (the file is compiled, never run)
  file.pyc          the module in a .pyc file written by this Python version

examples:
  depyf decompile json.decoder:JSONDecoder.decode
  depyf decompile --verify examples/toy_example.py
  depyf decompile __pycache__/util.cpython-311.pyc

Exit status: 0 done, 1 something did not decompile (or --verify found a difference), 2 bad TARGET.
"""

_REPORT_EPILOG = """\
examples:
  depyf report depyf_debug_dir               writes depyf_debug_dir/index.html
  depyf report depyf_debug_dir -o out/       writes out/index.html
  depyf report depyf_debug_dir -o r.html     writes r.html

The report is one static HTML file: open it from the file system, no server needed.
In Jupyter: `import depyf.report; depyf.report.show("depyf_debug_dir")`.
"""


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="depyf", formatter_class=fmt, epilog=_MAIN_EPILOG,
        description="See what torch.compile did to your code: dumps, decompiled source and an HTML report.")
    from depyf import __version__

    parser.add_argument("--version", action="version", version=f"depyf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser(
        "run",
        formatter_class=fmt,
        epilog=_RUN_EPILOG,
        help="run a script with prepare_debug active, then write the report",
        description="Run a Python script with depyf.prepare_debug active, then write the report.",
    )
    run.add_argument("-o", "--output", default=DEFAULT_DUMP_DIR, metavar="DUMP_DIR",
                     help=f"where to write the dump and index.html (default: {DEFAULT_DUMP_DIR})")
    run.add_argument(
        "--backend",
        metavar="B",
        help="backend for torch.compile calls that do not name one (e.g. eager, aot_eager, inductor)",
    )
    run.add_argument(
        "-q", "--quiet", action="store_true", help="no live status and no summary, only the report path"
    )
    run.add_argument("script", help="the Python script to run")
    run.add_argument("args", nargs=argparse.REMAINDER,
                     help="arguments passed to the script (after `--`: all of them, even -o)")
    run.set_defaults(func=cmd_run)

    dec = sub.add_parser("decompile", formatter_class=fmt, epilog=_DECOMPILE_EPILOG,
                         help="print the source of a function, .py or .pyc file",
                         description="Decompile bytecode back to Python source and print it.")
    dec.add_argument("target", metavar="TARGET", help="module:qualname, file.py or file.pyc")
    dec.add_argument("--verify", action="store_true",
                     help="recompile the source and report whether it is equivalent to the original")
    dec.set_defaults(func=cmd_decompile)

    rep = sub.add_parser("report", formatter_class=fmt, epilog=_REPORT_EPILOG,
                         help="build the HTML report from an existing dump",
                         description="Build the HTML report (index.html) from a dump directory's index.json.")
    rep.add_argument("dump_dir", help="a dump directory (it holds index.json)")
    rep.add_argument(
        "-o", "--output", metavar="OUT", help="an .html file or a directory (default: DUMP_DIR/index.html)"
    )
    rep.add_argument("-q", "--quiet", action="store_true", help="print only the report path")
    rep.set_defaults(func=cmd_report)

    cov = sub.add_parser(
        "coverage",
        formatter_class=fmt,
        help="which Python versions and opcodes the decompiler handles",
        description="Print the decompiler's coverage: Python versions and opcodes it handles.",
        epilog="example:\n  depyf coverage\n",
    )
    cov.set_defaults(func=cmd_coverage)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``depyf`` console script and of ``python -m depyf``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"depyf {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `depyf decompile x | head`: the reader left, which is not an error
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
