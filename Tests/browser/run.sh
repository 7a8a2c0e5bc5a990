#!/usr/bin/env bash
# The web dashboard's browser test: installs what it needs when missing (headless Chromium and its driver,
# nginx and openssl from Debian's packages; Selenium and axe-core from PyPI), builds the real servers
# (web-dashboard and jobs-app, from Integrations/ProgressTreeWeb), and runs Tests/browser/test_dashboard.py
# (with test_app.py) against them, in one browser. Arguments go to the test (--screenshot PATH, --speed X,
# --only RUN); DASHBOARD_SERVER="python3 Tests/browser/fake_server.py" runs the page's runs against the
# stand-in instead (the application's runs still need jobs-app).
#
# Nothing is skipped: when Chromium, its driver or Selenium cannot be installed, or the server cannot be
# built, this script says so and exits 1. The test ends with "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."

fail() {
    echo "browser test: $*" >&2
    echo "0 passed, 1 failed"
    exit 1
}

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    echo "installing chromium and chromium-driver (Debian packages)"
    command -v apt-get >/dev/null || fail "chromium is missing and there is no apt-get to install it"
    apt-get update -qq >/dev/null || fail "apt-get update failed: cannot install chromium"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null \
        || fail "apt-get install chromium chromium-driver failed"
    command -v chromium >/dev/null && command -v chromedriver >/dev/null \
        || fail "chromium or chromedriver still missing after apt-get install"
fi

# nginx, for the page behind a reverse proxy (test_app.py), and openssl for its certificate.
if ! command -v nginx >/dev/null || ! command -v openssl >/dev/null; then
    echo "installing nginx and openssl (Debian packages)"
    command -v apt-get >/dev/null || fail "nginx is missing and there is no apt-get to install it"
    apt-get update -qq >/dev/null || fail "apt-get update failed: cannot install nginx"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx openssl >/dev/null \
        || fail "apt-get install nginx openssl failed"
fi

pip_install() {
    python3 -m pip install -q "$@" 2>/dev/null || python3 -m pip install -q --break-system-packages "$@"
}
if ! python3 -c "import selenium" 2>/dev/null; then
    echo "installing selenium (PyPI)"
    pip_install selenium || fail "pip install selenium failed"
    python3 -c "import selenium" || fail "selenium still cannot be imported after pip install"
fi
# axe-core 4.12.1: the copy in axe-playwright-python 0.1.8, without its dependencies (only its axe.min.js is
# read; Playwright is not used).
axe_found='import importlib.util, os, sys; s = importlib.util.find_spec("axe_playwright_python"); sys.exit(0 if s and os.path.exists(os.path.join(list(s.submodule_search_locations)[0], "axe.min.js")) else 1)'
if ! python3 -c "$axe_found" 2>/dev/null; then
    echo "installing axe-core (PyPI: axe-playwright-python 0.1.8, without its dependencies)"
    pip_install --no-deps axe-playwright-python==0.1.8 || fail "pip install axe-playwright-python failed"
    python3 -c "$axe_found" || fail "axe-core's axe.min.js still missing after pip install"
fi

package=Integrations/ProgressTreeWeb
if [ -z "${DASHBOARD_SERVER:-}" ] || [ -z "${JOBS_APP:-}" ]; then
    [ -f "$package/Package.swift" ] || fail "$package/Package.swift is missing: no web-dashboard to test"
    # One invocation for both (SwiftPM plans the package's 1,000 steps once per invocation), with the
    # configuration `swift test` builds with, so that after CI's `swift test` of the package it finds them
    # built (3 s); alone, on a clean clone, it builds the package (5-7 min on 2 cores).
    echo "building web-dashboard and jobs-app"
    build_log=$(mktemp)
    swift build --package-path "$package" >"$build_log" 2>&1 \
        || { tail -30 "$build_log" >&2; rm -f "$build_log"; fail "swift build --package-path $package failed"; }
    rm -f "$build_log"
    bin=$(swift build --package-path "$package" --show-bin-path)
    export DASHBOARD_SERVER="${DASHBOARD_SERVER:-$bin/web-dashboard}"
    export JOBS_APP="${JOBS_APP:-$bin/jobs-app}"
fi

echo "chromium: $(chromium --version 2>/dev/null | head -1); server: $DASHBOARD_SERVER; app: $JOBS_APP"
exec python3 Tests/browser/test_dashboard.py "$@"
