#!/usr/bin/env bash
# Instructions per operation, counted by valgrind's callgrind (repeatable whatever else the machine does):
# for each scenario, one run at full size and one at --quick, and the difference in instructions divided by
# the difference in operations, so that start-up and tree building cancel out.
#
#   Benchmarks/instructions.sh                 # advance(by:), a clean read, a child's life cycle
#   Benchmarks/instructions.sh --shares        # a child's life cycle, plain and through a ProgressShare
#   Benchmarks/instructions.sh --properties    # scenario 20: a property set + a summary read, and references
#   PROGRESSTREE_ROOT=/path/to/checkout Benchmarks/instructions.sh   # another checkout (A/B), as compare.sh
#
# Scenarios (Benchmarks/Sources/Scenarios): 1 one node, 1,000,000 updates (20,000 quick); 9 clean reads of
# a root 8 deep, 2,000,000 (20,000); 6 create, attach and finish a child, 100,000 (2,000). With --shares:
# 6, and 19a-c (ShareScenarios.swift) as many times: a share started by a function and finished, a share
# dropped unstarted, and a child at 0 of 0 given its total, then finished (the design shares did not take).
# With --properties (PropertyScenarios.swift): 20b a value set on a leaf 8 deep + a read of the root's
# summary, 100,000 pairs (2,000 quick), beside its reference (advance + fractionCompleted); 20a a value set on
# one of 100,000 children + a read, a sum and a maximum, 10,000 (200).
set -euo pipefail
cd "$(dirname "$0")"
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is not installed (apt-get install valgrind)"; exit 1; }

. ./library-root.sh  # the checkout under test: ../ or $PROGRESSTREE_ROOT
swift build -c release --product ProgressTreeCompare >&2
bin="$(swift build -c release --show-bin-path)/ProgressTreeCompare"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
count() {  # scenario, extra argument → total instructions of the run
    valgrind --tool=callgrind --callgrind-out-file="$work/out" "$bin" --profile "$1" pn $2 >/dev/null 2>"$work/log"
    grep -E "^summary:|^totals:" "$work/out" | head -1 | awk '{print $2}'
}
printf '%-40s %14s\n' "operation" "instructions"
specs=("1:980000:advance(by: 1) on one node" "9:1980000:fractionCompleted, clean, 8 deep"
    "6:98000:create, attach, finish a child")
if [ "${1:-}" = "--shares" ]; then
    specs=("6:98000:create, attach, finish a child" "19a:98000:share, started by a function, finished"
        "19b:98000:share, dropped unstarted" "19c:98000:child at 0 of 0, total set, finished")
fi
if [ "${1:-}" = "--properties" ]; then
    specs=("20b:98000:20b set on a leaf 8 deep + root summary" "20bref:98000:20b ref: advance + fractionCompleted"
        "20a:9800:20a sum: set + read, 100,000 children" "20amax:9800:20a maximum: set + read, 100,000")
fi
for spec in "${specs[@]}"; do
    IFS=: read -r scenario operations name <<<"$spec"
    full=$(count "$scenario" "")
    quick=$(count "$scenario" "--quick")
    awk -v name="$name" -v full="$full" -v quick="$quick" -v n="$operations" \
        'BEGIN { printf "%-40s %14.1f\n", name, (full - quick) / n }'
done
