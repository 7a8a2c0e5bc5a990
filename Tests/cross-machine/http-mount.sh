#!/usr/bin/env bash
# The cross-machine test of a mount over HTTP (Docs/Mounting.md, "Over HTTP"): a tree served in another
# network namespace of this machine (ip netns, a veth pair), mounted by URL through a reverse proxy (nginx
# from Debian's packages, which knows nothing of the format). It checks that
#   1. the mount mirrors the served tree and survives the proxy restarting (it reconnects), and finishes
#      with the root's final state;
#   2. the mount fails with a reason naming the URL when the server is gone.
# Run as root (it makes a namespace); it fails, never skips, when it cannot run. Everything it starts is
# ended, and the namespace, the veth pair and its files removed, on every exit path.
#
#   bash Tests/cross-machine/http-mount.sh
#
# Both checks run twice: with a scripted server (HTTP_MOUNT_SERVER replaces it; its --host and --port are
# added), and with the web dashboard's server (Integrations/ProgressTreeWeb's web-dashboard).
set -uo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "http-mount: FAILED: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "must run as root (ip netns)"
command -v ip >/dev/null || fail "no ip command (iproute2)"
command -v nginx >/dev/null || fail "no nginx (apt-get install -y nginx)"

swift build --product sse-test-server >/dev/null 2>&1 || fail "cannot build sse-test-server"
swift build --product http-mount-probe >/dev/null 2>&1 || fail "cannot build http-mount-probe"
bin=$(swift build --show-bin-path)
swift build --package-path Integrations/ProgressTreeWeb --product web-dashboard >/dev/null 2>&1 \
    || fail "cannot build web-dashboard (Integrations/ProgressTreeWeb)"
dashboard="$(swift build --package-path Integrations/ProgressTreeWeb --show-bin-path)/web-dashboard"

work=$(mktemp -d)
namespace="pt-http-$$"
host_link="pth$$a"
inside_link="pth$$b"
server_pid=""
probe_pid=""

cleanup() {
    [ -n "$probe_pid" ] && kill "$probe_pid" 2>/dev/null
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null
    sleep 0.3
    [ -f "$work/nginx.pid" ] && kill -9 "$(cat "$work/nginx.pid")" 2>/dev/null
    ip netns del "$namespace" 2>/dev/null
    ip link del "$host_link" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A /30 of 10.200.0.0/16 that no interface of this machine uses (other runs may hold theirs).
subnet=""
for attempt in $(seq 0 40); do
    candidate=$(((($$ + attempt * 7) % 200) + 20))
    if ! ip -4 addr show | grep -q "inet 10\.200\.$candidate\."; then subnet=$candidate; break; fi
done
[ -n "$subnet" ] || fail "no free subnet in 10.200.0.0/16"
host_ip="10.200.$subnet.1"
inside_ip="10.200.$subnet.2"

ip netns add "$namespace" || fail "ip netns add"
ip link add "$host_link" type veth peer name "$inside_link" || fail "ip link add veth"
ip link set "$inside_link" netns "$namespace" || fail "veth into the namespace"
ip addr add "$host_ip/30" dev "$host_link" && ip link set "$host_link" up || fail "host side of the veth"
ip netns exec "$namespace" ip addr add "$inside_ip/30" dev "$inside_link" || fail "inside address"
ip netns exec "$namespace" ip link set "$inside_link" up && ip netns exec "$namespace" ip link set lo up \
    || fail "inside links up"

server_command=""
start_server() {
    ip netns exec "$namespace" $server_command >"$work/server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 100); do
        ip netns exec "$namespace" bash -c "echo >/dev/tcp/$inside_ip/8080" 2>/dev/null && return 0
        sleep 0.1
    done
    cat "$work/server.log"
    fail "the server did not listen on $inside_ip:8080"
}

mkdir -p "$work/temp"
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
    access_log $work/access.log;
    client_body_temp_path $work/temp/body;
    proxy_temp_path $work/temp/proxy;
    fastcgi_temp_path $work/temp/fastcgi;
    uwsgi_temp_path $work/temp/uwsgi;
    scgi_temp_path $work/temp/scgi;
    server {
        listen $host_ip:8080;
        location / {
            proxy_pass http://$inside_ip:8080;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_cache off;
            proxy_read_timeout 1h;
        }
    }
}
CONF
start_nginx() {
    nginx -p "$work" -c "$work/nginx.conf" -e "$work/error.log" || fail "nginx did not start"
    for _ in $(seq 50); do [ -s "$work/nginx.pid" ] && return 0; sleep 0.1; done
    fail "nginx wrote no pid"
}
stop_nginx() {
    local pid
    pid=$(cat "$work/nginx.pid")
    nginx -p "$work" -c "$work/nginx.conf" -e "$work/error.log" -s stop
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    fail "nginx did not stop"
}
url="http://$host_ip:8080/events"
# Waits until the probe printed at least `$1` units done.
wait_progress() {
    for _ in $(seq 200); do
        if grep -qE "^running ([0-9]+)/" "$work/probe.log" \
            && [ "$(grep -oE "^running [0-9]+" "$work/probe.log" | tail -1 | cut -d' ' -f2)" -ge "$1" ]; then
            return 0
        fi
        kill -0 "$probe_pid" 2>/dev/null || break
        sleep 0.1
    done
    cat "$work/probe.log"
    fail "the mount showed no progress to $1"
}
# Waits at most 60 s for the probe; its exit status in $probe_status.
wait_probe() {
    for _ in $(seq 600); do kill -0 "$probe_pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$probe_pid" 2>/dev/null && fail "the probe did not end within 60 s"
    wait "$probe_pid"
    probe_status=$?
    probe_pid=""
}

# run_phases NAME SERVER TOTAL PROGRESS: phases 1 and 2 with the server SERVER (its --host and --port
# added), whose root has TOTAL units when finished; nginx is restarted once the mount shows PROGRESS units.
run_phases() {
    local name=$1 total=$3 progress=$4
    server_command="$2 --host $inside_ip --port 8080"

    echo "--- $name, 1. mounting $url (nginx on $host_ip → server in $namespace at $inside_ip), restarting nginx"
    start_server
    start_nginx
    "$bin/http-mount-probe" "$url" >"$work/probe.log" 2>&1 &
    probe_pid=$!
    wait_progress "$progress"
    stop_nginx
    sleep 1
    start_nginx
    wait_probe
    cat "$work/probe.log"
    [ "$probe_status" -eq 0 ] || fail "$name: the mount did not finish (exit status $probe_status)"
    grep -qE "^end: finished $total/$total reconnections: [1-9]" "$work/probe.log" \
        || fail "$name: the mount did not reconnect and finish $total/$total"
    # A server that keeps serving its final state (web-dashboard) is ended here; the scripted one ended.
    kill -TERM "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
    server_pid=""
    stop_nginx

    echo "--- $name, 2. the server gone: the mount fails with the reason"
    start_server
    start_nginx
    "$bin/http-mount-probe" "$url" 3 >"$work/probe.log" 2>&1 &
    probe_pid=$!
    wait_progress 1
    kill -9 "$server_pid"
    wait "$server_pid" 2>/dev/null
    server_pid=""
    wait_probe
    cat "$work/probe.log"
    [ "$probe_status" -eq 1 ] || fail "$name: the mount did not fail (exit status $probe_status)"
    grep -qxF "failed: $url: answered 502 Bad Gateway for 3 s" "$work/probe.log" \
        || fail "$name: not the reason expected: failed: $url: answered 502 Bad Gateway for 3 s"
    stop_nginx
}

# A scripted server (exact steps), then the web dashboard's Hummingbird server (Integrations/ProgressTreeWeb)
# running photo-import's job, as a user would serve it.
run_phases "scripted server" "${HTTP_MOUNT_SERVER:-$bin/sse-test-server --steps 40 --interval 250}" 40 8
run_phases "web-dashboard" "$dashboard --photos 12 --speed 1" 12 3

echo "Test Case 'http-mount.sh: a mount over HTTP through nginx across network namespaces' passed"
