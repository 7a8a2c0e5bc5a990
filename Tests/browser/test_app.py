"""The page inside an application of its own (`jobs-app`, Integrations/ProgressTreeWeb) in headless Chromium:
behind its cookie sessions and its bearer tokens (a stream ticket), its long-lived "All jobs" root with
queued jobs, its graceful stop with the page open, and behind nginx: TLS with a self-signed certificate made
here (nginx passing Host on, and nginx's defaults with the page's origin allowed), and nginx's defaults with
an upstream block (the upstream's name allowed as Host, the page's origin allowed), with DNS rebinding and
cross-site requests refused. Used by test_dashboard.py (RUNS), in its browser."""

import os
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

from browser import (EventReader, Server, browser_problems, check, check_axe, free_port, read_page, root_row,
                     wait_page)


def jobs_app(path, *arguments):
    if not os.path.exists(path):
        raise RuntimeError("no jobs-app at %s (Tests/browser/run.sh builds it)" % path)
    return Server([path, "--port", "0"] + list(arguments))


def call(url, method="GET", data=None, headers=None, context=None):
    """Status and body of one request (a program's, not the browser's)."""
    request = urllib.request.Request(url, method=method, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5, context=context) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def click(driver, node_id, command):
    from selenium.webdriver.common.by import By
    for button in driver.find_elements(By.CSS_SELECTOR, '#tree li[data-id="%d"] > .row button' % node_id):
        if button.get_attribute("data-command") == command:
            button.click()
            return True
    return False


def run_cookie_sessions(driver, path):
    """Logged in through the application's form, its jobs' pages work: the stream, the token, commands; the
    "All jobs" page shows queued jobs; without the session the routes answer 401."""
    from selenium.webdriver.common.by import By
    app = jobs_app(path, "--auth", "cookie", "--jobs", "3", "--images", "40", "--speed", "1")
    try:
        status, _ = call(app.url + "progress/jobs/1/events")
        check("cookie sessions: the progress routes answer 401 without the application's session", status == 401,
              "status %d" % status)
        driver.get(app.url)
        driver.find_element(By.NAME, "user").send_keys("ada")
        driver.find_element(By.NAME, "password").send_keys("lovelace")
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        links = wait_page_links(driver)
        check("cookie sessions: the application's own home page lists its jobs' pages beside its routes",
              "progress/all/" in links and "progress/jobs/1/" in links, "%s" % links)
        driver.get(app.url + "progress/all")  # without the trailing slash: redirected
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and any(r["state"] == "queued" for r in p["rows"])
                             and p["mode"] == "", 5)
        queued = [r for r in page["rows"] if r["state"] == "queued"]
        check("the All jobs page shows jobs that have not started as queued, without a bar's value",
              ok and driver.current_url.endswith("/progress/all/") and queued
              and all(r["outcome"] == " — queued" and r["valuenow"] is None and r["valuetext"] == "queued" for r in queued),
              "url %s; queued rows %s" % (driver.current_url, [(r["name"], r["outcome"], r["valuetext"]) for r in queued]))
        check_axe(driver, "All jobs, with queued jobs")
        driver.get(app.url + "progress/jobs/1/")
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and "pause" in root_row(p)["buttons"], 5)
        clicked = ok and click(driver, root_row(page)["id"], "pause")
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and root_row(p)["state"] == "paused", 3)
        check("cookie sessions: the job's page pauses the job through the application's session and its token",
              clicked and ok, "state %s" % (root_row(page) and root_row(page)["state"]))
        problems = browser_problems(driver)
        check("no JavaScript error or warning in the browser's log (cookie sessions)", not problems,
              "; ".join(problems))
    finally:
        app.stop()


def wait_page_links(driver, timeout=5):
    deadline = time.monotonic() + timeout
    while True:
        links = driver.execute_script(
            "return Array.from(document.querySelectorAll('a')).map(function (a) { return a.getAttribute('href'); });")
        if links or time.monotonic() > deadline:
            return links
        time.sleep(0.05)


def run_bearer_tokens(driver, path):
    """The application takes bearer tokens: its client asks for a stream ticket with the header, opens the
    page with it, and the page (stream, token, commands, reloads) works on the cookie it was redeemed for."""
    app = jobs_app(path, "--auth", "bearer", "--jobs", "1", "--images", "400")
    try:
        status, _ = call(app.url + "progress/jobs/1/")
        check("bearer tokens: the page answers 401 without a token or a ticket", status == 401, "status %d" % status)
        status, body = call(app.url + "api/jobs/1/ticket", "POST", b"", {"Authorization": "Bearer ada-token"})
        page_path = body.replace("\\/", "/").split('"page":"')[-1].split('"')[0]
        driver.get(app.url.rstrip("/") + page_path)
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and p["connection"] == "live"
                             and "pause" in root_row(p)["buttons"], 5)
        check("bearer tokens: a page opened with a ticket reads its stream and gets the command token",
              status == 200 and ok, "ticket answer %d %r; connection %r; mode %r" % (
                  status, page_path, page["connection"], page["mode"]))
        check("bearer tokens: the used ticket leaves the address bar (history.replaceState)",
              "?ticket=" in page_path and driver.current_url == app.url + "progress/jobs/1/",
              "opened %r; address now %r" % (page_path, driver.current_url))
        driver.refresh()  # the ticket was used: the cookie it was redeemed for carries the reload
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and p["connection"] == "live", 5)
        clicked = ok and click(driver, root_row(page)["id"], "pause")
        page, ok = wait_page(driver, lambda p: root_row(p) is not None and root_row(p)["state"] == "paused", 3)
        check("bearer tokens: after a reload (the ticket used) the page still works and pauses the job",
              clicked and ok, "state %s" % (root_row(page) and root_row(page)["state"]))
        problems = browser_problems(driver)
        check("no JavaScript error or warning in the browser's log (bearer tokens)", not problems, "; ".join(problems))
    finally:
        app.stop()


def run_graceful_stop(driver, path):
    """SIGTERM with the page open (and a program reading): the application stops within 2 s; the page says
    the stream ended and offers to reconnect, instead of "connecting…" for ever."""
    app = jobs_app(path, "--auth", "none", "--jobs", "1", "--images", "400")
    reader = EventReader(app.url + "progress/jobs/1/events")
    reader.start()
    try:
        driver.get(app.url + "progress/jobs/1/")
        page, ok = wait_page(driver, lambda p: p["connection"] == "live" and root_row(p) is not None
                             and root_row(p)["buttons"], 5)
        reader.wait_for(lambda data: True, 5, kind="synced")
        # The keyboard's focus on the job's Pause, which goes with the stream.
        driver.execute_script("document.querySelector('#tree li[data-root] > .row button').focus();")
        focused = read_page(driver)["active"]
        sent = time.monotonic()
        app.kill(signal.SIGTERM)
        try:
            app.process.wait(5)
        except subprocess.TimeoutExpired:
            pass
        took = time.monotonic() - sent
        ended = reader.wait_for(lambda data: data.get("ended") == "stopping", 2, kind="ended")
        check("SIGTERM with readers connected: the application stops within 2 s, readers get `ended`",
              app.process.poll() == 0 and took < 2 and ended is not None,
              "exit %s after %.2f s; ended event: %s" % (app.process.poll(), took, ended and ended[1]))
        page, ok = wait_page(driver, lambda p: p["connection"] == "ended: the server stopped" and p["reconnect"]
                             and p["buttons"] == 0, 3)
        check("the page says the stream ended and offers Reconnect, instead of connecting for ever",
              ok and page["buttons"] == 0 and any(text.startswith("The stream ended") for text in page["announcements"]),
              "connection %r; reconnect %s; announcements %s" % (page["connection"], page["reconnect"],
                                                                 page["announcements"][-2:]))
        check("the stream ended: the focus goes from the job's Pause to Reconnect, not the tree or the body",
              focused["command"] == "pause" and page["active"]["id"] == "reconnect",
              "focus before %s; after %s" % (focused, page["active"]))
        check_axe(driver, "the stream ended")
    finally:
        app.stop()
        reader.close()


# --- Behind nginx ----------------------------------------------------------------------------------------

def make_certificate(folder):
    """A self-signed certificate for 127.0.0.1 and rebound.test, good for a day."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:rebound.test",
                    "-keyout", os.path.join(folder, "key.pem"), "-out", os.path.join(folder, "cert.pem")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


NGINX = """worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 128; }}
http {{
    access_log {work}/access.log;
    client_body_temp_path {work}/body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    # A: TLS, passing the browser's Host on (the issue's setting): nothing to set in the application.
    server {{
        listen 127.0.0.1:{tls_host} ssl;
        ssl_certificate {work}/cert.pem;
        ssl_certificate_key {work}/key.pem;
        location / {{
            proxy_pass http://127.0.0.1:{app};
            proxy_set_header Host $http_host;
        }}
    }}
    # B: TLS with nginx's defaults (Host becomes 127.0.0.1:APP): the page's origin allowed in the application.
    server {{
        listen 127.0.0.1:{tls_default} ssl;
        ssl_certificate {work}/cert.pem;
        ssl_certificate_key {work}/key.pem;
        location / {{
            proxy_pass http://127.0.0.1:{app};
        }}
    }}
    # C: nginx's defaults with an upstream block (Host becomes "backend"): that name and the page's origin
    # allowed in the application.
    upstream backend {{
        server 127.0.0.1:{app};
    }}
    server {{
        listen 127.0.0.1:{plain};
        location / {{
            proxy_pass http://backend;
        }}
    }}
}}
"""


def run_proxies(driver, path):
    """The job's page through nginx three ways: the stream reads and Pause works, by the documented settings
    (`--allowed-origin`, `--allowed-host`, never any origin); a page of another site rebound to this machine
    gets no token and no command through; a command with another site's Origin is refused."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(nginx):
        check("behind nginx", False, "no nginx (apt-get install -y nginx; Tests/browser/run.sh installs it)")
        return
    work = tempfile.mkdtemp(prefix="browser-nginx-")
    ports = {"tls_host": free_port(), "tls_default": free_port(), "plain": free_port()}
    app = jobs_app(path, "--auth", "none", "--jobs", "1", "--images", "4000",
                   "--allowed-origin", "https://127.0.0.1:%d" % ports["tls_default"],
                   "--allowed-host", "backend", "--allowed-origin", "http://127.0.0.1:%d" % ports["plain"])
    started = False
    try:
        make_certificate(work)
        with open(os.path.join(work, "nginx.conf"), "w") as file:
            file.write(NGINX.format(work=work, app=app.port, **ports))
        subprocess.run([nginx, "-p", work, "-c", os.path.join(work, "nginx.conf"), "-e", os.path.join(work, "error.log")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started = True
        for _ in range(50):
            if os.path.exists(os.path.join(work, "nginx.pid")):
                break
            time.sleep(0.1)
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE
        ways = (("TLS, Host passed on", "https://127.0.0.1:%d/" % ports["tls_host"]),
                ("TLS, nginx's defaults, origin allowed", "https://127.0.0.1:%d/" % ports["tls_default"]),
                ("nginx's defaults with an upstream block, name and origin allowed", "http://127.0.0.1:%d/" % ports["plain"]))
        for name, base in ways:
            driver.get(base + "progress/jobs/1/")
            page, ok = wait_page(driver, lambda p: root_row(p) is not None and p["connection"] == "live"
                                 and "pause" in root_row(p)["buttons"], 5)
            clicked = ok and click(driver, root_row(page)["id"], "pause")
            paused, ok = wait_page(driver, lambda p: root_row(p) is not None and root_row(p)["state"] == "paused", 3)
            resumed = ok and click(driver, root_row(paused)["id"], "resume")
            page, back = wait_page(driver, lambda p: root_row(p) is not None and root_row(p)["state"] == "running", 3)
            check("behind nginx (%s): the page reads the stream and Pause and Resume work" % name,
                  clicked and ok and resumed and back and page["error"] == "",
                  "connection %r; mode %r; error %r; state %s" % (page["connection"], page["mode"], page["error"],
                                                                  root_row(page) and root_row(page)["state"]))
        check_axe(driver, "behind nginx")

        # DNS rebinding: another site's name resolved to this machine. Its page reads (reading is open to
        # whoever reaches the server) but gets no token and sends no command, through either proxy.
        for name, base in (("TLS, Host passed on", "https://rebound.test:%d/" % ports["tls_host"]),
                           ("upstream block", "http://rebound.test:%d/" % ports["plain"])):
            driver.get(base + "progress/jobs/1/")
            page, ok = wait_page(driver, lambda p: root_row(p) is not None and p["mode"] != "", 5)
            forced = driver.execute_async_script("""
                const done = arguments[arguments.length - 1];
                fetch('commands', {method: 'POST', headers: {'ProgressTree-Token': '0'.repeat(32)},
                                   body: '{"v":1,"command":"cancel","id":1}'})
                    .then(function (r) { done(r.status); }, function (e) { done(String(e)); });
            """)
            check("DNS rebinding through nginx (%s): the page gets no token, a command is refused" % name,
                  ok and "read only" in page["mode"] and page["buttons"] == 0 and forced == 403,
                  "mode %r; %d buttons; command answered %s" % (page["mode"], page["buttons"], forced))

        # Cross-site: a command with the real token but another site's Origin, through each proxy.
        statuses = []
        for _, base in ways:
            context = insecure if base.startswith("https") else None
            status, token = call(base + "progress/jobs/1/token", "POST", b"", {"Origin": base.rstrip("/")}, context)
            refused, _ = call(base + "progress/jobs/1/commands", "POST", b'{"v":1,"command":"cancel","id":1}',
                              {"Origin": "https://evil.example", "ProgressTree-Token": token}, context)
            statuses.append((status, refused))
        check("cross-site commands through nginx are refused (403), even with the token",
              all(status == 200 and refused == 403 for status, refused in statuses), "%s" % statuses)
        problems = browser_problems(driver, allowed=(r"token - Failed to load resource: .* 403",
                                                     r"commands - Failed to load resource: .* 403"))
        check("no JavaScript error or warning in the browser's log (behind nginx)", not problems, "; ".join(problems))
    finally:
        if started:
            subprocess.run([nginx, "-p", work, "-c", os.path.join(work, "nginx.conf"), "-s", "stop"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(50):
                if not os.path.exists(os.path.join(work, "nginx.pid")):
                    break
                time.sleep(0.1)
        app.stop()
        shutil.rmtree(work, ignore_errors=True)


RUNS = [
    ("app: cookie sessions", run_cookie_sessions),
    ("app: bearer tokens", run_bearer_tokens),
    ("app: graceful stop", run_graceful_stop),
    ("app: behind nginx", run_proxies),
]
