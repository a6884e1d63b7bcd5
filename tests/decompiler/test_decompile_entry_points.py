"""``decompile`` accepts every object that runs bytecode, and rejects the rest with a clear error."""

from __future__ import annotations

import ast
import dis
import sys
import types

import pytest
from corpus import async_code, generators, toplevel
from corpus._cases import Call
from corpus_harness import BACKEND, IDENTITY, layout_differences, parse_source, run_case, same, with_code

import depyf
from depyf import DecompilationError

Shape, Square, Counter = toplevel.Shape, toplevel.Square, toplevel.Counter


def _recompiled_function(func: types.FunctionType) -> types.FunctionType:
    rec = BACKEND.recompile(func.__code__)
    assert not layout_differences(func.__code__, rec.code)
    return with_code(func, rec.code)


def _defines(src: str, name: str) -> bool:
    tree = ast.parse(src)
    return any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name for n in ast.walk(tree)
    )


@pytest.mark.parametrize("obj, name", [
    (Shape.area, "area"),
    (Square(2).area, "area"),
    (Shape.__dict__["unit_name"], "unit_name"),
    (Shape.unit_name, "unit_name"),
    (Shape.__dict__["square"], "square"),
    (Square.square, "square"),
    (Square.describe, "describe"),
    (Counter.__iter__, "__iter__"),
    (Counter.fetch, "fetch"),
], ids=["function", "bound-method", "staticmethod", "static-via-class", "classmethod", "bound-classmethod",
        "super-method", "generator-method", "coroutine-method"])
def test_methods_decompile_to_their_def(obj, name):
    src = BACKEND.decompile(obj)
    parse_source(src, compile_too=False)
    assert _defines(src, name), src


def test_property_decompiles_getter_and_setter():
    src = BACKEND.decompile(Shape.perimeter)
    parse_source(src, compile_too=False)
    assert [n.name for n in ast.parse(src).body if isinstance(n, ast.FunctionDef)] == [
        "perimeter",
        "perimeter",
    ]


def test_lambda_decompiles_to_an_expression_or_def():
    src = BACKEND.decompile(toplevel.LAMBDA)
    parse_source(src)
    assert "lambda" in src or "def " in src
    new = _recompiled_function(toplevel.LAMBDA)
    assert new(3) == 9 and new(2, k=3) == 8


def test_super_method_recompiles_with_its_class_cell():
    new = _recompiled_function(Square.describe)
    assert new(Square(3)) == Square(3).describe()


__private_global = 41


class __(Square):
    """A class named with underscores only: the compiler mangles none of its ``__names``."""

    def describe(self):
        return super().describe() + str(__private_global)


def test_super_method_recompiles_without_mangling_private_globals():
    # the method keeps ``__private_global`` as written (generated code, such as Dynamo's
    # ``__compiled_fn_1`` in a method that calls super(), has such names too): the class that
    # gives the recompiled code its ``__class__`` cell must not mangle it
    method = __.describe
    assert "__private_global" in method.__code__.co_names
    rec = BACKEND.recompile(method.__code__)
    assert rec.code.co_names == method.__code__.co_names
    assert with_code(method, rec.code)(__(3)) == method(__(3)) == "__(3) with area 941"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="hand-assembled CPython 3.11+ bytecode")
def test_a_method_that_keeps_its_class_cell_unused_recompiles_with_it():
    # Dynamo's transformed code of a method that calls super() keeps the __class__ cell (it passes
    # it to resume functions) while the source of what runs may no longer name super
    from bytecode_assembly import assemble

    template = __.describe
    code = assemble(template, [("COPY_FREE_VARS", 1), ("RESUME", 0), ("LOAD_FAST", 0),
                               ("RETURN_VALUE", 0)], [None])
    assert code.co_freevars == ("__class__",)
    rec = BACKEND.recompile(code)
    assert rec.code.co_freevars == ("__class__",)
    obj = __(2)
    assert with_code(template, rec.code)(obj) is obj


def test_static_and_class_methods_recompile():
    assert _recompiled_function(Shape.__dict__["unit_name"].__func__)(True) == "units"
    square = _recompiled_function(Shape.__dict__["square"].__func__)
    assert isinstance(square(Square, 2), Square)


def test_property_accessors_recompile():
    getter = _recompiled_function(Shape.perimeter.fget)
    setter = _recompiled_function(Shape.perimeter.fset)
    sq = Square(2)
    assert getter(sq) == 8
    setter(sq, 20)
    assert sq.size == 5


@pytest.mark.parametrize("make, name", [
    (lambda: generators.gen_simple(2), "gen_simple"),
    (lambda: async_code.coro_await(1), "coro_await"),
    (lambda: async_code.async_gen(2), "async_gen"),
    (lambda: iter(Counter()), "__iter__"),
], ids=["generator", "coroutine", "async-generator", "generator-method"])
def test_running_objects_decompile_through_their_code(make, name):
    obj = make()
    try:
        src = BACKEND.decompile(obj)
    finally:
        obj.close() if hasattr(obj, "close") else None
        if hasattr(obj, "aclose"):
            aclose = obj.aclose()
            aclose.close()
    parse_source(src, compile_too=False)
    assert _defines(src, name), src


@pytest.mark.parametrize("func", [generators.gen_yield_from, async_code.coro_async_for, async_code.async_gen],
                         ids=lambda f: f.__name__)
def test_recompiled_code_keeps_its_kind(func):
    rec = BACKEND.recompile(func.__code__)
    kind = 0x20 | 0x80 | 0x100 | 0x200
    assert rec.code.co_flags & kind == func.__code__.co_flags & kind


def test_code_object_and_module_code_object():
    path = toplevel.__file__
    module_code = compile(open(path).read(), path, "exec")
    src = BACKEND.decompile(module_code)
    tree = parse_source(src)
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert {"Shape", "Square", "Counter", "use_shapes", "use_pair", "_not_a_case"} <= names
    assert any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body)


def test_recompile_with_filename_points_every_code_at_it(tmp_path):
    target = str(tmp_path / "decompiled.py")
    rec = BACKEND.recompile(toplevel.use_shapes.__code__, filename=target)
    seen = []

    def walk(code):
        seen.append(code.co_filename)
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                walk(c)

    walk(rec.code)
    assert set(seen) == {target}
    new = with_code(toplevel.use_shapes, rec.code)
    assert same(run_case(new, Call((2,))), run_case(toplevel.use_shapes, Call((2,))))


def test_recompile_keeps_name_and_qualname():
    rec = BACKEND.recompile(Square.describe.__code__)
    assert rec.code.co_name == "describe"
    if hasattr(rec.code, "co_qualname"):
        assert rec.code.co_qualname == "Square.describe"


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("obj, type_name", [(len, "builtin_function_or_method"), (1, "int"), ("s", "str"),
                                            (None, "NoneType"), ([].append, "builtin_function_or_method")])
def test_objects_without_bytecode_raise_type_error(obj, type_name):
    with pytest.raises(TypeError, match=type_name):
        depyf.decompile(obj)


def test_recompile_rejects_non_code():
    with pytest.raises(TypeError, match="int"):
        depyf.recompile(1)


def _garbage_code() -> tuple[types.CodeType, int]:
    """``target``'s code with its body replaced by a POP_TOP on an empty stack; returns (code, offset)."""
    def target(x):
        return x

    def unit(name: str) -> list[int]:
        # an instruction and its inline cache entries (3.15 gives RESUME one); the table is a list
        # by opcode on older versions, a mapping by name on newer ones
        caches = getattr(dis, "_inline_cache_entries", {})
        if hasattr(caches, "get"):
            count = caches.get(name, 0) or caches.get(dis.opmap[name], 0)
        else:
            count = caches[dis.opmap[name]]
        return [dis.opmap[name], 0] + [0, 0] * count

    prologue = unit("RESUME") if "RESUME" in dis.opmap else []
    body = unit("POP_TOP") + unit("LOAD_CONST") + unit("RETURN_VALUE")
    return target.__code__.replace(co_code=bytes(prologue + body)), len(prologue)


@pytest.mark.skipif(IDENTITY, reason="the identity backend reads source files")
def test_garbage_bytecode_raises_decompilation_error_with_location():
    code, offset = _garbage_code()
    with pytest.raises(DecompilationError) as info:
        depyf.decompile(code)
    err = info.value
    assert "target" in err.qualname
    assert err.offset == offset
    assert err.opname == "POP_TOP"
    assert "target" in str(err) and str(offset) in str(err) and "POP_TOP" in str(err)


@pytest.mark.skipif(IDENTITY, reason="the identity backend reads source files")
def test_garbage_bytecode_never_gives_wrong_code_through_recompile():
    code, _ = _garbage_code()
    with pytest.raises(DecompilationError):
        depyf.recompile(code)


@pytest.mark.skipif(IDENTITY, reason="the identity backend reads source files")
def test_inside_a_dynamo_bytecode_hook_decompile_returns_the_listing_instead_of_raising():
    """Frameworks call depyf.decompile in Dynamo's bytecode hooks; raising there would break the
    user's compilation. A hook is recognised by torch/_dynamo/ frames on the call stack."""
    code, _ = _garbage_code()
    namespace = {"depyf": depyf}
    exec(compile("def hook(code):\n    return depyf.decompile(code)\n",
                 "/site-packages/torch/_dynamo/convert_frame.py", "exec"), namespace)
    with pytest.warns(RuntimeWarning, match="could not decompile"):
        text = namespace["hook"](code)
    ast.parse(text)
    assert "POP_TOP" in text and "depyf could not decompile" in text


@pytest.mark.skipif(IDENTITY, reason="the identity backend reads source files")
def test_truncated_bytecode_raises_decompilation_error():
    def target(x):
        return x + 1

    op = dis.opmap
    prologue = [op["RESUME"], 0] if "RESUME" in op else []
    code = target.__code__.replace(co_code=bytes(prologue + [op["LOAD_FAST"], 0]))
    with pytest.raises(DecompilationError) as info:
        depyf.decompile(code)
    assert "target" in info.value.qualname


def _undefined_opcode() -> int:
    """An opcode number the running CPython defines neither as an instruction nor as a
    specialised form of one (3.13+ keep those apart from ``dis.opname``)."""
    specialised = set(getattr(dis, "_specialized_opmap", {}).values())
    return next(n for n in range(255, 0, -1) if dis.opname[n].startswith("<") and n not in specialised)


@pytest.mark.skipif(IDENTITY, reason="the identity backend reads source files")
def test_an_undefined_opcode_is_refused_naming_function_offset_and_opcode():
    """Corrupted bytecode: ``a + b`` with its operator's opcode replaced by one CPython does not
    define. CPython stops there (SystemError: unknown opcode); the decompiler once dropped the
    byte and answered ``return b``."""
    def corrupted(a, b=1):
        return a + b

    code = corrupted.__code__
    add = next(ins for ins in dis.get_instructions(code) if ins.opname in ("BINARY_OP", "BINARY_ADD"))
    op = _undefined_opcode()
    raw = bytearray(code.co_code)
    raw[add.offset] = op
    broken = code.replace(co_code=bytes(raw))
    for entry in (depyf.decompile, lambda c: depyf.decompile(c, verify=False), depyf.recompile):
        with pytest.raises(DecompilationError) as info:
            entry(broken)
        err = info.value
        assert "corrupted" in err.qualname
        assert err.offset == add.offset
        assert err.opname == f"<{op}>"
        assert f"unknown opcode {op}" in str(err) and f"offset {add.offset}" in str(err)


def test_decompilation_error_attributes():
    err = DecompilationError("cannot structure loop", qualname="A.f", offset=12, opname="JUMP_BACKWARD")
    assert (err.qualname, err.offset, err.opname) == ("A.f", 12, "JUMP_BACKWARD")
    assert "A.f" in str(err) and "12" in str(err) and "JUMP_BACKWARD" in str(err)


@pytest.mark.skipif(
    sys.version_info < (3, 14), reason="3.14 gives lazily evaluated values a .format parameter"
)
def test_a_compiler_made_scope_alone_is_refused_not_printed_invalid():
    module = compile("type Alias = list[int]\n", "<alias>", "exec")
    (lazy,) = [c for c in module.co_consts if isinstance(c, types.CodeType)]
    with pytest.raises(DecompilationError, match="compiler-made scope"):
        depyf.decompile(lazy)
    assert "type Alias = list[int]" in depyf.decompile(module)


def test_source_that_does_not_compile_is_an_error_not_a_result(monkeypatch):
    # decompile() compiles its own output to check the flow; output that is not Python (a
    # structuring bug) must raise, never be returned
    from depyf.decompiler import api

    def broken(code, defaults=None):
        return "def f(x):\n    if x:\n", {}

    monkeypatch.setattr(api, "code_to_source_and_constants", broken)
    with pytest.raises(DecompilationError, match="does not compile"):
        depyf.decompile(lambda x: x)


def test_recompile_of_source_that_does_not_compile_is_a_decompilation_error(monkeypatch):
    from depyf.decompiler import api

    monkeypatch.setattr(api, "code_to_source_and_constants", lambda code, defaults=None: ("def f(:\n", {}))
    with pytest.raises(DecompilationError, match="does not compile"):
        depyf.recompile((lambda x: x).__code__)


@pytest.mark.skipif(IDENTITY, reason="the identity backend reads source files")
@pytest.mark.parametrize("verify", [False, True])
def test_text_that_is_not_python_never_leaves_decompile(monkeypatch, verify):
    """The last guard: whatever a decompiler bug prints, no way out returns text that does not
    parse (the unverified path once handed out ``__stack_2 = :``)."""
    import depyf.decompiler.api as api

    def broken(code, defaults=None):
        return "def f(x):\n    __stack_2 = :\n    return x\n", {}

    monkeypatch.setattr(api, "code_to_source_and_constants", broken)

    def f(x):
        return x

    with pytest.raises(DecompilationError, match="not valid Python|does not compile") as info:
        depyf.decompile(f, verify=verify)
    assert "f" in info.value.qualname


def test_super_method_that_reads_a_global_named_with_underscores_recompiles():
    # argparse's ArgumentParser.__init__: super() and gettext's alias ``_`` in one method. The class
    # that gives the recompiled code its __class__ cell must not take a name the method reads
    namespace: dict = {}
    exec(compile(
        "_ = str.upper\n__ = str.lower\n"
        "class Base:\n    def describe(self):\n        return 'Base'\n"
        "class Named(Base):\n    def describe(self):\n        return _(super().describe()) + __('X')\n",
        "<underscores>", "exec"), namespace)
    method = namespace["Named"].describe
    rec = BACKEND.recompile(method.__code__)
    assert rec.code.co_freevars == method.__code__.co_freevars == ("__class__",)
    assert with_code(method, rec.code)(namespace["Named"]()) == method(namespace["Named"]()) == "BASEx"


@pytest.mark.skipif(sys.version_info < (3, 12), reason="type parameter syntax is 3.12+")
def test_a_type_parameter_scope_alone_is_a_type_error_its_definition_decompiles():
    # typing.reveal_type on 3.12+: ``def reveal_type[T](obj: T, /) -> T`` compiles the type
    # parameters into a scope of their own, which no source writes alone
    source = "def reveal_type[T](obj: T, /) -> T:\n    return obj\n"
    module = compile(source, "<m>", "exec", dont_inherit=True)
    (scope,) = [c for c in module.co_consts if isinstance(c, types.CodeType)]
    assert scope.co_name == "<generic parameters of reveal_type>"
    with pytest.raises(TypeError, match="decompile the code that defines reveal_type"):
        depyf.decompile(scope)
    assert "def reveal_type[T](obj: T, /) -> T:" in depyf.decompile(module)
