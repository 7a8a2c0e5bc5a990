"""The load benchmark of jobs on PostgreSQL (run by load.sh, inside Tests/postgres/with-postgres.sh): two
web instances (jobs-on-postgres serve), one worker process publishing JOBS jobs of NODES nodes whose
children change continuously (jobs-load-bench), and READERS page readers of /events (raw sockets, one
thread), each on one job, spread over both instances. It reports the latency from a change in the worker
to a reader (each child's completed count is the wall clock in ms when it was set), rows written against
the nodes that changed, and the CPU of PostgreSQL, of each instance and of the worker, with the processor.
Not a test: figures, for Docs/JobsOnPostgreSQL.md and the issue."""

import json
import os
import re
import selectors
import socket
import subprocess
import sys
import time

BIN = os.environ["BENCH_BIN"]
URL = os.environ["PROGRESSTREE_POSTGRES_URL"]
JOBS = int(os.environ.get("JOBS", "100"))
NODES = int(os.environ.get("NODES", "50"))
READERS = int(os.environ.get("READERS", "200"))
SECONDS = int(os.environ.get("SECONDS_MEASURED", "20"))
WARMUP = 5
TICK = os.environ.get("TICK_MS", "50")
COMPLETED = re.compile(rb'"completed":(\d{12,14})')
CLOCK = os.sysconf("SC_CLK_TCK")


def processor():
    with open("/proc/cpuinfo") as info:
        names = [line.split(":", 1)[1].strip() for line in info if line.startswith("model name")]
    return "%s, %d cores" % (names[0] if names else "unknown", len(names))


def cpu_ticks(pid):
    try:
        with open("/proc/%d/stat" % pid) as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return 0


def postgres_pids():
    data = os.environ["PROGRESSTREE_POSTGRES_DATA"]
    with open(os.path.join(data, "postmaster.pid")) as file:
        master = int(file.readline())
    pids = [master]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == master:
                        pids.append(int(entry))
            except (FileNotFoundError, ProcessLookupError):
                pass
    return pids


def start_instance():
    process = subprocess.Popen([BIN.replace("jobs-load-bench", "jobs-on-postgres"), "serve", "--postgres", URL,
                                "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    url = process.stdout.readline().decode().strip()
    port = int(re.search(r":(\d+)/", url).group(1))
    return process, port


def main():
    instances = [start_instance(), start_instance()]
    worker = subprocess.Popen([BIN, "--postgres", URL, "--jobs", str(JOBS), "--nodes", str(NODES), "--tick-ms", TICK,
                               "--seconds", str(SECONDS + WARMUP + 3)], stdout=subprocess.PIPE)
    first = worker.stdout.readline().decode().strip()
    if not first.startswith("published"):
        sys.exit("the worker did not publish: %r" % first)
    selector = selectors.DefaultSelector()
    readers = []
    for index in range(READERS):
        port = instances[index % 2][1]
        connection = socket.create_connection(("127.0.0.1", port))
        connection.sendall(("GET /jobs/load-%d/events HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\n\r\n"
                            % (index % JOBS, port)).encode())
        connection.setblocking(False)
        state = {"synced": False, "buffer": b""}
        readers.append(state)
        selector.register(connection, selectors.EVENT_READ, state)
    latencies = []
    events = 0
    begin = time.monotonic()
    measuring = False
    cpu_before = {}
    while time.monotonic() - begin < WARMUP + SECONDS:
        if not measuring and time.monotonic() - begin >= WARMUP:
            measuring = True
            started = time.monotonic()
            cpu_before = {"postgres": sum(cpu_ticks(pid) for pid in postgres_pids()),
                          "instance A": cpu_ticks(instances[0][0].pid), "instance B": cpu_ticks(instances[1][0].pid),
                          "worker": cpu_ticks(worker.pid), "readers (this script)": cpu_ticks(os.getpid())}
        for key, _ in selector.select(0.5):
            try:
                data = key.fileobj.recv(1 << 16)
            except BlockingIOError:
                continue
            if not data:
                selector.unregister(key.fileobj)
                continue
            state = key.data
            now = time.time() * 1000
            if not state["synced"]:
                state["buffer"] += data
                if b"event: synced" in state["buffer"]:
                    state["synced"] = True
                    state["buffer"] = b""
                continue
            if measuring:
                events += data.count(b"\ndata: ")
                for match in COMPLETED.finditer(data):
                    latencies.append(now - int(match.group(1)))
    window = time.monotonic() - started
    cpu_after = {"postgres": sum(cpu_ticks(pid) for pid in postgres_pids()),
                 "instance A": cpu_ticks(instances[0][0].pid), "instance B": cpu_ticks(instances[1][0].pid),
                 "worker": cpu_ticks(worker.pid), "readers (this script)": cpu_ticks(os.getpid())}
    synced = sum(1 for state in readers if state["synced"])
    summary = json.loads(worker.stdout.read().decode().strip().splitlines()[-1])
    worker.wait(60)
    for process, _ in instances:
        process.terminate()
        process.wait(10)
    latencies.sort()

    def percentile(p):
        return latencies[min(len(latencies) - 1, int(len(latencies) * p))] if latencies else float("nan")

    rows_per_second = summary["rowsWritten"] / summary["seconds"]
    statements_per_second = summary["statements"] / summary["seconds"]
    intervals = summary["seconds"] / 0.25
    print("processor: %s" % processor())
    print("load: %d jobs x %d nodes, every child set every %s ms; 2 instances; %d readers (%d synced); %d s measured"
          % (JOBS, NODES, TICK, READERS, synced, round(window)))
    print("change -> reader latency: p50 %.0f ms, p99 %.0f ms, max %.0f ms (%d changes seen, %d events)"
          % (percentile(0.5), percentile(0.99), latencies[-1] if latencies else float("nan"), len(latencies), events))
    print("writes: %.0f statements/s (%.2f per job per second), %.0f rows/s, %.1f rows per statement;"
          " nodes changed per interval: %d per job, %d in all (bound: %.0f rows/s)"
          % (statements_per_second, statements_per_second / JOBS, rows_per_second,
             summary["rowsWritten"] / max(1, summary["statements"]), NODES, NODES * JOBS, NODES * JOBS * 4))
    for name in cpu_before:
        print("cpu %s: %.0f%% of one core" % (name, 100.0 * (cpu_after[name] - cpu_before[name]) / CLOCK / window))
    ok = latencies and percentile(0.99) <= 1000 and rows_per_second <= NODES * JOBS * 4 and synced == READERS
    print("goals (p99 <= 1 s, rows/s <= changed nodes per interval, every reader synced): %s" % ("met" if ok else "NOT met"))


if __name__ == "__main__":
    main()
