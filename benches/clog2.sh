#!/usr/bin/env bash
# Decode throughput and peak memory on a generated MPE CLOG2 log, and the
# whole run (decode, two passes, placement, message pairing, Pajé
# writing). Not a test: it prints figures.
#
#   benches/clog2.sh [ITERATIONS] [DIR]     default 6000 (about 110 MB)
#
# The log is written by sources/clog/examples/clog2gen.rs: 64 ranks on 8
# hosts exchanging 1 KiB around a ring, with what MPE's -mpilog wrappers
# log for it (a user state, MPI_Send and MPI_Recv states, one MSGEVT per
# end), anchors, definitions at the end, 64 KiB big-endian blocks. The
# run is repeated on a log 10x smaller to show that memory does not grow
# with the input.
set -euo pipefail
cd "$(dirname "$0")/.."
iters=${1:-6000}
dir=${2:-${TMPDIR:-/tmp}}
cargo build --release -q
cargo build --release -q -p integrador-clog --examples
gen=target/release/examples/clog2gen
dump=target/release/examples/clogdump
bin=target/release/integrador

. benches/measure.sh

run() { # $1 = log
    local log n events size
    log=$(mktemp)
    size=$(stat -c %s "$1")
    /usr/bin/time -v "$dump" --count "$1" > "$log.out" 2> "$log"
    n=$(awk '{print $1}' "$log.out")
    measure decode "$n" "$size" "$log"
    /usr/bin/time -v "$bin" -mpi "$1" -o "$dir/bench.paje" 2> "$log"
    events=$(grep -o 'wrote [^:]*: [0-9]* events' "$log" | awk '{print $(NF-1)}')
    measure integrate "$events" "$size" "$log"
    grep -E 'messages|records' "$log" | sed 's/^/    /'
    rm -f "$log" "$log.out" "$dir/bench.paje"
}

big="$dir/bench-big.clog2"
small="$dir/bench-small.clog2"
echo "generating 64 ranks x $iters iterations ..."
"$gen" 64 "$iters" "$big"
"$gen" 64 $(( iters / 10 )) "$small"
echo "large:"; run "$big"
echo "10x smaller:"; run "$small"
rm -f "$big" "$small"
