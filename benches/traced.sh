#!/usr/bin/env bash
# Throughput and peak memory of a release build on a generated Ganglia
# `.traced` recording (conventions.md §2). Not a test: it prints figures.
#
#   benches/traced.sh [MEGABYTES] [DIR]     default 1100 MB in $TMPDIR
#
# The recording is made by awk: 64 hosts (node00..node63.cluster.example)
# x 16 metrics sampled every second, values a deterministic pseudo-random
# walk, decimal times with milliseconds; about 44 bytes a line. The run is
# repeated on a file 10x smaller to show that memory does not grow with
# the input.
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-1100}
dir=${2:-${TMPDIR:-/tmp}}
cargo build --release -q
bin=target/release/integrador

gen() { # $1 = lines, $2 = file
    awk -v lines="$1" -f benches/grid.awk > "$2"
}

run() { # $1 = file
    local log
    log=$(mktemp)
    /usr/bin/time -v "$bin" -q -ganglia "$1" -o "$dir/bench.paje" 2> "$log"
    local wall rss events size
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
    events=$(( $(wc -l < "$1") - 2 ))
    size=$(stat -c %s "$1")
    python3 - "$wall" "$rss" "$events" "$size" <<'PY'
import sys
wall, rss, events, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
parts = [float(p) for p in wall.split(':')]
secs = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
print(f"  input {size/1e6:.0f} MB, {events} samples: {secs:.2f} s, {events/secs/1e6:.2f} M events/s, {size/secs/1e6:.0f} MB/s, peak RSS {rss/1024:.1f} MiB")
PY
    rm -f "$log" "$dir/bench.paje"
}

lines=$(( mb * 1000000 / 44 ))
big="$dir/bench-big.traced"
small="$dir/bench-small.traced"
echo "generating $mb MB ($lines lines) ..."
gen "$lines" "$big"
gen $(( lines / 10 )) "$small"
echo "large:"; run "$big"
echo "10x smaller:"; run "$small"
rm -f "$big" "$small"
