"""Small programs with the shapes Dynamo's transformed code takes in practice (not a test module).

Each program is compiled under ``prepare_debug`` by test_dynamo_zoo.py; every cache entry must run
our decompiled code (verified), and the results must equal eager execution."""

from __future__ import annotations

import random

import torch


def print_break(x):
    y = x + 1
    print("value shape", y.shape)
    return y * 2


def item_break(x):
    n = x.sum().item()
    if n > 0:
        return x * n
    return x - n


def loop_with_break(x, n: int):
    for i in range(n):
        x = x + i
        if i * i > n:
            break
    return x * 2


def no_grad_block(x):
    with torch.no_grad():
        y = x * 2
    return y + x


def dict_input(d):
    return d["a"] + d["b"] * 2


def list_input(xs):
    out = []
    for t in xs:
        out.append(t.relu())
    return torch.stack(out)


def closure(x):
    scale = 3.0

    def inner(t):
        return t * scale
    return inner(x) + 1


def keyword_only(x, *, alpha=2.0, **kw):
    return x * alpha + kw.get("beta", 0)


def star_args(*xs):
    return sum(xs)


def try_except(x):
    try:
        return x / x.sum()
    except ZeroDivisionError:
        return x


def data_dependent_after_loop(x):
    for i in range(3):
        x = x * 2 + i
    if x.mean() > 0:
        x = x - 1
    else:
        x = x + 1
    return x


def nested_graph_break(x):
    def g(y):
        torch._dynamo.graph_break()
        return y + 1
    return g(x) * 2


def containers_after_break(x):
    a = x.sin()
    torch._dynamo.graph_break()
    return a, a.cos(), [a, 1], {"k": a}


def dtypes(x):
    return x.to(torch.float64).sum(dtype=torch.float32)


def devices(x):
    return torch.zeros(3, device=x.device, dtype=x.dtype) + x[:3]


def unsupported_call(x):
    r = random.random()
    return x * 0 + (r < 2)


def _closure_across_breaks():
    def helper(x):
        return len(x.tolist())   # not traceable: graph break

    def f(x):
        y = x.sin()
        if y.sum() > 0:          # data-dependent: graph break
            y = y + 1
        return y * 2, helper(y)  # resume functions get `helper`'s cell passed along
    return f


closure_across_breaks = _closure_across_breaks()


class _AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


class SuperAcrossBreak(_AddOne):
    """A method that calls super() on both sides of a graph break: Dynamo's code for it has the
    ``__class__`` cell, and torch 2.2 to 2.4 make its resume function in place with that cell."""

    def forward(self, x):
        y = super().forward(x)
        print("between the calls")
        return super().forward(y) * 2


super_across_break = SuperAcrossBreak()


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        if y.sum() > 0:
            y = y.relu()
        return y


def _t(*shape, grad=False):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(len(shape) + shape[0]),
                       requires_grad=grad)


CASES = {
    "print_break": (print_break, lambda: ((_t(4),), {})),
    "item_break": (item_break, lambda: ((_t(4),), {})),
    "loop_with_break": (loop_with_break, lambda: ((_t(4), 5), {})),
    "no_grad_block": (no_grad_block, lambda: ((_t(4, grad=True),), {})),
    "dict_input": (dict_input, lambda: (({"a": _t(3), "b": _t(3)},), {})),
    "list_input": (list_input, lambda: (([_t(3), _t(3)],), {})),
    "closure": (closure, lambda: ((_t(3),), {})),
    "closure_across_breaks": (closure_across_breaks, lambda: ((_t(3),), {})),
    "super_across_break": (super_across_break, lambda: ((_t(3),), {})),
    "keyword_only": (keyword_only, lambda: ((_t(3),), {"alpha": 3.0, "beta": 1.0})),
    "star_args": (star_args, lambda: ((_t(3), _t(3)), {})),
    "try_except": (try_except, lambda: ((_t(3),), {})),
    "data_dependent_after_loop": (data_dependent_after_loop, lambda: ((_t(3),), {})),
    "nested_graph_break": (nested_graph_break, lambda: ((_t(3),), {})),
    "containers_after_break": (containers_after_break, lambda: ((_t(3),), {})),
    "dtypes": (dtypes, lambda: ((_t(3),), {})),
    "devices": (devices, lambda: ((_t(4),), {})),
    "unsupported_call": (unsupported_call, lambda: ((_t(3),), {})),
    "module_with_branch": (None, lambda: ((_t(2, 4),), {})),
}
