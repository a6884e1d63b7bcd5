#!/usr/bin/env bash
# The README's main command: set up .venv, then run the seed example (without its depyf lines)
# under `depyf run`. The script runs unchanged; depyf dumps what torch.compile did into
# depyf_debug_dir/ and ends with a one-screen summary that says where the HTML report is.
# Extra arguments go to `depyf run`, e.g. `bash scripts/demo.sh --backend eager`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/depyf run examples/toy_example.py -o depyf_debug_dir "$@"
