"""Tutorial example: dict inputs of two shapes, requires_grad, a graph break and a backward pass.

    python examples/tutorial_example.py [eager|aot_eager|inductor] [dump_dir]
"""

import sys

import torch


def make_function(backend="inductor"):
    @torch.compile(backend=backend)
    def function(inputs):
        x = inputs["x"]
        y = inputs["y"]
        x = x.cos().cos()
        if x.mean() > 0.5:
            x = x / 1.1
        return x * y

    return function


def run(function, shapes=((5,), (7,)), seed=0):
    """Forward and backward on both shapes; returns outputs and gradients."""
    torch.manual_seed(seed)
    results = []
    for shape in shapes:
        x = torch.randn(shape, requires_grad=True)
        y = torch.randn(shape, requires_grad=True)
        out = function({"x": x, "y": y})
        out.sum().backward()
        results.append((out.detach(), x.grad, y.grad))
    return results


def main(backend="inductor", dump_dir="depyf_tutorial_dump"):
    import depyf

    function = make_function(backend)
    with depyf.prepare_debug(dump_dir):
        run(function)


if __name__ == "__main__":
    main(*sys.argv[1:])
