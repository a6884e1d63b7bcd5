#!/usr/bin/env bash
# Runs the decompiler tests (tests/decompiler, without the slow ones) on every supported CPython
# other than the default 3.11: native pyenv interpreters where present, pyodide otherwise
# (see scripts/pyver). Versions run in parallel (DEPYF_VERSION_JOBS, default 2); each version's
# output is printed when it finishes, then one summary line per version.
#
# Exit status: fails when a gating version fails (DEPYF_GATING_VERSIONS, default the native
# interpreters 3.10 3.12 3.13; their known gaps are listed in tests/known_gaps.txt and reported as
# xfail). The pyodide runs (3.14, 3.15) are reported but do not gate yet: under node they still
# time out or abort the WebAssembly runtime on some inputs (see docs/versions.md).
#
#   scripts/test-versions.sh                      # 3.10 3.12 3.13 3.14 3.15
#   DEPYF_VERSIONS="3.12 3.14" scripts/test-versions.sh -k coverage   # extra args go to pytest
#   DEPYF_PYVER_MODE=--pyodide scripts/test-versions.sh              # force pyodide everywhere
set -uo pipefail
cd "$(dirname "$0")/.."
# Slowest first (pyodide runs take several times longer than native ones).
VERSIONS=${DEPYF_VERSIONS:-3.14 3.15 3.10 3.12 3.13}
JOBS=${DEPYF_VERSION_JOBS:-2}
PER_VERSION_TIMEOUT=${DEPYF_VERSION_TIMEOUT:-1500}
GATING=${DEPYF_GATING_VERSIONS:-3.10 3.12 3.13}
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT

run_version() {
    local version=$1; shift
    local start=$SECONDS
    timeout "$PER_VERSION_TIMEOUT" bash scripts/pyver "$version" ${DEPYF_PYVER_MODE:-} -- \
        pytest tests/decompiler -q -p no:cacheprovider -m "not slow" --durations=5 "$@" > "$LOGS/$version.log" 2>&1
    echo "$? $((SECONDS - start))" > "$LOGS/$version.status"
}

# pyver installs pyodide and venvs on first use: do that one at a time, before the parallel runs.
for version in $VERSIONS; do
    bash scripts/pyver "$version" ${DEPYF_PYVER_MODE:-} -- python -c pass || true
done

start_all=$SECONDS
running=0
for version in $VERSIONS; do
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
    run_version "$version" "$@" &
    running=$((running + 1))
done
wait

failed=0
summary_lines=()
for version in $VERSIONS; do
    echo "=== CPython $version: tests/decompiler"
    cat "$LOGS/$version.log"
    read -r status seconds < "$LOGS/$version.status"
    summary=$(grep -E "(passed|failed|error|skipped|deselected|no tests ran)" "$LOGS/$version.log" | tail -n 1 | tr -d '=' | xargs)
    [ "$status" = 124 ] && summary="timed out after ${PER_VERSION_TIMEOUT}s"
    gate="gating"
    case " $GATING " in *" $version "*) [ "$status" = 0 ] || failed=1 ;; *) gate="report only" ;; esac
    summary_lines+=("$(printf '%-5s exit %-3s %4ss  %-12s %s' "$version" "$status" "$seconds" "$gate" "${summary:-no pytest summary}")")
done

echo
echo "=== decompiler tests per CPython version ($((SECONDS - start_all))s in all, $JOBS at a time)"
printf '%s\n' "${summary_lines[@]}"
exit $failed
