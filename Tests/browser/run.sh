#!/usr/bin/env bash
# The web dashboard's browser test: installs what it needs when missing (headless Chromium and its driver
# from Debian's packages, Selenium from PyPI), builds the real server (web-dashboard, from
# Integrations/ProgressTreeWeb), and runs Tests/browser/test_dashboard.py against it. Arguments go to the
# test (--screenshot PATH, --speed X); DASHBOARD_SERVER="python3 Tests/browser/fake_server.py" runs it
# against the stand-in instead, without building.
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

if ! python3 -c "import selenium" 2>/dev/null; then
    echo "installing selenium (PyPI)"
    python3 -m pip install -q selenium 2>/dev/null \
        || python3 -m pip install -q --break-system-packages selenium \
        || fail "pip install selenium failed"
    python3 -c "import selenium" || fail "selenium still cannot be imported after pip install"
fi

if [ -z "${DASHBOARD_SERVER:-}" ]; then
    package=Integrations/ProgressTreeWeb
    [ -f "$package/Package.swift" ] || fail "$package/Package.swift is missing: no web-dashboard to test"
    echo "building web-dashboard"
    build_log=$(mktemp)
    swift build --package-path "$package" --product web-dashboard >"$build_log" 2>&1 \
        || { tail -30 "$build_log" >&2; rm -f "$build_log"; fail "swift build --product web-dashboard failed"; }
    rm -f "$build_log"
    export DASHBOARD_SERVER="$PWD/$package/.build/debug/web-dashboard"
fi

echo "chromium: $(chromium --version 2>/dev/null | head -1); server: $DASHBOARD_SERVER"
exec python3 Tests/browser/test_dashboard.py "$@"
