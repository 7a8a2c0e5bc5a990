# Sourced by the Benchmarks scripts, from the Benchmarks folder, before they build.
#
# The library under test is ../ unless PROGRESSTREE_ROOT names another checkout (A/B runs; see Package.swift).
# SwiftPM keeps the previous checkout's list of source files when PROGRESSTREE_ROOT changes between builds,
# so the cached build description is dropped whenever the library is not the one built last time.
root="${PROGRESSTREE_ROOT:-../}"
if [ "$(cat .build/.progresstree-root 2>/dev/null)" != "$root" ]; then
    rm -f .build/*/release/description.json
    mkdir -p .build && printf '%s' "$root" > .build/.progresstree-root
fi
