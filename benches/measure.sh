# Shared by the bench scripts (sourced, not run): prints one line of
# figures from a `/usr/bin/time -v` log.
# shellcheck shell=bash

measure() { # $1 = label, $2 = records, $3 = size, $4 = time -v log
    local wall rss
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$4")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$4")
    python3 - "$1" "$wall" "$rss" "$2" "$3" <<'PY'
import sys
label, wall, rss, n, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
parts = [float(p) for p in wall.split(':')]
secs = max(sum(p * 60 ** i for i, p in enumerate(reversed(parts))), 0.01)  # time -v prints 1/100 s
print(f"  {label}: {size/1e6:.0f} MB, {n} {'records' if label == 'decode' else 'events'}: {secs:.2f} s, {n/secs/1e6:.2f} M/s, {size/secs/1e6:.0f} MB/s, peak RSS {rss/1024:.1f} MiB")
PY
}
