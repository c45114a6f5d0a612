#!/usr/bin/env bash
# Start-up independent of size (seed 002's Table 1, side by side): the
# time and peak memory to open a one-minute window of a synthetic grid
# from its tables (`integrador paje TABLES --from --to`), at 100 MB, 1 GB
# and 10 GB of input, against pj_dump and ViTE loading the whole Pajé
# trace of the same run. Not a test: figures, on this machine.
#
#   benches/windows.sh [SIZES_MB] [DIR] [LIMIT_S]
#
# SIZES_MB defaults to "100 1000 10000"; each input is generated, used and
# deleted before the next. The grid is benches/grid.awk's: 64 hosts x 16
# Ganglia metrics a second, about 45 KB of .traced a second (100 MB is 37
# minutes of the grid, 1 GB six hours, 10 GB two and a half days).
# The window is the minute in the middle of the run. pj_dump and ViTE
# are stopped after LIMIT_S seconds (default 300) and under 20 GiB of
# address space: "> LIMIT" or "out of memory" is their figure then.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-"100 1000 10000"}
dir=${2:-${TMPDIR:-/tmp}}/integrador-windows
limit=${3:-300}
cargo build --release -q
bin=$PWD/target/release/integrador
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT

gen() { # $1 = lines, $2 = file
    awk -v lines="$1" -f benches/grid.awk > "$2"
}

# Runs a command under /usr/bin/time; prints "seconds peak_MiB status".
measure() {
    local log rc
    log=$(mktemp)
    set +e
    ( ulimit -v $((20 * 1024 * 1024)); /usr/bin/time -f "%e %M" -o "$log" timeout "$limit" "$@" > /dev/null 2>&1 )
    rc=$?
    set -e
    local secs kb
    read -r secs kb < <(tail -1 "$log")
    rm -f "$log"
    printf "%s %s %s\n" "$secs" "$((kb / 1024))" "$rc"
}

shown() { # seconds MiB rc
    case $3 in
        0) printf "%8.2f s %7d MiB" "$1" "$2" ;;
        124) printf "  > %ds (stopped) %5d MiB" "$limit" "$2" ;;
        *) printf "  failed (exit %d) at %.1f s, %d MiB" "$3" "$1" "$2" ;;
    esac
}

printf "%-8s %-10s %-12s %-28s %-28s %-28s %s\n" input events tables "window from tables (median of 5)" "pj_dump -q whole trace" "ViTE whole trace" "row groups read"
for mb in $sizes; do
    lines=$((mb * 1000 * 1000 / 44))
    gen "$lines" "$dir/g.traced"
    bytes=$(stat -c %s "$dir/g.traced")
    read -r isecs imib irc < <(limit=36000 measure "$bin" -q -ganglia "$dir/g.traced" -o "$dir/g.paje" --tables "$dir/g.tables")
    [ "$irc" = 0 ] || { echo "integration failed"; exit 1; }
    rm -f "$dir/g.traced"
    tbytes=$(du -sb "$dir/g.tables" | cut -f1)
    # The minute in the middle of the run (seconds of the grid = lines / 1024).
    mid=$((lines / 1024 / 2))
    times=()
    for _ in 1 2 3 4 5; do
        read -r s m rc < <(limit=600 measure "$bin" paje "$dir/g.tables" --from "+${mid}s" --to "+$((mid + 60))s" -o "$dir/w.paje")
        [ "$rc" = 0 ] || { echo "window failed"; exit 1; }
        times+=("$s $m")
    done
    med=$(printf "%s\n" "${times[@]}" | sort -n | sed -n 3p)
    groups=$("$bin" paje "$dir/g.tables" --from "+${mid}s" --to "+$((mid + 60))s" -o "$dir/w.paje" 2>&1 | sed -n 's/.* \([0-9]*\) row groups read .* of the tables. \([0-9]*\)$/\1 of \2/p')
    read -r ps pm prc < <(measure pj_dump -q "$dir/g.paje")
    if command -v vite > /dev/null; then
        read -r vs vm vrc < <(QT_QPA_PLATFORM=offscreen measure vite "$dir/g.paje" -e "$dir/v.svg")
    else
        vs=0; vm=0; vrc=127
    fi
    printf "%-8s %-10s %-12s %-28s %-28s %-28s %s\n" "$((bytes / 1000000)) MB" "$lines" "$((tbytes / 1000000)) MB" \
        "$(shown $med 0)" "$(shown $ps $pm $prc)" "$(shown $vs $vm $vrc)" "$groups"
    echo "  (integration to Pajé and tables: $isecs s, $imib MiB)"
    rm -rf "$dir/g.paje" "$dir/g.tables" "$dir/w.paje" "$dir/v.svg"
done
