#!/usr/bin/env bash
# Prints the side-by-side table of Docs/Performance.md: for every scenario, ProgressNode's time, Foundation.Progress's time
# (the toolchain's own, same process, same run), the speedup, and ProgressNode's time relative to the same
# number of bare relaxed Atomic<Int64> adds (the physical limit of a thread-safe counter).
#
#   Benchmarks/compare.sh                      # full sizes, best of 9 interleaved rounds (a few minutes)
#   Benchmarks/compare.sh --quick              # small sizes, one round (plus the release build)
#   Benchmarks/compare.sh --repeats 15         # more rounds on a noisy machine
#   Benchmarks/compare.sh --unsafe-foundation  # also run Foundation unlocked from two threads (a data race)
#
# PROGRESSTREE_ROOT=/path/to/another/checkout measures that checkout of the library instead of ../ (A/B runs).
#
# Times come from the ProgressTreeCompare executable (ContinuousClock around each whole scenario, results
# checked). Allocation counts and their CI thresholds come from `swift package benchmark` (see README.md).
#   Benchmarks/compare.sh --only 1,6,7         # just those scenarios (8 = terminal renderer on vs off)
#   Benchmarks/compare.sh --only 6,7,9,10,11,12,13   # the read scenarios (see README.md)
set -euo pipefail
cd "$(dirname "$0")"

. ./library-root.sh  # the checkout under test: ../ or $PROGRESSTREE_ROOT

swift build -c release --product ProgressTreeCompare >&2
bin="$(swift build -c release --show-bin-path)"
exec "$bin/ProgressTreeCompare" "$@"
