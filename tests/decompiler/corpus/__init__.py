"""Hand-written functions that span the Python language, each with inputs that take every branch.

Modules are grouped by theme. A module whose name starts with ``py3NN_`` uses syntax that needs
CPython 3.NN or newer; the tests skip it on older interpreters. Helper modules start with ``_``
and are not part of the corpus.
"""
