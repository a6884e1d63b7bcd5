"""A spawn Pool whose workers return instances of a class defined in this script."""

import multiprocessing as mp
import sys


class Box:
    def __init__(self, v):
        self.v = v


def make(v):
    return Box(v * 2)


if __name__ == "__main__":
    with mp.get_context("spawn").Pool(2) as pool:
        out = pool.map_async(make, range(4)).get(timeout=60)
    print([b.v for b in out])
    print("argv0", sys.argv[0])
