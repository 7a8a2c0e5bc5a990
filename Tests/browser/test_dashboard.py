#!/usr/bin/env python3
"""The web dashboard in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`)
driven by Selenium, one browser for every run, against the real servers.

    python3 Tests/browser/test_dashboard.py [--server CMD] [--jobs-app PATH] [--speed X] [--screenshot PATH]

The dashboard's server command (`--server`, or DASHBOARD_SERVER) is split into words and given
`--port P --photos N --speed X [--fail-every N]` (and `--read-only`); its first line on standard output is
the page's URL. The default is the real server, built by Tests/browser/run.sh. `--server "python3
Tests/browser/fake_server.py"` runs the page's checks against the stand-in; the application's and the
proxies' checks (test_app.py) need the real `jobs-app` (`--jobs-app`, or JOBS_APP) and nginx.

What it checks, run by run:
- live: the tree moves (at least 5 distinct percentages of the root in 12 s), every bar is a progressbar
  with a value and a name inside a nested list (an item's level is its node's depth), a reload in the middle
  shows the current state at once, phone widths without sideways scrolling, the final state with each failed
  photo's reason, the summary as Docs/WebDashboard.md words it (each count once), the live region's
  announcements (a start, milestones no closer than 10 s unless a quarter was crossed, each failure, the
  end: sentences, far fewer than the changes), axe-core with no violation at each stage, no JavaScript error;
- commands by keyboard only: Tab reaches Pause; Enter on Pause, Resume, Pause keeps the focus on the control
  pressed; Enter on a photo's Cancel, and a focused row that finishes, move it to the next row's control;
  a separate reader sees each command; Cancel ends the job;
- a photo cancelled on its own: the page ends on the album's final state, nothing cancelled counted as done;
- a read-only server: no buttons, commands refused;
- a restart: the server killed with SIGKILL in the middle and started again on its port; the open page then
  shows the new run exactly as a fresh tab does (nothing of the run before);
- the page's reading of a scripted stream under a path prefix (test fixture): a wide tree, lines to ignore,
  names made of HTML and of text-reordering characters, a reconnection to the same run;
- test_app.py: jobs-app behind its cookie sessions and its bearer tokens, its long-lived root with queued
  jobs, its graceful stop with the page open, and behind nginx (TLS with a certificate made here; nginx's
  defaults with an upstream block), with DNS rebinding and cross-site requests refused.

It ends with "N passed, M failed" and exits 1 on any failure; every process it started is ended.
"""

import argparse
import os
import re
import shlex
import signal
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from browser import (FINAL, REPO, EventReader, Server, browser_problems, check, check_axe,  # noqa: E402
                     doc_table_cell, free_port, press, read_page, results, root_row, start_browser, unsafe_text,
                     wait_page)

REAL_SERVER = os.path.join(REPO, "Integrations", "ProgressTreeWeb", ".build", "debug", "web-dashboard")
RESOURCES = os.path.join(REPO, "Integrations", "ProgressTreeWeb", "Sources", "ProgressTreeWeb", "Resources")
# The summaries of `web-dashboard --photos 12 --fail-every 3` and of `--photos 6` with a photo cancelled, as
# Docs/WebDashboard.md shows them (read from its table: the page and the guide must agree exactly).
SUMMARY_12_3 = doc_table_cell("`web-dashboard --photos 12 --fail-every 3`")
SUMMARY_6_CANCELLED = doc_table_cell("`--photos 6`, one photo cancelled on its own")


def dashboard(command, speed, photos=12, fail_every=3, extra=(), port=0):
    arguments = command + ["--port", str(port), "--photos", str(photos), "--speed", str(speed)]
    if fail_every:
        arguments += ["--fail-every", str(fail_every)]
    return Server(arguments + list(extra))


def reason_shown(reason, label):
    """How the page shows a reason: without the label it begins with."""
    reason = re.sub(r"[\x00-\x1f\x7f-\x9f]", " ", reason or "").strip()
    if label and reason.startswith(label + ": "):
        return reason[len(label) + 2:]
    return reason


def check_bars(page):
    bars = [row for row in page["rows"] if row["hasBar"]]
    unnamed = [row["id"] for row in bars if not row["barName"]]
    valueless = [row["id"] for row in bars if not row["indeterminate"] and row["valuenow"] is None
                 and row["state"] != "queued"]
    check("every bar is a progressbar with a value and a name", bars and not unnamed and not valueless,
          "%d bars; without name %s; without value %s" % (len(bars), unnamed, valueless))
    flat = [row["id"] for row in page["rows"] if row["level"] != row["depth"]]
    check("the tree's nesting is in its markup: each node's item is inside its parent's",
          bars and not flat and any(row["level"] > 0 for row in page["rows"]),
          "items at another level than their depth: %s" % flat)


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
    return reloaded


def check_phone_width(driver, screenshot):
    for width in (375, 360):
        driver.set_window_size(width, 800)
        time.sleep(0.3)
        page = read_page(driver)
        if screenshot:
            driver.save_screenshot(screenshot.replace(".png", "-%d.png" % width))
        check("nothing scrolls sideways at phone width (%d px)" % width, page["scrollWidth"] <= page["innerWidth"],
              "scrollWidth %d, innerWidth %d" % (page["scrollWidth"], page["innerWidth"]))
    check_axe(driver, "phone width, mid-run")
    # Between a phone's width and a wide window (a laptop's split screen): the row's fixed columns must not
    # squeeze the names until their words break.
    for width in (760, 900):
        driver.set_window_size(width, 800)
        time.sleep(0.3)
        narrowest = driver.execute_script(
            "return Math.min(...Array.from(document.querySelectorAll('.row > .label'), e => "
            "e.clientWidth - parseFloat(getComputedStyle(e).paddingInlineStart)))")
        check("a name keeps room for its words at %d px" % width, narrowest >= 120,
              "the narrowest name column is %d px" % narrowest)
    driver.set_window_size(1200, 700)


PROGRESS_SENTENCE = re.compile(r"^Importing 12 photos: (\d+) percent, \d+ of 12(, about \d+ (second|minute)s? left)?\.$")


def check_announcements(seen, failed_lines, summary, changes):
    """The live region after the reload: a first sentence, milestones at most every 10 s unless the root
    crossed a quarter, each failure once, the outcome last; all sentences; far fewer than the changes."""
    texts = [text for _, text in seen]
    progress = [(moment, int(PROGRESS_SENTENCE.match(text).group(1))) for moment, text in seen
                if PROGRESS_SENTENCE.match(text)]
    too_close = []
    for (before, percent_before), (after, percent) in zip(progress, progress[1:]):
        if after - before < 9.5 and percent // 25 <= percent_before // 25:
            too_close.append("%d%% then %d%% %.1f s later" % (percent_before, percent, after - before))
    failures = [text for text in texts if " failed: " in text and text.startswith("IMG_")]
    expected_failures = sorted("%s failed: %s." % (line["name"], reason_shown(line["reason"], line["name"]))
                               for line in failed_lines)
    not_sentences = [text for text in texts if not re.match(r"^[A-Z].*[.]$", text)]
    final = summary[2:] if summary.startswith("! ") or summary.startswith("✓ ") else summary
    check("the live region announces milestones, not every change (at most one per 10 s or per quarter)",
          progress and not too_close and len(progress) <= 4 + int(progress[-1][0] - progress[0][0]) // 10
          and len(texts) < changes, "%d announcements for %d changes of the root: %s; too close: %s"
          % (len(texts), changes, texts[:12], too_close))
    check("each failure is announced once, as a sentence with its reason", sorted(failures) == expected_failures,
          "announced %s; expected %s" % (failures, expected_failures))
    check("the outcome is announced last, as the summary says it", texts and texts[-1] == final,
          "last %r; summary %r" % (texts[-1] if texts else None, final))
    check("every announcement is a sentence", not not_sentences, "%s" % not_sentences)


def run_live(driver, command, speed, screenshot):
    """The main run: moving, accessible, reloadable, phone width, final state, reasons, announcements."""
    server = dashboard(command, speed)
    reader = None
    try:
        reader = EventReader(server.url + "events")
        reader.start()
        driver.set_window_size(1200, 700)
        driver.get(server.url)
        page, ok = wait_page(driver, lambda p: root_row(p) is not None, 5)
        check("the page draws the root within 5 s", ok, "connection: %s" % page["connection"])
        check("the page has a language", page["lang"] != "", page["lang"])
        check_axe(driver, "start")

        # The tree moves: distinct percentages of the root's bar over 12 s. On the way: a screenshot, the
        # bars' accessibility, axe-core after the first failure, a reload, and phone widths.
        seen = []
        taken = reloaded = narrowed = accessible = failed_axe = False
        rate_seen = root_left_seen = False
        announced = []   # (first seen, text) after the reload
        reloaded_at = None
        changes = 0
        last_percent = None
        started = time.monotonic()
        while True:
            page = read_page(driver)
            root = root_row(page)
            elapsed = time.monotonic() - started
            if reloaded_at is not None:
                known = [text for _, text in announced]
                for index, text in enumerate(page["announcements"]):
                    if index >= len(known):
                        announced.append((time.monotonic(), text))
                if root and root["valuenow"] != last_percent:
                    changes += 1
                    last_percent = root["valuenow"]
            if root and root["valuenow"] is not None and root["valuenow"] not in seen and elapsed < 12:
                seen.append(root["valuenow"])
            if not root or root["state"] in FINAL or elapsed > 120:
                break
            failed_rows = [row for row in page["rows"] if row["state"] == "failed"]
            if any(re.search(r"\d (bytes|KB|MB|GB)/s", row["text"]) for row in page["rows"]):
                rate_seen = True
            if re.search(r"\ds left", root["text"]):
                root_left_seen = True
            if screenshot and not taken and (elapsed > 5.5 or (failed_rows and elapsed > 3)):
                driver.save_screenshot(screenshot)
                taken = True
            if not accessible and elapsed > 4:
                accessible = True
                check_bars(page)
            if failed_rows and not failed_axe:
                failed_axe = True
                check_axe(driver, "after the first failure")
            if not reloaded and elapsed > 6:
                reloaded = True
                reloaded_at = check_reload(driver, root["valuenow"] or 0)
                continue
            if not narrowed and elapsed > 8:
                narrowed = True
                check_phone_width(driver, os.environ.get("DASHBOARD_PHONE_SCREENSHOT"))
            time.sleep(0.1)
        check("the tree moves: at least 5 distinct percentages of the root in 12 s", len(seen) >= 5,
              "%d distinct: %s" % (len(seen), seen[:12]))
        check("throughput and time remaining show: a download's bytes a second and the root's time left",
              rate_seen and root_left_seen, "throughput seen: %s, root's time left seen: %s" % (rate_seen, root_left_seen))
        if screenshot:
            check("a screenshot was taken mid-run", taken, screenshot)
        for done, name in ((accessible, "every bar is a progressbar with a value and a name"),
                           (reloaded, "a reload mid-run shows the current state within 1 s"),
                           (narrowed, "nothing scrolls sideways at phone width"),
                           (failed_axe, "axe-core: no violation (after the first failure)")):
            if not done:
                check(name, False, "the work ended before the check (try a lower --speed)")

        # The end: the final state, the failed photos with their reasons, no buttons, the summary.
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and root_row(p)["state"] in FINAL
                             and p["summary"] != "", 120, 0.2)
        for index, text in enumerate(page["announcements"]):
            if index >= len(announced):
                announced.append((time.monotonic(), text))
        root = root_row(page)
        final = reader.wait_for(lambda line: line.get("parent") is None and line.get("state") in FINAL, 5)
        check("the page ends on the final state", ok and final is not None and root["state"] == final[1]["state"],
              "page: %s %s; stream: %s" % (root and root["state"], root and root["outcome"],
                                           final and final[1]["state"]))
        # The end of a failed run, as the guide's table words it, each thing once: the connection's one word,
        # the summary, the root's row and its reason under it.
        row = "%s %s%s%s" % (root["mark"], root["name"], root["note"], root["outcome"]) if root else ""
        shown = {"the connection": page["connection"], "the summary": page["summary"],
                 "the root's row": row.strip(), "under it, its reason": root and root["reason"]}
        expected = {where: doc_table_cell(where) for where in shown}
        check("the end of a failed run says each thing once, as Docs/WebDashboard.md shows it",
              shown == expected and expected["the summary"] == SUMMARY_12_3,
              "page %r; guide %r" % (shown, expected))
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
        check("the summary is the one Docs/WebDashboard.md shows, each count once", page["summary"] == SUMMARY_12_3,
              "%r" % page["summary"])
        check_announcements(announced, list(failed.values()), page["summary"], max(changes, 1))
        check_axe(driver, "the end of a run with failures")

        # A page opened after the end gets the final state: the kept failures, named before the root they
        # are below (Docs/WireFormat.md, "The end"), then the root. It shows the same end.
        def the_end(p):
            return {"summary": p["summary"], "connection": p["connection"], "outcomes": p["outcomes"],
                    "failed": sorted((r["id"], r["name"], r["reason"]) for r in p["rows"] if r["state"] == "failed")}
        original = driver.current_window_handle
        driver.switch_to.new_window("tab")
        try:
            driver.get(server.url)
            # Until the whole end shows (the summary and the rows are drawn together), for at most 5 s.
            late, ok = wait_page(driver, lambda p: p["summary"] != "" and the_end(p) == the_end(page), 5)
            check("a page opened after the end shows the same end: summary, failed rows, outcomes",
                  ok and the_end(late) == the_end(page), "late %r; open %r" % (the_end(late), the_end(page)))
        finally:
            driver.close()
            driver.switch_to.window(original)

        problems = browser_problems(driver)
        check("no JavaScript error or warning in the browser's log (live run)", not problems, "; ".join(problems))
    finally:
        server.stop()
        if reader is not None:
            reader.close()


def row_buttons(driver, node_id):
    from selenium.webdriver.common.by import By
    return driver.find_elements(By.CSS_SELECTOR, '#tree li[data-id="%d"] > .row button' % node_id)


def focus(driver, element):
    driver.execute_script("arguments[0].focus();", element)


def run_commands(driver, command, speed):
    """Pause, Resume and Cancel by keyboard alone: the focus stays on the control pressed (or goes to the
    next row's), and a separate reader of /events sees each command."""
    from selenium.webdriver.common.keys import Keys
    server = dashboard(command, speed, photos=12, fail_every=None)
    reader = EventReader(server.url + "events")
    reader.start()
    try:
        driver.set_window_size(1200, 700)
        driver.get(server.url)
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and "cancel" in root_row(p)["buttons"]
                             and len(p["rows"]) >= 4, 5)
        root = root_row(page)
        check("the root has a Cancel button when cancellable", ok, "buttons %s" % (root and root["buttons"]))
        root_id = root["id"] if root else 1
        # Keyboard only: Tab from the start of the page reaches the root's Pause.
        driver.execute_script("document.activeElement && document.activeElement.blur(); window.focus();")
        press(driver, Keys.TAB)
        page = read_page(driver)
        check("Tab from the top of the page reaches the root's Pause", page["active"]["row"] == root_id
              and page["active"]["command"] == "pause", "%s" % page["active"])

        # Enter on Pause, Resume, Pause: each time the server's root changes, and the focus stays on the
        # control pressed (now saying the other command).
        for expected, state in (("pause", "paused"), ("resume", "running"), ("pause", "paused")):
            page = read_page(driver)
            pressed = time.monotonic()
            press(driver, Keys.ENTER)
            seen = reader.wait_for(lambda line: line.get("id") == root_id and line.get("state") == state, 3,
                                   after=pressed)
            other = "resume" if expected == "pause" else "pause"
            page, ok = wait_page(driver, lambda p: other in root_row(p)["buttons"], 3)
            time.sleep(0.3)  # a few more walks and frames: the focus must stay through them
            page = read_page(driver)
            check("Enter on %s: the server's root is %s, the focus stays on that control (now %s)"
                  % (expected.capitalize(), state, other.capitalize()),
                  seen is not None and page["active"]["row"] == root_id and page["active"]["command"] == other,
                  "server: %s; focus %s" % (seen and seen[1]["state"], page["active"]))
        check_axe(driver, "paused")
        press(driver, Keys.ENTER)  # Resume
        reader.wait_for(lambda line: line.get("id") == root_id and line.get("state") == "running", 3)

        # Enter on a photo's Cancel: its row ends; the focus goes to the next row's control, not the page.
        page = read_page(driver)
        photos = [row for row in page["rows"] if row["depth"] == 1 and "cancel" in row["buttons"]]
        if photos:
            target = photos[0]
            focus(driver, row_buttons(driver, target["id"])[-1])
            pressed = time.monotonic()
            press(driver, Keys.ENTER)
            seen = reader.wait_for(lambda line: line.get("id") == target["id"] and line.get("state") == "cancelled",
                                   3, after=pressed)
            page, ok = wait_page(driver, lambda p: all(r["id"] != target["id"] or r["state"] == "cancelled"
                                                       for r in p["rows"]), 3)
            time.sleep(0.3)
            page = read_page(driver)
            check("Enter on a photo's Cancel: it is cancelled, the focus goes to the next row's control",
                  seen is not None and page["active"]["tag"] == "BUTTON" and page["active"]["row"] not in (None, target["id"]),
                  "server: %s; focus %s" % (seen and seen[1]["state"], page["active"]))
        else:
            check("Enter on a photo's Cancel: it is cancelled, the focus goes to the next row's control", False,
                  "no photo with a Cancel button")

        # A focused row that finishes by itself: the focus goes to the next row's control.
        page = read_page(driver)
        running = [row for row in page["rows"] if row["depth"] == 1 and row["state"] == "running" and row["buttons"]]
        if running:
            target = max(running, key=lambda row: row["valuenow"] or 0)
            focus(driver, row_buttons(driver, target["id"])[-1])
            ended = reader.wait_for(lambda line: line.get("id") == target["id"] and line.get("state") in FINAL, 30)
            time.sleep(0.4)
            page = read_page(driver)
            check("a focused row that finishes hands the focus to the next row's control",
                  ended is not None and page["active"]["tag"] == "BUTTON" and page["active"]["row"] != target["id"],
                  "row %d %s; focus %s" % (target["id"], ended and ended[1]["state"], page["active"]))
        else:
            check("a focused row that finishes hands the focus to the next row's control", False, "no running photo")

        root_cancel = [button for button in row_buttons(driver, root_id) if button.get_attribute("data-command") == "cancel"]
        if not root_cancel:
            check("Cancel by keyboard cancels the job within 1 s", False, "no Cancel button on the root")
            return
        focus(driver, root_cancel[0])
        pressed = time.monotonic()
        press(driver, Keys.ENTER)
        seen = reader.wait_for(lambda line: line.get("parent") is None and line.get("state") == "cancelled", 5)
        delay = seen[0] - pressed if seen else None
        check("Cancel by keyboard cancels the job: the server's root is cancelled within 1 s",
              seen is not None and delay <= 1.0, "%.3f s" % delay if seen else "no cancelled root line in 5 s")
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and root_row(p)["state"] == "cancelled", 2)
        check("the page shows the job cancelled, and the focus is kept in the tree",
              ok and page["connection"] == "cancelled" and page["buttons"] == 0 and page["active"]["tag"] == "UL",
              "state %s, connection %r, %d buttons, focus %s" % (
                  root_row(page) and root_row(page)["state"], page["connection"], page["buttons"], page["active"]))
        check("no error shown after the commands", page["error"] == "", page["error"])
        problems = browser_problems(driver)
        check("no JavaScript error or warning in the browser's log (commands)", not problems, "; ".join(problems))
    finally:
        server.stop()
        reader.close()


def run_cancelled_photo(driver, command, speed):
    """`--photos 6`, one photo cancelled: the page ends on the album's final state (before: "running 95%"
    for good), says it, and never counts the cancelled photo as done."""
    server = dashboard(command, speed * 2, photos=6, fail_every=None)
    try:
        driver.get(server.url)
        page, ok = wait_page(driver, lambda p: any(r["depth"] == 1 and "cancel" in r["buttons"] for r in p["rows"]), 5)
        photo = next((r for r in page["rows"] if r["depth"] == 1 and "cancel" in r["buttons"]), None)
        if photo is None:
            check("a photo cancelled on its own: the album finishes, the cancelled photo is not done", False,
                  "no photo with a Cancel button")
            return
        buttons = [b for b in row_buttons(driver, photo["id"]) if b.get_attribute("data-command") == "cancel"]
        buttons[0].click()
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and root_row(p)["state"] in FINAL
                             and p["summary"] != "", 60, 0.2)
        done = sum(1 for r in page["rows"] if r["depth"] == 1 and r["state"] == "finished")
        cancelled = sum(1 for r in page["rows"] if r["depth"] == 1 and r["state"] == "cancelled")
        for text in page["more"]:
            match = re.search(r"(\d+) done", text)
            done += int(match.group(1)) if match else 0
            match = re.search(r"(\d+) cancelled", text)
            cancelled += int(match.group(1)) if match else 0
            if text.endswith("more done"):
                done += int(re.search(r"\+(\d+)", text).group(1))
        check("a photo cancelled on its own: the album finishes, the cancelled photo is not counted as done",
              ok and root_row(page)["state"] == "finished" and done == 5 and cancelled == 1
              and page["summary"] == SUMMARY_6_CANCELLED,
              "state %s; %d done, %d cancelled (more: %s); summary %r" % (
                  root_row(page) and root_row(page)["state"], done, cancelled, page["more"], page["summary"]))
    finally:
        server.stop()


def run_read_only(driver, command, speed):
    """A read-only server: no buttons, "read only" said, commands refused."""
    server = dashboard(command, speed, extra=["--read-only"])
    try:
        driver.get(server.url)
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and p["mode"] != "", 5)
        time.sleep(1.0)
        page = read_page(driver)
        check("a read-only server's page says read only and shows no buttons",
              ok and "read only" in page["mode"] and page["buttons"] == 0,
              "mode %r, %d buttons" % (page["mode"], page["buttons"]))
        check_axe(driver, "read only")
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


# What a fresh page and a reconnected page must agree on, row by row.
def comparable(page):
    rows = [(r["id"], r["depth"], r["level"], r["state"], r["name"], r["outcome"], r["reason"], r["percent"],
             r["counts"], r["valuetext"], tuple(r["buttons"])) for r in page["rows"]]
    return {"rows": rows, "more": page["more"], "heading": page["heading"], "title": page["title"],
            "summary": page["summary"], "connection": page["connection"]}


def settled(driver, quiet, timeout):
    """What the page shows (`comparable`) once nothing on it changed for `quiet` seconds, and whether that
    happened within `timeout`."""
    last = comparable(read_page(driver))
    since = time.monotonic()
    deadline = since + timeout
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = comparable(read_page(driver))
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return last, True
    return last, False


def run_restart(driver, command, speed):
    """The server killed with SIGKILL in the middle and started again on its port: the open page follows the
    new run and then equals a fresh tab's page, nothing of the run before merged into it."""
    port = free_port()
    server = dashboard(command, speed, port=port)
    fresh_tab = None
    try:
        driver.get(server.url)
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and (root_row(p)["valuenow"] or 0) >= 30
                             and any(r["state"] == "finished" for r in p["rows"]), 60, 0.1)
        before = root_row(page)
        # The keyboard's focus on a photo's Cancel: its row goes with the run, and the focus must not fall to
        # the page's body.
        photo = next((r for r in page["rows"] if r["depth"] == 1 and "cancel" in r["buttons"]), None)
        if photo:
            focus(driver, row_buttons(driver, photo["id"])[-1])
        server.kill(signal.SIGKILL)
        server.process.wait(5)
        page, ok = wait_page(driver, lambda p: p["connection"].startswith("reconnecting"), 5)
        check("a server killed with SIGKILL: the page says it is reconnecting", ok, page["connection"])
        # Started again 20 times slower: nothing of the new run can finish before the pages are compared (a
        # node that finished stays in sight on the open page, and is not in a fresh tab's snapshot). Its
        # first photo would take over 40 s to fail, and the comparison is made within seconds.
        for _ in range(50):
            try:
                server = dashboard(command, speed / 20, port=port)
                break
            except RuntimeError:
                time.sleep(0.1)
        # The open page reconnects by itself (1 s, then 2 s) and is told the new run.
        page, ok = wait_page(driver, lambda p: p["connection"] == "live"
                             and "A new run started on the server." in p["announcements"], 15, 0.1)
        check("the open page reconnects to the restarted server and says a new run started", ok,
              "connection %r; root before %s%%" % (page["connection"], before and before["valuenow"]))
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and p["active"]["tag"] == "BUTTON", 3)
        root = root_row(page)
        check("when a new run replaces the rows, the focus goes to its first control (the root's), not the body",
              photo is not None and ok and page["active"]["row"] == root["id"]
              and page["active"]["command"] == root["buttons"][0],
              "focus before on photo %s; now %s; root %s" % (photo and photo["id"], page["active"],
                                                            root and (root["id"], root["buttons"])))
        # Pause the new run (from a program), so that both pages can be compared as they stand.
        token = urllib.request.urlopen(server.url + "token", timeout=5).read().decode()
        request = urllib.request.Request(server.url + "commands", method="POST",
                                         data=b'{"v":1,"command":"pause","id":1}',
                                         headers={"ProgressTree-Token": token})
        urllib.request.urlopen(request, timeout=5)
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and root_row(p)["state"] == "paused", 5)
        # A download's step under way when the pause came still lands (up to 2 s at this speed): the pages
        # are compared once the open one has not changed for longer than that.
        reconnected, ok = settled(driver, 2.5, 15)
        check("the paused new run stops moving on the open page", ok, "" if ok else "still changing after 15 s")
        original = driver.current_window_handle
        driver.switch_to.new_window("tab")
        fresh_tab = driver.current_window_handle
        driver.get(server.url)
        wait_page(driver, lambda p: p["connection"] == "live" and root_row(p) is not None
                  and root_row(p)["state"] == "paused", 5)
        time.sleep(0.3)
        fresh = comparable(read_page(driver))
        driver.close()
        fresh_tab = None
        driver.switch_to.window(original)
        differences = [(a, b) for a, b in zip(reconnected["rows"], fresh["rows"]) if a != b]
        check("after the restart the open page equals a fresh tab's (the new run only, nothing merged)",
              reconnected == fresh and len(fresh["rows"]) > 1,
              "%d rows vs %d; first differences %s; more %s vs %s; heading %r vs %r" % (
                  len(reconnected["rows"]), len(fresh["rows"]), differences[:2], reconnected["more"], fresh["more"],
                  reconnected["heading"], fresh["heading"]))
        # The browser logs the connection the kill refused: expected here.
        problems = browser_problems(driver, allowed=(r"events - Failed to load resource", r"ERR_CONNECTION_REFUSED",
                                                     r"ERR_INCOMPLETE_CHUNKED_ENCODING", r"ERR_EMPTY_RESPONSE"))
        check("no JavaScript error or warning in the browser's log (restart)", not problems, "; ".join(problems))
    finally:
        if fresh_tab is not None:
            driver.close()
            driver.switch_to.window(driver.window_handles[0])
        server.stop()


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
        # The root, 50 of its children, the file node and the failed node below the first of them, and the
        # failed child.
        check("a wide node shows 50 children and \"+N more\"", page["more"] == ["+950 more running"]
              and len(page["rows"]) == 1 + 50 + 2 + 1, "%d rows; %s" % (len(page["rows"]), page["more"]))
        rows = {row["id"]: row for row in page["rows"]}
        check("lines a reader must ignore are ignored", 3 in rows and rows[3]["valuenow"] == 3
              and fixture.FILE_ID + 50 not in rows and page["error"] == "",
              "item 2 at %s%%; orphan shown: %s; error %r" % (rows.get(3, {}).get("valuenow"),
                                                            fixture.FILE_ID + 50 in rows, page["error"]))
        shown = driver.execute_script("""
            const row = document.querySelector('#tree li[data-id="%d"] > .row');
            const file = document.querySelector('#tree li[data-id="%d"] > .row');
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
        bidi = rows.get(fixture.BIDI_ID, {})
        check("text-reordering characters (U+202A-E, U+2066-9, U+200E/F, U+061C) are shown as spaces: name, "
              "reason, heading, tab title, live region", not unsafe_text(page) and bidi.get("name") == fixture.BIDI_SHOWN
              and page["heading"] == "Wide  job" and page["title"].endswith("Wide job"),  # a title's spaces collapse
              "unsafe in %s; name %r; heading %r; title %r" % (unsafe_text(page), bidi.get("name"), page["heading"],
                                                              page["title"]))
        check_axe(driver, "a wide tree with hostile names")

        # The connection drops; the page reconnects to the same run; nodes the server leaves out before
        # `synced` finished while it was away.
        driver.execute_script(FRAME_MONITOR)
        stream.server.drop.set()
        page, ok = wait_page(driver, lambda p: p["more"] == ["+947 more: 449 running, 498 done"], 5)
        rows = {row["id"]: row for row in page["rows"]}
        check("after a reconnection to the same run, nodes not named before synced are finished",
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
        problems = browser_problems(driver, allowed=(r"events - Failed to load resource",
                                                     r"ERR_INCOMPLETE_CHUNKED_ENCODING"))
        check("no JavaScript error or warning in the browser's log (stream reading)", not problems,
              "; ".join(problems))
    finally:
        stream.close()


def main():
    parser = argparse.ArgumentParser(description="The web dashboard in headless Chromium.")
    parser.add_argument("--server", default=os.environ.get("DASHBOARD_SERVER", REAL_SERVER),
                        help="the server command (words split as a shell does); default: %(default)s")
    parser.add_argument("--jobs-app", default=os.environ.get("JOBS_APP", os.path.join(os.path.dirname(REAL_SERVER),
                                                                                      "jobs-app")),
                        help="the example application (test_app.py); default: %(default)s")
    parser.add_argument("--speed", default=os.environ.get("DASHBOARD_SPEED", "0.5"),
                        help="--speed for the server: the main run must last more than about 15 s")
    parser.add_argument("--screenshot", default=os.environ.get("DASHBOARD_SCREENSHOT"),
                        help="where to save the mid-run screenshot (PNG, 1200x700)")
    parser.add_argument("--only", default=os.environ.get("BROWSER_ONLY"),
                        help="run only the runs whose names contain this text (while working on one)")
    args = parser.parse_args()
    command = shlex.split(args.server)
    if command and not os.path.exists(command[0]) and "/" in command[0]:
        print("no server at %s (Tests/browser/run.sh builds it)" % command[0])
        print("0 passed, 1 failed")
        return 1
    speed = float(args.speed)

    import test_app

    runs = [
        ("live", lambda: run_live(driver, command, speed, args.screenshot)),
        ("commands", lambda: run_commands(driver, command, speed)),
        ("cancelled photo", lambda: run_cancelled_photo(driver, command, speed)),
        ("read only", lambda: run_read_only(driver, command, speed)),
        ("restart", lambda: run_restart(driver, command, speed)),
        ("stream reading", lambda: run_stream_reading(driver)),
    ] + [(name, (lambda run=run: run(driver, args.jobs_app))) for name, run in test_app.RUNS]
    driver = start_browser()
    started = time.monotonic()
    try:
        for name, run in runs:
            if args.only and args.only not in name:
                continue
            began = time.monotonic()
            try:
                run()
            except Exception as error:  # noqa: BLE001 - a run that breaks is a failed check, and the next runs
                check("the run '%s' went to its end" % name, False, "%s: %s" % (type(error).__name__, error))
            print("(run '%s': %.1f s)" % (name, time.monotonic() - began), flush=True)
    finally:
        driver.quit()
    passed = sum(1 for _, ok, _ in results if ok)
    failed = len(results) - passed
    if failed:
        print("\nFailed:")
        for name, ok, detail in results:
            if not ok:
                print("  %s: %s" % (name, detail))
    print("browser test: %.0f s" % (time.monotonic() - started))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
