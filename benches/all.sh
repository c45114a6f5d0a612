#!/usr/bin/env bash
# One table for every format: generates an input of about SCALE x 100 MB
# per format, runs integrador on it end to end (release build, the trace
# written to a file, fsync and rename included; then again to /dev/null,
# where the peers write) and, on the same work,
# the peers that are installed: `pj_dump -q` reading our own trace
# (PajeNG), `pmdumplog -a` on the PCP archive (libpcp), akypuera's
# `aky_converter` on the akypuera run (found in PATH or as $AKY_CONVERTER:
# build it from its public source in a temporary directory, never in
# this repository). Prints events/s, MB/s, peak RSS, CPU over wall and
# the ratios; then the same run as a Paraver trace and as an OTF2
# archive (time over the Pajé trace's, RSS, size). Not a
# test: figures, on this machine.
#
#   benches/all.sh [SCALE] [DIR] [ROUNDS] [FORMAT]
#
# FORMAT (traced, clog2, rastro, akypuera, pcp or ftrace) makes only that
# row.
# SCALE 1 = about 100 MB, 10 = 1 GB. Each row is ROUNDS rounds (default
# 3) of our two runs and the peers' one, in turn: times are medians, a
# ratio is the median of the rounds' own ratios (with their range),
# peak RSS the highest.
#
# The generators: awk for .traced (64 hosts x 16 metrics), clog2gen (64
# ranks on 8 hosts in a ring), rstgen (8 DECK nodes in a ring; with --akypuera 8
# MPI ranks as akypuera records them), pcpbig
# (the pmlogger fixture's records repeated), and the ftrace fixture
# repeated with each copy's times moved past the last (its epoch marker
# kept once), so times keep increasing.
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${1:-1}
dir=${2:-${TMPDIR:-/tmp}}/integrador-bench
pairs=${3:-3}
only=${4:-}
fixtures=${INTEGRADOR_FIXTURES:-tests/data}
cargo build --release -q
for p in clog rastro pcp; do cargo build --release -q -p "integrador-$p" --examples; done
bin=target/release/integrador
aky=${AKY_CONVERTER:-$(command -v aky_converter || true)}
# DuckDB's command line (PyPI's duckdb-cli) for the StarVZ path.
duckdb=${DUCKDB:-$(command -v duckdb || true)}
ex=target/release/examples
rm -rf "$dir"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT

# Wall seconds, peak RSS (KiB) and CPU seconds (user + system) of a
# command: "SECS KIB CPU". The wall time is read from the clock in
# nanoseconds around the run: `time`'s own %e counts in 10 ms steps, a
# seventh of a 100 MB ftrace run on a fast machine.
timed() {
    local log start end
    log=$(mktemp)
    start=$(date +%s%N)
    /usr/bin/time -f "%M %U %S" -o "$log" "$@" > /dev/null 2> "$dir/stderr" || {
        echo "failed: $*" >&2
        cat "$dir/stderr" >&2
        exit 1
    }
    end=$(date +%s%N)
    awk -v ns=$((end - start)) '{printf "%.4f %d %.2f\n", ns / 1e9, $1, $2 + $3}' "$log"
    rm -f "$log"
}

# Whether the table has format $1's row.
want() { [ -z "$only" ] || [ "$only" = "$1" ]; }

# The row's inputs dropped from the page cache (written back first: only
# clean pages are dropped) and read back in, once, before its rounds.
# Every tool then reads its input from the same kind of memory: how a
# file was written decides the pages it is kept in, and awk's 4 KiB
# writes (a generator's 8 KiB) leave it in small pages that the kernel
# copies out at half the speed of the large ones a read from the disk,
# or our own 256 KiB writes of the trace `pj_dump` reads, fill (100 MB of
# ftrace in 15 ms against 7). Not in every round: a round that first read
# its inputs from the disk wrote its trace slower (the disk's bandwidth
# is shared), 0.41 s against 0.39 s for 100 MB of akypuera.
settle() {
    local f inputs
    sync
    mapfile -t inputs < <(find "$dir" -type f ! -name out.paje)
    for f in "${inputs[@]}"; do
        dd if="$f" iflag=nocache count=0 status=none
        cat "$f" > /dev/null
    done
}

# One round of a row: our run to a file, ours to /dev/null, then each
# installed peer on the same work; appends "secs nsecs rss ncpu events
# pj aky pmd" to $rounds (a peer not run: -).
round() { # $1 = format, then integrador's arguments
    local fmt=$1 secs rss cpu nsecs nrss ncpu events pj=- ak=- pm=- s
    shift
    # The input was just written: its pages go to disk first, not while
    # we write our trace (1 GB of .traced: 4.3 s timed without, 3.2 s with).
    sync
    # The VMs page out memory they find cold (DAMON's reclaim: kdamond),
    # the page cache too: a 1 GB kernel trace generated a minute earlier
    # was read back from the disk in two of three rounds (1.10 s against
    # 0.62 s). Each round reads its inputs once first, so every tool reads
    # them from memory, as the peers read our just written trace.
    find "$dir" -type f ! -name out.paje -exec cat {} + > /dev/null
    read -r secs rss cpu < <(timed "$bin" "$@" -o "$dir/out.paje")
    events=$(grep -o 'wrote [^:]*: [0-9]* events' "$dir/stderr" | awk '{print $(NF-1)}')
    # The peers write to /dev/null and never sync: our trace the same way
    # too, for the same work (a slow disk made the synced file a fifth of
    # our time).
    read -r nsecs nrss ncpu < <(timed "$bin" "$@" -o -)
    if command -v pj_dump > /dev/null; then
        read -r pj s _ < <(timed pj_dump -q "$dir/out.paje")
    fi
    if [ "$fmt" = akypuera ] && [ -x "$aky" ]; then
        read -r ak s _ < <(timed "$aky" "$dir"/aky/*.rst)
    fi
    if [ "$fmt" = pcp ] && command -v pmdumplog > /dev/null; then
        read -r pm s _ < <(timed pmdumplog -a "$dir/pcp/big")
    fi
    # The entity tables (docs/tables.md): alone, then beside the trace;
    # their size, and the StarVZ path on the same run as their peer:
    # pj_dump's CSV of our trace turned into Parquet by DuckDB.
    local tsecs trss both brss tbytes srows sbytes sv=-
    read -r tsecs trss _ < <(timed "$bin" "$@" --tables "$dir/out.tables")
    tbytes=$(cat "$dir"/out.tables/*.parquet | wc -c)
    sbytes=$(stat -c %s "$dir/out.tables/states.parquet")
    srows=$("${INTEGRADOR_PYTHON:-python3}" -c "import pyarrow.parquet as q; print(q.read_metadata('$dir/out.tables/states.parquet').num_rows)" 2>/dev/null || echo 0)
    rm -rf "$dir/out.tables"
    read -r both brss _ < <(timed "$bin" "$@" -o "$dir/out.paje" --tables "$dir/out.tables")
    rm -rf "$dir/out.tables"
    if command -v pj_dump > /dev/null && [ -x "$duckdb" ]; then
        local start end
        start=$(date +%s%N)
        pj_dump "$dir/out.paje" > "$dir/dump.csv"
        "$duckdb" -c "COPY (SELECT * FROM read_csv('$dir/dump.csv', header = false, null_padding = true, strict_mode = false, all_varchar = true)) TO '$dir/dump.parquet' (FORMAT parquet)" > /dev/null
        end=$(date +%s%N)
        sv=$(awk -v ns=$((end - start)) 'BEGIN {printf "%.4f", ns / 1e9}')
        rm -f "$dir/dump.csv" "$dir/dump.parquet"
    fi
    # The other viewer families (docs/output.md): the Paraver trace
    # (.prv, .pcf, .row) and the OTF2 archive, each alone, as the Pajé
    # trace to a file.
    local vsecs vrss vbytes osecs=- orss=- obytes=-
    read -r vsecs vrss _ < <(timed "$bin" "$@" -o "$dir/out.prv")
    vbytes=$(cat "$dir/out.prv" "$dir/out.pcf" "$dir/out.row" | wc -c)
    rm -f "$dir/out.prv" "$dir/out.pcf" "$dir/out.row"
    if "$bin" --format otf2 -q -o "$dir/probe.otf2" -ganglia /dev/null 2>&1 | grep -q libotf2; then
        :
    else
        read -r osecs orss _ < <(timed "$bin" "$@" --format otf2 -o "$dir/out.otf2")
        obytes=$(du -sb "$dir/out.otf2" | cut -f1)
        rm -rf "$dir/out.otf2"
    fi
    rm -rf "$dir/probe.otf2"
    local pbytes
    pbytes=$(stat -c %s "$dir/out.paje")
    echo "$secs $nsecs $((rss > nrss ? rss : nrss)) $ncpu $events $pj $ak $pm $tsecs $trss $both $brss $tbytes $sbytes $srows $sv $pbytes $vsecs $vrss $vbytes $osecs $orss $obytes" >> "$rounds"
    rm -f "$dir/out.paje"
}

printf '%-8s %8s %11s %8s %8s %9s %8s %9s %8s  %s\n' format "input MB" events "secs" "to null" "M ev/s" "MB/s" "RSS MiB" "CPU/wall" "peers (same work): their time over ours, file / null"
row() { # $1 = format, $2 = input bytes, then integrador's arguments
    local fmt=$1 size=$2 n
    shift 2
    rounds=$dir/rounds
    : > "$rounds"
    settle
    # Rounds, not one run each: this VM's speed changes by 2x from one
    # minute to the next, so each peer is timed next to our runs of the
    # same round, and the ratios are the median of the rounds' own.
    for ((n = 0; n < pairs; n++)); do
        round "$fmt" "$@"
    done
    python3 - "$fmt" "$size" "$rounds" \
        "$(command -v pj_dump > /dev/null && echo y)" \
        "$([ -x "$aky" ] && echo y)" \
        "$(command -v pmdumplog > /dev/null && echo y)" <<'PY'
import statistics, sys
fmt, size, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
have = {"pj": sys.argv[4] == "y", "aky": sys.argv[5] == "y", "pmd": sys.argv[6] == "y"}
rows = [line.split() for line in open(path)]
med = statistics.median
secs = [max(float(r[0]), 0.001) for r in rows]
nsecs = [max(float(r[1]), 0.001) for r in rows]
rss = max(int(r[2]) for r in rows)
cpu = med(float(r[3]) / n for r, n in zip(rows, nsecs))
events = int(rows[0][4])
s, ns = med(secs), med(nsecs)
peers = []
def peer(label, col, key, applies):
    if not applies:
        return
    if not have[key]:
        peers.append(f"{label} not {'found' if key == 'aky' else 'installed'}")
        return
    t = [float(r[col]) for r in rows]
    a = [x / y for x, y in zip(t, secs)]
    b = [x / y for x, y in zip(t, nsecs)]
    spread = f", rounds {min(b):.1f}-{max(b):.1f}x" if len(rows) > 1 else ""
    peers.append(f"{label}: {med(t):.2f} s ({med(a):.1f}x / {med(b):.1f}x our time{spread})")
peer("pj_dump -q", 5, "pj", True)
peer("aky_converter", 6, "aky", fmt == "akypuera")
peer("pmdumplog -a", 7, "pmd", fmt == "pcp")
# CPU/wall of the run to /dev/null: the synced run's wall includes the
# wait for the disk.
print(f"{fmt:<8} {size/1e6:8.0f} {events:11d} {s:8.3f} {ns:8.3f} {events/s/1e6:9.2f} {size/s/1e6:8.0f} {rss/1024:9.1f} {cpu:8.2f}  {'; '.join(peers)}")
# The entity tables: alone (events/s against the trace's), both at once
# (time over the trace's alone), peak RSS, size, bytes a state row, and
# the StarVZ path (pj_dump's CSV into Parquet by DuckDB) over ours.
t = med(float(r[8]) for r in rows)
b = med(float(r[10]) / float(r[0]) for r in rows)
trss = max(int(r[9]) for r in rows)
tbytes, sbytes, srows, pbytes = int(rows[0][12]), int(rows[0][13]), int(rows[0][14]), int(rows[0][16])
per_row = f"{sbytes/srows:.1f} B a state row" if srows else "no state rows"
sv = [float(r[15]) / float(r[8]) for r in rows if r[15] != "-"]
starvz = f"StarVZ path {med(sv):.1f}x our time" if sv else "StarVZ path not run (pj_dump or duckdb missing)"
# Paraver and OTF2: time over the Pajé trace's (both to a file), RSS,
# size.
v = [float(r[17]) / float(r[0]) for r in rows]
vrss, vbytes = max(int(r[18]) for r in rows), int(rows[0][19])
line = f"  paraver {med(float(r[17]) for r in rows):8.3f} s ({med(v):.2f}x the Pajé trace's time), RSS {vrss/1024:.1f} MiB, {vbytes/1e6:.1f} MB"
if rows[0][20] != "-":
    o = [float(r[20]) / float(r[0]) for r in rows]
    orss, obytes = max(int(r[21]) for r in rows), int(rows[0][22])
    line += f"; otf2 {med(float(r[20]) for r in rows):.3f} s ({med(o):.2f}x), RSS {orss/1024:.1f} MiB, {obytes/1e6:.1f} MB"
else:
    line += "; otf2 not run (no libotf2)"
print(line)
print(f"  tables  {t:8.3f} s alone ({events/t/1e6:.2f} M ev/s, {s/t:.2f}x the trace's), both {b:.2f}x the trace's time, RSS {trss/1024:.1f} MiB, {tbytes/1e6:.1f} MB against {pbytes/1e6:.1f} MB of Pajé, {per_row}; {starvz}")
PY
}

if want traced; then
# .traced: 44 bytes a line.
lines=$((scale * 100000000 / 44))
awk -v lines="$lines" -f benches/grid.awk > "$dir/g.traced"
row traced "$(stat -c %s "$dir/g.traced")" -ganglia "$dir/g.traced"
rm -f "$dir/g.traced"
fi

if want clog2; then
"$ex/clog2gen" 64 $((scale * 6000)) "$dir/m.clog2"
row clog2 "$(stat -c %s "$dir/m.clog2")" -mpi "$dir/m.clog2"
rm -f "$dir/m.clog2"
fi

if want rastro; then
mkdir -p "$dir/rst"
"$ex/rstgen" 8 $((scale * 125000)) "$dir/rst"
row rastro "$(cat "$dir"/rst/*.rst | wc -c)" -deck "$dir/rst/*.rst"
rm -rf "$dir/rst"
fi

if want akypuera; then
mkdir -p "$dir/aky"
"$ex/rstgen" --akypuera 8 $((scale * 100000)) "$dir/aky"
row akypuera "$(cat "$dir"/aky/*.rst | wc -c)" -deck "$dir/aky/*.rst" --deck-map akypuera
rm -rf "$dir/aky"
fi

if want pcp; then
mkdir -p "$dir/pcp"
"$ex/pcpbig" "$fixtures/pcp/pmlogger_v2/20261121.12.34" "$dir/pcp/big" $((scale * 110)) > /dev/null 2>&1
row pcp "$(stat -c %s "$dir/pcp/big.0")" -pcp "$dir/pcp/big"
rm -rf "$dir/pcp"
fi

if want ftrace; then
# ftrace: the fixture's body again and again, each copy 10 s later.
src="$fixtures/sched/pingpong-pipe/ftrace.txt"
copies=$((scale * 100000000 / $(stat -c %s "$src")))
awk -v copies="$copies" 'NR == FNR { if (FNR <= 12) head = head $0 "\n"; else body[++n] = $0; next }
END {
    printf "%s", head;
    for (k = 0; k < copies; k++)
        for (i = 1; i <= n; i++) {
            line = body[i];
            if (k > 0 && index(line, "integrador_epoch")) continue;
            if (match(line, / [0-9]+\.[0-9]+: /)) {
                ts = substr(line, RSTART + 1, RLENGTH - 3) + 10 * k;
                line = substr(line, 1, RSTART) sprintf("%.6f", ts) substr(line, RSTART + RLENGTH - 2);
            }
            print line;
        }
}' "$src" > "$dir/k.txt"
row ftrace "$(stat -c %s "$dir/k.txt")" -os "$dir/k.txt" --os-host node01
rm -f "$dir/k.txt"
fi
