#!/usr/bin/env bash
# Runs one set of torch tests on several torch releases, one after the other, each in its cached
# venv (scripts/test-torch.sh builds it on first use), and ends with one Markdown table row per
# release for docs/torch-versions.md: release, CPython, pytest's closing line, minutes, date.
#
#   scripts/test-torch-matrix.sh [--set matrix|full] [--python 3.X] VERSION...
#   scripts/test-torch-matrix.sh 2.2.2 2.6.0 2.9.1 2.15.0            # the matrix set on CPython 3.11
#   scripts/test-torch-matrix.sh --set full --python 3.12 2.8.0      # every torch test
#
# "matrix" is the set the table calls the matrix set (dump on each backend, guards, debugger,
# dispatcher, the Dynamo zoo, the adapter's seams); "full" is every test marked torch. Each
# release's whole pytest output, with the reason of each skip, goes to $DEPYF_MATRIX_LOGS (default
# test-output/torch-matrix/).
# The exit status is 1 when any release failed.
set -uo pipefail
cd "$(dirname "$0")/.."
SET=matrix
PY_VERSION=3.11
while [ $# -gt 0 ]; do
    case "$1" in
        --set) SET=$2; shift 2 ;;
        --python) PY_VERSION=$2; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
MATRIX="tests/torch/test_seed_example.py tests/torch/test_adapter.py tests/torch/test_torch_releases.py
    tests/torch/test_debugger.py tests/test_optimization.py tests/torch/test_dump_unavailable.py
    tests/torch/test_guards_and_verify.py tests/torch/test_dump_backends.py tests/torch/test_dynamo_zoo.py"
case "$SET" in
    matrix) ARGS=$MATRIX ;;
    full) ARGS="-m torch tests" ;;
    *) echo "test-torch-matrix: --set is matrix or full, not '$SET'" >&2; exit 2 ;;
esac
LOGS=${DEPYF_MATRIX_LOGS:-test-output/torch-matrix}
mkdir -p "$LOGS"
rows=()
failed=0
for version in "$@"; do
    log=$LOGS/torch$version-py$PY_VERSION-$SET.log
    start=$SECONDS
    echo "=== torch $version, CPython $PY_VERSION, $SET set (log: $log)"
    # shellcheck disable=SC2086  # ARGS is a list of words on purpose
    bash scripts/test-torch.sh "$version" "$PY_VERSION" -- -rs $ARGS > "$log" 2>&1
    status=$?
    [ "$status" = 0 ] || failed=1
    summary=$(grep -E "^=*.*(passed|failed|error).* in [0-9.]+s" "$log" | tail -n 1 | tr -d '=' | xargs)
    minutes=$(( (SECONDS - start + 30) / 60 ))
    row="| $version | $PY_VERSION | $SET set, measured $(date -u +%Y-%m-%d) ($(nproc)-core machine): ${summary:-no pytest summary, exit $status} ($minutes min) |"
    echo "$row"
    grep -E "^(FAILED|ERROR) " "$log" | head -n 20
    rows+=("$row")
done
echo
echo "=== rows for docs/torch-versions.md"
printf '%s\n' "${rows[@]}"
exit $failed
