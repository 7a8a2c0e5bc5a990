"""What the browser tests share: the checks' results, the servers they start, a reader of /events apart
from the browser, headless Chromium, reading the page in one call, axe-core, and the browser's log.
Standard library and Selenium only; used by test_dashboard.py and test_app.py."""

import importlib.util
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
FINAL = ("cancelled", "failed", "finished")
# Text a page must never show: control characters and the characters that reorder text.
UNSAFE = re.compile("[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

results = []  # (name, passed, detail)


def check(name, passed, detail=""):
    results.append((name, bool(passed), detail))
    print("%s %s%s" % ("PASS" if passed else "FAIL", name, (": " + detail) if detail else ""), flush=True)
    return passed


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """One server process (web-dashboard, jobs-app or a stand-in), in a process group of its own, ended by
    stop(); its first line on standard output is its URL."""

    def __init__(self, arguments, wait=30):
        self.log = tempfile.NamedTemporaryFile(prefix="browser-test-server-", suffix=".log", delete=False)
        self.arguments = arguments
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL,
                                        start_new_session=True, cwd=REPO)
        self.url = None
        first = []
        reader = threading.Thread(target=lambda: first.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(wait)
        line = first[0].decode("utf-8", "replace") if first else ""
        match = re.search(r"https?://\S+", line)
        if not match:
            self.stop()
            raise RuntimeError("%s printed no URL (first line %r; log %s)" % (shlex.join(arguments), line,
                                                                            self.log.name))
        self.url = match.group(0).rstrip("/") + "/"
        self.port = int(re.search(r":(\d+)/", self.url).group(1))
        # Keep reading what it prints, so that it never blocks on a full pipe.
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    def kill(self, number):
        try:
            os.killpg(self.process.pid, number)
        except ProcessLookupError:
            pass

    def stop(self):
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                self.kill(signal.SIGKILL)
                self.process.wait(5)


class EventReader(threading.Thread):
    """A reader of an event stream apart from the browser: keeps each event with the time it came."""

    def __init__(self, url, headers=None, context=None):
        super().__init__(daemon=True)
        self.url = url
        self.headers = headers or {}
        self.context = context
        self.events = []       # (monotonic time, event type, parsed data or None)
        self.condition = threading.Condition()
        self.error = None
        self.response = None

    def run(self):
        try:
            request = urllib.request.Request(self.url, headers=self.headers)
            self.response = urllib.request.urlopen(request, timeout=300, context=self.context)
            kind, data = "message", []
            for raw in self.response:
                line = raw.decode("utf-8").rstrip("\r\n")
                if line == "":
                    if data:
                        try:
                            value = json.loads("\n".join(data))
                        except ValueError:
                            value = None
                        with self.condition:
                            self.events.append((time.monotonic(), kind, value))
                            self.condition.notify_all()
                    kind, data = "message", []
                elif line.startswith(":"):
                    continue
                else:
                    field, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if field == "data":
                        data.append(value)
                    elif field == "event":
                        kind = value
        except Exception as error:  # noqa: BLE001 - reported by the checks that wait
            self.error = error

    def wait_for(self, predicate, timeout, after=None, kind="message"):
        """The first (time, data) of an event of `kind` that satisfies predicate (and came after the moment
        `after`, when given), or None."""
        deadline = time.monotonic() + timeout
        with self.condition:
            while True:
                for moment, event_kind, value in self.events:
                    if after is not None and moment < after:
                        continue
                    if event_kind == kind and isinstance(value, dict) and predicate(value):
                        return moment, value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self.condition.wait(remaining)

    def lines(self):
        with self.condition:
            return [value for _, kind, value in self.events if kind == "message" and isinstance(value, dict)]

    def close(self):
        if self.response is not None:
            try:
                self.response.close()
            except Exception:  # noqa: BLE001
                pass


def start_browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1200,700", "--hide-scrollbars", "--force-device-scale-factor=1",
                     "--disable-extensions", "--no-first-run", "--lang=en-US",
                     # The proxies' self-signed certificates (test_app.py makes them).
                     "--ignore-certificate-errors",
                     # A name of "another site" that resolves to this machine: DNS rebinding.
                     "--host-resolver-rules=MAP rebound.test 127.0.0.1"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(20)
    driver.set_script_timeout(20)
    return driver


# What the page shows, read in one call: the rows with their state, texts and bars, in the order of the
# page; `level` is how many nodes' items an item is inside (the nesting of the markup, not the indent).
READ_PAGE = """
function text(element) { return element ? element.textContent : ''; }
const rows = Array.from(document.querySelectorAll('#tree li[data-id]')).map(function (item) {
    const row = item.querySelector(':scope > .row');
    const bar = row.querySelector('[role=progressbar]');
    let name = '';
    if (bar) {
        const labelledBy = bar.getAttribute('aria-labelledby');
        name = labelledBy ? text(document.getElementById(labelledBy)) : (bar.getAttribute('aria-label') || '');
    }
    let level = 0;
    for (let parent = item.parentElement; parent; parent = parent.parentElement) {
        if (parent.matches('li[data-id]')) level += 1;
    }
    return {
        id: Number(item.dataset.id), root: item.dataset.root === 'true', state: item.dataset.state || '',
        depth: Number(item.dataset.depth || 0), level: level, text: row.textContent,
        mark: text(row.querySelector('.mark')), name: text(row.querySelector('.name')),
        note: text(row.querySelector('.note')), outcome: text(row.querySelector('.outcome')),
        reason: text(row.querySelector('.reason')), percent: text(row.querySelector('.percent')),
        counts: text(row.querySelector('.counts')),
        valuenow: bar && bar.hasAttribute('aria-valuenow') ? Number(bar.getAttribute('aria-valuenow')) : null,
        valuetext: bar ? bar.getAttribute('aria-valuetext') : null,
        indeterminate: row.classList.contains('indeterminate'),
        hasBar: !!bar, barName: name.trim(),
        buttons: Array.from(row.querySelectorAll('button')).map(function (b) { return b.dataset.command; }),
    };
});
const active = document.activeElement;
const activeItem = active && active.closest ? active.closest('li[data-id]') : null;
return {
    rows: rows,
    more: Array.from(document.querySelectorAll('#tree li.more')).map(function (row) { return row.textContent; }),
    connection: text(document.getElementById('connection')),
    mode: document.getElementById('mode').hidden ? '' : text(document.getElementById('mode')),
    summary: document.getElementById('summary').hidden ? '' : text(document.getElementById('summary')),
    error: document.getElementById('error').hidden ? '' : text(document.getElementById('error')),
    outcomes: text(document.getElementById('outcomes')),
    announcements: Array.from(document.querySelectorAll('#announcements > p')).map(text),
    reconnect: !document.getElementById('reconnect').hidden,
    buttons: document.querySelectorAll('#tree button').length,
    heading: text(document.getElementById('title')), title: document.title,
    active: {tag: active ? active.tagName : null, id: active ? active.id || null : null,
             command: active && active.dataset ? active.dataset.command || null : null,
             row: activeItem ? Number(activeItem.dataset.id) : null},
    scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
    lang: document.documentElement.lang,
};
"""


def doc_table_cell(first_cell, path=os.path.join(REPO, "Docs", "WebDashboard.md")):
    """The second cell of the row whose first cell is `first_cell`, in the tables of Docs/WebDashboard.md:
    what the guide says the page shows, compared with the page as it is."""
    with open(path, encoding="utf-8") as file:
        for line in file:
            line = line.strip()
            if not line.startswith("|"):
                continue
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            if len(cells) >= 2 and cells[0] == first_cell:
                return cells[1]
    raise RuntimeError("no row %r in the tables of %s" % (first_cell, path))


def read_page(driver):
    return driver.execute_script(READ_PAGE)


def root_row(page):
    for row in page["rows"]:
        if row["root"]:
            return row
    return None


def wait_page(driver, predicate, timeout, interval=0.05):
    deadline = time.monotonic() + timeout
    page = None
    while True:
        page = read_page(driver)
        if predicate(page):
            return page, True
        if time.monotonic() >= deadline:
            return page, False
        time.sleep(interval)


def browser_problems(driver, allowed=()):
    """The browser's log entries of level WARNING or SEVERE, but those matching an allowed pattern."""
    problems = []
    for entry in driver.get_log("browser"):
        if entry.get("level") not in ("WARNING", "SEVERE"):
            continue
        message = entry.get("message", "")
        if any(re.search(pattern, message) for pattern in allowed):
            continue
        problems.append("%s %s" % (entry.get("level"), message))
    return problems


def axe_script():
    """axe-core's script: the copy in PyPI's axe-playwright-python (installed without its dependencies by
    run.sh: only this file is used)."""
    spec = importlib.util.find_spec("axe_playwright_python")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("axe-core is missing: pip install --no-deps axe-playwright-python==0.1.8")
    with open(os.path.join(list(spec.submodule_search_locations)[0], "axe.min.js"), encoding="utf-8") as file:
        return file.read()


AXE = None


def check_axe(driver, stage):
    """axe-core on the page as it is now: every rule it has (WCAG 2.x A and AA, best practices), no
    violation. The page's own script may not load it from elsewhere: it is injected here."""
    global AXE
    if AXE is None:
        AXE = axe_script()
    if not driver.execute_script("return typeof window.axe === 'object'"):
        driver.execute_script(AXE)
    result = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        axe.run(document, {resultTypes: ['violations']}).then(function (result) {
            done({version: axe.version, violations: result.violations.map(function (v) {
                return {id: v.id, impact: v.impact, nodes: v.nodes.map(function (n) {
                    return n.target.join(' ') + ' ' + (n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 160);
                }).slice(0, 3)};
            })});
        }, function (error) { done({version: axe.version, error: String(error)}); });
    """)
    violations = result.get("violations") or []
    detail = "axe-core %s; %s" % (result.get("version"), result.get("error") or (
        "; ".join("%s (%s): %s" % (v["id"], v["impact"], " | ".join(v["nodes"])) for v in violations) or "0 violations"))
    return check("axe-core: no violation (%s)" % stage, not result.get("error") and not violations, detail)


def press(driver, key):
    """Sends `key` to the element that has the focus, as a keyboard does."""
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(driver).send_keys(key).perform()


def unsafe_text(page):
    """The page's texts that still hold a control or text-reordering character."""
    found = []
    for name in ("heading", "title", "summary", "outcomes", "connection"):
        if UNSAFE.search(page[name] or ""):
            found.append(name)
    for row in page["rows"]:
        if UNSAFE.search(row["text"]):
            found.append("row %d" % row["id"])
    for text in page["announcements"]:
        if UNSAFE.search(text):
            found.append("announcement %r" % text)
    return found
