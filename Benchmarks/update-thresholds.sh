#!/usr/bin/env bash
# Regenerates Thresholds/<swift major.minor>/*.p90.json: the p90 malloc counts of ProgressNode's benchmarks,
# the numbers smoke.sh (and CI) check. Run it after an intended change in allocations and commit the diff.
# Only mallocCountTotal is recorded: wall-clock thresholds would fail on any noisy machine.
set -euo pipefail
cd "$(dirname "$0")"

. ./library-root.sh  # the checkout under test: ../ or $PROGRESSTREE_ROOT
swift_version="$(swift --version 2>&1 | sed -nE 's/.*Swift version ([0-9]+\.[0-9]+).*/\1/p' | head -n 1)"
mkdir -p "Thresholds/$swift_version"
PROGRESSTREE_BENCH_QUICK=1 swift package --allow-writing-to-package-directory benchmark thresholds update \
    --path "Thresholds/$swift_version" --filter '.*ProgressNode.*' --metric mallocCountTotal --no-progress
git diff --stat -- "Thresholds/$swift_version" || true
