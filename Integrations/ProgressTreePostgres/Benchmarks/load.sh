#!/usr/bin/env bash
# The load benchmark of jobs on PostgreSQL (issue 48): 100 jobs x 50 nodes changing continuously, one
# worker process, 2 web instances, 200 page readers, through one PostgreSQL server started for it
# (Tests/postgres/with-postgres.sh). Prints the latency from a change to a reader (p50, p99), rows written
# against the nodes that changed, and the CPU of PostgreSQL, each instance and the worker, with the
# processor. Not a test: it reports. JOBS, NODES, READERS, SECONDS_MEASURED, TICK_MS change the load;
# CONFIGURATION=release (the default) or debug.
#
#   bash Integrations/ProgressTreePostgres/Benchmarks/load.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
package=Integrations/ProgressTreePostgres
configuration=${CONFIGURATION:-release}
swift build --package-path "$package" -c "$configuration" --product jobs-load-bench >/dev/null
swift build --package-path "$package" -c "$configuration" --product jobs-on-postgres >/dev/null
export BENCH_BIN="$(swift build --package-path "$package" -c "$configuration" --show-bin-path)/jobs-load-bench"
echo "configuration: $configuration"
bash Tests/postgres/with-postgres.sh python3 "$package/Benchmarks/load.py"
