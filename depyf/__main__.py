"""``python -m depyf``: the same command line as the ``depyf`` console script."""

from depyf.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
