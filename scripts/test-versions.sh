#!/usr/bin/env bash
# Runs the decompiler tests (tests/decompiler, without the slow ones) on every supported CPython
# other than the default 3.11: native pyenv interpreters where present, pyodide otherwise
# (see scripts/pyver). Prints one summary line per version; fails if any version fails.
#
#   scripts/test-versions.sh                      # 3.10 3.12 3.13 3.14 3.15
#   DEPYF_VERSIONS="3.12 3.14" scripts/test-versions.sh -k coverage   # extra args go to pytest
#   DEPYF_PYVER_MODE=--pyodide scripts/test-versions.sh              # force pyodide everywhere
set -uo pipefail
cd "$(dirname "$0")/.."
VERSIONS=${DEPYF_VERSIONS:-3.10 3.12 3.13 3.14 3.15}
PER_VERSION_TIMEOUT=${DEPYF_VERSION_TIMEOUT:-600}
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT

declare -A RESULT
failed=0
start_all=$SECONDS
for version in $VERSIONS; do
    echo "=== CPython $version: tests/decompiler"
    start=$SECONDS
    timeout "$PER_VERSION_TIMEOUT" bash scripts/pyver "$version" ${DEPYF_PYVER_MODE:-} -- \
        pytest tests/decompiler -q -p no:cacheprovider -m "not slow" "$@" 2>&1 | tee "$LOGS/$version.log"
    status=${PIPESTATUS[0]}
    summary=$(grep -E "(passed|failed|error|skipped|no tests ran)" "$LOGS/$version.log" | tail -n 1 | tr -d '=' | xargs)
    [ "$status" = 124 ] && summary="timed out after ${PER_VERSION_TIMEOUT}s"
    RESULT[$version]="$(printf 'exit %-3s %4ss  %s' "$status" $((SECONDS - start)) "${summary:-no pytest summary}")"
    [ "$status" = 0 ] || failed=1
done

echo
echo "=== decompiler tests per CPython version ($((SECONDS - start_all))s in all)"
for version in $VERSIONS; do
    printf '%-5s %s\n' "$version" "${RESULT[$version]}"
done
exit $failed
