"""The checks of Tests/cross-machine/jobs-on-postgres.sh, which sets up the namespaces, nginx and PostgreSQL
and runs this with their addresses in its environment. Each check prints PASS or FAIL; the last line is
"N passed, M failed"."""

import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "browser"))
import browser as b  # noqa: E402

BIN = os.environ["JOBS_BIN"]
URL = os.environ["PROGRESSTREE_POSTGRES_URL"]
BASE = "http://%s:8080/" % os.environ["HOST_IP"]
WORK = os.environ["JOBS_WORK"]


def in_namespace(name, arguments):
    return ["ip", "netns", "exec", os.environ["NS_" + name]] + arguments


def instance(name):
    """A web instance in namespace A or B, on port 8080 of every address there."""
    return b.Server(in_namespace(name, [BIN, "serve", "--postgres", URL, "--address", "0.0.0.0", "--port", "8080"]))


class Worker:
    """A worker in its namespace, running one job; its first line is the job's id, its last lines the tree."""

    def __init__(self, job, photos, step_ms, heartbeat=15):
        arguments = [BIN, "worker", "--postgres", URL, "--job", job, "--photos", str(photos), "--step-ms",
                     str(step_ms), "--heartbeat-timeout", str(heartbeat)]
        self.log = open(os.path.join(WORK, "worker-%s.log" % job), "w")
        self.process = subprocess.Popen(in_namespace("WORKER", arguments), stdout=subprocess.PIPE, stderr=self.log,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        self.lines = []
        got = []
        reading = threading.Thread(target=lambda: got.append(self.process.stdout.readline()), daemon=True)
        reading.start()
        reading.join(30)
        first = got[0].decode().strip() if got else ""
        if first != job:
            self.kill()
            raise RuntimeError("the worker printed %r, not its job's id (its log: %s)" % (first, self.log.name))
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.process.stdout:
            self.lines.append(raw.decode().rstrip("\n"))

    def wait(self, timeout):
        self.process.wait(timeout)
        self.reader.join(5)
        return self.lines

    def kill(self):
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(5)


def tree_of_worker(lines):
    """{name: (state, "completed/total")} from the worker's final lines."""
    tree = {}
    for line in lines:
        name, state, counts = [part.strip() for part in line.split("|")]
        tree[name] = (state, counts)
    return tree


def tree_of_page(driver):
    """{name: (state, "completed/total")} of every row the page shows, from the page's own model."""
    rows = driver.execute_script("""
        return Array.from(document.querySelectorAll('#tree li[data-id]')).map(function (item) {
            const row = item.querySelector(':scope > .row');
            const bar = row.querySelector('[role=progressbar]');
            return {name: row.querySelector('.name') ? row.querySelector('.name').textContent : '',
                    state: item.dataset.state || '', text: row.textContent,
                    now: bar ? bar.getAttribute('aria-valuenow') : null};
        });""")
    return rows


def root(page):
    return b.root_row(page) or {}


def open_page(driver, job):
    driver.get(BASE + "jobs/%s/" % job)


def wait_final(driver, timeout):
    return b.wait_page(driver, lambda page: root(page).get("state") in b.FINAL, timeout)


def compare_with_worker(driver, lines, label):
    """The page's rows against the worker's own tree: the root's state and counts, and each photo the page
    names, exactly."""
    worker = tree_of_worker(lines)
    page = b.read_page(driver)
    top = root(page)
    name, (state, counts) = next(iter(worker.items()))
    completed, total = counts.split("/")
    b.check("%s: the page's root is the worker's root (%s, %s)" % (label, state, counts),
            top.get("name") == name and top.get("state") == state and ("%s of %s" % (completed, total)) in top.get("text", ""),
            repr(top.get("text")))
    shown = {row["name"]: row for row in page["rows"] if not row["root"]}
    differing = [(row_name, worker.get(row_name), row["state"]) for row_name, row in shown.items()
                 if worker.get(row_name, ("?",))[0] != row["state"]]
    b.check("%s: every photo the page shows has the worker's state" % label, shown and not differing,
            "shown %d, differing %r" % (len(shown), differing[:3]))


def main():
    a = instance("A")
    bee = instance("B")
    driver = b.start_browser()
    try:
        print("1. a job watched through nginx, compared with the worker's tree", flush=True)
        # 1. The page equals the worker's tree at the end; a command from the page reaches the worker.
        worker = Worker("exact-1", photos=6, step_ms=150)
        open_page(driver, "exact-1")
        page, shown = b.wait_page(driver, lambda p: "pause" in root(p).get("buttons", []), 15)
        b.check("1: the page shows the running job through nginx with its controls", shown, repr(root(page)))
        driver.find_element("css selector", "li[data-root=true] > .row button[data-command=pause]").click()
        page, paused = b.wait_page(driver, lambda p: root(p).get("state") == "paused", 10)
        b.check("1: Pause on the page (token from one instance, command to either) pauses the worker's job",
                paused, repr(root(page).get("text")))
        driver.find_element("css selector", "li[data-root=true] > .row button[data-command=resume]").click()
        page, resumed = b.wait_page(driver, lambda p: root(p).get("state") == "running", 10)
        b.check("1: Resume resumes it", resumed, repr(root(page).get("text")))
        lines = worker.wait(60)
        page, ended = wait_final(driver, 15)
        b.check("1: the page ends when the job does", ended, repr(root(page).get("text")))
        compare_with_worker(driver, lines, "1")

        print("2. kill -9 of the worker mid-job", flush=True)
        # 2. kill -9 of the worker mid-job: "stopped reporting" within the heartbeat timeout + 2 s.
        timeout = 3
        worker = Worker("killed-2", photos=100, step_ms=100, heartbeat=timeout)
        open_page(driver, "killed-2")
        b.wait_page(driver, lambda p: "of 100" in root(p).get("text", "") and not root(p).get("text", "").startswith("0"), 15)
        time.sleep(1.5)
        worker.kill()
        killed = time.monotonic()
        page, said = b.wait_page(driver, lambda p: "stopped reporting" in root(p).get("text", ""), timeout + 6)
        elapsed = time.monotonic() - killed
        b.check("2: after kill -9 of the worker the page says the job stopped reporting, failed",
                said and root(page).get("state") == "failed", repr(root(page).get("text")))
        b.check("2: within the heartbeat timeout (%d s) + 2 s: %.1f s" % (timeout, elapsed), said and elapsed <= timeout + 2)

        print("3. PostgreSQL restarted mid-job", flush=True)
        # 3. PostgreSQL restarted mid-job: "reconnecting…" meanwhile, then the true final state.
        worker = Worker("pg-restart-3", photos=10, step_ms=200)
        open_page(driver, "pg-restart-3")
        b.wait_page(driver, lambda p: root(p).get("state") == "running", 15)
        time.sleep(1)
        owner = ["runuser", "-u", "postgres", "--"] if os.environ.get("PROGRESSTREE_PG_OWNER") else []
        control = in_namespace("DB", owner + [os.environ["PROGRESSTREE_PG_CTL"], "-D", os.environ["PROGRESSTREE_POSTGRES_DATA"]])
        subprocess.run(control + ["stop", "-m", "fast"], check=True, stdout=subprocess.DEVNULL)
        page, reconnecting = b.wait_page(driver, lambda p: "reconnecting" in p["connection"], 10)
        b.check("3: while PostgreSQL is away the page says reconnecting", reconnecting, repr(page["connection"]))
        time.sleep(2)
        subprocess.run(control + ["start", "-w", "-t", "30", "-l", os.environ["PROGRESSTREE_POSTGRES_LOG"]], check=True,
                       stdout=subprocess.DEVNULL)
        lines = worker.wait(90)
        page, ended = wait_final(driver, 30)
        b.check("3: after the restart the page ends on the job's final state", ended, repr(root(page).get("text")))
        compare_with_worker(driver, lines, "3")

        print("4. one instance restarted mid-job", flush=True)
        # 4. One instance restarted mid-job: the page goes on through the other, and ends on the final state.
        worker = Worker("instance-restart-4", photos=10, step_ms=200)
        open_page(driver, "instance-restart-4")
        b.wait_page(driver, lambda p: root(p).get("state") == "running", 15)
        time.sleep(1)
        a.stop()
        time.sleep(1)
        a = instance("A")
        lines = worker.wait(90)
        page, ended = wait_final(driver, 30)
        b.check("4: after instance A restarted the page ends on the job's final state", ended and "ended" not in page["connection"],
                repr((root(page).get("text"), page["connection"])))
        compare_with_worker(driver, lines, "4")
    except Exception as error:  # noqa: BLE001 - a step that cannot run fails
        b.check("the checks ran to the end", False, repr(error))
    finally:
        try:
            driver.quit()
        finally:
            a.stop()
            bee.stop()
    passed = sum(1 for _, ok, _ in b.results if ok)
    failed = len(b.results) - passed
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(0 if failed == 0 else 1)


if __name__ == "__main__":
    main()
