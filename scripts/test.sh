#!/usr/bin/env bash
# Sets everything up, then runs every test: lint, the test suite on CPython 3.11 (with torch),
# the decompiler tests on the other supported CPython versions, and the torch tests on the oldest
# and newest supported torch releases.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m ruff check .
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
if [ -x scripts/test-versions.sh ]; then
    bash scripts/test-versions.sh
fi
bash scripts/test-torch-ci.sh
