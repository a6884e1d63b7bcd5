"""The version number is written once (``depyf.__version__``) and the package metadata reads it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import depyf

tomllib = pytest.importorskip("tomllib")  # 3.11+

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def test_pyproject_reads_the_version_from_the_package():
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    assert "version" not in config["project"] and "version" in config["project"]["dynamic"]
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "depyf.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", depyf.__version__)
