"""`depyf run` mechanics with a stand-in recorder, and decompile failures, calling ``main`` in-process.

The stand-in copies the report fixture into the dump directory, so these tests check what
`depyf run` itself promises (argv, __main__, exit status, output, folding the script's own
prepare_debug, the summary) independently of torch. test_cli_run.py does the same for real.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

import depyf
from depyf import cli

FIXTURE = Path(__file__).resolve().parents[1] / "report" / "fixtures" / "toy_dump"


@pytest.fixture()
def recorder(monkeypatch):
    """Replace prepare_debug by a recorder that writes the fixture dump on exit."""
    calls = []

    @contextlib.contextmanager
    def fake_prepare_debug(dump_dir):
        calls.append(dump_dir)
        yield
        shutil.copytree(FIXTURE, dump_dir, dirs_exist_ok=True)

    monkeypatch.setattr(cli, "_load_prepare_debug", lambda: fake_prepare_debug)
    return calls


def write_script(path: Path, body: str) -> Path:
    path.write_text(textwrap.dedent(body))
    return path


def test_script_runs_as_main_with_its_argv_and_exit_status(tmp_path, recorder, capsys):
    script = write_script(tmp_path / "prog.py", """
        import json, sys
        print("out line")
        print("err line", file=sys.stderr)
        json.dump({"argv": sys.argv, "name": __name__, "file": __file__, "path0": sys.path[0]},
                  open(sys.argv[1], "w"))
        sys.exit(3)
    """)
    facts = tmp_path / "facts.json"
    argv_before, path_before = sys.argv[:], sys.path[:]
    status = cli.main(
        ["run", str(script), str(facts), "--flag", "-o", str(tmp_path / "dump"), "--", "-o", "x"]
    )
    assert status == 3
    seen = json.loads(facts.read_text())
    assert seen == {"argv": [str(script), str(facts), "--flag", "-o", "x"], "name": "__main__",
                    "file": str(script.resolve()), "path0": str(tmp_path.resolve())}
    assert (sys.argv, sys.path) == (argv_before, path_before)
    out, err = capsys.readouterr()
    assert out == "out line\n"
    assert err.startswith("err line\n")
    assert (
        "graph breaks       : 1" in err and f"report             : {tmp_path / 'dump' / 'index.html'}" in err
    )
    assert recorder == [str(tmp_path / "dump")]
    assert (tmp_path / "dump" / "index.html").is_file()


@pytest.mark.parametrize("argv, dump, script_args", [
    (["-o", "A", "s.py", "x"], "A", ["x"]),
    (["s.py", "x", "-o", "B"], "B", ["x"]),
    (["s.py", "--output=C", "x", "-q"], "C", ["x"]),
    (["s.py", "-oD", "--", "-o", "E", "--", "-q"], "D", ["-o", "E", "--", "-q"]),
    (["--quiet", "s.py", "--backend=eager", "--", "--backend", "x"], "depyf_debug_dir", ["--backend", "x"]),
])
def test_depyf_options_before_or_after_the_script(argv, dump, script_args):
    args = cli.build_parser().parse_args(["run", *argv])
    cli.split_run_arguments(args)
    assert (args.script, args.output, args.args) == ("s.py", dump, script_args)


def test_option_without_value_after_the_script(recorder, capsys, tmp_path):
    script = write_script(tmp_path / "s.py", "pass\n")
    assert cli.main(["run", str(script), "--backend"]) == 2
    assert "--backend needs a value" in capsys.readouterr().err


@pytest.mark.parametrize("exit_call, status, message", [
    ("sys.exit()", 0, None), ("sys.exit(0)", 0, None), ("sys.exit('fatal: no data')", 1, "fatal: no data"),
    ("sys.exit(256 + 7)", 7, None), ("raise SystemExit(None)", 0, None),
])
def test_exit_statuses_match_python(tmp_path, recorder, capsys, exit_call, status, message):
    script = write_script(tmp_path / "s.py", f"import sys\n{exit_call}\n")
    assert cli.main(["run", "-q", "-o", str(tmp_path / "d"), str(script)]) == status
    err = capsys.readouterr().err
    if message:
        assert err.startswith(message + "\n")


def test_uncaught_exception_prints_the_scripts_traceback_and_exits_1(tmp_path, recorder, capsys):
    script = write_script(tmp_path / "boom.py", """
        def inner():
            raise ValueError("bad value 42")
        inner()
    """)
    assert cli.main(["run", "-q", "-o", str(tmp_path / "d"), str(script)]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last):" in err
    assert f'File "{script.resolve()}", line 4, in <module>' in err
    assert "ValueError: bad value 42" in err
    assert "cli.py" not in err and "runpy" not in err  # only the script's frames, as python prints them
    assert (tmp_path / "d" / "index.html").is_file()  # the dump of a failed run is still reported


def test_the_scripts_own_prepare_debug_is_folded_into_the_run(tmp_path, recorder, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = write_script(tmp_path / "own.py", """
        import depyf
        from depyf import prepare_debug as imported_name
        with depyf.prepare_debug("its_own_dir"):
            print("inside")
        with imported_name("another_dir"):
            print("again")
    """)
    assert cli.main(["run", "-o", str(tmp_path / "d"), str(script)]) == 0
    out, err = capsys.readouterr()
    assert out == "inside\nagain\n"
    assert "the script's prepare_debug('its_own_dir') was folded into this run's dump" in err
    assert "the script's prepare_debug('another_dir') was folded" in err
    assert not (tmp_path / "its_own_dir").exists() and not (tmp_path / "another_dir").exists()
    assert recorder == [str(tmp_path / "d")]
    # nothing patched stays behind: depyf.prepare_debug is depyf's own function (bound in depyf's
    # namespace once depyf.torch is loaded, for Dynamo 2.2) or not bound at all
    bound = vars(depyf).get("prepare_debug")
    assert bound is None or bound is sys.modules["depyf.torch"].prepare_debug


def test_missing_script(tmp_path, recorder, capsys):
    assert cli.main(["run", str(tmp_path / "nope.py")]) == 2
    assert "nope.py: no such file" in capsys.readouterr().err


def test_run_without_a_dump_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "_load_prepare_debug", lambda: lambda d: contextlib.nullcontext())
    script = write_script(tmp_path / "plain.py", "print(1)\n")
    assert cli.main(["run", "-o", str(tmp_path / "d"), str(script)]) == 0
    out, err = capsys.readouterr()
    assert out == "1\n"
    assert "no dump at" in err and "nothing was compiled" in err


def test_decompilation_failure_names_the_function(tmp_path, monkeypatch, capsys):
    def failing(obj):
        raise depyf.DecompilationError("unsupported construct", qualname=obj.co_qualname, offset=8,
                                       opname="SOME_OP")

    monkeypatch.setattr(depyf, "decompile", failing)
    src = tmp_path / "m.py"
    src.write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    assert cli.main(["decompile", str(src)]) == 1
    out, err = capsys.readouterr()
    assert (
        f"depyf decompile: {src}:f: cannot decompile: unsupported construct in f at offset 8 (SOME_OP)" in err
    )
    assert f"{src}:g: cannot decompile" in err  # one failure does not stop the others
    assert f"# ---- {src}:g" in out


def test_verify_reports_a_signature_difference(monkeypatch, capsys, tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f(a, b):\n    return a + b\n")
    real_recompile = depyf.recompile

    def skewed(code, **kwargs):
        result = real_recompile(code, **kwargs)
        return type(result)(source=result.source, code=result.code.replace(co_argcount=1))

    monkeypatch.setattr(depyf, "recompile", skewed)
    assert cli.main(["decompile", "--verify", str(src)]) == 1
    out = capsys.readouterr().out
    assert "# NOT verified:" in out and "arguments differ: original ('a', 'b'), recompiled ('a',)" in out


def test_recorder_that_cannot_start_does_not_run_the_script(tmp_path, monkeypatch, capsys):
    @contextlib.contextmanager
    def unsupported(dump_dir):
        raise RuntimeError("torch 9.9 is not supported")
        yield

    monkeypatch.setattr(cli, "_load_prepare_debug", lambda: unsupported)
    script = write_script(tmp_path / "s.py", "print('ran')\n")
    assert cli.main(["run", "-o", str(tmp_path / "d"), str(script)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "cannot start recording, the script was not run: RuntimeError: torch 9.9 is not supported" in err


def test_dump_that_fails_to_finish_keeps_the_scripts_output(tmp_path, monkeypatch, capsys):
    @contextlib.contextmanager
    def breaks_on_exit(dump_dir):
        yield
        raise OSError("disk full")

    monkeypatch.setattr(cli, "_load_prepare_debug", lambda: breaks_on_exit)
    script = write_script(tmp_path / "s.py", "print('ran')\n")
    assert cli.main(["run", "-o", str(tmp_path / "d"), str(script)]) == 1
    out, err = capsys.readouterr()
    assert out == "ran\n"
    assert "writing the dump to" in err and "failed: OSError: disk full" in err
