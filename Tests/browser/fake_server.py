#!/usr/bin/env python3
"""A stand-in for `web-dashboard`: serves the dashboard's three files and a scripted photo import over
Server-Sent Events, as Docs/WireFormat.md ("Over HTTP") says, with the same command line:

    python3 Tests/browser/fake_server.py --port 0 --photos 12 --speed 1 --fail-every 5 [--read-only]

Its first line on standard output is the page's URL. It is for working on the page without building the
Swift server, and a fixture for the browser test (DASHBOARD_SERVER="python3 Tests/browser/fake_server.py").
Standard library only.

The job: an album of N photos, three at a time; each photo a download (a file node, in bytes, 9 of its 10
units) and a filter (8 steps, 1 unit). Every Nth photo's download fails half way (--fail-every N), with the
reason photo-import gives. Every node is cancellable; the album and the photos are pausable.
"""

import argparse
import hashlib
import json
import os
import secrets
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
RESOURCES = os.path.normpath(
    os.path.join(HERE, "..", "..", "Integrations", "ProgressTreeWeb", "Sources", "ProgressTreeWeb", "Resources"))
FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/dashboard.js": ("dashboard.js", "text/javascript; charset=utf-8"),
    "/dashboard.css": ("dashboard.css", "text/css; charset=utf-8"),
}
FINAL = ("cancelled", "failed", "finished")


def wire(value):
    """A line of the wire format: compact JSON, UTF-8."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Node:
    def __init__(self, job, parent, pending, name, total, **metadata):
        self.id = job.next_id()
        self.parent = parent
        self.pending = pending
        self.name = name
        self.total = total
        self.completed = 0
        self.state = "running"
        self.reason = None
        self.children = []
        self.left = False          # finished or failed: out of its parent's children (after its last line)
        self.throughput = None
        self.metadata = metadata
        self.pausable = metadata.pop("pausable", False)
        if parent is not None:
            parent.children.append(self)

    def fraction(self):
        if self.state == "finished":
            return 1.0
        if self.total <= 0:
            return 0.0
        units = self.completed
        for child in self.children:
            if child.state not in ("finished",):
                units += child.pending * child.fraction()
        return max(0.0, min(1.0, units / self.total))

    def paused(self):
        node = self
        while node is not None:
            if node.state == "paused":
                return True
            node = node.parent
        return False

    def outcomes(self):
        failed = cancelled = 0
        for child in self.children:
            failed += child.state == "failed"
            cancelled += child.state == "cancelled"
            f, c = child.outcomes()
            failed += f
            cancelled += c
        return failed, cancelled

    def line(self, throughput=None, remaining=None):
        failed, cancelled = self.outcomes()
        meta = self.metadata
        return {
            "v": 1, "time": None, "id": self.id, "parent": self.parent.id if self.parent else None,
            "pending": self.pending, "name": self.name, "completed": self.completed, "total": self.total,
            "fraction": round(self.fraction(), 4), "state": self.state, "indeterminate": False,
            "throughput": throughput, "timeRemaining": remaining, "reason": self.reason,
            "failedBelow": failed, "cancelledBelow": cancelled, "description": meta.get("description"),
            "additionalDescription": meta.get("additionalDescription"), "kind": meta.get("kind"),
            "fileOperationKind": meta.get("fileOperationKind"), "fileURL": meta.get("fileURL"),
            "fileTotalCount": None, "fileCompletedCount": None, "cancellable": True, "pausable": self.pausable,
        }

    def cancel(self):
        if self.state in FINAL:
            return
        self.state = "cancelled"
        for child in self.children:
            child.cancel()


def photo_name(index):
    return "IMG_%04d.jpg" % (index + 1)


def photo_size(index):
    digest = hashlib.sha256(str(index).encode()).digest()
    return 1_500_000 + int.from_bytes(digest[:4], "big") % 3_000_000


class Job:
    """The scripted import, and a writer that walks it every 50 ms by the wire format's rules (simplified)."""

    def __init__(self, photos, speed, fail_every):
        self.lock = threading.Condition()
        self.ids = 0
        self.speed = speed
        self.fail_every = fail_every
        self.root = Node(self, None, 0, "Importing %d photos" % photos, photos, pausable=True)
        self.waiting = list(range(photos))
        self.active = []           # (index, photo, download, filter, progress-of-filter)
        self.walks = []            # (walk number, [lines])
        self.walk_number = 0
        self.previous = {}         # id -> last line written (json text without time)
        self.last_written = {}     # id -> last line written (dict)
        self.closed = set()        # ids whose last line was written
        self.order = []            # ids in the order they were named
        self.ended = False
        self.started = time.monotonic()

    def next_id(self):
        self.ids += 1
        return self.ids

    # --- the work ---

    def start_photos(self):
        while len(self.active) < 3 and self.waiting and self.root.state == "running":
            index = self.waiting.pop(0)
            name = photo_name(index)
            photo = Node(self, self.root, 1, name, 10, additionalDescription="", pausable=True)
            download = Node(
                self, photo, 9, "Downloading “%s”…" % name, photo_size(index), kind="NSProgressKindFile",
                fileOperationKind="NSProgressFileOperationKindDownloading",
                fileURL="file:///Volumes/Camera/DCIM/" + name)
            rate = photo_size(index) / (40 * (0.030 + (index % 3) * 0.010))
            self.active.append({"index": index, "photo": photo, "download": download, "filter": None,
                                "rate": rate, "steps": 0.0})

    def step(self, dt):
        dt *= self.speed
        for item in list(self.active):
            photo, download = item["photo"], item["download"]
            if photo.state in FINAL and photo.state != "running":
                self.active.remove(item)
                continue
            if photo.paused():
                download.throughput = 0
                continue
            if download.state == "running":
                download.completed = min(download.total, download.completed + int(item["rate"] * dt))
                download.throughput = int(item["rate"] * self.speed)
                fails = self.fail_every and (item["index"] + 1) % self.fail_every == 0
                if fails and download.completed >= download.total // 2:
                    photo.state = "failed"
                    photo.reason = "%s: the camera stopped answering (simulated with --fail-every %d)" % (
                        photo.name, self.fail_every)
                    download.cancel()
                    # A failed photo is never counted as done (as in the real server).
                    self.active.remove(item)
                    continue
                if download.completed >= download.total:
                    download.state = "finished"
                    photo.completed += download.pending
                    item["filter"] = Node(self, photo, 1, "Applying filter", 8)
            elif item["filter"] is not None and item["filter"].state == "running":
                item["steps"] += dt / 0.040
                item["filter"].completed = min(8, int(item["steps"]))
                if item["filter"].completed >= 8:
                    item["filter"].state = "finished"
                    photo.completed = 10
                    photo.state = "finished"
                    self.root.completed += photo.pending
                    self.active.remove(item)
        for item in list(self.active):
            if item["photo"].state == "cancelled":
                self.active.remove(item)
        self.start_photos()
        if self.root.state in ("running", "paused") and not self.active and not self.waiting:
            # As web-dashboard ends its album: failed if photos failed, else finished (by hand, saying what was
            # imported, when photos were cancelled on their own).
            photos = [child for child in self.root.children]
            failed = sum(1 for photo in photos if photo.state == "failed")
            cancelled = sum(1 for photo in photos if photo.state == "cancelled")
            if failed:
                self.root.state = "failed"
                self.root.reason = "%d of %d photos failed" % (failed, len(photos)) + (
                    ", %d cancelled" % cancelled if cancelled else "")
            else:
                if cancelled:
                    self.root.metadata["additionalDescription"] = "%d of %d imported" % (
                        len(photos) - cancelled, len(photos))
                self.root.completed = self.root.total
                self.root.state = "finished"

    # --- the writer ---

    def estimates(self, node):
        """throughput and time remaining of a download (its own) and of the root (its downloads')."""
        if node.state in FINAL:
            return None, None
        if node.metadata.get("kind") == "NSProgressKindFile":
            if not node.throughput:
                return None, None
            return node.throughput, round((node.total - node.completed) / node.throughput, 1)
        if node.parent is None:
            rates = [item["download"].throughput or 0 for item in self.active if item["download"].state == "running"]
            total = sum(rates)
            if total <= 0 or time.monotonic() - self.started < 1.0:
                return None, None
            fraction = node.fraction()
            elapsed = time.monotonic() - self.started
            remaining = elapsed * (1 - fraction) / fraction if fraction > 0 else None
            return total, round(remaining, 1) if remaining is not None else None
        return None, None

    def walk(self):
        """One walk: the lines of the nodes that changed, parents first, final lines after their children."""
        lines = []

        def visit(node, gone):
            if node.id in self.closed:
                return
            throughput, remaining = self.estimates(node)
            line = node.line(throughput, remaining)
            if gone and line["state"] not in FINAL:
                line["state"] = "cancelled" if gone == "cancelled" else "finished"
            final = line["state"] in FINAL
            key = json.dumps(line, sort_keys=True)
            first = node.id not in self.previous
            if first:
                self.order.append(node.id)
            if not final and self.previous.get(node.id) != key:
                lines.append(line)
                self.previous[node.id] = key
                self.last_written[node.id] = line
            if first and final:
                # a node named already ended: its final line first (rule 6)
                lines.append(line)
                self.previous[node.id] = key
                self.last_written[node.id] = line
            ending = gone or (node.state if node.state in ("finished", "failed") else None)
            if node.parent is None and node.state in FINAL:
                ending = node.state
            for child in list(node.children):
                visit(child, ending)
            if final and self.previous.get(node.id) != key:
                lines.append(line)
                self.previous[node.id] = key
                self.last_written[node.id] = line
            if final and (ending or node.state in ("finished", "failed")):
                self.closed.add(node.id)

        if self.ended:
            return
        visit(self.root, None)
        if self.root.state in FINAL:
            self.ended = True
        if lines:
            self.walk_number += 1
            self.walks.append((self.walk_number, lines))
            self.lock.notify_all()

    def snapshot(self):
        """What a reader joining now gets: the current line of every node still in the tree, the kept
        failures, each after its parent (ids grow as nodes are named); the root last once it ended."""
        lines = []
        for node_id in sorted(self.last_written):
            line = self.last_written[node_id]
            if line["parent"] is None and self.ended:
                continue
            if self.left_the_tree(node_id):
                continue
            lines.append(line)
        if self.ended:
            lines.append(self.last_written[self.root.id])
        return lines

    def left_the_tree(self, node_id):
        """A node that finished (or is below one) left the tree; failed ones are kept failures."""
        line = self.last_written.get(node_id)
        while line is not None:
            if line["state"] == "finished" and line["parent"] is not None:
                return True
            line = self.last_written.get(line["parent"]) if line["parent"] is not None else None
        return False

    def find(self, node_id):
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node.id == node_id:
                return node
            stack.extend(node.children)
        return None

    def command(self, command, node_id):
        node = self.find(node_id)
        if node is None or node.state in FINAL:
            return
        if command == "cancel":
            node.cancel()
            if node is self.root:
                self.waiting.clear()
        elif command == "pause" and node.pausable and node.state == "running":
            node.state = "paused"
        elif command == "resume" and node.state == "paused":
            node.state = "running"

    def run(self):
        last = time.monotonic()
        next_walk = last
        with self.lock:
            self.start_photos()
            self.walk()
        while True:
            time.sleep(0.010)
            now = time.monotonic()
            with self.lock:
                self.step(now - last)
                last = now
                if now >= next_walk or self.root.state in FINAL:
                    self.walk()
                    next_walk = now + 0.050
                if self.ended:
                    return


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-web-dashboard"

    def log_message(self, format, *args):  # quiet
        pass

    def send_plain(self, status, body=b"", content_type="text/plain; charset=utf-8"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def path_only(self):
        return self.path.split("?", 1)[0]

    def do_GET(self):
        path = self.path_only()
        if path in FILES:
            name, content_type = FILES[path]
            with open(os.path.join(self.server.resources, name), "rb") as file:
                self.send_plain(HTTPStatus.OK, file.read(), content_type)
        elif path == "/token":
            if self.server.read_only:
                self.send_plain(HTTPStatus.NOT_FOUND, b"read-only\n")
            else:
                self.send_plain(HTTPStatus.OK, self.server.token.encode())
        elif path == "/events":
            self.events()
        else:
            self.send_plain(HTTPStatus.NOT_FOUND, b"not found\n")

    def events(self):
        job = self.server.job
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Accel-Buffering", "no")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            with job.lock:
                lines = job.snapshot()
                number = job.walk_number
                position = len(job.walks)
            out = ["retry: 1000\n\n", "event: run\ndata: %s\n\n" % wire({"v": 1, "run": self.server.run_id})]
            for line in lines:
                out.append("id: %d\ndata: %s\n\n" % (number, wire(line)))
            out.append("event: synced\ndata: %s\n\n" % wire({"v": 1, "synced": number}))
            self.wfile.write("".join(out).encode())
            self.wfile.flush()
            last_send = time.monotonic()
            while True:
                with job.lock:
                    if position >= len(job.walks):
                        job.lock.wait(timeout=1.0)
                    walks = job.walks[position:]
                    position = len(job.walks)
                if walks:
                    out = []
                    for walk_number, walk_lines in walks:
                        for line in walk_lines:
                            out.append("id: %d\ndata: %s\n\n" % (walk_number, wire(line)))
                    self.wfile.write("".join(out).encode())
                    self.wfile.flush()
                    last_send = time.monotonic()
                elif time.monotonic() - last_send > 15:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                    last_send = time.monotonic()
                if self.server.stopping:
                    return
        except (BrokenPipeError, ConnectionResetError):
            return

    def do_POST(self):
        if self.path_only() == "/token":
            self.do_GET()
            return
        if self.path_only() != "/commands":
            self.send_plain(HTTPStatus.NOT_FOUND, b"not found\n")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > 4096:
            self.send_plain(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, b"too large\n")
            self.close_connection = True
            return
        body = self.rfile.read(length)
        if self.server.read_only or self.headers.get("ProgressTree-Token") != self.server.token:
            self.send_plain(HTTPStatus.FORBIDDEN, b"forbidden\n")
            return
        try:
            command = json.loads(body)
            assert isinstance(command, dict) and command.get("v") == 1 and isinstance(command.get("command"), str)
        except (ValueError, AssertionError):
            self.send_plain(HTTPStatus.BAD_REQUEST, b"not a command\n")
            return
        if isinstance(command.get("id"), int):
            with self.server.job.lock:
                self.server.job.command(command["command"], command["id"])
        self.send_response(HTTPStatus.NO_CONTENT)
        self.send_header("Content-Length", "0")
        self.end_headers()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--photos", type=int, default=12)
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--fail-every", type=int, default=None)
    parser.add_argument("--read-only", action="store_true")
    parser.add_argument("--resources", default=RESOURCES)
    args = parser.parse_args()

    job = Job(args.photos, args.speed, args.fail_every)
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    server.job = job
    server.token = secrets.token_hex(16)
    server.run_id = secrets.token_hex(16)  # the run this process serves (Docs/WireFormat.md, "Runs")
    server.read_only = args.read_only
    server.resources = args.resources
    server.stopping = False
    threading.Thread(target=job.run, daemon=True).start()
    host, port = server.server_address[:2]
    print("http://%s:%d/" % (host, port), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stopping = True


if __name__ == "__main__":
    sys.exit(main())
