#!/usr/bin/env bash
# Runs depyf's torch tests against one torch release on one CPython, in a cached venv.
#
#   scripts/test-torch.sh TORCH_VERSION [PYTHON_VERSION] [-- PYTEST_ARGS...]
#   scripts/test-torch.sh 2.2.2                 # CPython 3.11, every torch test (marker "torch")
#   scripts/test-torch.sh 2.15.0 3.12 -- -k seed -x
#   scripts/test-torch.sh 2.8.0 3.11 -- --venv-only      # only build the venv, print its python
#
# The venv lives in $DEPYF_TORCH_VENVS (default ~/.cache/depyf/torch-venvs)/torch<V>-py<P>, so
# every checkout shares it; it is rebuilt when the dependencies in pyproject.toml or this script
# change. torch comes from the package registry (or the machine's local wheels); pip's machine-wide cap on torch is
# replaced by a constraints file that pins exactly TORCH_VERSION (and, before torch 2.6, the
# newest transformers that still accepts that torch: the models tests use it).
# CPU-only install: without a GPU (`nvidia-smi -L` fails; DEPYF_TORCH_CUDA=1 forces the full
# install, =0 forbids it), torch goes in with --no-deps, then its requirements except triton and
# cuda-bindings. The registry's Linux torch wheel still loads CUDA libraries at import, so its
# nvidia-*/cuda-toolkit requirements go once into $VENVS/_cuda/<hash of their list> and the venv's
# site-packages/nvidia (and cusparselt, where a release keeps it apart) links there: every venv of
# a release (and of releases with the same CUDA pins) shares one copy instead of ~4 GB each.
# Default pytest arguments: `-m torch` over tests/ (the slow ones included). The exit status is
# pytest's.
set -euo pipefail
{ # read whole before running: editing this file cannot upset a build in progress
ROOT=$(cd "$(dirname "$0")/.." && pwd)

usage() { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
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

# DEPYF_TORCH_CUDA=1: torch with every requirement (CUDA libraries, triton); 0: CPU-only; unset:
# the full install only where a GPU answers.
case "${DEPYF_TORCH_CUDA:-}" in
    1) CUDA=1 ;;
    0) CUDA=0 ;;
    "") if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then CUDA=1; else CUDA=0; fi ;;
    *) echo "test-torch: DEPYF_TORCH_CUDA is 0 or 1, not '$DEPYF_TORCH_CUDA'" >&2; exit 2 ;;
esac
# The stamp names the install recipe: what the venv installs from pyproject.toml (requires-python,
# dependencies and the optional-dependency groups, not lint settings), this script, the CUDA choice.
RECIPE=$( { awk '/^\[/ { section = $0 } /^(requires-python|dependencies) *=/ { print }
    section == "[project.optional-dependencies]" { print }' "$ROOT/pyproject.toml"; cat "$0"; } | sha1sum | cut -c1-12)
STAMP=$VENV/.depyf-$RECIPE-cuda$CUDA

quiet_pip() {
    local py=$1; shift
    # CPU-only venvs lack torch's GPU requirements on purpose: pip's complaint about them is dropped.
    "$py" -m pip install -q --disable-pip-version-check "$@" 2>&1 \
        | { grep -v -E "^WARNING: Location|^ERROR: pip's dependency resolver|^torch .* requires (nvidia-|triton|pytorch-triton|cuda-)" || true; } >&2
    return "${PIPESTATUS[0]}"
}

# torch's requirements that apply here (markers evaluated, extras left out), one per line as
# "KIND REQUIREMENT": KIND is cudalib (nvidia-*, cuda-toolkit: shared libraries torch loads at
# import), skip (triton, cuda-bindings: needed only on a GPU) or plain.
torch_requirements() {
    "$1" - <<'EOF'
from importlib.metadata import distribution
from pip._vendor.packaging.requirements import Requirement

for line in distribution("torch").requires or ():
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    name = req.name.lower().replace("_", "-")
    req.marker = None
    if name.startswith("nvidia-") or name == "cuda-toolkit":
        kind = "cudalib"
    elif name in ("triton", "pytorch-triton", "cuda-bindings", "cuda-python"):
        kind = "skip"
    else:
        kind = "plain"
    print(kind, req)
EOF
}

install_torch_cpu_only() {
    local py=$1 constraints=$2 reqs cudalibs key store site
    local -a plain
    PIP_CONSTRAINT=$constraints quiet_pip "$py" --no-deps "torch==$TORCH_VERSION"
    reqs=$(torch_requirements "$py")
    mapfile -t plain < <(echo "$reqs" | sed -n 's/^plain //p')
    cudalibs=$(echo "$reqs" | sed -n 's/^cudalib //p' | sort)
    if [ ${#plain[@]} -gt 0 ]; then
        PIP_CONSTRAINT=$constraints quiet_pip "$py" "${plain[@]}"
    fi
    [ -n "$cudalibs" ] || return 0
    key=$(echo "$cudalibs" | sha1sum | cut -c1-12)
    store=$VENVS/_cuda/$key
    mkdir -p "$VENVS/_cuda"
    exec 9>"$store.lock"
    flock 9   # venvs of other CPythons may be built at the same time
    if [ ! -f "$store/.complete" ]; then
        echo "test-torch: installing torch's CUDA libraries once into $store" >&2
        rm -rf "$store"
        mkdir -p "$store"
        echo "$cudalibs" > "$store/requirements.txt"
        PIP_CONSTRAINT=/dev/null quiet_pip "$py" --target "$store" -r "$store/requirements.txt"
        touch "$store/.complete"
    fi
    exec 9>&-
    site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    # Most libraries live under nvidia/; some releases' nvidia-cusparselt-cu12 (torch 2.6, 2.7) puts
    # libcusparseLt under a top-level cusparselt/: link every package folder of the store.
    local dir
    for dir in "$store"/*/; do
        dir=${dir%/}
        case "$dir" in *.dist-info|*/__pycache__|*/bin) continue ;; esac
        ln -sfn "$dir" "$site/$(basename "$dir")"
    done
}

if [ ! -f "$STAMP" ]; then
    echo "test-torch: building $VENV (CUDA libraries: $([ $CUDA = 1 ] && echo yes || echo shared, CPU-only))" >&2
    rm -rf "$VENV"
    mkdir -p "$VENVS"
    "$(base_python)" -m venv "$VENV"
    constraints=$VENV/constraints.txt
    echo "torch==$TORCH_VERSION" > "$constraints"
    # Wheels of torch before 2.3 were built against NumPy 1.x and warn or fail under NumPy 2.
    case "$TORCH_VERSION" in 2.0.*|2.1.*|2.2.*) echo "numpy<2" >> "$constraints" ;; esac
    # transformers turns its torch support off below a minimum torch that rises with its releases
    # (5.0: 2.2, 5.1: 2.4, 5.15: 2.5, 5.20: 2.6), and 5.14 imports torch.distributed.tensor.DTensor
    # (2.5+); the models tests need the newest that works with V. On 2.5.1, GPT-2's forward fails
    # inside transformers 5.13 and 5.17 (and 5.18 calls torch.accelerator, 2.6+): 4.x there. From
    # 4.47 (4.43 still asks the version) transformers calls torch.compiler.is_compiling (2.3+) in
    # code Dynamo traces: Dynamo 2.2 fails on the missing name, so 2.2 keeps 4.43.
    case "$TORCH_VERSION" in
        2.0.*|2.1.*|2.2.*) echo "transformers<4.44" >> "$constraints" ;;
        2.3.*) echo "transformers<5.1" >> "$constraints" ;;
        2.4.*) echo "transformers<5.14" >> "$constraints" ;;
        2.5.*) echo "transformers<5" >> "$constraints" ;;
    esac
    quiet_pip "$VENV/bin/python" --upgrade pip
    if [ "$CUDA" = 1 ]; then
        PIP_CONSTRAINT=$constraints quiet_pip "$VENV/bin/python" "torch==$TORCH_VERSION"
    else
        install_torch_cpu_only "$VENV/bin/python" "$constraints"
    fi
    PIP_CONSTRAINT=$constraints quiet_pip "$VENV/bin/python" -e "$ROOT[test,models,debugger]"
    "$VENV/bin/python" -c 'import torch; torch.ones(1)' || { echo "test-torch: torch does not import in $VENV" >&2; exit 1; }
    touch "$STAMP"
fi
# The venv is shared: make sure it imports depyf from this checkout.
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}

if [ "${1:-}" = "--venv-only" ]; then echo "$VENV/bin/python"; exit 0; fi
[ $# -gt 0 ] || set -- -m torch tests
cd "$ROOT"
echo "test-torch: torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)') on CPython $PY_VERSION" >&2
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
}
