#!/usr/bin/env bash
# Decode throughput and peak memory on a generated libRastro (DECK) run,
# and the whole run (two passes over the files merged on time, the DECK
# map, link matching, Pajé writing). Not a test: it prints figures.
#
#   benches/rastro.sh [ITERATIONS] [DIR]     default 125000 (about 108 MB)
#
# The files are written by sources/rastro/examples/rstgen.rs: 8 DECK nodes
# on 8 hosts, one file each, in a ring (mailbox post to the next node,
# retrieve from the previous one, sleep), 5 records per node and round.
# The run is repeated 10x smaller to show that memory does not grow with
# the input.
set -euo pipefail
cd "$(dirname "$0")/.."
iters=${1:-125000}
dir=${2:-${TMPDIR:-/tmp}}
cargo build --release -q
cargo build --release -q -p integrador-rastro --examples
gen=target/release/examples/rstgen
dump=target/release/examples/rstdump
bin=target/release/integrador

. benches/measure.sh

run() { # $1 = directory of .rst files
    local log n events size
    log=$(mktemp)
    size=$(cat "$1"/*.rst | wc -c)
    /usr/bin/time -v "$dump" --count "$1"/*.rst > "$log.out" 2> "$log"
    n=$(awk '{print $1}' "$log.out")
    measure decode "$n" "$size" "$log"
    /usr/bin/time -v "$bin" -deck "$1/*.rst" -o "$dir/bench.paje" 2> "$log"
    events=$(grep -o 'wrote [^:]*: [0-9]* events' "$log" | awk '{print $(NF-1)}')
    measure integrate "$events" "$size" "$log"
    grep -E "messages \(|records," "$log" | sed "s/^/    /"
    rm -f "$log" "$log.out" "$dir/bench.paje"
}

big="$dir/bench-rst-big"
small="$dir/bench-rst-small"
rm -rf "$big" "$small"
mkdir -p "$big" "$small"
echo "generating 8 nodes x $iters rounds ..."
"$gen" 8 "$iters" "$big"
"$gen" 8 $(( iters / 10 )) "$small"
echo "large:"; run "$big"
echo "10x smaller:"; run "$small"
rm -rf "$big" "$small"
