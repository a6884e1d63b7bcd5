#!/usr/bin/env bash
# Runs depyf's torch tests against one torch release on one CPython, in a cached venv.
#
#   scripts/test-torch.sh TORCH_VERSION [PYTHON_VERSION] [-- PYTEST_ARGS...]
#   scripts/test-torch.sh 2.2.2                 # CPython 3.11, every torch test (marker "torch")
#   scripts/test-torch.sh 2.15.0 3.12 -- -k seed -x
#   scripts/test-torch.sh 2.8.0 3.11 -- --venv-only      # only build the venv, print its python
#
# The venv lives in $DEPYF_TORCH_VENVS (default ~/.cache/depyf/torch-venvs)/torch<V>-py<P>, so
# every checkout shares it; it is rebuilt when the dependencies in pyproject.toml change. torch
# comes from the package registry (or the machine's local wheels); pip's machine-wide cap on torch
# is replaced by a constraints file that pins exactly TORCH_VERSION, so nothing else can pull another torch.
# Default pytest arguments: `-m torch` over tests/ (the slow ones included). The exit status is
# pytest's.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
TORCH_VERSION=$1; shift
PY_VERSION=3.11
if [ $# -gt 0 ] && [ "$1" != "--" ]; then PY_VERSION=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
case "$TORCH_VERSION" in 2.*) ;; *) echo "test-torch: not a torch 2.x version: $TORCH_VERSION" >&2; usage ;; esac
case "$PY_VERSION" in 3.10|3.11|3.12|3.13|3.14) ;; *) echo "test-torch: unsupported CPython $PY_VERSION" >&2; usage ;; esac

base_python() {
    local found
    found=$(ls -d "$HOME"/.pyenv/versions/"$PY_VERSION".* 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$found" ] && [ -x "$found/bin/python3" ]; then echo "$found/bin/python3"; return; fi
    command -v "python$PY_VERSION" || { echo "test-torch: no CPython $PY_VERSION on this machine" >&2; exit 2; }
}

VENVS=${DEPYF_TORCH_VENVS:-$HOME/.cache/depyf/torch-venvs}
VENV=$VENVS/torch$TORCH_VERSION-py$PY_VERSION
# The stamp covers what the venv installs from pyproject.toml (requires-python, dependencies and
# the optional-dependency groups), not the rest of the file (lint settings, package data).
STAMP=$VENV/.depyf-$(awk '/^\[/ { section = $0 } /^(requires-python|dependencies) *=/ { print }
    section == "[project.optional-dependencies]" { print }' "$ROOT/pyproject.toml" | sha1sum | cut -c1-12)

quiet_pip() {
    local py=$1; shift
    "$py" -m pip install -q --disable-pip-version-check "$@" 2>&1 | { grep -v "^WARNING: Location" || true; } >&2
    return "${PIPESTATUS[0]}"
}

if [ ! -f "$STAMP" ]; then
    echo "test-torch: building $VENV" >&2
    rm -rf "$VENV"
    mkdir -p "$VENVS"
    "$(base_python)" -m venv "$VENV"
    constraints=$VENV/constraints.txt
    echo "torch==$TORCH_VERSION" > "$constraints"
    # Wheels of torch before 2.3 were built against NumPy 1.x and warn or fail under NumPy 2.
    case "$TORCH_VERSION" in 2.0.*|2.1.*|2.2.*) echo "numpy<2" >> "$constraints" ;; esac
    quiet_pip "$VENV/bin/python" --upgrade pip
    PIP_CONSTRAINT=$constraints quiet_pip "$VENV/bin/python" "torch==$TORCH_VERSION"
    PIP_CONSTRAINT=$constraints quiet_pip "$VENV/bin/python" -e "$ROOT[test,models,debugger]"
    touch "$STAMP"
fi
# The venv is shared: make sure it imports depyf from this checkout.
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}

if [ "${1:-}" = "--venv-only" ]; then echo "$VENV/bin/python"; exit 0; fi
[ $# -gt 0 ] || set -- -m torch tests
cd "$ROOT"
echo "test-torch: torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)') on CPython $PY_VERSION" >&2
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
