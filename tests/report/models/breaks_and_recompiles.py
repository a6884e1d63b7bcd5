"""A small model with two graph breaks and a recompilation (the batch size changes)."""

import sys

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = torch.relu(self.lin(x))
        if y.sum() > 0:  # data-dependent branch: graph break
            y = y * 2
        torch._dynamo.graph_break()  # an explicit one
        return y.mean()


def main():
    torch.manual_seed(0)
    net = torch.compile(Net())
    results = [float(net(torch.randn(batch, 8))) for batch in (4, 4, 6, 8)]
    print(f"ran {len(results)} steps")
    return 0 if all(r == r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
