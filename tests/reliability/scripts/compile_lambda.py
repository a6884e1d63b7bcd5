import sys

import torch

f = torch.compile(lambda x: x * 2 + 1, backend="eager")
g = torch.compile(lambda x: (x - 1).relu(), backend="eager")
print(f(torch.ones(3)).tolist(), g(torch.arange(3.0)).tolist())
print("argv0", sys.argv[0])
