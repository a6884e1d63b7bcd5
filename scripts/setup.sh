#!/usr/bin/env bash
# Creates .venv with depyf (editable) and everything the demo and the tests need.
# Idempotent: a second run only checks. torch is pinned to the local CPU build (2.13.0);
# never let pip resolve another torch, which would pull gigabytes of CUDA packages.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${DEPYF_PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
stamp=.venv/.depyf-setup-$(sha1sum pyproject.toml | cut -c1-12)
if [ ! -f "$stamp" ]; then
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null
    .venv/bin/python -m pip install -q "torch==2.13.0"
    .venv/bin/python -m pip install -q -e ".[torch,test,models,debugger]"
    touch "$stamp"
fi
