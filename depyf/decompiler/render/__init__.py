"""Top of the pipeline: code objects -> ast definitions -> source text.

nested.py rebuilds the definitions nested in a code object (functions, lambdas, comprehensions,
classes, annotations); returns.py drops the returns the compiler adds; driver.py decompiles one code
object and turns the tree into source.
"""

from depyf.decompiler.render.driver import (
    CO_FUTURE_ANNOTATIONS,
    code_to_ast,
    code_to_source,
    code_to_source_and_constants,
)
from depyf.decompiler.render.nested import (
    CO_ASYNC_GENERATOR,
    CO_COROUTINE,
    CO_GENERATOR,
    CO_HAS_DOCSTRING,
    CO_VARARGS,
    CO_VARKEYWORDS,
    MAX_DEPTH,
    Nested,
)
from depyf.decompiler.render.returns import remove_implicit_returns

__all__ = [
    "CO_ASYNC_GENERATOR", "CO_COROUTINE", "CO_FUTURE_ANNOTATIONS", "CO_GENERATOR",
    "CO_HAS_DOCSTRING", "CO_VARARGS", "CO_VARKEYWORDS", "MAX_DEPTH", "Nested", "code_to_ast",
    "code_to_source", "code_to_source_and_constants", "remove_implicit_returns"
]
