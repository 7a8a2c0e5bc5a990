"""A scripted event stream for the page's reading of the wire format, apart from any job: served under a
path prefix (as behind a reverse proxy), with a wide tree of 1,003 nodes, lines a reader must ignore, a
name and a reason that are not plain text, a file node without a name, and a dropped connection after
which the server leaves nodes out before `synced` (they finished while the page was away). Standard
library only; used by test_dashboard.py.
"""

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "/jobs/42/"
CHILDREN = 1000          # ids 2 ... 1001
FILE_ID = CHILDREN + 2   # a file node without a name, below the first child
FAILED_ID = CHILDREN + 3  # a failed node whose name and reason are not plain text
HOSTILE_NAME = "<img src=x onerror=\"document.title='owned'\"> & <b>bold</b>"
HOSTILE_REASON = "<script>alert(1)</script>\u0007 stopped"
# Characters that reorder text: an override that would show "exe.jpg" as "gpj.exe", an isolate, marks.
BIDI_ID = CHILDREN + 4
BIDI_NAME = "photo\u202egpj.exe \u2067x\u2069 \u200ey\u200f \u061cz \u202a\u202b\u202c\u202d\u2066\u2068"
BIDI_SHOWN = "photo gpj.exe  x   y   z"
RUN = "0123456789abcdef0123456789abcdef"  # the same run on every connection: a reconnection, not a new run
STILL_RUNNING = 499      # after the reconnection: ids 2 ... 500 are named, 501 ... 1002 are not
UPDATES = 30             # walks after the reconnection, each updating every running node


def line(node_id, parent, name, completed, total, state="running", **extra):
    fraction = 1.0 if state == "finished" else (max(0, completed) / total if total > 0 else 0.0)
    record = {
        "v": 1, "time": None, "id": node_id, "parent": parent, "pending": 1 if parent else 0, "name": name,
        "completed": completed, "total": total, "fraction": round(min(1.0, fraction), 4), "state": state,
        "indeterminate": False, "throughput": None, "timeRemaining": None, "reason": None, "failedBelow": 0,
        "cancelledBelow": 0, "description": None, "additionalDescription": None, "kind": None,
        "fileOperationKind": None, "fileURL": None, "fileTotalCount": None, "fileCompletedCount": None,
        "cancellable": True, "pausable": False,
    }
    record.update(extra)
    return record


def run_event():
    return 'event: run\ndata: {"v":1,"run":"%s"}\n\n' % RUN


def event(record, walk):
    data = record if isinstance(record, str) else json.dumps(record, separators=(",", ":"))
    return "id: %d\ndata: %s\n\n" % (walk, data)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def send_body(self, status, body, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        files = {"": ("index.html", "text/html; charset=utf-8"), "index.html": ("index.html", "text/html"),
                 "dashboard.js": ("dashboard.js", "text/javascript"), "dashboard.css": ("dashboard.css", "text/css")}
        if not path.startswith(PREFIX):
            self.send_body(404, b"not under the prefix\n", "text/plain")
            return
        rest = path[len(PREFIX):]
        if rest in files:
            name, content_type = files[rest]
            with open(os.path.join(self.server.resources, name), "rb") as file:
                self.send_body(200, file.read(), content_type)
        elif rest == "token":
            self.send_body(200, b"0123456789abcdef0123456789abcdef", "text/plain")
        elif rest == "events":
            self.events()
        else:
            self.send_body(404, b"not found\n", "text/plain")

    def do_POST(self):
        if self.path.split("?", 1)[0] == PREFIX + "token":
            self.send_body(200, b"0123456789abcdef0123456789abcdef", "text/plain")
        else:
            self.send_body(404, b"not found\n", "text/plain")

    def events(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        with self.server.lock:
            self.server.connections += 1
            number = self.server.connections
            self.server.last_event_ids.append(self.headers.get("Last-Event-ID"))
        try:
            if number == 1:
                self.first_connection()
            else:
                self.later_connection()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def first_connection(self):
        out = ["retry: 300\n\n", run_event(), event(line(1, None, "Wide \u202ejob", 10, 2000), 7)]
        for node_id in range(2, CHILDREN + 2):
            out.append(event(line(node_id, 1, "item %d" % (node_id - 1), node_id % 90, 100), 7))
        out.append(event("not json at all", 7))
        out.append(event('{"v":1,"id":5}', 7))                                   # required fields missing
        out.append(event(line(FILE_ID + 50, 99999, "orphan", 1, 2), 7))          # unknown parent
        out.append(event(line(3, 1, "item 2", 5, 10, fraction=7), 7))           # fraction out of range
        out.append(event(line(FILE_ID, 2, "", 1024, 2048, kind="NSProgressKindFile",
                              fileURL="file:///tmp/a%20b.txt"), 7))
        out.append(event(line(FAILED_ID, 1, HOSTILE_NAME, 3, 10, state="failed", reason=HOSTILE_REASON), 7))
        out.append(event(line(BIDI_ID, 2, BIDI_NAME, 1, 4, state="failed", reason=BIDI_NAME + ": \u202estopped"), 7))
        out.append('event: synced\ndata: {"v":1,"synced":7}\n\n')
        self.wfile.write("".join(out).encode())
        self.wfile.flush()
        # Then the connection drops, once the test has looked at the page.
        self.server.drop.wait(20)

    def later_connection(self):
        out = ["retry: 300\n\n", run_event(), event(line(1, None, "Wide \u202ejob", 500, 2000), 9)]
        for node_id in range(2, STILL_RUNNING + 2):
            out.append(event(line(node_id, 1, "item %d" % (node_id - 1), 50, 100), 9))
        out.append(event(line(FAILED_ID, 1, HOSTILE_NAME, 3, 10, state="failed", reason=HOSTILE_REASON), 9))
        out.append('event: synced\ndata: {"v":1,"synced":9}\n\n')
        self.wfile.write("".join(out).encode())
        self.wfile.flush()
        # A busy stream: every running node changes every 50 ms.
        for walk in range(UPDATES):
            time.sleep(0.05)
            out = [event(line(1, None, "Wide job", 500 + walk, 2000), 10 + walk)]
            for node_id in range(2, STILL_RUNNING + 2):
                out.append(event(line(node_id, 1, "item %d" % (node_id - 1), 50 + walk, 100), 10 + walk))
            self.wfile.write("".join(out).encode())
            self.wfile.flush()
        self.server.updates_sent.set()
        self.server.stop.wait(60)


class StreamFixture:
    def __init__(self, resources):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.resources = resources
        self.server.lock = threading.Lock()
        self.server.connections = 0
        self.server.last_event_ids = []
        self.server.drop = threading.Event()
        self.server.stop = threading.Event()
        self.server.updates_sent = threading.Event()
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d%s" % (self.server.server_address[1], PREFIX)

    def close(self):
        self.server.drop.set()
        self.server.stop.set()
        self.server.shutdown()
        self.server.server_close()
