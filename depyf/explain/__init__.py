"""Explain compiled functions after the fact (no dump directory needed)."""

from __future__ import annotations

from depyf.explain.dump_src import dump_src

__all__ = ["dump_src"]
