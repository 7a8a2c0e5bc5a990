#!/usr/bin/env bash
# The cross-machine test of jobs on PostgreSQL (Docs/JobsOnPostgreSQL.md): PostgreSQL, a worker and two web
# instances of Integrations/ProgressTreePostgres's jobs-on-postgres, each in a network namespace of its own
# ("another machine": ip netns, a veth pair each, joined by a bridge), nginx on this machine sending
# requests to the two instances in turn (round-robin), and a job's page watched in headless Chromium
# through nginx (Tests/browser's harness). It checks (Tests/cross-machine/jobs_on_postgres.py) that
#   1. the page ends equal to the worker's own tree, exactly, and a command sent from it reaches the worker;
#   2. kill -9 of the worker mid-job: the page shows "stopped reporting" within the heartbeat timeout + 2 s;
#   3. a restart of PostgreSQL mid-job: the page says "reconnecting…", then ends on the true final state;
#   4. a restart of one instance mid-job: the page ends on the true final state.
# Run as root; needs nginx, chromium, chromedriver and Selenium (Tests/browser/run.sh installs them) and
# Debian's PostgreSQL server. It fails, never skips, when it cannot run. Everything it starts is ended, and
# the namespaces, links and files removed, on every exit path. Ends with "N passed, M failed".
#
#   bash Tests/cross-machine/jobs-on-postgres.sh
set -uo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "jobs-on-postgres: FAILED: $*"; echo "0 passed, 1 failed"; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "must run as root (ip netns)"
for tool in ip nginx chromium chromedriver; do command -v $tool >/dev/null || fail "no $tool"; done
python3 -c "import selenium" 2>/dev/null || fail "no selenium (Tests/browser/run.sh installs it)"

package=Integrations/ProgressTreePostgres
swift build --package-path "$package" --product jobs-on-postgres >/dev/null 2>&1 \
    || fail "cannot build jobs-on-postgres ($package)"
export JOBS_BIN="$(swift build --package-path "$package" --show-bin-path)/jobs-on-postgres"

tag="pg$$"
bridge="ptb$$"
names=(db worker a b)
work=$(mktemp -d)
export JOBS_WORK="$work"

cleanup() {
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null
    for name in "${names[@]}"; do
        # Whatever still runs in a namespace (a server the driver did not end) ends with it.
        for pid in $(ip netns pids "$tag-$name" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        ip netns del "$tag-$name" 2>/dev/null
        ip link del "${tag}h$name" 2>/dev/null
    done
    ip link del "$bridge" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A /24 of 10.201.0.0/16 that no interface of this machine uses.
subnet=""
for attempt in $(seq 0 40); do
    candidate=$(((($$ + attempt * 7) % 200) + 20))
    if ! ip -4 addr show | grep -q "inet 10\.201\.$candidate\."; then subnet=$candidate; break; fi
done
[ -n "$subnet" ] || fail "no free subnet in 10.201.0.0/16"
export HOST_IP="10.201.$subnet.1"
ip link add "$bridge" type bridge && ip addr add "$HOST_IP/24" dev "$bridge" && ip link set "$bridge" up \
    || fail "the bridge"
number=2
for name in "${names[@]}"; do
    ip netns add "$tag-$name" || fail "ip netns add $tag-$name"
    ip link add "${tag}h$name" type veth peer name "${tag}i$name" || fail "veth of $name"
    ip link set "${tag}i$name" netns "$tag-$name" && ip link set "${tag}h$name" master "$bridge" \
        && ip link set "${tag}h$name" up || fail "links of $name"
    ip netns exec "$tag-$name" ip addr add "10.201.$subnet.$number/24" dev "${tag}i$name" \
        && ip netns exec "$tag-$name" ip link set "${tag}i$name" up && ip netns exec "$tag-$name" ip link set lo up \
        || fail "addresses of $name"
    export "IP_$(echo "$name" | tr a-z A-Z)=10.201.$subnet.$number"
    export "NS_$(echo "$name" | tr a-z A-Z)=$tag-$name"
    number=$((number + 1))
done

mkdir -p "$work/temp"
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 256; }
http {
    access_log $work/access.log;
    client_body_temp_path $work/temp/body;
    proxy_temp_path $work/temp/proxy;
    fastcgi_temp_path $work/temp/fastcgi;
    uwsgi_temp_path $work/temp/uwsgi;
    scgi_temp_path $work/temp/scgi;
    upstream instances {
        server $IP_A:8080 max_fails=0;
        server $IP_B:8080 max_fails=0;
    }
    server {
        listen $HOST_IP:8080;
        location / {
            proxy_pass http://instances;
            proxy_next_upstream error timeout http_502 http_503;
            proxy_http_version 1.1;
            proxy_set_header Host \$http_host;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_cache off;
            proxy_read_timeout 1h;
            proxy_connect_timeout 2s;
        }
    }
}
CONF
nginx -p "$work" -c "$work/nginx.conf" -e "$work/error.log" || fail "nginx did not start"

# PostgreSQL in its namespace, on its address there; the driver runs with its URL and stops it after.
PROGRESSTREE_POSTGRES_NETNS="$NS_DB" PROGRESSTREE_POSTGRES_LISTEN="$IP_DB" \
    bash Tests/postgres/with-postgres.sh python3 Tests/cross-machine/jobs_on_postgres.py
