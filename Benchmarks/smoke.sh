#!/usr/bin/env bash
# CI smoke pass for the Benchmarks package, so it cannot rot. Exits non-zero on any failure.
#
# 1. Builds the whole Benchmarks package in release (both executables, against ../ at its current state).
# 2. Runs every scenario once at small sizes (ProgressTreeCompare --quick). Each scenario checks its own
#    result (for example that two threads leave the root at exactly 1.0 and finished) and stops the run
#    if it is wrong. Speed goals are printed, not enforced: CI machines are too noisy for that.
# 3. Checks the malloc-count thresholds of ProgressNode's benchmarks (Thresholds/<swift major.minor>/),
#    among them ZERO allocations for a million advance(by:) calls. Skipped, with a note, when there are no
#    thresholds for this toolchain, or when SMOKE_SKIP_THRESHOLDS=1.
#
# After an intended change in allocation counts, regenerate the thresholds with ./update-thresholds.sh and
# commit the diff.
set -euo pipefail
cd "$(dirname "$0")"

. ./library-root.sh  # the checkout under test: ../ or $PROGRESSTREE_ROOT

echo "== smoke: building the Benchmarks package (release)"
swift build -c release
bin="$(swift build -c release --show-bin-path)"

echo "== smoke: every scenario once, small sizes, results checked"
"$bin/ProgressTreeCompare" --quick

swift_version="$(swift --version 2>&1 | sed -nE 's/.*Swift version ([0-9]+\.[0-9]+).*/\1/p' | head -n 1)"
thresholds="Thresholds/$swift_version"
if [ "${SMOKE_SKIP_THRESHOLDS:-0}" = "1" ]; then
    echo "== smoke: allocation thresholds skipped (SMOKE_SKIP_THRESHOLDS=1)"
elif [ ! -d "$thresholds" ]; then
    echo "== smoke: no $thresholds for this toolchain (Swift $swift_version); allocation thresholds not checked."
    echo "   Create them with ./update-thresholds.sh and commit them."
else
    echo "== smoke: malloc-count thresholds ($thresholds), ProgressNode benchmarks, few iterations"
    status=0
    PROGRESSTREE_BENCH_QUICK=1 swift package benchmark thresholds check \
        --path "$thresholds" --filter '.*ProgressNode.*' --metric mallocCountTotal --no-progress || status=$?
    if [ "$status" -ne 0 ]; then
        echo "== smoke: FAILED (exit $status): malloc counts differ from $thresholds. The tables above show"
        echo "   which benchmark moved: 'WORSE' means more allocations, 'BETTER' fewer. If the change is intended,"
        echo "   run ./update-thresholds.sh and commit the new numbers."
        exit 1
    fi
fi
echo "== smoke: OK"
