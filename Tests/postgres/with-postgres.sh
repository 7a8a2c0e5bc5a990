#!/usr/bin/env bash
# Runs a command with a PostgreSQL server of its own: a new cluster (initdb) in a temporary folder, on a
# free port of 127.0.0.1 (or $PGPORT), started as the `postgres` user when run as root (the server refuses
# to run as root), with a database `progresstree` that user `progresstree` (password `progresstree`) owns.
# The command gets its URL in PROGRESSTREE_POSTGRES_URL, and the folder and `pg_ctl` in
# PROGRESSTREE_POSTGRES_DATA and PROGRESSTREE_PG_CTL (so that a test can restart the server); the server
# is stopped and its folder removed when the command ends, however it ends.
#
#   bash Tests/postgres/with-postgres.sh swift test --package-path Integrations/ProgressTreePostgres
#
# Needs Debian's PostgreSQL server (`apt-get install postgresql`: binaries in /usr/lib/postgresql/15/bin).
# PROGRESSTREE_POSTGRES_NETNS=NAME runs the server in network namespace NAME (ip netns), listening on
# PROGRESSTREE_POSTGRES_LISTEN (an address of that namespace; 127.0.0.1 by default), which the URL names.
set -euo pipefail

bin=""
for candidate in /usr/lib/postgresql/*/bin; do
    [ -x "$candidate/initdb" ] && bin=$candidate
done
if [ -z "$bin" ]; then
    echo "with-postgres: no PostgreSQL server found (/usr/lib/postgresql/*/bin/initdb): apt-get install postgresql" >&2
    exit 1
fi

data=$(mktemp -d /tmp/progresstree-postgres.XXXXXX)
listen=${PROGRESSTREE_POSTGRES_LISTEN:-127.0.0.1}
as_owner=()
if [ -n "${PROGRESSTREE_POSTGRES_NETNS:-}" ]; then
    as_owner=(ip netns exec "$PROGRESSTREE_POSTGRES_NETNS")
fi
if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$data"
    as_owner+=(runuser -u postgres --)
fi
port=${PGPORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}

stop() {
    "${as_owner[@]}" "$bin/pg_ctl" -D "$data/cluster" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$data"
}
trap stop EXIT

"${as_owner[@]}" "$bin/initdb" -D "$data/cluster" -U postgres -A trust --no-sync -E UTF8 >"$data/initdb.log" 2>&1 \
    || { cat "$data/initdb.log" >&2; exit 1; }
cat >>"$data/cluster/postgresql.conf" <<CONF
listen_addresses = '$listen'
port = $port
unix_socket_directories = '$data'
fsync = off
max_connections = 200
CONF
# Other machines (namespaces) of its network log in with the password.
echo "host all all samenet scram-sha-256" >>"$data/cluster/pg_hba.conf"
"${as_owner[@]}" "$bin/pg_ctl" -D "$data/cluster" -l "$data/server.log" -w -t 30 start >/dev/null \
    || { cat "$data/server.log" >&2; exit 1; }
"${as_owner[@]}" "$bin/psql" -h "$data" -p "$port" -U postgres -q -v ON_ERROR_STOP=1 \
    -c "CREATE ROLE progresstree LOGIN PASSWORD 'progresstree'" -c "CREATE DATABASE progresstree OWNER progresstree" \
    >/dev/null

export PROGRESSTREE_POSTGRES_URL="postgres://progresstree:progresstree@$listen:$port/progresstree"
export PROGRESSTREE_POSTGRES_DATA="$data/cluster"
export PROGRESSTREE_PG_CTL="$bin/pg_ctl"
export PROGRESSTREE_PG_OWNER=$([ "$(id -u)" -eq 0 ] && echo postgres)
export PROGRESSTREE_POSTGRES_LOG="$data/server.log"
echo "with-postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on $listen:$port" >&2
set +e
"$@"
code=$?
set -e
exit $code
