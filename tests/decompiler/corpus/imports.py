# ruff: noqa
"""Imports of every form inside functions: plain, dotted, aliased, from-imports, relative."""

from ._cases import cases


@cases((4,),)
def import_plain(n):
    import math
    return math.sqrt(n)


@cases((1,),)
def import_dotted(n):
    import os.path
    return os.path.join("a", str(n))


@cases((1,),)
def import_dotted_as(n):
    import os.path as osp
    import collections.abc as cabc
    return osp.basename("/x/y"), isinstance([n], cabc.Sequence)


@cases((2,),)
def from_import_names(n):
    from math import floor, ceil as up
    from collections import OrderedDict, defaultdict as dd
    return floor(n + 0.5), up(n + 0.5), list(OrderedDict(a=n)), dd(int)["x"]


@cases((1,),)
def from_dotted_import(n):
    from os.path import join as j, sep
    from email.mime.text import MIMEText
    return j("a", "b") == "a" + sep + "b", MIMEText.__name__


@cases((1,),)
def relative_imports(n):
    from . import _support
    from ._support import Box
    from ._cases import call as make_call
    from . import _cases as cases_module
    return _support.Box(n) == Box(n), make_call(n).args, cases_module.__name__.rsplit(".", 1)[-1]


@cases((1,),)
def import_in_branch(flag):
    if flag:
        import json
        return json.dumps([flag])
    else:
        import pickle as json
        return json.__name__


@cases((1,),)
def import_failure_handled(n):
    try:
        import no_such_module_depyf_corpus
    except ImportError:
        return "missing"
    return "present"


@cases((0,),)
def import_shadowing_builtin(n):
    from builtins import len as size
    from operator import add as sum
    return size([1, 2]), sum(n, 1)


@cases((0,),)
def import_nested_function_uses_import(n):
    import itertools

    def pairs():
        return list(itertools.islice(itertools.count(n), 3))

    return pairs()
