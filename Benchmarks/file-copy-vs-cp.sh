#!/usr/bin/env bash
# file-copy (Examples/file-copy, release build) against `cp -a`, side by side on the same file sets, with
# file-copy's live progress on (`--progress live` on a pseudo-terminal made by `script`, 120×40, its output
# thrown away): system calls per file, user CPU per file, wall time, and the throughput of one big file.
#
#   Benchmarks/file-copy-vs-cp.sh                        # 20,000 and 50,000 files of 100 bytes, one 2 GB file, 5 rounds
#   Benchmarks/file-copy-vs-cp.sh --rounds 9 --sets 20000 --big-mb 0
#   Benchmarks/file-copy-vs-cp.sh --file-copy /path/to/file-copy   # another build (A/B)
#   Benchmarks/file-copy-vs-cp.sh --dir /some/folder     # where the sets go (default: Benchmarks/.build, this disk)
#
# Sets: N files of 100 bytes in folders of 100 (N/100 folders under one root); one file of random bytes for
# the throughput. Everything is generated in a fresh folder and removed at the end (also on Ctrl-C).
#
# Method, per set:
# - system calls: one run of each under `strace -c -f` (all threads), total calls ÷ files;
# - wall time and CPU: `--rounds` rounds, each running `cp -a` and file-copy back to back (the order
#   alternates), each timed by a small timer (a clock around the process, and its user and system time
#   from wait4, as getrusage reports them); the copy is removed and `sync` run before
#   every timed run, so that no run pays for the previous one's writeback. The table shows the median of
#   the rounds and the ratio of medians; the notes give every round.
# Needs strace, script (util-linux) and python3.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"

rounds=5
sets="20000,50000"
big_mb=2048
work_parent="$here/.build"
file_copy=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --sets) sets=$2; shift 2 ;;
        --big-mb) big_mb=$2; shift 2 ;;
        --dir) work_parent=$2; shift 2 ;;
        --file-copy) file_copy=$2; shift 2 ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
for tool in strace script python3; do
    command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install strace bsdutils python3)" >&2; exit 1; }
done

if [ -z "$file_copy" ]; then
    (cd "$repo" && swift build -c release --product file-copy >&2)
    file_copy="$(cd "$repo" && swift build -c release --show-bin-path)/file-copy"
fi

mkdir -p "$work_parent"
work="$(mktemp -d "$work_parent/file-copy-vs-cp.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Runs a copy of $1 to $2 with tool $3 (cp or file-copy); the rest of the arguments go before it (strace,
# time). file-copy runs live on a pseudo-terminal; its screen goes to /dev/null.
run_copy() {
    local source=$1 destination=$2 tool=$3
    shift 3
    if [ "$tool" = cp ]; then
        "$@" cp -a "$source" "$destination"
    else
        local command
        command="stty cols 120 rows 40; $(printf '%q ' "$@" "$file_copy" "$source" "$destination" --progress live)"
        script -qefc "$command" /dev/null >/dev/null </dev/null
    fi
}

# The timer: runs a command and writes "elapsed user system" in seconds to a file, from the clock around
# it and the rusage wait4 returns (microseconds; GNU time prints hundredths). The process it times is the
# copy alone: inside `script` for file-copy.
cat >"$work/timed.py" <<'PY'
import os, sys, time
output, command = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
child = os.fork()
if child == 0:
    try:
        os.execvp(command[0], command)
    finally:
        os._exit(127)
_, status, usage = os.wait4(child, 0)
elapsed = time.perf_counter() - start
with open(output, "w") as f:
    f.write("%.4f %.4f %.4f\n" % (elapsed, usage.ru_utime, usage.ru_stime))
sys.exit(os.waitstatus_to_exitcode(status))
PY

# Timed run: prints "elapsed user system" in seconds.
timed() {
    local source=$1 destination=$2 tool=$3
    rm -rf "$destination"
    sync
    run_copy "$source" "$destination" "$tool" python3 "$work/timed.py" "$work/time"
    cat "$work/time"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# `--rounds` rounds of both copies of $1, interleaved (cp first in odd rounds), into $work/times.<tool>; the
# rounds go to the notes, labelled $2.
interleaved_rounds() {
    local source=$1 label=$2 round order tool
    : >"$work/times.cp"; : >"$work/times.file-copy"
    for round in $(seq "$rounds"); do
        echo "  $label, round $round of $rounds…" >&2
        if [ $((round % 2)) -eq 1 ]; then order="cp file-copy"; else order="file-copy cp"; fi
        for tool in $order; do timed "$source" "$work/copy" "$tool" >>"$work/times.$tool"; done
    done
    for tool in cp file-copy; do
        notes+=("$label, $tool rounds (elapsed user system, s): $(tr '\n' ';' <"$work/times.$tool" | sed 's/;$//; s/;/; /g')")
    done
}

# The median of column $2 (1 elapsed, 2 user, 3 system) of $work/times.$1.
median_of() { cut -d' ' -f"$2" "$work/times.$1" | median; }

# A note with the calls per file of tool $1's strace run over $2 files (those at 0.05 a file or more), and
# its failed calls.
calls_note() {
    local calls
    calls=$(sort -k4 -n -r "$work/strace.$1" | awk -v n="$2" 'NF >= 5 && $NF != "total" && $NF != "syscall" && $4 / n >= 0.05 { printf "%s %.2f, ", $NF, $4 / n }')
    notes+=("$2 files, $1's calls per file: ${calls%, }; failed calls in all: $(awk '$NF == "total" { print (NF == 6 ? $5 : 0) }' "$work/strace.$1")")
}

# Syscalls of one run under strace -c -f: prints the total number of calls.
syscalls() {
    local source=$1 destination=$2 tool=$3
    rm -rf "$destination"
    run_copy "$source" "$destination" "$tool" strace -c -f -o "$work/strace.$tool"
    awk '$NF == "total" { print $4 }' "$work/strace.$tool"
}

echo "file-copy: $file_copy"
echo "cp: $(cp --version | head -1); kernel $(uname -r); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "work folder: $work ($(df -h --output=source,fstype "$work_parent" | tail -1 | tr -s ' '))"
echo "rounds: $rounds; file-copy with --progress live on a 120×40 pseudo-terminal (script)"
echo

table=()
notes=()
IFS=, read -ra set_sizes <<<"$sets"
for files in "${set_sizes[@]}"; do
    source="$work/set-$files"
    folders=$(( (files + 99) / 100 ))
    echo "generating $files files of 100 bytes in $folders folders…" >&2
    python3 - "$source" "$files" <<'PY'
import os, sys
root, count = sys.argv[1], int(sys.argv[2])
data = bytes(range(100))
for index in range(count):
    folder = os.path.join(root, "folder-%04d" % (index // 100))
    if index % 100 == 0:
        os.makedirs(folder)
    with open(os.path.join(folder, "file-%06d.dat" % index), "wb") as f:
        f.write(data)
PY
    sync
    cp_calls=$(syscalls "$source" "$work/copy" cp)
    fc_calls=$(syscalls "$source" "$work/copy" file-copy)
    calls_note file-copy "$files"
    calls_note cp "$files"
    interleaved_rounds "$source" "$files files"
    cp_wall=$(median_of cp 1); fc_wall=$(median_of file-copy 1)
    cp_user=$(median_of cp 2); fc_user=$(median_of file-copy 2)
    table+=("$(awk -v n="$files" -v a="$cp_calls" -v b="$fc_calls" 'BEGIN { printf "%s files: system calls per file|%.1f|%.1f|%.2f×|≤ 1.5×", n, a / n, b / n, b / a }')")
    table+=("$(awk -v n="$files" -v a="$cp_user" -v b="$fc_user" 'BEGIN { printf "%s files: user CPU per file (median)|%.1f µs|%.1f µs|%.2f×|≤ 25 µs", n, a / n * 1e6, b / n * 1e6, (a > 0 ? b / a : 0) }')")
    table+=("$(awk -v n="$files" -v a="$cp_wall" -v b="$fc_wall" 'BEGIN { printf "%s files: wall time (median of rounds)|%.2f s|%.2f s|%.2f×|≤ 1.25×", n, a, b, b / a }')")
    rm -rf "$source" "$work/copy"
done

if [ "$big_mb" -gt 0 ]; then
    source="$work/big"
    mkdir -p "$source"
    echo "generating one file of $big_mb MiB…" >&2
    head -c "$((big_mb * 1024 * 1024))" /dev/urandom >"$source/big.bin"
    sync
    interleaved_rounds "$source" "$big_mb MiB file"
    cp_wall=$(median_of cp 1); fc_wall=$(median_of file-copy 1)
    table+=("$(awk -v mb="$big_mb" -v a="$cp_wall" -v b="$fc_wall" 'BEGIN { printf "one %d MiB file: throughput (median of rounds)|%.0f MB/s|%.0f MB/s|%.2f×|≥ 0.9×", mb, mb * 1.048576 / a, mb * 1.048576 / b, a / b }')")
    rm -rf "$source" "$work/copy"
fi

echo
printf '| %s | %s | %s | %s | %s |\n' "measure" "cp -a" "file-copy" "file-copy ÷ cp" "goal"
printf '|---|---:|---:|---:|---|\n'
for row in "${table[@]}"; do
    IFS='|' read -r name a b ratio goal <<<"$row"
    printf '| %s | %s | %s | %s | %s |\n' "$name" "$a" "$b" "$ratio" "$goal"
done
echo
echo "Throughput ratio is file-copy's MB/s ÷ cp's. Notes:"
for note in "${notes[@]}"; do echo "- $note"; done
