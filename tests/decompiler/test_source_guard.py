"""No public path hands out text that does not parse, or that Python does not compile: the last
guard refuses it (DecompilationError naming the function), ``verify=False`` included."""

from __future__ import annotations

import ast
import sys
import types

import pytest

import depyf
import depyf.decompiler.api as api
from depyf import cli
from depyf.decompiler.errors import DecompilationError, SourceDoesNotCompile


def sample(x):
    return x + 1


# Text a broken decompiler could produce: not Python at all, and Python that does not compile
BROKEN = {"does-not-parse": "def sample(x):\n    return (x +\n",
          "break-outside-loop": "def sample(x):\n    break\n",
          "nonlocal-without-binding": "def sample(x):\n    nonlocal q\n    return x\n",
          "comprehension-parameter": "def sample(.0):\n    return .0\n"}


@pytest.fixture(params=sorted(BROKEN))
def broken(request, monkeypatch):
    text = BROKEN[request.param]
    monkeypatch.setattr(api, "code_to_source_and_constants", lambda code, defaults=None: (text, {}))
    return text


@pytest.mark.parametrize("verify", [True, False])
def test_decompile_refuses_text_that_does_not_compile(broken, verify):
    with pytest.raises(SourceDoesNotCompile) as caught:
        depyf.decompile(sample, verify=verify)
    assert caught.value.qualname == "sample"


def test_recompile_refuses_text_that_does_not_compile(broken):
    with pytest.raises(DecompilationError):
        depyf.recompile(sample.__code__, verify=False)


def test_the_torch_display_paths_show_no_text_that_does_not_compile(broken):
    # on_compile's event.source, the install() log and explain.dump_src all read safe_decompile;
    # prepare_debug's dump writes transform's text
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "__version__"):
        pytest.skip("torch is not installed (only a namespace package named torch)")
    from depyf.torch.transformed import safe_decompile, transform

    assert safe_decompile(sample.__code__) is None
    result = transform(sample.__code__, "__transformed_code_0_for_sample", "/nonexistent/sample.py")
    assert result.source is None and not result.decompiled and result.code_to_run is sample.__code__
    compile(result.file_text, "<stub>", "exec")


def test_the_cli_prints_no_text_that_does_not_compile(broken, capsys):
    status = cli.main(["decompile", f"{__name__}:sample"])
    out, err = capsys.readouterr()
    assert status != 0 and "cannot decompile" in err
    assert broken.strip() not in out


def _comprehension_code(fn: types.FunctionType, name: str) -> types.CodeType | None:
    return next(
        (c for c in fn.__code__.co_consts if isinstance(c, types.CodeType) and c.co_name == name), None
    )


def squares(xs):
    return (x * x for x in xs if x)


@pytest.mark.parametrize("verify", [True, False])
def test_a_generator_expressions_own_code_decompiles_to_a_function_that_compiles(verify):
    code = _comprehension_code(squares, "<genexpr>")
    source = depyf.decompile(code, verify=verify)    # its parameter was printed as ``.0``
    tree = ast.parse(source)
    namespace: dict = {}
    exec(compile(tree, "<decompiled>", "exec"), namespace)
    rebuilt = namespace[tree.body[0].name]
    assert list(rebuilt(iter([0, 1, 2, 3]))) == list(types.FunctionType(code, {})(iter([0, 1, 2, 3])))


def built(xs, limit):
    return ([x + 1 for x in xs if x], {x for x in xs if x < limit},
            {x: y for x in xs for y in range(x) if y != limit})


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12+ inline comprehensions into their function")
@pytest.mark.parametrize("name", ["<listcomp>", "<setcomp>", "<dictcomp>"])
@pytest.mark.parametrize("verify", [True, False])
def test_a_comprehensions_own_code_decompiles_to_a_function_that_builds_it(name, verify):
    # its body builds the result with instructions no statement writes: printed as statements,
    # only the element expression came out (``x + 1``)
    code = _comprehension_code(built, name)
    source = depyf.decompile(code, verify=verify)
    tree = ast.parse(source)
    assert isinstance(tree.body[0].body[-1], ast.Return)
    limit = 2       # the free variable the comprehensions read, as the function's global here
    namespace: dict = {"limit": limit}
    exec(compile(tree, "<decompiled>", "exec"), namespace)
    rebuilt = namespace[tree.body[0].name]
    original = types.FunctionType(code, {"limit": limit}, closure=tuple(
        types.CellType(limit) for _ in code.co_freevars))
    assert rebuilt(iter([0, 1, 2, 3])) == original(iter([0, 1, 2, 3]))


def outer():
    count = 0

    def bump(step):
        nonlocal count
        count += step
        return count
    return bump


@pytest.mark.parametrize("verify", [True, False])
def test_a_closure_that_declares_nonlocal_still_decompiles(verify):
    # its text compiles only inside a function that binds the name: the guard compiles it there
    source = depyf.decompile(outer(), verify=verify)
    assert "nonlocal count" in source
    namespace: dict = {}
    exec("def outer():\n    count = 10\n" + "".join(f"    {line}\n" for line in source.splitlines())
         + "    return bump\n", namespace)
    assert namespace["outer"]()(5) == 15
