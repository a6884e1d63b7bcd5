"""A DataLoader with two spawn workers, a Dataset, batch class and collate_fn defined in this script."""

import sys

import torch
from torch.utils.data import DataLoader, Dataset


class Pair:
    """A batch type defined in the script: workers send it back pickled as a script class."""

    def __init__(self, x, y):
        self.x, self.y = x, y


class Squares(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return Pair(torch.tensor([float(i)]), torch.tensor([float(i * i)]))


def collate(items):
    return Pair(torch.cat([p.x for p in items]), torch.cat([p.y for p in items]))


@torch.compile(backend="eager")
def step(x, y):
    return x * 2 + y


if __name__ == "__main__":
    loader = DataLoader(Squares(), batch_size=2, num_workers=2, collate_fn=collate,
                        multiprocessing_context="spawn", timeout=120)
    print([step(batch.x, batch.y).tolist() for batch in loader])
    print("argv0", sys.argv[0])
