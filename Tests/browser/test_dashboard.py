#!/usr/bin/env python3
"""The web dashboard in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`)
driven by Selenium, against a running `web-dashboard`.

    python3 Tests/browser/test_dashboard.py [--server CMD] [--speed X] [--screenshot PATH]

The server command (`--server`, or the environment's DASHBOARD_SERVER) is split into words and given
`--port 0 --photos 12 --speed X --fail-every 3` (and `--read-only` for that check); its first line on
standard output is the page's URL. The default is the real server, built by Tests/browser/run.sh:
Integrations/ProgressTreeWeb/.build/debug/web-dashboard. `--server "python3 Tests/browser/fake_server.py"`
runs the same checks against the stand-in.

What it checks: the page shows the tree moving (at least 5 distinct percentages of the root's bar in 12 s),
every bar is a progressbar with its value and a name, a reload in the middle shows the current state at
once, the page reads at phone width without horizontal scrolling, it ends on the final state with a failed
photo's reason, it shows no buttons once the work ended, a click on Pause / Resume / Cancel acts on the
server (Cancel: a separate reader of /events sees the root cancelled within 1 s of the click), a read-only
server gets no buttons and refuses commands, and the browser logs no JavaScript error or warning. It ends
with "N passed, M failed" and exits 1 on any failure; every server it started is ended.
"""

import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
REAL_SERVER = os.path.join(REPO, "Integrations", "ProgressTreeWeb", ".build", "debug", "web-dashboard")
FINAL = ("cancelled", "failed", "finished")

results = []  # (name, passed, detail)


def check(name, passed, detail=""):
    results.append((name, bool(passed), detail))
    print("%s %s%s" % ("PASS" if passed else "FAIL", name, (": " + detail) if detail else ""), flush=True)
    return passed


class Server:
    """One server process, in a process group of its own, ended by stop()."""

    def __init__(self, command, speed, extra=()):
        self.log = tempfile.NamedTemporaryFile(prefix="web-dashboard-", suffix=".log", delete=False)
        arguments = command + ["--port", "0", "--photos", "12", "--speed", str(speed), "--fail-every", "3"]
        arguments += list(extra)
        self.arguments = arguments
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL,
                                        start_new_session=True, cwd=REPO)
        self.url = None
        first = []
        reader = threading.Thread(target=lambda: first.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(30)
        line = first[0].decode("utf-8", "replace") if first else ""
        match = re.search(r"https?://\S+", line)
        if not match:
            self.stop()
            raise RuntimeError("%s printed no URL (first line %r; log %s)" % (shlex.join(arguments), line,
                                                                            self.log.name))
        self.url = match.group(0).rstrip("/") + "/"
        # Keep reading what it prints, so that it never blocks on a full pipe.
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    def stop(self):
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(5)


class EventReader(threading.Thread):
    """A reader of /events apart from the browser: keeps each event with the time it came."""

    def __init__(self, url):
        super().__init__(daemon=True)
        self.url = url + "events"
        self.events = []       # (monotonic time, event type, parsed data or None)
        self.condition = threading.Condition()
        self.error = None
        self.response = None

    def run(self):
        try:
            self.response = urllib.request.urlopen(self.url, timeout=300)
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
                        if kind == "message" and isinstance(value, dict) and value.get("parent") is None \
                                and value.get("state") in FINAL:
                            return  # a reader stops at the root's final line
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

    def wait_for(self, predicate, timeout, after=None):
        """The first (time, record) of a progress line that satisfies predicate (and came after the
        moment `after`, when given), or None."""
        deadline = time.monotonic() + timeout
        with self.condition:
            while True:
                for moment, kind, value in self.events:
                    if after is not None and moment < after:
                        continue
                    if kind == "message" and isinstance(value, dict) and predicate(value):
                        return moment, value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self.condition.wait(remaining)

    def lines(self):
        with self.condition:
            return [value for _, kind, value in self.events if kind == "message" and isinstance(value, dict)]


def start_browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1200,700", "--hide-scrollbars", "--force-device-scale-factor=1",
                     "--disable-extensions", "--no-first-run", "--lang=en-US"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(20)
    driver.set_script_timeout(10)
    return driver


# What the page shows, read in one call: the rows with their state, texts and bars.
READ_PAGE = """
const rows = Array.from(document.querySelectorAll('#tree > li.row[data-id]')).map(function (row) {
    const bar = row.querySelector('[role=progressbar]');
    let name = '';
    if (bar) {
        const labelledBy = bar.getAttribute('aria-labelledby');
        name = labelledBy ? (document.getElementById(labelledBy) || {}).textContent || '' : (bar.getAttribute('aria-label') || '');
    }
    return {
        id: Number(row.dataset.id), root: row.dataset.root === 'true', state: row.dataset.state || '',
        depth: Number(row.dataset.depth || 0), text: row.textContent,
        outcome: (row.querySelector('.outcome') || {}).textContent || '',
        reason: (row.querySelector('.reason') || {}).textContent || '',
        valuenow: bar && bar.hasAttribute('aria-valuenow') ? Number(bar.getAttribute('aria-valuenow')) : null,
        valuetext: bar ? bar.getAttribute('aria-valuetext') : null,
        indeterminate: row.classList.contains('indeterminate'),
        hasBar: !!bar, barName: name.trim(),
        buttons: Array.from(row.querySelectorAll('button')).map(function (b) { return b.dataset.command; }),
    };
});
return {
    rows: rows,
    more: Array.from(document.querySelectorAll('#tree > li.more')).map(function (row) { return row.textContent; }),
    connection: document.getElementById('connection').textContent,
    mode: document.getElementById('mode').hidden ? '' : document.getElementById('mode').textContent,
    summary: document.getElementById('summary').hidden ? '' : document.getElementById('summary').textContent,
    error: document.getElementById('error').hidden ? '' : document.getElementById('error').textContent,
    outcomes: document.getElementById('outcomes').textContent,
    buttons: document.querySelectorAll('button').length,
    scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
    lang: document.documentElement.lang,
};
"""


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


def reason_shown(reason, label):
    """How the page shows a reason: without the label it begins with."""
    reason = re.sub(r"[\x00-\x1f\x7f-\x9f]", " ", reason or "").strip()
    if label and reason.startswith(label + ": "):
        return reason[len(label) + 2:]
    return reason


def check_bars(page):
    bars = [row for row in page["rows"] if row["hasBar"]]
    unnamed = [row["id"] for row in bars if not row["barName"]]
    valueless = [row["id"] for row in bars if not row["indeterminate"] and row["valuenow"] is None]
    check("every bar is a progressbar with a value and a name", bars and not unnamed and not valueless,
          "%d bars; without name %s; without value %s" % (len(bars), unnamed, valueless))


def check_reload(driver, before):
    """A reload in the middle shows the current state at once: rows, the root past 0%, within 1 s."""
    driver.refresh()
    reloaded = time.monotonic()
    page, ok = wait_page(driver, lambda p: root_row(p) is not None and (root_row(p)["valuenow"] or 0) > 0
                         and len(p["rows"]) > 1, 1.0)
    root = root_row(page)
    check("a reload mid-run shows the current state within 1 s", ok,
          "%.2f s; root at %s%% (%s%% before), %d rows" % (time.monotonic() - reloaded, root and root["valuenow"],
                                                          before, len(page["rows"])))


def check_phone_width(driver):
    for width in (375, 360):
        driver.set_window_size(width, 800)
        time.sleep(0.3)
        page = read_page(driver)
        if os.environ.get("DASHBOARD_PHONE_SCREENSHOT"):
            driver.save_screenshot(os.environ["DASHBOARD_PHONE_SCREENSHOT"].replace(".png", "-%d.png" % width))
        check("nothing scrolls sideways at phone width (%d px)" % width, page["scrollWidth"] <= page["innerWidth"],
              "scrollWidth %d, innerWidth %d" % (page["scrollWidth"], page["innerWidth"]))
    driver.set_window_size(1200, 700)


def run_live(driver, command, speed, screenshot):
    """The main run: moving, accessible, reloadable, phone width, final state, reasons, no errors."""
    server = Server(command, speed)
    reader = None
    try:
        reader = EventReader(server.url)
        reader.start()
        driver.set_window_size(1200, 700)
        driver.get(server.url)
        page, ok = wait_page(driver, lambda p: root_row(p) is not None, 5)
        check("the page draws the root within 5 s", ok, "connection: %s" % page["connection"])
        check("the page has a language", page["lang"] != "", page["lang"])

        # The tree moves: distinct percentages of the root's bar over 12 s. On the way: a screenshot, the
        # bars' accessibility, a reload, and phone widths, each while the work runs.
        seen = []
        taken = reloaded = narrowed = accessible = False
        rate_seen = root_left_seen = False
        started = time.monotonic()
        while time.monotonic() - started < 12:
            page = read_page(driver)
            root = root_row(page)
            if root and root["valuenow"] is not None and root["valuenow"] not in seen:
                seen.append(root["valuenow"])
            if not root or root["state"] in FINAL:
                break
            failed_rows = [row for row in page["rows"] if row["state"] == "failed"]
            if any(re.search(r"\d (bytes|KB|MB|GB)/s", row["text"]) for row in page["rows"]):
                rate_seen = True
            if re.search(r"\ds left", root["text"]):
                root_left_seen = True
            elapsed = time.monotonic() - started
            if screenshot and not taken and (elapsed > 5.5 or (failed_rows and elapsed > 3)):
                driver.save_screenshot(screenshot)
                taken = True
            if not accessible and elapsed > 4:
                accessible = True
                check_bars(page)
            if not reloaded and elapsed > 6:
                reloaded = True
                check_reload(driver, root["valuenow"] or 0)
            if not narrowed and elapsed > 8:
                narrowed = True
                check_phone_width(driver)
            time.sleep(0.1)
        check("the tree moves: at least 5 distinct percentages of the root in 12 s", len(seen) >= 5,
              "%d distinct: %s" % (len(seen), seen[:12]))
        check("throughput and time remaining show: a download's bytes a second and the root's time left",
              rate_seen and root_left_seen, "throughput seen: %s, root's time left seen: %s" % (rate_seen, root_left_seen))
        if screenshot:
            check("a screenshot was taken mid-run", taken, screenshot)
        for done, name in ((accessible, "every bar is a progressbar with a value and a name"),
                           (reloaded, "a reload mid-run shows the current state within 1 s"),
                           (narrowed, "nothing scrolls sideways at phone width")):
            if not done:
                check(name, False, "the work ended before the check (try a lower --speed)")

        # The end: the final state, the failed photos with their reasons, no buttons.
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and root_row(p)["state"] in FINAL, 120, 0.2)
        root = root_row(page)
        final = reader.wait_for(lambda line: line.get("parent") is None and line.get("state") in FINAL, 5)
        check("the page ends on the final state", ok and final is not None and root["state"] == final[1]["state"],
              "page: %s %s; stream: %s" % (root and root["state"], root and root["outcome"],
                                           final and final[1]["state"]))
        if final is not None and final[1]["state"] == "finished":
            check("the root's bar ends at 100%", root["valuenow"] == 100, "%s" % root["valuenow"])
        check("the page says how it ended", page["summary"] != "" and (
              page["connection"] in ("finished", "cancelled") or page["connection"].startswith("failed")),
              "summary %r; connection %r" % (page["summary"], page["connection"]))
        check("no buttons once the work ended", page["buttons"] == 0, "%d buttons" % page["buttons"])

        failed = {}
        for line in reader.lines():
            if line.get("state") == "failed" and line.get("parent") is not None:
                failed[line["id"]] = line
        shown = []
        for node_id, line in failed.items():
            label = line.get("name") or ""
            reason = reason_shown(line.get("reason"), label)
            row = next((row for row in page["rows"] if row["id"] == node_id), None)
            in_row = row is not None and row["state"] == "failed" and "failed:" in row["outcome"] \
                and row["reason"] == reason
            in_log = (label + " failed: " + reason) in page["outcomes"]
            shown.append((label, reason, in_row, in_log))
        check("a failed photo's reason is shown", failed and all(in_row and in_log for _, _, in_row, in_log in shown),
              "; ".join("%s: %r row=%s log=%s" % item for item in shown) or "the stream named no failed node")
        if final is not None and final[1].get("failedBelow"):
            check("the summary counts the failures", ("%d failed" % final[1]["failedBelow"]) in page["summary"],
                  page["summary"])

        problems = browser_problems(driver)
        check("no JavaScript error or warning in the browser's log (live run)", not problems, "; ".join(problems))
    finally:
        server.stop()
        if reader is not None and reader.response is not None:
            try:
                reader.response.close()
            except Exception:  # noqa: BLE001
                pass


def find_button(driver, command):
    from selenium.webdriver.common.by import By
    buttons = driver.find_elements(By.CSS_SELECTOR, '#tree > li[data-root="true"] button[data-command="%s"]' % command)
    return buttons[0] if buttons else None


def click_button(driver, command):
    """Clicks the root's button for `command`; returns the time of the click, or None when there is none. The
    page redraws the root's row as lines arrive, so a button found may be replaced before the click lands
    (a stale element): it is found again, up to 5 times."""
    from selenium.common.exceptions import StaleElementReferenceException
    for _ in range(5):
        button = find_button(driver, command)
        if button is None:
            return None
        clicked = time.monotonic()
        try:
            button.click()
            return clicked
        except StaleElementReferenceException:
            continue
    return None


def run_commands(driver, command, speed):
    """Pause, Resume and Cancel on the root act on the server, seen by a separate reader of /events."""
    server = Server(command, speed)
    reader = EventReader(server.url)
    reader.start()
    try:
        driver.set_window_size(1200, 700)
        driver.get(server.url)
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and "cancel" in root_row(p)["buttons"], 5)
        root = root_row(page)
        check("the root has a Cancel button when cancellable", ok, "buttons %s" % (root and root["buttons"]))
        root_id = root["id"] if root else 1
        time.sleep(1.0)

        if root and "pause" in root["buttons"]:
            clicked = click_button(driver, "pause") or time.monotonic()
            seen = reader.wait_for(lambda line: line.get("id") == root_id and line.get("state") == "paused", 3)
            check("a click on Pause pauses the root", seen is not None,
                  "%.2f s" % (seen[0] - clicked) if seen else "no paused line in 3 s")
            page, ok = wait_page(driver, lambda p: "resume" in (root_row(p) or {"buttons": []})["buttons"], 2)
            check("a paused root offers Resume and says paused", ok and "paused" in root_row(page)["outcome"],
                  "buttons %s, outcome %r" % (root_row(page)["buttons"], root_row(page)["outcome"]))
            clicked = click_button(driver, "resume") or time.monotonic()
            resumed = reader.wait_for(lambda line: line.get("id") == root_id and line.get("state") == "running", 3,
                                      after=clicked)
            resumed = resumed[0] if resumed else None
            check("a click on Resume resumes the root", resumed is not None,
                  "%.2f s" % (resumed - clicked) if resumed else "no running line in 3 s")
            page, ok = wait_page(driver, lambda p: "cancel" in (root_row(p) or {"buttons": []})["buttons"], 2)

        clicked = click_button(driver, "cancel")
        if clicked is None:
            check("a click on Cancel cancels the job within 1 s", False, "no Cancel button on the root")
            return
        seen = reader.wait_for(lambda line: line.get("parent") is None and line.get("state") == "cancelled", 5)
        delay = seen[0] - clicked if seen else None
        check("a click on Cancel cancels the job: the server's root is cancelled within 1 s",
              seen is not None and delay <= 1.0, "%.3f s" % delay if seen else "no cancelled root line in 5 s")
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and root_row(p)["state"] == "cancelled", 2)
        check("the page shows the job cancelled", ok and page["connection"] == "cancelled" and page["buttons"] == 0,
              "state %s, connection %r, %d buttons" % (root_row(page) and root_row(page)["state"],
                                                       page["connection"], page["buttons"]))
        check("no error shown after the commands", page["error"] == "", page["error"])
        problems = browser_problems(driver)
        check("no JavaScript error or warning in the browser's log (commands)", not problems, "; ".join(problems))
    finally:
        server.stop()


def run_read_only(driver, command, speed):
    """A read-only server: no buttons, "read only" said, commands refused."""
    server = Server(command, speed, ["--read-only"])
    try:
        driver.get(server.url)
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and p["mode"] != "", 5)
        time.sleep(1.0)
        page = read_page(driver)
        check("a read-only server's page says read only and shows no buttons",
              ok and "read only" in page["mode"] and page["buttons"] == 0,
              "mode %r, %d buttons" % (page["mode"], page["buttons"]))
        try:
            urllib.request.urlopen(server.url + "token", timeout=5)
            status = 200
        except urllib.error.HTTPError as error:
            status = error.code
        check("a read-only server answers /token with 404", status == 404, "status %d" % status)
        request = urllib.request.Request(server.url + "commands", method="POST",
                                         data=b'{"v":1,"command":"cancel","id":1}',
                                         headers={"ProgressTree-Token": "0" * 32})
        try:
            urllib.request.urlopen(request, timeout=5)
            status = 204
        except urllib.error.HTTPError as error:
            status = error.code
        check("a read-only server refuses commands (403)", status == 403, "status %d" % status)
        # The one line the browser logs by itself on a read-only server: the 404 of /token, which is how the
        # page learns it is read-only.
        problems = browser_problems(driver, allowed=(r"/token - Failed to load resource: .* 404",))
        check("no JavaScript error or warning in the browser's log (read-only)", not problems, "; ".join(problems))
    finally:
        server.stop()


RESOURCES = os.path.join(REPO, "Integrations", "ProgressTreeWeb", "Sources", "ProgressTreeWeb", "Resources")

# The longest time between two animation frames since the monitor started, in ms.
FRAME_MONITOR = """
window.__longestFrame = 0;
let last = performance.now();
(function loop() {
    requestAnimationFrame(function (now) {
        window.__longestFrame = Math.max(window.__longestFrame, now - last);
        last = now;
        loop();
    });
})();
"""


def run_stream_reading(driver):
    """The page's reading of the stream, from a scripted server under a path prefix: a wide tree, lines to
    ignore, names and reasons that are not plain text, a reconnection, and a busy stream of 500 nodes."""
    import stream_fixture as fixture

    stream = fixture.StreamFixture(RESOURCES)
    try:
        driver.set_window_size(1200, 700)
        driver.get(stream.url)
        page, ok = wait_page(driver, lambda p: p["more"] != [] and len(p["rows"]) > 50, 5)
        check("under a path prefix the page reads its stream (relative URLs)", ok,
              "%d rows, connection %r" % (len(page["rows"]), page["connection"]))
        # The root, 50 of its children, the file node below the first of them, and the failed child.
        check("a wide node shows 50 children and \"+N more\"", page["more"] == ["+950 more"]
              and len(page["rows"]) == 1 + 50 + 1 + 1, "%d rows; %s" % (len(page["rows"]), page["more"]))
        rows = {row["id"]: row for row in page["rows"]}
        check("lines a reader must ignore are ignored", 3 in rows and rows[3]["valuenow"] == 3
              and fixture.FILE_ID + 50 not in rows and page["error"] == "",
              "item 2 at %s%%; orphan shown: %s; error %r" % (rows.get(3, {}).get("valuenow"),
                                                            fixture.FILE_ID + 50 in rows, page["error"]))
        shown = driver.execute_script("""
            const row = document.querySelector('#tree > li[data-id="%d"]');
            const file = document.querySelector('#tree > li[data-id="%d"]');
            return {html: document.querySelectorAll('#tree img, #tree b, #tree script, #outcomes img').length,
                    name: row ? row.querySelector('.name').textContent : null,
                    reason: row ? row.querySelector('.reason').textContent : null, title: document.title,
                    fileName: file ? file.querySelector('.name').textContent : null,
                    fileCounts: file ? file.querySelector('.counts').textContent : null};
        """ % (fixture.FAILED_ID, fixture.FILE_ID))
        check("names and reasons are shown as text, never as HTML", shown["html"] == 0
              and shown["name"] == fixture.HOSTILE_NAME and shown["reason"] == fixture.HOSTILE_REASON.replace("\u0007", " ")
              and shown["title"] != "owned", "%r" % shown)
        check("a file node without a name shows its file's name, in bytes",
              shown["fileName"] == "a b.txt" and shown["fileCounts"] == "1 KB of 2 KB", "%r" % shown)

        # The connection drops; the page reconnects; nodes the server leaves out before `synced` finished
        # while it was away.
        driver.execute_script(FRAME_MONITOR)
        stream.server.drop.set()
        page, ok = wait_page(driver, lambda p: p["more"] == ["+947 more (498 done)"], 5)
        rows = {row["id"]: row for row in page["rows"]}
        check("after a reconnection, nodes not named before synced are finished",
              ok and rows.get(1002, {}).get("state") == "finished" and rows.get(2, {}).get("state") == "running",
              "more %s; connection %r; Last-Event-IDs %s" % (page["more"], page["connection"],
                                                             stream.server.last_event_ids))
        check("the page reconnects by itself, asking for the whole tree (no Last-Event-ID)",
              stream.server.last_event_ids[:2] == [None, None], "%s" % stream.server.last_event_ids)
        stream.server.updates_sent.wait(10)
        page, ok = wait_page(driver, lambda p: any(r["id"] == 2 and r["valuenow"] == 50 + fixture.UPDATES - 1
                                                   for r in p["rows"]), 2)
        longest = driver.execute_script("return window.__longestFrame;")
        check("a busy stream of 500 nodes keeps the page smooth (the longest frame under 250 ms)",
              ok and longest < 250 and len(page["rows"]) < 60,
              "longest frame %.0f ms, %d rows, last update shown: %s" % (longest, len(page["rows"]), ok))
        problems = browser_problems(driver)
        check("no JavaScript error or warning in the browser's log (stream reading)", not problems,
              "; ".join(problems))
    finally:
        stream.close()


def main():
    parser = argparse.ArgumentParser(description="The web dashboard in headless Chromium.")
    parser.add_argument("--server", default=os.environ.get("DASHBOARD_SERVER", REAL_SERVER),
                        help="the server command (words split as a shell does); default: %(default)s")
    parser.add_argument("--speed", default=os.environ.get("DASHBOARD_SPEED", "0.5"),
                        help="--speed for the server: the main run must last more than about 15 s")
    parser.add_argument("--screenshot", default=os.environ.get("DASHBOARD_SCREENSHOT"),
                        help="where to save the mid-run screenshot (PNG, 1200x700)")
    args = parser.parse_args()
    command = shlex.split(args.server)
    if command and not os.path.exists(command[0]) and "/" in command[0]:
        print("no server at %s (Tests/browser/run.sh builds it)" % command[0])
        print("0 passed, 1 failed")
        return 1

    driver = start_browser()
    try:
        for run in (lambda: run_live(driver, command, args.speed, args.screenshot),
                    lambda: run_commands(driver, command, args.speed),
                    lambda: run_read_only(driver, command, args.speed),
                    lambda: run_stream_reading(driver)):
            try:
                run()
            except Exception as error:  # noqa: BLE001 - a run that breaks is a failed check, and the next runs
                check("the run went to its end", False, "%s: %s" % (type(error).__name__, error))
    finally:
        driver.quit()
    passed = sum(1 for _, ok, _ in results if ok)
    failed = len(results) - passed
    if failed:
        print("\nFailed:")
        for name, ok, detail in results:
            if not ok:
                print("  %s: %s" % (name, detail))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
