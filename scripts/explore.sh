#!/usr/bin/env bash
# Random exploration of the decompiler's property tests, for a time budget. The default test run
# is deterministic; this draws new programs (a fresh seed per round) until the minutes are spent.
# Every program found failing is written to tests/decompiler/property_cases/ as a case to add:
# the default run replays that directory.
#
#   scripts/explore.sh [--minutes N] [--python PYVERSION] [-- extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=10
PYVERSION=
while [ $# -gt 0 ]; do
    case "$1" in
        --minutes) MINUTES=$2; shift 2 ;;
        --python) PYVERSION=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "explore.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
END=$(( $(date +%s) + MINUTES * 60 ))
BEFORE=$(ls tests/decompiler/property_cases/*.pysrc 2>/dev/null | sort)
ROUND=0
while [ "$(date +%s)" -lt "$END" ]; do
    ROUND=$((ROUND + 1))
    SEED=$RANDOM$RANDOM
    echo "explore.sh: round $ROUND, seed $SEED"
    ARGS=(-q -p no:cacheprovider tests/decompiler/test_roundtrip_properties.py -k "not stored_cases"
          --hypothesis-seed="$SEED" "$@")
    if [ -n "$PYVERSION" ]; then
        DEPYF_EXPLORE=1 bash scripts/pyver "$PYVERSION" -- pytest "${ARGS[@]}" || true
    else
        DEPYF_EXPLORE=1 .venv/bin/python -m pytest "${ARGS[@]}" || true
    fi
done
AFTER=$(ls tests/decompiler/property_cases/*.pysrc 2>/dev/null | sort)
NEW=$(comm -13 <(echo "$BEFORE") <(echo "$AFTER") | sed '/^$/d')
if [ -n "$NEW" ]; then
    echo "explore.sh: new failing programs (add them, with a fix or '# allow: refusal'):"
    echo "$NEW"
    exit 1
fi
echo "explore.sh: $ROUND rounds in $MINUTES min, nothing new found"
